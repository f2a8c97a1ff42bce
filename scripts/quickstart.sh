#!/usr/bin/env bash
# Set everything up and build a wiki from the bundled sample corpus, with no API key and no network.
# Usage: scripts/quickstart.sh [VAULT_DIR]   (default: ./demo-vault, recreated on each run)
#
# Until the extractive engine lands (ingest issue), the wiki is built from a hand-written plan file
# (src/affidavit/samples/sotu-plan.json) that goes through the same gate as any model's plan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
vault="${1:-demo-vault}"
rm -rf "$vault"
af() { .venv/bin/affidavit --vault "$vault" "$@"; }
.venv/bin/affidavit init "$vault"
af sources add src/affidavit/samples/sotu/1790-washington.md src/affidavit/samples/sotu/1823-monroe.md \
  src/affidavit/samples/sotu/1941-roosevelt.md --trust trusted
nonce="$(af nonce)"
sed "s/__NONCE__/$nonce/" src/affidavit/samples/sotu-plan.json > "$vault/.affidavit/sample-plan.json"
plan="$(af propose "$vault/.affidavit/sample-plan.json" --json | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["plan_id"])')"
af inbox
af approve "$plan"
echo
echo "== wiki/four-freedoms.md"
cat "$vault/wiki/four-freedoms.md"
echo
af doctor
echo
echo "Open $vault/wiki/ in Obsidian or any markdown viewer; 'git -C $vault log' shows one commit per plan."
