"""Storage: what the door and the batch journal need from a database, behind one contract
(:class:`Storage`, :class:`Door`) with two backends — today's SQLite vault
(:class:`SQLiteStorage`, the default, unchanged) and PostgreSQL (``affidavit.storage.postgres``,
the ``[postgres]`` extra, imported only when asked for). See docs/storage.md for what is ported.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .base import AuditEntry, BatchRecord, Door, PlanRow, Storage, check_vault_name, recheck
from .jobs import Claim, JobRecord, JobStore, LeaseLost
from .sqlite import SQLiteDoor, SQLiteStorage

__all__ = [
    "AuditEntry",
    "BatchRecord",
    "Claim",
    "Door",
    "JobRecord",
    "JobStore",
    "LeaseLost",
    "PlanRow",
    "SQLiteDoor",
    "SQLiteStorage",
    "Storage",
    "check_vault_name",
    "open_jobs",
    "open_storage",
    "recheck",
]


def open_storage(where: str | Path, *, name: str = "default") -> Storage:
    """The storage at ``where``: a ``postgresql://`` URL (the ``[postgres]`` extra), or a vault's
    folder (its SQLite database, one vault called ``name``)."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        try:
            from .postgres import PostgresStorage
        except ImportError as exc:
            raise ConfigError(
                f"a PostgreSQL database needs the postgres extra ({exc.name} is missing): "
                "pip install 'affidavit[postgres]'"
            ) from None
        return PostgresStorage(text)
    if "://" in text:
        raise ConfigError(
            f"unknown database {text.split('://', 1)[0]!r}: give a postgresql:// URL or a vault folder"
        )
    return SQLiteStorage.open(Path(text), name)


def open_jobs(where: str | Path, *, name: str = "default") -> JobStore:
    """The job queues at ``where`` (as :func:`open_storage`), for workers: on PostgreSQL any
    number of workers on any hosts claim jobs at once; on SQLite, today's queue (one running job
    per vault, workers on the vault's host)."""
    storage = open_storage(where, name=name)
    if isinstance(storage, SQLiteStorage):
        from .sqlite_jobs import SQLiteJobStore

        return SQLiteJobStore(storage)
    from .postgres import PostgresStorage
    from .postgres_jobs import PostgresJobStore

    assert isinstance(storage, PostgresStorage)
    return PostgresJobStore(storage)
