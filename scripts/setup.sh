#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install Affidavit into it. Usage: scripts/setup.sh [EXTRAS]
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      python="$candidate"; break
    fi
  done
fi
if [ -z "$python" ]; then
  echo "error: Affidavit needs Python >= 3.11; install it or set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if ! command -v git >/dev/null 2>&1; then
  echo "git is missing; installing it with apt-get" >&2
  . "$(dirname "$0")/apt_install.sh"
  apt_install git >&2
  command -v git >/dev/null 2>&1 || { echo "error: install git (apt-get install git)" >&2; exit 1; }
fi
# llama-cpp-python (the [local] extra, and dev for its tests) compiles from source, ~5 minutes on
# 2 cores. A native build enables CPU features (AMX) that virtual machines may forbid: the first
# matrix multiply then dies with SIGILL. Build for a generic x86-64 instead.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null
if [ -n "$extras" ]; then
  .venv/bin/python -m pip install --quiet -e ".[$extras]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
