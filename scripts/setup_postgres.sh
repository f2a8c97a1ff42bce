#!/usr/bin/env bash
# PostgreSQL 15 for the storage tests (the [postgres] extra, docs/storage.md): Debian's
# postgresql-15 through apt_install (never an upgrade of another package: when postgresql-15 is
# installed its installed version is pinned, since the newest one would move libpq5), and, when run
# as root, the unprivileged system user `affidavit-pg` the tests run initdb and postgres as
# (PostgreSQL refuses to run as root). The tests start their own clusters in temp dirs on a Unix
# socket, no TCP (tests/pg_cluster.py); nothing here starts a server or touches the system's
# postgresql service. The multi-host tests (tests/test_multihost.py, as root) put a cluster and
# workers in network namespaces: iproute2's `ip` is installed when it is missing. When no server
# can be had without an upgrade this says so and exits 0: the PostgreSQL tests then skip with
# that reason.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt_install.sh
bin=/usr/lib/postgresql/15/bin
installed="$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)"
if [ -n "$installed" ]; then
    apt_install "postgresql-15=$installed"
else
    apt_install postgresql-15
fi
if ! command -v ip >/dev/null 2>&1; then
    apt_install iproute2
fi
if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "setup_postgres: no PostgreSQL 15 server at $bin (installing postgresql-15 would upgrade" \
        "other packages, see above); the PostgreSQL tests will skip." >&2
    exit 0
fi
if [ "$(id -u)" -eq 0 ] && ! id -u affidavit-pg >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin affidavit-pg
fi
echo "setup_postgres: $("$bin/postgres" --version) at $bin"
