"""A real PostgreSQL 15 for the tests: one throwaway cluster per pytest(-xdist) worker.

The cluster is made by ``initdb`` in a temp dir and listens on a Unix socket in that dir only
(``listen_addresses=''``: no TCP), started by the first test that asks for it and stopped at the
end of the session (``atexit`` too: no postgres outlives the tests). PostgreSQL refuses to run as
root, so under root (CI) ``initdb`` and ``pg_ctl`` run as the unprivileged ``affidavit-pg`` user
that ``scripts/setup_postgres.sh`` creates; root reaches the socket whatever its permissions.
When the server or that user or psycopg is missing, :func:`cluster` raises :class:`Unavailable`
with the reason, and the fixtures skip with it (never a failure, never an install).
"""

from __future__ import annotations

import atexit
import itertools
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(os.environ.get("AFFIDAVIT_PG_BIN", "/usr/lib/postgresql/15/bin"))
USER = "affidavit-pg"
SETUP = "run scripts/setup_postgres.sh (as root: it installs postgresql-15 and the user)"


WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, root, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    time.sleep(0.5)
subprocess.run(stop, capture_output=True, check=False, timeout=120, cwd=root)
shutil.rmtree(root, ignore_errors=True)
"""
"""Run beside a cluster: stops it and deletes its dir once the test process is gone."""


class Unavailable(Exception):
    """No PostgreSQL server can be started here; the message says why and what to run."""


class Cluster:
    """One running cluster: ``initdb`` into ``root/data``, the socket in ``root``."""

    def __init__(self, root: Path, runas: str | None) -> None:
        self.root = root
        self.data = root / "data"
        self.runas = runas
        self.log = root / "postgres.log"
        self._names = itertools.count(1)
        self.running = False
        self.watchdog: subprocess.Popen[bytes] | None = None

    def _command(self, *args: str) -> list[str]:
        return [*(["runuser", "-u", self.runas, "--"] if self.runas else []), *args]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            self._command(*args),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            cwd=self.root,  # a directory affidavit-pg can enter, whatever the tests' own is
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip()}\n{log}")

    def start(self) -> None:
        self._run(
            str(BIN / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-locale",
            "--no-sync",
        )
        self.configure()
        self.running = True
        self._run(
            str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", self.options(),
            "-w", "start",
        )  # fmt: skip
        # a process killed outright (SIGKILL, a timeout's os._exit) runs no atexit: the
        # watchdog stops the cluster when this process is gone, and ends with it
        stop = self._command(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.root), *stop],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd="/",
        )

    def options(self) -> str:
        """The server's options: the socket in ``root``, no TCP (a subclass may listen)."""
        return (
            f"-k {self.root} -c listen_addresses='' -c fsync=off "
            "-c full_page_writes=off -c max_connections=100"
        )

    def configure(self) -> None:
        """Called between ``initdb`` and the first start (a subclass writes pg_hba.conf)."""

    def restart(self) -> None:
        """Start the server again after a stop of its own (``pg_ctl stop -m immediate``)."""
        self._run(
            str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", self.options(),
            "-w", "start",
        )  # fmt: skip

    def stop_immediate(self) -> None:
        """``pg_ctl stop -m immediate``: the server gone at once, as in a crash; :meth:`restart`
        brings it back."""
        self._run(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def stop(self) -> None:
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            self.watchdog = None
        if self.running:
            self.running = False
            try:
                self._run(
                    str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"
                )
            finally:
                shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.root}"

    def create_database(self, hint: str) -> str:
        """A fresh, empty database (named after ``hint``); returns its URL."""
        import psycopg

        name = re.sub(r"[^a-z0-9_]", "_", hint.lower())[-40:] + f"_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("?", 1)[0].rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_CLUSTER: Cluster | None = None


def cluster() -> Cluster:
    """This process's cluster, started on first use; :class:`Unavailable` says why it can't be."""
    global _CLUSTER
    if _CLUSTER is not None:
        return _CLUSTER
    made = _new(os.environ.get("PYTEST_XDIST_WORKER", "main"))
    _CLUSTER = made
    return made


def private(tag: str) -> Cluster:
    """A started cluster of one test's own, for a test that stops its server under a live daemon
    (the worker's shared one must never be): the caller stops it (``atexit`` and the watchdog
    too). :class:`Unavailable` says why it can't be."""
    return _new(f"{tag}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}")


def _new(tag: str) -> Cluster:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise Unavailable("psycopg is not installed: pip install 'affidavit[postgres]'") from None
    if not (BIN / "initdb").is_file() or not (BIN / "pg_ctl").is_file():
        raise Unavailable(f"no PostgreSQL 15 server at {BIN}: {SETUP}")
    runas: str | None = None
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam(USER)
        except KeyError:
            raise Unavailable(
                f"postgres can't run as root and there is no user {USER}: {SETUP}"
            ) from None
        runas = USER
    # /tmp when there is one: every user can reach it (a root-only TMPDIR would lock
    # affidavit-pg out) and the socket's path stays under the 107 bytes a Unix socket allows
    base = "/tmp" if os.path.isdir("/tmp") else None
    root = Path(tempfile.mkdtemp(prefix=f"affidavit-pg-{tag}-", dir=base))
    if runas:
        os.chown(root, account.pw_uid, account.pw_gid)
    made = Cluster(root, runas)
    atexit.register(made.stop)
    try:
        made.start()
    except BaseException:
        made.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise
    return made


def stop() -> None:
    """Stop this process's cluster, if one was started."""
    global _CLUSTER
    if _CLUSTER is not None:
        _CLUSTER.stop()
        _CLUSTER = None


def drop_vaults(url: str) -> None:
    """Drop the registry schema and every vault schema of the database at ``url``, so a test
    starts from an empty database (the database itself is the module's: ``pg_url``)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        for (name,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname = 'affidavit' OR nspname LIKE 'v\\_%'"
        ).fetchall():
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))
