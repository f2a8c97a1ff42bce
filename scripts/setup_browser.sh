#!/usr/bin/env bash
# Debian's chromium renders HTML sources to decide what a reader sees (W12, the [render] extra),
# and the web desk's browser tests need it and axe-core; install what is missing.
# chromium from Debian (never `playwright install`), axe-core from npm into .cache/axe (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt_install.sh
if [ ! -x /usr/bin/chromium ]; then
    echo "== installing chromium (apt-get)"
    apt_install chromium
fi
if [ ! -f .cache/axe/node_modules/axe-core/axe.min.js ]; then
    echo "== installing axe-core (npm) into .cache/axe"
    if ! command -v npm >/dev/null; then
        apt_install npm
    fi
    mkdir -p .cache/axe
    npm install --silent --no-audit --no-fund --prefix .cache/axe 'axe-core@^4.10'
fi
