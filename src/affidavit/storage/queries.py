"""The few DB-API calls the backend-neutral services make (:mod:`affidavit.lint`'s finding store,
claim reads and quote gate): ``execute(sql, params)`` with ``?`` placeholders, and a cursor to
fetch from. A :class:`sqlite3.Connection` is one as it is; on PostgreSQL,
:class:`~affidavit.storage.pg_sql.PgSql` is one over a vault's schema in the caller's
transaction. So the services hold one copy of their SQL, written in what both databases read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Sql(Protocol):
    """A connection the services read and write through; rows index by position and by
    column name (:class:`sqlite3.Row`)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


def plain_rows(db: Sql) -> Sql:
    """``db`` for a bulk read whose rows are read by position only: SQLite's plain tuples are
    several times cheaper than :class:`sqlite3.Row` (the caller closes nothing)."""
    if isinstance(db, sqlite3.Connection):
        cursor = db.cursor()
        cursor.row_factory = None
        return cursor
    return db


__all__ = ["Cursor", "Sql", "plain_rows"]


def like_prefix(ref: str) -> str:
    """A ``LIKE … ESCAPE '\\'`` pattern for the strings that start with ``ref``, read literally:
    the ``%`` and ``_`` a caller types match only themselves, never any run or any character (an
    id prefix ``____`` names no plan, job or finding). Both databases read it the same way."""
    return ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
