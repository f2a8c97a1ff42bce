#!/usr/bin/env bash
# A plain `pip install .` (no extras) in its own venv (.venv-plain) runs the README's "Using it"
# path on 12 sources — init, ingest (the automatic lint fires at 10), sources, inbox, approve,
# search, ask, lint, doctor — and fails on any traceback or unexpected exit status. The commands
# that need an extra (serve) must refuse in one line naming the install command; reindex rebuilds
# the search index and names the extra that would add vectors.
# Usage: scripts/plain_check.sh   (PYTHON=/path/to/python3.11 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
python="${PYTHON:-python3}"
venv="$repo/.venv-plain"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps . >/dev/null
"$venv/bin/python" -m pip install --quiet . >/dev/null
# a plain install means none of the extras is there, whatever was installed before (numpy is
# not an extra's any more: pydivsufsort, the quote index of evidence/index.py, depends on it)
for module in onnxruntime tokenizers fastapi uvicorn anthropic llama_cpp mcp psycopg; do
  if "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    echo "plain_check: $module is importable in $venv; it must hold no extras" >&2
    exit 1
  fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"  # nothing of the user's configuration leaks in
mkdir -p "$HOME" "$work/sources"
shared="${AFFIDAVIT_SHARED_DATA:-$repo/../shared/data}"
# 12 sources: the first 12 State of the Union speeches of the shared corpus, else the bundled
# samples split in pieces
"$venv/bin/python" - "$shared/corpus/sotu.jsonl" "$work/sources" <<'PY'
import json, sys
from importlib.resources import files
from pathlib import Path

corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
if corpus.is_file():
    lines = corpus.read_text(encoding="utf-8").splitlines()[:12]
    for line in lines:
        doc = json.loads(line)
        name = f"{doc['year']}-{doc['name'].split()[-1].lower()}.md"
        (out / name).write_text(f"# {doc['year']}: {doc['name']}\n\n{doc['text']}\n")
else:
    paragraphs = []
    for sample in sorted(files("affidavit").joinpath("samples", "sotu").iterdir()):
        text = sample.read_text(encoding="utf-8")
        paragraphs += [p for p in text.split("\n\n")[1:] if p.strip()]
    size = len(paragraphs) // 12
    for n in range(12):
        part = "\n\n".join(paragraphs[n * size : (n + 1) * size])
        (out / f"part-{n:02}.md").write_text(f"# Sample part {n + 1}\n\n{part}\n")
count = len(list(out.iterdir()))
assert count == 12, count
PY

log="$work/log"
run() {  # run EXPECTED-STATUS affidavit-args...: no traceback, the expected exit status
  local expected="$1"; shift
  echo "\$ affidavit $*"
  local status=0
  (cd "$work/vault" 2>/dev/null || cd "$work"; "$venv/bin/affidavit" "$@") >"$log" 2>&1 || status=$?
  tail -n 5 "$log"
  if grep -q "Traceback" "$log"; then
    echo "plain_check: \`affidavit $*\` printed a traceback:" >&2; cat "$log" >&2; exit 1
  fi
  if [ "$status" != "$expected" ]; then
    echo "plain_check: \`affidavit $*\` exited $status, expected $expected:" >&2; cat "$log" >&2
    exit 1
  fi
}

run 0 init "$work/vault"
run 0 ingest "$work/sources" --trust trusted
grep -q "Automatic lint" "$log" || { echo "plain_check: the automatic lint did not run" >&2; exit 1; }
run 0 sources list
run 0 inbox
run 0 inbox --json
plan="$("$venv/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$log")"
run 0 inbox show "$plan"
run 0 approve --all --yes
run 0 search "public credit"
run 0 ask "What did the President say about public credit?"
run 0 lint
run 0 doctor
run 0 reindex
grep -q "^search index: " "$log" || { echo "plain_check: reindex did not rebuild the search index" >&2; exit 1; }
grep -q "pip install 'affidavit\[embeddings\]'" "$log" || { echo "plain_check: reindex does not name the extra" >&2; exit 1; }
run 1 serve --vault "$work/vault" --check
grep -q "affidavit\[server\]" "$log" || { echo "plain_check: serve does not name the extra" >&2; exit 1; }
echo "plain_check: a plain install ran the README's path on 12 sources"
