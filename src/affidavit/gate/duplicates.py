"""The consistency check's view of a page's live claims, kept across admissions.

A new claim is a duplicate of a live claim on its page with the same normalised text, or a near
duplicate of one whose word stems it shares by Jaccard similarity >= ``threshold``. Comparing it with
every claim on the page costs the page's size per claim, which grows with the wiki; this index
finds the only claims that can match (same normalised text, or sharing one of the new claim's
rarest stems: a set with similarity >= t to ``A`` misses at most ``(1 - t)·|A|`` of ``A``'s stems)
and hands them back in the page's order, so the check decides exactly as a full scan would.

The index of a page is kept in step with the database without reading the page again
(:class:`PageIndexes`, :class:`ChangeLog`): reading every live claim of a big page for each
admission cost the page's size per plan; now an unchanged page costs one query, and a page
whose claims changed reads only the changes. A claim's derived form (its normalised text and
stems) is computed once, when it first appears.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

Comparable = tuple[str, frozenset[str]]

LIVE = ("active", "pending")
"""The statuses of the claims a new claim may duplicate."""
_LIVE_SQL = "('active','pending')"
_FULL_READ = (
    "SELECT id, text, position, rowid FROM claims WHERE page_slug = ? AND status IN "
    f"{_LIVE_SQL} ORDER BY position, rowid"
)
# each claim by its id ("+": not by the page's index, which would read the page whole)
_BY_ID = (
    "SELECT id, text, position, rowid FROM claims WHERE id IN (SELECT value FROM json_each(?)) "
    f"AND +page_slug = ? AND +status IN {_LIVE_SQL}"
)


class PageIndex:
    """The live claims of one page: normalised text and word stems by claim id, indexed."""

    def __init__(self, comparable: Callable[[str], Comparable], min_words: int) -> None:
        self.comparable = comparable
        self.min_words = min_words
        self.items: dict[str, tuple[str, str, frozenset[str]]] = {}  # id -> text, normal, stems
        self.order: dict[str, Any] = {}  # id -> its sort key in the page's order
        self.exact: dict[str, set[str]] = {}
        self.postings: dict[str, set[str]] = {}
        # where the index stands in its connection's change log (:class:`PageIndexes`)
        self.epoch = 0
        self.generation = 0
        self.stamp = 0

    def sync(self, rows: Iterable[tuple[Any, Any, Any]]) -> None:
        """Make the index hold exactly ``rows`` (id, text, sort key: ids and texts are made
        ``str``). A claim already held with the same text keeps its derived form."""
        now = {str(claim_id): (str(text), key) for claim_id, text, key in rows}
        for claim_id in [c for c, item in self.items.items() if c not in now]:
            self.drop(claim_id)
        for claim_id, (text, key) in now.items():
            self.put(claim_id, text, key)

    def put(self, claim_id: str, text: str, key: Any) -> None:
        """Hold claim ``claim_id`` with ``text`` at ``key`` in the page's order."""
        item = self.items.get(claim_id)
        if item is None or item[0] != text:
            if item is not None:
                self.drop(claim_id)
            self._add(claim_id, text)
        self.order[claim_id] = key

    def drop(self, claim_id: str) -> None:
        """Forget claim ``claim_id`` (nothing when it is not held)."""
        if claim_id not in self.items:
            return
        _, normal, stems = self.items.pop(claim_id)
        del self.order[claim_id]
        _discard(self.exact, normal, claim_id)
        if len(stems) >= self.min_words:
            for stem in stems:
                _discard(self.postings, stem, claim_id)

    def _add(self, claim_id: str, text: str) -> None:
        normal, stems = self.comparable(text)
        self.items[claim_id] = (text, normal, stems)
        _put(self.exact, normal, claim_id)
        if len(stems) >= self.min_words:
            postings = self.postings
            for stem in stems:
                ids = postings.get(stem)
                if ids is None:
                    postings[stem] = {claim_id}
                else:
                    ids.add(claim_id)

    def candidates(self, normal: str, mine: frozenset[str], threshold: float) -> list[str]:
        """The ids of every live claim that is an exact copy of ``normal`` or could be a near
        copy of ``mine`` at ``threshold``, in page order: a superset of the claims that match."""
        found = set(self.exact.get(normal, ()))
        if len(mine) >= self.min_words:
            # +2: one more than the most stems a near copy can miss, and one for float rounding
            need = min(len(mine), int(len(mine) * (1 - threshold)) + 2)
            postings = self.postings
            rarest = sorted([(len(postings.get(s, ())), s) for s in mine])[:need]
            for _, stem in rarest:
                found.update(postings.get(stem, ()))
        return sorted(found, key=self.order.__getitem__)


def _put(index: dict[str, set[str]], key: str, claim_id: str) -> None:
    ids = index.get(key)
    if ids is None:
        index[key] = {claim_id}
    else:
        ids.add(claim_id)


def _discard(index: dict[str, set[str]], key: str, claim_id: str) -> None:
    ids = index.get(key)
    if ids is not None:
        ids.discard(claim_id)
        if not ids:
            del index[key]


# -- keeping pages' indexes in step with a connection ----------------------------------------------

_STAMPS = itertools.count(1)
"""Stamps of logged changes: unique in the process, never handed out twice (a rollback takes a
change and its log entry back, never the counter)."""
_EPOCHS = itertools.count(1)
_STAMP_FUNCTION = "affidavit_claim_stamp"
LOG_LIMIT = 200_000
"""Stamps a change log may span before it is made anew (its entries hold claims' texts: a
connection that lives long would otherwise keep them all; each page is then read whole once)."""
_PUT, _DROP = 1, 0  # what an entry says of its claim on its page (NULL: read it again)


class ChangeLog:
    """What one connection changed in the live claims of each page, as the connection sees it
    now: a temp table that triggers on the claims' table (``claim_rows`` since m032) append to,
    in the same transaction as the change (so a rolled-back savepoint or transaction takes its
    entries back with its changes). An entry names a page and a claim, says what the claim now is on that page (live with this
    text, position and rowid; or not there), and has a fresh stamp.

    A page's index, read at the moment its last entry was ``stamp``, is in step with the page
    now once the entries after ``stamp`` are applied, if entry ``stamp`` is still logged: stamps
    are never reused, and a rollback removes the log's newest entries, so an entry still there
    means the history the index saw is still the page's history. An index read while the page
    had no entry (``stamp`` 0) is in step once all its entries are applied. Changes other
    connections commit are not logged: they change ``PRAGMA data_version``, and every index of
    the connection is read again. ``epoch`` names the table: an index of another table (dropped
    by a rollback of the transaction that made it, or gone with a schema change) is read again.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.epoch = next(_EPOCHS)
        self.table = t = f"affidavit_claim_log_{self.epoch}"
        self.generation = 0
        self.first = next(_STAMPS)
        db.create_function(_STAMP_FUNCTION, 0, _STAMPS.__next__)
        live, stamp, rows = _LIVE_SQL, f"{_STAMP_FUNCTION}()", _rows_table(db)
        same = "new.page_slug IS old.page_slug AND new.id IS old.id"
        columns = "(stamp, slug, claim, state, text, position, rid)"
        script = [
            f"CREATE TEMP TABLE {t} (stamp INTEGER PRIMARY KEY, slug TEXT, claim TEXT, "
            "state INTEGER, text TEXT, position INTEGER, rid INTEGER)",
            f"CREATE INDEX temp.{t}_slug ON {t} (slug, stamp)",
            f"CREATE TEMP TRIGGER {t}_insert AFTER INSERT ON main.{rows} "
            f"WHEN new.status IN {live} BEGIN INSERT INTO {t} {columns} "
            f"VALUES ({stamp}, new.page_slug, new.id, {_PUT}, new.text, new.position, new.rowid); "
            "END",
            f"CREATE TEMP TRIGGER {t}_update AFTER UPDATE ON main.{rows} "
            f"WHEN (old.status IN {live} OR new.status IN {live}) AND NOT ({same} "
            "AND new.position IS old.position AND new.text IS old.text AND new.rowid IS old.rowid "
            f"AND (new.status IN {live}) = (old.status IN {live})) BEGIN "
            f"INSERT INTO {t} {columns} SELECT {stamp}, old.page_slug, old.id, {_PUT}, new.text, "
            f"new.position, new.rowid WHERE {same} AND new.status IN {live}; "
            f"INSERT INTO {t} {columns} SELECT {stamp}, old.page_slug, old.id, {_DROP}, NULL, "
            f"NULL, NULL WHERE NOT ({same} AND new.status IN {live}); "
            f"INSERT INTO {t} {columns} SELECT {stamp}, new.page_slug, new.id, {_PUT}, new.text, "
            f"new.position, new.rowid WHERE NOT ({same}) AND new.status IN {live}; END",
            f"CREATE TEMP TRIGGER {t}_delete AFTER DELETE ON main.{rows} "
            f"WHEN old.status IN {live} BEGIN INSERT INTO {t} {columns} "
            f"VALUES ({stamp}, old.page_slug, old.id, {_DROP}, NULL, NULL, NULL); END",
            # A REPLACE deletes the rows in its way without firing delete triggers: the rows an
            # insert or a new id or rowid could replace are logged before it, to be read again
            # (an entry for a row that stays is harmless: it is read again, as it is).
            f"CREATE TEMP TRIGGER {t}_replace BEFORE INSERT ON main.{rows} BEGIN "
            f"INSERT INTO {t} {columns} SELECT {stamp}, page_slug, id, NULL, NULL, NULL, NULL "
            f"FROM main.{rows} WHERE (id = new.id OR rowid = new.rowid) AND status IN {live}; END",
            f"CREATE TEMP TRIGGER {t}_update_replace BEFORE UPDATE ON main.{rows} "
            "WHEN old.id IS NOT new.id OR old.rowid IS NOT new.rowid BEGIN "
            f"INSERT INTO {t} {columns} SELECT {stamp}, page_slug, id, NULL, NULL, NULL, NULL "
            f"FROM main.{rows} WHERE (id = new.id OR rowid = new.rowid) AND status IN {live}; END",
        ]
        savepoint = f"{t}_made"
        db.execute(f"SAVEPOINT {savepoint}")  # all of it or none
        try:
            _drop_logs(db)  # an earlier log's, if any is left
            for statement in script:
                db.execute(statement)
        except BaseException:
            db.execute(f"ROLLBACK TO {savepoint}")
            db.execute(f"RELEASE {savepoint}")
            raise
        db.execute(f"RELEASE {savepoint}")
        self.schema, self.data_version = _versions(db)
        # a page's entries from ``stamp`` on, then (stamp NULL) the versions read in the same
        # statement, so of the same moment
        self.entries_sql = (
            f"SELECT stamp, claim, state, text, position, rid FROM temp.{t} "
            "WHERE slug = ? AND stamp >= ? UNION ALL SELECT NULL, NULL, NULL, NULL, "
            "s.schema_version, d.data_version FROM pragma_schema_version() s, "
            "pragma_data_version() d"
        )
        self.last_sql = f"SELECT max(stamp) FROM temp.{t} WHERE slug = ?"


def _versions(db: sqlite3.Connection) -> tuple[int, int]:
    """The main schema's version (a schema change or ``VACUUM`` changes it) and the
    connection's data version (changed when another connection commits)."""
    row = db.execute("SELECT * FROM pragma_schema_version(), pragma_data_version()").fetchone()
    return int(row[0]), int(row[1])


def _rows_table(db: sqlite3.Connection) -> str:
    """The table the claims are rows of: ``claim_rows`` since m032 (``claims`` is a view over
    it, which takes no AFTER trigger), else ``claims``."""
    found = db.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'claim_rows'"
    ).fetchone()
    return "claim_rows" if found else "claims"


def _unique_beyond_id(db: sqlite3.Connection) -> bool:
    """Whether the claims' table has a unique index other than its primary key (a REPLACE could
    then delete a row the log's triggers don't see coming)."""
    rows = _rows_table(db)
    return any(row[2] and row[3] != "pk" for row in db.execute(f"PRAGMA index_list({rows})"))


class PageIndexes:
    """The pages' indexes, by connection and page (least recently used dropped first), each kept
    in step with what a full read of the page's live claims gives (:class:`ChangeLog`)."""

    def __init__(self, comparable: Callable[[str], Comparable], min_words: int, size: int) -> None:
        self.comparable = comparable
        self.min_words = min_words
        self.size = size
        self.pages: OrderedDict[tuple[int, str], PageIndex] = OrderedDict()

    def page(self, db: sqlite3.Connection, slug: str) -> PageIndex:
        """The index of ``slug``'s live claims (status active or pending) as ``db`` reads them
        now: what :meth:`PageIndex.sync` with every such row, by position, would give."""
        key = (id(db), slug)
        index = self.pages.pop(key, None) or PageIndex(self.comparable, self.min_words)
        self.pages[key] = index
        while len(self.pages) > self.size:
            self.pages.popitem(last=False)
        for _ in range(8):
            log = _log(db)
            if log is None:
                break
            try:
                versions = self._follow(db, log, index, slug)
                if versions is None:  # read whole
                    index.stamp = int(db.execute(log.last_sql, (slug,)).fetchone()[0] or 0)
                    index.sync(_full_read(db, slug))
                    index.epoch, index.generation = log.epoch, log.generation
                    versions = _versions(db)
            except sqlite3.OperationalError:  # the log's table is gone (rolled back): anew
                _forget(db)
                continue
            schema, data_version = versions
            if schema != log.schema:  # a schema change may have dropped the triggers: anew
                _forget(db)
            elif data_version != log.data_version:  # another connection committed: read again
                log.data_version = data_version
                log.generation += 1
            else:
                return index
        index.epoch = 0  # no log, or none that stays put: read whole, and again next time
        index.sync(_full_read(db, slug))
        return index

    def _follow(
        self, db: sqlite3.Connection, log: ChangeLog, index: PageIndex, slug: str
    ) -> tuple[int, int] | None:
        """Bring ``index`` up to date from the log's entries and return the versions read with
        them; None if it must be read whole."""
        if index.epoch != log.epoch or index.generation != log.generation:
            return None
        entries, versions = [], None
        for row in _plain(db).execute(log.entries_sql, (slug, index.stamp)):
            if row[0] is None:
                versions = int(row[4]), int(row[5])
            else:
                entries.append(row)
        assert versions is not None
        if index.stamp:
            if not entries or entries[0][0] != index.stamp:
                return None  # its entry was rolled back: the page's history changed
            del entries[0]
        if entries:
            entries.sort()  # by stamp (as the index on the table gives them)
            last = {str(e[1]): e for e in entries}  # each claim's last entry
            again = [claim for claim, e in last.items() if e[2] is None]
            found: dict[str, tuple[str, tuple[int, int]]] = {}
            if again:  # what a REPLACE may have changed: read again
                found = {
                    str(c): (str(text), (position, rowid))
                    for c, text, position, rowid in _plain(db).execute(
                        _BY_ID, (json.dumps(again), slug)
                    )
                }
            for claim, (_, _, state, text, position, rowid) in last.items():
                if state == _PUT:
                    index.put(claim, str(text), (position, rowid))
                elif state is None and claim in found:
                    index.put(claim, *found[claim])
                else:
                    index.drop(claim)
            index.stamp = int(entries[-1][0])
        return versions


_LOGS: OrderedDict[int, ChangeLog | None] = OrderedDict()
"""Each connection's change log, by ``id(connection)`` (None: it can't have one), shared by
every :class:`PageIndexes` (a connection has one log)."""


def _log(db: sqlite3.Connection) -> ChangeLog | None:
    """The connection's change log, made on first use (None: it can't have one, and every page
    is read whole). A log of a connection gone whose id a new one got is found gone."""
    conn = id(db)
    if conn in _LOGS:
        _LOGS.move_to_end(conn)
        found = _LOGS[conn]
        if found is None or (next(_STAMPS) - found.first <= LOG_LIMIT and _has_table(db, found)):
            return found
        _forget(db)  # made anew below, empty (too long, or a gone connection's log)
    log: ChangeLog | None = None
    try:
        if not _unique_beyond_id(db):
            log = ChangeLog(db)
    except sqlite3.Error:
        log = None
    _LOGS[conn] = log
    while len(_LOGS) > 256:
        _LOGS.popitem(last=False)
    return log


def _has_table(db: sqlite3.Connection, log: ChangeLog) -> bool:
    """Whether ``log``'s table is on ``db``: a connection closed and gone leaves its log here,
    and a new connection may get its id (the log's table is then not on the new one)."""
    found = db.execute(
        "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = ?", (log.table,)
    ).fetchone()
    return found is not None


def _forget(db: sqlite3.Connection) -> None:
    """Drop the connection's log, so that the next use makes it anew."""
    _LOGS.pop(id(db), None)
    _drop_logs(db)


def _drop_logs(db: sqlite3.Connection) -> None:
    """Remove every change log's triggers and table from the connection (the triggers first:
    they write into the table)."""
    found = db.execute(
        "SELECT type, name FROM sqlite_temp_master WHERE name LIKE 'affidavit_claim_log_%' "
        "AND type IN ('trigger', 'table') ORDER BY type = 'table'"
    ).fetchall()
    for kind, name in found:
        db.execute(f"DROP {'TRIGGER' if kind == 'trigger' else 'TABLE'} IF EXISTS temp.{name}")


def _plain(db: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor giving plain tuples (whatever the connection's row factory)."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor


def _full_read(db: sqlite3.Connection, slug: str) -> list[tuple[Any, Any, Any]]:
    return [(c, t, (p, r)) for c, t, p, r in _plain(db).execute(_FULL_READ, (slug,))]
