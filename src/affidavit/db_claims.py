"""Issue 25 item 5's migration m032: a claim's repeated strings stored once.

``claims`` was a table whose every row repeated its plan's id (64 hex characters), the time and
the support check it was written with, and its section's heading: at 233 speeches 8 of its
26.6 MB. Since m032 the rows are in ``claim_rows``, which keeps those as integer keys into two
small tables — ``claim_origins`` (plan id, time, support check: one row per plan applied) and
``claim_sections`` (one row per heading) — and ``claims`` is a view over the three with the
columns, names and order of before, plus ``rowid`` (the row's ``claim_rows.rowid``, which
``claims_fts``, the word postings and the packed plans name). Every reader reads ``claims`` as
before, a plain ``sqlite3`` shell, sqlite-utils or Datasette included: no SQL function is
needed. ``INSTEAD OF`` triggers keep every writer of ``claims`` working (a new plan id, time,
support check or heading gets its key); the door's writer writes ``claim_rows`` directly.

It registers with :func:`affidavit.db.migration` when :mod:`affidavit.db` imports this module;
a migration is never edited once released.
"""

from __future__ import annotations

import re
import sqlite3

from .db import DATA_STEPS, FOREIGN_KEYS_OFF, migration

ROWS = "claim_rows"
_ON_CLAIMS = re.compile(r"\bON claims\b")


def on_rows(sql: str) -> str:
    """A trigger or index made ``ON claims`` before m032, as m032 makes it again on
    ``claim_rows`` (the same columns: ``section`` there holds the heading's key)."""
    return _ON_CLAIMS.sub(f"ON {ROWS}", sql, count=1)


CLAIMS_VIEW = f"""
        CREATE VIEW claims AS
        SELECT r.id AS id, r.page_slug AS page_slug, s.section AS section,
               r.position AS position, r.text AS text, r.status AS status, r.trust AS trust,
               o.plan_id AS plan_id, o.created_at AS created_at,
               r.superseded_by AS superseded_by, r.derived_from AS derived_from,
               r.support AS support, o.support_check AS support_check, r.rowid AS rowid
        FROM {ROWS} r
        LEFT JOIN claim_origins o ON o.key = r.origin
        LEFT JOIN claim_sections s ON s.key = r.section"""
"""``claims`` since m032: the columns of the table it was, in its order, then ``rowid``. The
joins are LEFT (on unique keys): a query that reads no plan id, time, check or heading does
not join at all, and a row whose key lost its entry still shows (with NULL), never hides."""

_KEYS = """
        INSERT INTO claim_origins (plan_id, created_at, support_check)
        SELECT new.plan_id, new.created_at, coalesce(new.support_check, '')
        WHERE NOT EXISTS (SELECT 1 FROM claim_origins WHERE plan_id = new.plan_id
            AND created_at = new.created_at AND support_check = coalesce(new.support_check, ''))
        AND new.plan_id IS NOT NULL AND new.created_at IS NOT NULL;
        INSERT INTO claim_sections (section) SELECT new.section
        WHERE NOT EXISTS (SELECT 1 FROM claim_sections WHERE section = new.section)
        AND new.section IS NOT NULL;"""
"""A new plan id, time, check or heading keyed: inserted only when missing, never by ``OR
IGNORE`` (an ``INSERT OR REPLACE INTO claims`` hands its conflict policy to the statements of
the trigger, and a replaced key would leave claims naming a row gone)."""
_ORIGIN = (
    "(SELECT key FROM claim_origins WHERE plan_id = new.plan_id "
    "AND created_at = new.created_at AND support_check = coalesce(new.support_check, ''))"
)
_SECTION = "(SELECT key FROM claim_sections WHERE section = new.section)"

_ONE = "".join(
    f"""
            UPDATE {ROWS} SET {column} = {value}
            WHERE rowid = old.rowid AND new.{column} IS NOT old.{column};"""
    for column, value in (
        ("id", "new.id"),
        ("page_slug", "new.page_slug"),
        ("section", _SECTION),
        ("status", "new.status"),
        ("trust", "new.trust"),
        ("text", "new.text"),
    )
)
"""The columns the search triggers watch (``UPDATE OF``), each written alone and only when it
changed, so an update through the view fires what the same update of the table did; the other
columns are written by every update (the doctor's change log names every row an update touched,
as the table's trigger did, even when no value changed)."""

CLAIMS_WRITERS = f"""
        CREATE TRIGGER claims_insert INSTEAD OF INSERT ON claims BEGIN{_KEYS}
            INSERT INTO {ROWS} (rowid, id, page_slug, section, position, text, status, trust,
                                origin, superseded_by, derived_from, support)
            VALUES (new.rowid, new.id, new.page_slug, {_SECTION}, new.position, new.text,
                    new.status, new.trust, {_ORIGIN}, new.superseded_by,
                    coalesce(new.derived_from, '[]'), coalesce(new.support, ''));
        END;
        CREATE TRIGGER claims_update INSTEAD OF UPDATE ON claims BEGIN{_KEYS}
            UPDATE {ROWS} SET position = new.position, origin = {_ORIGIN},
                superseded_by = new.superseded_by, derived_from = new.derived_from,
                support = new.support
            WHERE rowid = old.rowid;{_ONE}
            UPDATE {ROWS} SET rowid = new.rowid
            WHERE rowid = old.rowid AND new.rowid IS NOT old.rowid;
        END;
        CREATE TRIGGER claims_delete INSTEAD OF DELETE ON claims BEGIN
            DELETE FROM {ROWS} WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER claim_origins_kept BEFORE UPDATE ON claim_origins BEGIN
            SELECT RAISE(ABORT, 'claim_origins rows are never changed: add a row instead');
        END;
        CREATE TRIGGER claim_origins_kept_delete BEFORE DELETE ON claim_origins BEGIN
            SELECT RAISE(ABORT, 'claim_origins rows are never deleted');
        END;
        CREATE TRIGGER claim_sections_kept BEFORE UPDATE ON claim_sections BEGIN
            SELECT RAISE(ABORT, 'claim_sections rows are never changed: add a row instead');
        END;
        CREATE TRIGGER claim_sections_kept_delete BEFORE DELETE ON claim_sections BEGIN
            SELECT RAISE(ABORT, 'claim_sections rows are never deleted');
        END"""
"""Writers of ``claims`` other than the door's (a script, a test, a tool): an insert or update
through the view gets its plan id, time, check and heading keyed (``claim_sections`` and
``claim_origins`` grow by what is new); the text is written, so re-indexed, only when it
changed, as an ``UPDATE OF`` trigger of the table would have seen it. The two small tables only grow:
a row changed or deleted would change many claims behind the triggers that log a claim's
change (search, doctor), so either is refused."""


@migration
def m032_claim_strings_once() -> str:
    """Issue 25 item 5: a claim's plan id, time, support check and heading stored once (see the
    module). The data step moves every row into ``claim_rows`` under the same rowid, drops the
    table, renames the new one (foreign keys of ``evidence_rows``, ``evidence_cited`` and
    ``vectors`` follow it) and makes the indexes and triggers the table had again on it; the
    space the strings took becomes free pages (``VACUUM`` gives it back to the file system)."""
    return """
        CREATE TABLE claim_origins (
            key INTEGER PRIMARY KEY,
            plan_id TEXT NOT NULL,          -- plans.id of the plan whose apply wrote the claim
            created_at TEXT NOT NULL,
            support_check TEXT NOT NULL,    -- the support check that admitted it ('' if none)
            UNIQUE (plan_id, created_at, support_check)
        );
        CREATE TABLE claim_sections (
            key INTEGER PRIMARY KEY,
            section TEXT NOT NULL UNIQUE    -- a page's section heading
        )
    """


def _move_claims(db: sqlite3.Connection) -> None:
    schema = db.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'claims' "
        "AND type IN ('trigger', 'index') AND sql IS NOT NULL ORDER BY rowid"
    ).fetchall()
    broken = db.execute("PRAGMA foreign_key_check").fetchall()
    count = db.execute("SELECT count(*) FROM claims").fetchone()[0]
    db.execute(
        "INSERT INTO claim_origins (plan_id, created_at, support_check) "
        "SELECT plan_id, created_at, support_check FROM claims "
        "GROUP BY plan_id, created_at, support_check ORDER BY min(rowid)"
    )
    db.execute(
        "INSERT INTO claim_sections (section) SELECT section FROM claims "
        "GROUP BY section ORDER BY min(rowid)"
    )
    db.execute(f"""
        CREATE TABLE {ROWS}_new (
            id TEXT PRIMARY KEY,
            page_slug TEXT NOT NULL,        -- '' for entries of wiki/context.md
            section INTEGER NOT NULL REFERENCES claim_sections(key),
            position INTEGER NOT NULL,      -- order within the page
            text TEXT NOT NULL,
            status TEXT NOT NULL,           -- active | pending | quarantined | superseded | retracted
            trust TEXT NOT NULL,
            origin INTEGER NOT NULL REFERENCES claim_origins(key),
            superseded_by TEXT,
            derived_from TEXT NOT NULL DEFAULT '[]',
            support TEXT NOT NULL DEFAULT ''
        )""")
    db.execute(
        f"INSERT INTO {ROWS}_new (rowid, id, page_slug, section, position, text, status, trust, "
        "origin, superseded_by, derived_from, support) "
        "SELECT c.rowid, c.id, c.page_slug, s.key, c.position, c.text, c.status, c.trust, o.key, "
        "c.superseded_by, c.derived_from, c.support FROM claims c "
        "JOIN claim_sections s ON s.section = c.section "
        "JOIN claim_origins o ON o.plan_id = c.plan_id AND o.created_at = c.created_at "
        "AND o.support_check = c.support_check ORDER BY c.rowid"
    )
    moved = db.execute(f"SELECT count(*) FROM {ROWS}_new").fetchone()[0]
    if moved != count:
        raise sqlite3.DatabaseError(f"m032 moved {moved} of {count} claims")
    db.execute("DROP TABLE claims")
    # Renamed twice: to ``claims`` (the name the other tables' foreign keys give), then to
    # ``claim_rows``, which rewrites those references (SQLite >= 3.26, legacy_alter_table off).
    db.execute(f"ALTER TABLE {ROWS}_new RENAME TO claims")
    db.execute(f"ALTER TABLE claims RENAME TO {ROWS}")
    db.execute(CLAIMS_VIEW)
    for kind, name, sql in schema:
        made = on_rows(str(sql))
        if made == sql:
            raise sqlite3.DatabaseError(f"m032: can't move {kind} {name} to {ROWS}")
        db.execute(made)
    for statement in CLAIMS_WRITERS.split("END;"):
        db.execute(statement if statement.rstrip().endswith("END") else statement + "END")
    if db.execute("PRAGMA foreign_key_check").fetchall() != broken:
        raise sqlite3.DatabaseError("m032 left a foreign key unmatched")


DATA_STEPS["m032_claim_strings_once"] = _move_claims
FOREIGN_KEYS_OFF.add("m032_claim_strings_once")
