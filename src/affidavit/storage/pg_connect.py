"""Reaching a PostgreSQL database from the CLI (``inbox|lint|ask|… --database URL``, ``team``,
``mirror``, ``worker``, ``serve --database``): one connection first, so a database that doesn't
answer is said at once, with the fix, instead of after the pool's minute of retries; then the
pool, which gives up on a database that stops answering mid-command after a few seconds too
(:class:`~affidavit.storage.pg_pool.FailFastPool`).

Two kinds of failure, two fixes: the server did not answer (stopped, restarting, unreachable,
full) is :class:`~affidavit.errors.DatabaseUnavailable` — is the server up, is the URL's host
right? — which a worker waits out (:func:`unanswered`); the server answered and refused (a wrong
password, user or database name) is :class:`~affidavit.errors.ConfigError`, which waiting won't
fix. The URL's password is never in a message. Needs the ``[postgres]`` extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import psycopg
from psycopg_pool import PoolTimeout

from ..errors import ConfigError, DatabaseUnavailable
from .url import redact, scrub

if TYPE_CHECKING:
    from .postgres import PostgresStorage

CONNECT_SECONDS = 10
"""How long the first connection may take (libpq's ``connect_timeout``): a host that drops
packets is said after this long."""
FAIL_AFTER = 3.0
"""How long a command waits for a pool connection before it asks whether the server answers at
all (the daemon's ``REQUEST_SECONDS``): a database gone mid-command is said then."""
DOWN_FIX = (
    "Is the PostgreSQL server up and reachable from this host (start it: `pg_ctl start` or "
    "`systemctl start postgresql`), and is the URL's host and port right?"
)
REFUSED_FIX = (
    "Check the URL's user and database name, and the password (keep it in ~/.pgpass or "
    "$PGPASSWORD)."
)
_NO_ANSWER = {
    "53300",  # too many connections: up, but no slot for us now
    "57P01",  # admin shutdown: our session ended by a stop
    "57P02",  # crash shutdown
    "57P03",  # cannot connect now: starting up or shutting down
}
_PASSING = (
    "starting up", "shutting down", "in recovery mode", "not yet accepting connections",
    "too many clients", "remaining connection slots", "administrator command",
)  # fmt: skip
"""What a server answers a new connection while it starts, stops or is full (libpq gives a
connection's failure no SQLSTATE, only the server's ``FATAL:`` text)."""


def unanswered(exc: BaseException) -> bool:
    """Whether ``exc`` says the server did not answer (down, restarting, unreachable, full, the
    connection lost) — worth waiting out — rather than that it refused (a password, a name)."""
    if isinstance(exc, PoolTimeout | psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    if state is not None:
        return state.startswith("08") or state in _NO_ANSWER
    text = str(exc)
    return "FATAL:" not in text or any(phrase in text for phrase in _PASSING)


def full(exc: BaseException) -> bool:
    """Whether ``exc`` is the server refusing a connection for having no slot free: it is up."""
    text = str(exc)
    return isinstance(exc, psycopg.OperationalError) and (
        exc.sqlstate == "53300" or "too many clients" in text or "connection slots" in text
    )


def reason(exc: BaseException, url: str) -> str:
    """The driver's reason in one line, the URL's password masked."""
    text = " ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())
    text = scrub(text.removeprefix("connection is bad: "), url)[:400] or type(exc).__name__
    return text if text.endswith((".", "?", "!")) else text + "."


def probe(url: str, timeout: int = CONNECT_SECONDS) -> None:
    """Connect once, now: :class:`DatabaseUnavailable` when the server doesn't answer,
    :class:`ConfigError` when it refuses, each with its fix."""
    try:
        psycopg.connect(url, connect_timeout=timeout, autocommit=True).close()
    except psycopg.Error as exc:
        raise failure(exc, url, "can't connect to the database") from None


def failure(exc: BaseException, url: str, what: str) -> ConfigError | DatabaseUnavailable:
    """The error a command ends with for ``exc``: ``what`` the database {redact(url)}, the
    driver's reason, the fix."""
    said = f"{what} {redact(url)}: {reason(exc, url)}"
    if unanswered(exc):
        return DatabaseUnavailable(f"{said} {DOWN_FIX}")
    return ConfigError(f"{said} {REFUSED_FIX}")


@contextmanager
def connected(url: str, *, max_connections: int = 8) -> Iterator[PostgresStorage]:
    """The database at ``url`` for one command: probed first (:func:`probe`), its pool failing
    fast when the database stops answering (:data:`FAIL_AFTER`), and a driver error of the
    command's said as :func:`failure` (exit 1 through the CLI's ``user_errors``)."""
    from .postgres import PostgresStorage

    probe(url)
    storage = PostgresStorage(url, max_connections=max_connections, fail_after=FAIL_AFTER)
    try:
        yield storage
    except psycopg.Error as exc:
        if unanswered(exc):
            raise DatabaseUnavailable(
                f"the database {redact(url)} stopped answering: {reason(exc, url)} What was "
                f"not committed was not done. {DOWN_FIX}"
            ) from None
        raise ConfigError(f"the database {redact(url)} refused it: {reason(exc, url)}") from None
    finally:
        storage.close()


__all__ = [
    "CONNECT_SECONDS", "FAIL_AFTER", "connected", "failure", "full", "probe", "unanswered",
]  # fmt: skip
