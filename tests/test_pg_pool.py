"""The daemon's connection pool (``FailFastPool``, issue 26): a database down is said within
seconds, but a pool that is only busy — every connection in use, the server up — is not taken
for one: the request waits for a connection as before and is answered."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytestmark = pytest.mark.xdist_group("postgres")


def test_a_busy_pool_is_waited_for_not_taken_for_a_database_down(pg_url: str) -> None:
    from affidavit.storage.postgres import PostgresStorage

    storage = PostgresStorage(pg_url, max_connections=1, timeout=60, fail_after=0.2)
    asked = threading.Event()
    answers = storage.pool.answers

    def probe() -> bool:
        up = answers()
        asked.set()
        return up

    storage.pool.answers = probe  # type: ignore[method-assign]
    try:
        got: list[Any] = []
        with storage.pool.connection() as held:  # the pool's only connection, in use
            waiter = threading.Thread(target=lambda: got.append(storage.vaults()))
            waiter.start()
            assert asked.wait(60)  # past fail_after, the server was asked: it answers
            assert waiter.is_alive()  # so the caller still waits for a connection
            held.execute("SELECT 1")
        waiter.join(60)
        assert got == [[]]  # and got one once it was free
        assert storage.pool.probes == 1
    finally:
        storage.close()


def test_a_database_that_does_not_answer_is_a_pool_timeout_after_one_probe() -> None:
    """Nothing listens at the address: the wait ends at the probe's "no", not after the pool's
    minute."""
    from psycopg_pool import PoolTimeout

    from affidavit.storage.postgres import PostgresStorage

    storage = PostgresStorage("postgresql://nobody@127.0.0.1:1/none", timeout=60, fail_after=0.2)
    try:
        with pytest.raises(PoolTimeout, match="did not answer"):
            storage.vaults()
        assert storage.pool.probes == 1
        assert storage.pool.answers() is False
    finally:
        storage.close()
