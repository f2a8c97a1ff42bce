"""Existing pages related to a chunk, found with SQLite FTS5 (BM25) — never the whole wiki."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter

from ..agents import person_reserved
from ..providers.base import PageBrief
from ..words import STOPWORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]{2,}")


def keywords(text: str, limit: int = 24) -> list[str]:
    """The most frequent content words of ``text`` (deterministic order)."""
    counts = Counter(
        w.lower().strip("'-") for w in _WORD.findall(text) if w.lower() not in STOPWORDS
    )
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, _ in ranked[:limit] if word]


def match_query(text: str) -> str:
    """The FTS5 query :func:`related_pages` runs for ``text``: its keywords, OR-ed ("" when it
    has none). It reads the text alone, so a host may compute it ahead of time."""
    return " OR ".join('"' + w.replace('"', "") + '"' for w in keywords(text))


def related_pages(
    db: sqlite3.Connection, text: str, limit: int, query: str | None = None
) -> list[PageBrief]:
    """Up to ``limit`` pages whose title or summary best match the chunk's keywords.
    ``query``: :func:`match_query` of ``text``, when computed ahead of time."""
    if limit <= 0:
        return []
    if query is None:
        query = match_query(text)
    if not query:
        return []
    rows = db.execute(
        "SELECT p.slug, p.title, p.summary FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid "
        "WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts), p.slug LIMIT ?",
        (query, limit),
    ).fetchall()
    return [PageBrief(r["slug"], r["title"], r["summary"]) for r in rows]


def known_slugs(db: sqlite3.Connection) -> set[str]:
    """Every slug that exists or is reserved by a person's pending plan (an agent's pending page
    is no slug the owner's ingest must avoid, W13)."""
    pages = {r[0] for r in db.execute("SELECT slug FROM pages")}
    return pages | person_reserved(db)


def source_page(db: sqlite3.Connection, source_id: str) -> str:
    """The page of the ``sources`` category most of ``source_id``'s active claims are on ("" when
    none): a new version's page, its earlier version's claims carried to it."""
    row = db.execute(
        "SELECT c.page_slug FROM evidence_rows e JOIN claims c ON c.id = e.claim_id "
        "JOIN pages p ON p.slug = c.page_slug "
        "WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
        "AND c.status = 'active' AND p.category = 'sources' "
        "GROUP BY c.page_slug ORDER BY count(*) DESC, c.page_slug LIMIT 1",
        (source_id,),
    ).fetchone()
    return str(row[0]) if row else ""
