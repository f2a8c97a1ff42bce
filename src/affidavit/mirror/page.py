"""One page of a PostgreSQL vault rendered as the mirror renders it (the same renderer, the same
bytes as the page's file in an up-to-date ``affidavit mirror``), from the rows that page needs
only — its claims of every status and their evidence, the sources they cite, its links and the
titles at their other ends, the pages of its claims' successors, and the "retracted" audit
entries when it has retracted claims — never the whole wiki: what the daemon's page route shows.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from ..store.render import render_page
from .database import source_file
from .shadow import Shadow


def render_one(conn: psycopg.Connection[Any], schema: str, slug: str) -> str | None:
    """The markdown of page ``slug`` as of the caller's transaction; None when there is none."""
    cur = conn.cursor(row_factory=tuple_row)

    def rows(text: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return cur.execute(sql.SQL(text).format(s=sql.Identifier(schema)), params).fetchall()

    page = rows(
        "SELECT slug, title, summary, category, created_at, updated_at FROM {s}.pages "
        "WHERE slug = %s", (slug,),
    )  # fmt: skip
    if not page:
        return None
    claims = rows(
        "SELECT id, page_slug, section, position, text, status, trust, superseded_by, created_at "
        "FROM {s}.claims WHERE page_slug = %s", (slug,),
    )  # fmt: skip
    ids = [c[0] for c in claims]
    evidence = rows(
        'SELECT claim_id, idx, source_id, quote, start, "end", location FROM {s}.evidence '
        "WHERE claim_id = ANY(%s)", (ids,),
    )  # fmt: skip
    sources = rows(
        "SELECT id, name, media_type, status FROM {s}.sources WHERE id = ANY(%s)",
        (sorted({e[2] for e in evidence}),),
    )
    links = rows("SELECT src, dst FROM {s}.links WHERE src = %s OR dst = %s", (slug, slug))
    successors = rows(
        "SELECT id, page_slug, section, position, text, status, trust, superseded_by, created_at "
        "FROM {s}.claims WHERE id = ANY(%s) AND page_slug <> %s",
        ([c[7] for c in claims if c[7]], slug),
    )  # fmt: skip
    others = {s for link in links for s in link} | {c[1] for c in successors}
    titles = rows(
        "SELECT slug, title, summary, category, created_at, updated_at FROM {s}.pages "
        "WHERE slug = ANY(%s) AND slug <> %s", (sorted(others), slug),
    )  # fmt: skip
    retracted = (
        rows(
            "SELECT seq, at, action, plan_id, actor, detail FROM {s}.audit "
            "WHERE action = 'retracted' ORDER BY seq",
            (),
        )
        if any(c[5] == "retracted" for c in claims)
        else []
    )
    shadow = Shadow()
    try:
        db = shadow.db
        db.executemany("INSERT INTO pages VALUES (?, ?, ?, ?, ?, ?)", page + titles)
        db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", claims + successors)
        db.executemany("INSERT INTO evidence VALUES (?, ?, ?, ?, ?, ?, ?)", evidence)
        db.executemany(
            "INSERT INTO sources VALUES (?, ?, ?, ?)",
            [(i, name, source_file(i, media), status) for i, name, media, status in sources],
        )
        db.executemany("INSERT INTO links VALUES (?, ?)", links)
        db.executemany("INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?)", retracted)
        return render_page(db, slug)
    finally:
        shadow.db.close()


__all__ = ["render_one"]
