#!/usr/bin/env bash
# Set everything up, build a wiki from the bundled sample corpus with the embedded default model
# (the extractive engine), ask it a question and print the cited answer: no API key, no network.
# Usage: scripts/quickstart.sh [VAULT_DIR]   (default: ./demo-vault, recreated on each run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
vault="${1:-demo-vault}"
rm -rf "$vault"
af() { .venv/bin/affidavit --vault "$vault" "$@"; }
.venv/bin/affidavit init "$vault"
echo
echo "== ingest the sample corpus (three State of the Union addresses) with the extractive engine"
af ingest src/affidavit/samples/sotu/ --trust trusted --yes
echo
echo "== wiki/context.md (the overview to read first: what the wiki covers, its main topics, a cited line per source)"
cat "$vault/wiki/context.md"
echo
echo "== wiki/index.md"
cat "$vault/wiki/index.md"
echo
echo "== wiki/france.md"
cat "$vault/wiki/france.md"
echo
echo '== affidavit ask "What loan was completed in Holland?"'
af ask "What loan was completed in Holland?"
echo
echo '== affidavit ask "Who was president in 1823?"   (no speech says so: an honest "Not in the wiki")'
af ask "Who was president in 1823?"
echo
af doctor
echo
echo "Open $vault/wiki/ in Obsidian or any markdown viewer; 'git -C $vault log' shows one commit per approved batch of plans."
