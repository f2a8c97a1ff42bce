#!/usr/bin/env bash
# Set everything up and run the whole test suite: lint, types, tests. Usage: scripts/test.sh [PYTEST ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev,embeddings,server,mcp
scripts/setup_browser.sh   # chromium (apt) and axe-core (npm) for the web desk's browser tests
scripts/setup_testdata.sh  # real HTML and PDF documents from Debian packages
echo "== ruff"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
# pytest exits 5 when it collected no tests: that is a failure here, never a pass.
.venv/bin/python -m pytest "$@"
echo "== plain install (no extras)"
# a second venv, .venv-plain, with a plain `pip install .`: the README's path on 12 sources
PYTHON="${PYTHON:-$(.venv/bin/python -c 'import sys; print(sys._base_executable)')}" scripts/plain_check.sh
