""":class:`~affidavit.storage.queries.Sql` on a PostgreSQL vault: the services' SQL (``?``
placeholders, unqualified table names, as they run on SQLite) run in the caller's transaction on
the vault's schema (``SET LOCAL search_path``), its rows indexing by position and by name as
:class:`sqlite3.Row` does. Parameters stay parameters: ``?`` becomes psycopg's ``%s``, a literal
``%`` is escaped, and a ``?`` inside a quoted literal or identifier is left as it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql

from .postgres_gate import Conn


class Row(tuple[Any, ...]):
    """A row by position (``row[0]``) or by column name (``row["id"]``)."""

    names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.names)


def _rows(cursor: Any) -> Any:
    names = {column.name: n for n, column in enumerate(cursor.description or ())}

    def make(values: Sequence[Any]) -> Row:
        row = Row(values)
        row.names = names
        return row

    return make


def placeholders(text: str) -> str:
    """``text`` with each ``?`` outside quotes as ``%s`` and each ``%`` as ``%%``."""
    out: list[str] = []
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


class PgSql:
    """The services' connection on ``schema``, inside ``conn``'s open transaction."""

    def __init__(self, conn: Conn, schema: str) -> None:
        self.conn = conn
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))

    def execute(self, text: str, parameters: Sequence[Any] = (), /) -> Any:
        cursor = self.conn.cursor(row_factory=_rows)
        return cursor.execute(placeholders(text), tuple(parameters))


__all__ = ["PgSql", "Row", "placeholders"]
