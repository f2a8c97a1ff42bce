"""The connection pool of :class:`~affidavit.storage.postgres.PostgresStorage`: psycopg_pool's,
with a wait for a connection that fails fast when the database is down.

A request that needs a connection while every one is busy should wait (the pool's ``timeout``,
a minute); one made while the database is down (stopped, restarting, its network gone) should
hear so in seconds, not after that minute. The two look alike from inside the pool — no
connection comes — so after ``fail_after`` seconds without one the pool asks the server
directly (:meth:`FailFastPool.answers`, one connection with a short ``connect_timeout``): the
database answering means the pool is busy, and the wait goes on for the rest of ``timeout``;
not answering is :class:`~psycopg_pool.PoolTimeout` at once, which the daemon answers ``503``
with ``Retry-After`` and the fix. Needs the ``[postgres]`` extra.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

PROBE_SECONDS = 2
"""The probe's ``connect_timeout`` (libpq's least: a smaller one is taken as 2)."""

Conn = psycopg.Connection[dict[str, Any]]

logging.getLogger("psycopg").addHandler(logging.NullHandler())
# a library's logger: its warnings (each failed reconnection of the pool) go to the handlers a
# program sets up (the daemon's log), never as bare lines on a CLI command's or a worker's stderr


class FailFastPool(ConnectionPool[Conn]):
    """A :class:`~psycopg_pool.ConnectionPool` whose :meth:`getconn` without an explicit timeout
    gives up after ``fail_after`` seconds when the database doesn't answer (``None``: the plain
    pool's wait of ``timeout``)."""

    def __init__(self, conninfo: str, *, fail_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(conninfo, **kwargs)
        self.url = conninfo
        self.fail_after = fail_after
        self.probes = 0
        """How many times the server was asked whether it answers (for tests)."""

    def getconn(self, timeout: float | None = None) -> Conn:
        if timeout is not None or self.fail_after is None or self.fail_after >= self.timeout:
            return super().getconn(timeout)
        try:
            return super().getconn(self.fail_after)
        except PoolTimeout:
            if not self.answers():
                raise PoolTimeout(
                    f"no connection after {self.fail_after:.1f} s and the server did not answer"
                ) from None
        return super().getconn(self.timeout - self.fail_after)  # busy: wait the rest

    def answers(self) -> bool:
        """Whether the server takes a connection now (or refuses one for being full)."""
        self.probes += 1
        try:
            psycopg.connect(make_conninfo(self.url, connect_timeout=PROBE_SECONDS)).close()
        except psycopg.OperationalError as exc:
            from .pg_connect import full

            return full(exc)  # a connection's failure has no SQLSTATE: its text says so
        return True


__all__ = ["FailFastPool"]
