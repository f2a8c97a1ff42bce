#!/usr/bin/env bash
# Set everything up and run the whole test suite: lint, types, tests. Usage: scripts/test.sh [PYTEST ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev,embeddings,server,mcp,render,formats,postgres
scripts/setup_browser.sh   # chromium (apt) and axe-core (npm) for the web desk's browser tests
scripts/setup_testdata.sh  # real HTML and PDF documents from Debian packages
scripts/setup_postgres.sh  # postgresql-15 (apt) and the user its test clusters run as
echo "== ruff"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
# pytest exits 5 when it collected no tests: that is a failure here, never a pass.
# Both cores (pytest-xdist): one worker per core, AFFIDAVIT_TEST_WORKERS=0 for one process. The
# tests of a module with a module-scoped fixture (a daemon, a model server) stay on one worker
# (tests/conftest.py groups them; --dist loadgroup honours the groups).
# --durations: the 30 slowest tests, for whoever makes the suite faster (issue 25: ≤ 5 min)
.venv/bin/python -m pytest -n "${AFFIDAVIT_TEST_WORKERS:-auto}" --dist loadgroup --durations=30 "$@"
echo "== plain install (no extras)"
# a second venv, .venv-plain, with a plain `pip install .`: the README's path on 12 sources
PYTHON="${PYTHON:-$(.venv/bin/python -c 'import sys; print(sys._base_executable)')}" scripts/plain_check.sh
