"""The context (``wiki/context.md``) on PostgreSQL (``pg006_context``): its entries are claims of
page ``''``, as on SQLite, written by the door's ``update_context`` (:mod:`.postgres_content`).

Before a plan changes the context, the door stores ``context.md`` as it was
(``context_snapshots``, W6); after, when the context passes its line cap
(``context_max_lines``), the oldest entries move to the ``context-archive`` page as SQLite's
door moves them (:meth:`affidavit.store.writer.Writer.spill_context`): never truncated. Both
render ``context.md`` with the renderer SQLite vaults use (:mod:`affidavit.store.render`), over
an in-memory SQLite database holding the rows it reads (:data:`RENDER_SCHEMA`, which the mirror's
shadow uses too), so the same rows give the same bytes.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from ..errors import IntegrityError
from ..sources.extract import MEDIA_EXTENSIONS
from ..store.render import CONTEXT_ARCHIVE, context_claims, context_head, context_markdown

Conn = psycopg.Connection[dict[str, Any]]
_HEX64 = re.compile(r"[0-9a-f]{64}")

RENDER_SCHEMA = """
CREATE TABLE pages (slug TEXT PRIMARY KEY, title TEXT, summary TEXT, category TEXT,
                    created_at TEXT, updated_at TEXT);
CREATE TABLE claims (id TEXT PRIMARY KEY, page_slug TEXT, section TEXT, position INTEGER,
                     text TEXT, status TEXT, trust TEXT, superseded_by TEXT, created_at TEXT);
CREATE INDEX claims_page ON claims (page_slug, position);
CREATE TABLE evidence (claim_id TEXT, idx INTEGER, source_id TEXT, quote TEXT, start INTEGER,
                       "end" INTEGER, location TEXT, PRIMARY KEY (claim_id, idx));
CREATE INDEX evidence_source ON evidence (source_id);
CREATE TABLE sources (id TEXT PRIMARY KEY, name TEXT, original_file TEXT, status TEXT);
CREATE TABLE links (src TEXT, dst TEXT);
CREATE TABLE audit (seq INTEGER PRIMARY KEY, at TEXT, action TEXT, plan_id TEXT, actor TEXT,
                    detail TEXT);
"""
"""The tables and columns :mod:`affidavit.store.render` reads, for an in-memory database."""

ARCHIVE_TITLE = "Context archive"
ARCHIVE_SUMMARY = "Overview entries moved out of context.md to keep it under its line cap."
ARCHIVE_SECTION = "Archived context"


def source_file(source_id: str, media_type: str) -> str:
    """``sources/<sha256>.<ext>``: where a source's original bytes are in a mirror (the name
    ``affidavit sources add`` gives it in a SQLite vault); the id is checked, never joined raw."""
    if not isinstance(source_id, str) or not _HEX64.fullmatch(source_id):
        raise IntegrityError(
            f"{source_id!r} is not a source id: the database was altered; restore it from a backup."
        )
    return f"sources/{source_id}.{MEDIA_EXTENSIONS.get(media_type, 'bin')}"


def render_db() -> sqlite3.Connection:
    """An empty in-memory database with :data:`RENDER_SCHEMA`."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript(RENDER_SCHEMA)
    return db


def _q(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


def _context_db(conn: Conn, schema: str) -> sqlite3.Connection:
    """The active context entries with their evidence and cited sources, and the pages and links
    context.md's head counts (:func:`~affidavit.store.render.context_head`), in a :func:`render_db`."""
    cur = conn.cursor(row_factory=tuple_row)
    claims = cur.execute(
        _q("SELECT id, page_slug, section, position, text, status, trust, superseded_by, "
           "created_at FROM {s}.claims WHERE page_slug = '' AND status = 'active'", schema)
    ).fetchall()  # fmt: skip
    evidence = cur.execute(
        _q('SELECT e.claim_id, e.idx, e.source_id, e.quote, e.start, e."end", e.location '
           "FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id "
           "WHERE c.page_slug = '' AND c.status = 'active'", schema)
    ).fetchall()  # fmt: skip
    sources = cur.execute(
        _q("SELECT id, name, media_type, status FROM {s}.sources WHERE id = ANY(%s)", schema),
        (sorted({str(e[2]) for e in evidence}),),
    ).fetchall()
    pages = cur.execute(_q("SELECT slug, title, category FROM {s}.pages", schema)).fetchall()
    links = cur.execute(_q("SELECT src, dst FROM {s}.links", schema)).fetchall()
    db = render_db()
    db.executemany("INSERT INTO pages (slug, title, category) VALUES (?, ?, ?)", pages)
    db.executemany("INSERT INTO links VALUES (?, ?)", links)
    db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", claims)
    db.executemany("INSERT INTO evidence VALUES (?, ?, ?, ?, ?, ?, ?)", evidence)
    db.executemany(
        "INSERT INTO sources VALUES (?, ?, ?, ?)",
        [(s[0], s[1], source_file(str(s[0]), str(s[2])), s[3]) for s in sources],
    )
    return db


def render(conn: Conn, schema: str) -> str:
    """``wiki/context.md`` as the vault's rows render it now (the same bytes as SQLite's)."""
    db = _context_db(conn, schema)
    try:
        return context_markdown(context_claims(db), context_head(db))
    finally:
        db.close()


def snapshot(conn: Conn, schema: str, plan_id: str, now: str) -> None:
    """Keep ``context.md`` as it is before ``plan_id`` changes it (W6)."""
    conn.execute(
        _q("INSERT INTO {s}.context_snapshots (plan_id, created_at, content) "
           "VALUES (%s, %s, %s)", schema),
        (plan_id, now, render(conn, schema)),
    )  # fmt: skip


def spill(conn: Conn, schema: str, plan_id: str, now: str, cap: int) -> list[str]:
    """Move the oldest context entries to the archive page until ``context.md`` fits in ``cap``
    lines, as SQLite's door does; returns the ids moved, oldest first (the applied entry lists
    them: the mirror follows them from there). Each moved claim keeps its place in the context
    (``archived_from``)."""
    db = _context_db(conn, schema)
    try:
        entries = context_claims(db)
        head = context_head(db)
    finally:
        db.close()
    moved: list[str] = []
    while entries and context_markdown(entries, head).count("\n") > cap:
        moved.append(entries.pop(0).id)
    if not moved:
        return []
    conn.execute(
        _q("INSERT INTO {s}.pages (slug, title, summary, category, created_at, updated_at, "
           "plan_id) VALUES (%s, %s, %s, 'meta', %s, %s, %s) ON CONFLICT (slug) DO NOTHING",
           schema),
        (CONTEXT_ARCHIVE, ARCHIVE_TITLE, ARCHIVE_SUMMARY, now, now, plan_id),
    )  # fmt: skip
    row = conn.execute(
        _q("SELECT coalesce(max(position), -1) + 1 AS next FROM {s}.claims "
           "WHERE page_slug = %s", schema), (CONTEXT_ARCHIVE,),
    ).fetchone()  # fmt: skip
    after = int(row["next"]) if row else 0
    for k, claim in enumerate(moved):
        conn.execute(
            _q("UPDATE {s}.claims SET page_slug = %s, section = %s, position = %s, "
               "archived_from = position WHERE id = %s AND page_slug = ''", schema),
            (CONTEXT_ARCHIVE, ARCHIVE_SECTION, after + k, claim),
        )  # fmt: skip
    conn.execute(
        _q("UPDATE {s}.pages SET updated_at = %s WHERE slug = %s OR slug IN (SELECT page_slug "
           "FROM {s}.claims WHERE superseded_by = ANY(%s) AND page_slug != '')", schema),
        (now, CONTEXT_ARCHIVE, moved),
    )  # fmt: skip
    return moved
