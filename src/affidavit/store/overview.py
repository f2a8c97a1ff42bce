"""The head of ``wiki/context.md``: what the wiki covers and its main topics, as navigation.

context.md is what a newcomer reads first. Its entries are claims (each a sentence of a source,
cited); above them the host writes two lines of its own, from the database alone, the way
``index.md`` lists pages — counts and links to pages, never a sentence about the sources:

- what the wiki holds: its pages by category ("9 pages — 3 in sources, 6 in topics"), with a
  link to the index;
- its **main topics**: the pages (other than the sources' own pages) that the most sources'
  pages link to, two or more, with how many ("[France](france.md) (2 sources)"): the
  subjects the wiki's sources share. (The extractive engine links a source's page to every topic page its first
  chunk feeds, and to every topic page a later chunk creates.) Titles are the pages' own,
  shown as link text. The head reads the links (a few per source), never the claims, so it
  costs the door little however many claims the topic pages hold.

The head always has the same number of lines (:data:`HEAD_LINES`), whatever the wiki holds, so
the line cap (W6) counts it once and a later batch never pushes context.md past its cap.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

MAIN_TOPICS = 12
"""Main topics listed at most."""
MIN_SOURCES = 2
"""Sources' pages that must link to a page for it to be a main topic: a subject they share."""
NOT_TOPICS = ("sources", "meta")
"""Categories whose pages are no topic: a source's own page, the context archive."""


def category_counts(db: sqlite3.Connection) -> list[tuple[str, int]]:
    """Pages by category (category order), the context archive left out."""
    rows = db.execute(
        "SELECT category, count(*) FROM pages WHERE slug != 'context-archive' "
        "GROUP BY category ORDER BY category"
    ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def main_topics(db: sqlite3.Connection, limit: int = MAIN_TOPICS) -> list[tuple[str, str, int]]:
    """(slug, title, sources) of the pages outside :data:`NOT_TOPICS` that :data:`MIN_SOURCES`
    pages of category "sources" or more link to: linked from the most first, then by slug."""
    marks = ", ".join("?" for _ in NOT_TOPICS)
    rows = db.execute(
        "SELECT p.slug, p.title, count(DISTINCT l.src) AS n FROM links l "
        "JOIN pages s ON s.slug = l.src JOIN pages p ON p.slug = l.dst "
        f"WHERE s.category = ? AND p.category NOT IN ({marks}) "
        "GROUP BY p.slug HAVING n >= ? ORDER BY n DESC, p.slug LIMIT ?",
        (NOT_TOPICS[0], *NOT_TOPICS, MIN_SOURCES, limit),
    ).fetchall()
    return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]


def overview_head(db: sqlite3.Connection, escape: Callable[[str], str]) -> list[str]:
    """The lines between context.md's introduction and its entries (:data:`HEAD_LINES` of
    them); ``escape`` makes a title safe as link text (the renderer's)."""
    counts = category_counts(db)
    total = sum(n for _, n in counts)
    held = ", ".join(f"{n} in {escape(category)}" for category, n in counts)
    held = f"{total} page{'s' if total != 1 else ''} — {held}" if counts else "no pages yet"
    topics = main_topics(db)
    if topics:
        named = " · ".join(
            f"[{escape(title)}]({slug}.md) ({n} sources)" for slug, title, n in topics
        )
    else:
        named = f"none yet (no page is linked from {MIN_SOURCES} sources' pages or more)."
    return [
        f"**What it covers:** {held} (the [Index](index.md) lists every page).",
        "",
        f"**Main topics** (the pages most sources link to): {named}",
        "",
    ]


HEAD_LINES = 4
"""Lines of :func:`overview_head`, blank ones included."""
