"""The version of what a search reads, for the caches kept by it (the daemon's answers, a
connection's claims' rows).

Migration ``m026`` (:mod:`affidavit.db_search`) keeps a token that triggers draw anew on every
write to what a search reads, in the writing transaction; no other write moves it (the answer
log, nonces, plans, the audit log). A cache kept under the token is therefore emptied by a new
claim, a retraction, a page retitled, a source's evidence changed, whoever writes it, and not by
the daemon's own log rows.

The token is trusted only while the triggers are exactly the migration's: on every change of
the schema (``PRAGMA schema_version``) they are compared with the migration's own text, and
when one is missing or altered (a hand edit, a later migration that rebuilt a table), or the
database predates ``m026`` (a vault served unmigrated), the version falls back to ``PRAGMA
data_version`` and the connection's ``total_changes``: every commit moves it, as before.

Reading it costs one pragma while nothing was committed since the last read (``data_version``
moves with every other connection's commit, ``total_changes`` with the connection's own writes);
only after a commit is the token read.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Hashable
from functools import cache

Version = tuple[Hashable, ...]
"""``("search", schema version, token)``, or ``("data", data_version, total_changes)``."""

_CHECK = (
    "SELECT (SELECT schema_version FROM pragma_schema_version()), "
    "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'search_version'), "
    "(SELECT json_group_array(json_array(name, sql)) FROM sqlite_master "
    "WHERE type = 'trigger' AND name LIKE 'search\\_version\\_%' ESCAPE '\\')"
)
_TOKEN = (
    "SELECT (SELECT schema_version FROM pragma_schema_version()), "
    "(SELECT token FROM search_version WHERE id = 0)"
)


def _plain(sql: str) -> str:
    return " ".join(sql.split())


@cache
def triggers() -> dict[str, str]:
    """The triggers ``m026`` creates, by name: their SQL with spacing folded (those on claims
    as ``m032`` made them again on ``claim_rows``)."""
    from ..db_claims import on_rows
    from ..db_search import m026_search_version

    found = re.findall(r"(CREATE TRIGGER (\w+)\b.*?\bEND)\b", m026_search_version(), re.DOTALL)
    return {name: _plain(on_rows(sql)) for sql, name in found}


def intact(db: sqlite3.Connection) -> tuple[int, bool]:
    """The schema version, and whether the database has ``m026``'s table and exactly its
    triggers then (one read: both from the same snapshot)."""
    schema, table, rows = db.execute(_CHECK).fetchone()
    have = {str(name): _plain(str(sql)) for name, sql in json.loads(rows)}
    return int(schema), bool(table) and have == triggers()


class SearchVersion:
    """One connection's version of what a search reads (see the module); call it with the
    connection each time (a new connection starts afresh)."""

    def __init__(self) -> None:
        self._seen: tuple[sqlite3.Connection, int, int, Version] | None = None
        self._schema: tuple[sqlite3.Connection, int, bool] | None = None

    def __call__(self, db: sqlite3.Connection) -> Version:
        data = int(db.execute("PRAGMA data_version").fetchone()[0])
        seen = self._seen
        if seen is not None and seen[0] is db and seen[1] == data and seen[2] == db.total_changes:
            return seen[3]
        version = self._read(db, data)
        self._seen = (db, data, db.total_changes, version)
        return version

    def _read(self, db: sqlite3.Connection, data: int) -> Version:
        fallback: Version = ("data", data, db.total_changes)
        checked = self._schema
        if checked is None or checked[0] is not db:
            checked = self._check(db)
        for _ in range(2):  # a schema changed meanwhile: checked once more, then read again
            if not checked[2]:
                now = int(db.execute("PRAGMA schema_version").fetchone()[0])
                if now == checked[1] or not (checked := self._check(db))[2]:
                    return fallback
            try:
                schema, token = db.execute(_TOKEN).fetchone()
            except sqlite3.OperationalError as exc:  # the table dropped since the check
                if "no such table" not in str(exc):
                    raise
                schema, token = None, None
            if schema == checked[1]:  # the schema the triggers were checked in
                return ("search", schema, token)
            checked = self._check(db)
        return fallback

    def _check(self, db: sqlite3.Connection) -> tuple[sqlite3.Connection, int, bool]:
        schema, ok = intact(db)
        self._schema = (db, schema, ok)
        return self._schema
