"""The reads the web desk makes of a vault of a PostgreSQL database beyond the API's
(:mod:`affidavit.web.pg`): a page as it is before a plan changes it, the sources and plans behind
a page, the inbox's slug reservations, and the audit log newest first. Read-only, parameterised
SQL, on a connection the caller holds in one snapshot."""

from __future__ import annotations

from typing import Any

from .pg_served import Conn, Row, _x


def page_before(conn: Conn, schema: str, slug: str) -> tuple[str, list[str]] | None:
    """A page's title and its active claims' texts (at most 200, in page order), or None."""
    found = _x(conn, schema, "SELECT title FROM {s}.pages WHERE slug = %s", (slug,))
    if not found:
        return None
    claims = _x(
        conn, schema,
        "SELECT text FROM {s}.claims WHERE page_slug = %s AND status = 'active' "
        "ORDER BY position, id LIMIT 200", (slug,),
    )  # fmt: skip
    return str(found[0]["title"]), [str(r["text"]) for r in claims]


def page_sources(conn: Conn, schema: str, slug: str) -> list[dict[str, Any]]:
    """The sources behind a page's active claims, most cited first (as on SQLite)."""
    found = _x(
        conn, schema,
        "SELECT s.id, s.name, s.trust, count(DISTINCT c.id) AS claims FROM {s}.claims c "
        "JOIN {s}.evidence e ON e.claim_id = c.id JOIN {s}.sources s ON s.id = e.source_id "
        "WHERE c.page_slug = %s AND c.status = 'active' GROUP BY s.id, s.name, s.trust "
        'ORDER BY 4 DESC, s.name COLLATE "C"', (slug,),
    )  # fmt: skip
    return [{"id": r["id"], "name": r["name"], "trust": r["trust"], "claims": r["claims"]}
            for r in found]  # fmt: skip


def page_plans(conn: Conn, schema: str, slug: str, limit: int) -> list[Row]:
    """The applied plans that wrote a page (created it, or wrote one of its claims), newest
    first: a page's history where no git repository keeps it."""
    return _x(
        conn, schema,
        "SELECT id, author, origin, decided_at, created_at FROM {s}.plans WHERE id IN ("
        "SELECT plan_id FROM {s}.pages WHERE slug = %s UNION "
        "SELECT plan_id FROM {s}.claims WHERE page_slug = %s) "
        "ORDER BY coalesce(decided_at, created_at) DESC, id LIMIT %s", (slug, slug, limit),
    )  # fmt: skip


def reservations(conn: Conn, schema: str) -> dict[str, str]:
    """The slugs pending plans reserve, with the plan reserving each."""
    found = _x(conn, schema, "SELECT slug, plan_id FROM {s}.slug_reservations")
    return {str(r["slug"]): str(r["plan_id"]) for r in found}


def existing_pages(conn: Conn, schema: str, slugs: list[str]) -> set[str]:
    found = _x(conn, schema, "SELECT slug FROM {s}.pages WHERE slug = ANY(%s)", (slugs,))
    return {str(r["slug"]) for r in found}


def source_names(conn: Conn, schema: str, ids: list[str]) -> dict[str, str]:
    found = _x(conn, schema, "SELECT id, name FROM {s}.sources WHERE id = ANY(%s)", (ids,))
    return {str(r["id"]): str(r["name"]) for r in found}


def graph_rows(
    conn: Conn, schema: str, sources: bool
) -> tuple[dict[str, str], list[tuple[str, str]], list[tuple[str, str, str]] | None]:
    """The rows of the wiki's graph (:func:`affidavit.service.graph.graph_of`): pages by slug
    (bytewise, as SQLite orders them), links, and with ``sources`` each page's cited sources."""
    pages = {
        str(r["slug"]): str(r["title"])
        for r in _x(conn, schema, 'SELECT slug, title FROM {s}.pages ORDER BY slug COLLATE "C"')
    }
    links = [
        (str(r["src"]), str(r["dst"])) for r in _x(conn, schema, "SELECT src, dst FROM {s}.links")
    ]
    if not sources:
        return pages, links, None
    cites = _x(
        conn, schema,
        "SELECT DISTINCT c.page_slug, s.id, s.name FROM {s}.claims c "
        "JOIN {s}.evidence e ON e.claim_id = c.id JOIN {s}.sources s ON s.id = e.source_id "
        "WHERE c.status = 'active' AND c.page_slug != ''",
    )  # fmt: skip
    return pages, links, [(str(r["page_slug"]), str(r["id"]), str(r["name"])) for r in cites]


def audit_newest(conn: Conn, schema: str, before: int, limit: int) -> list[Row]:
    """Audit entries before ``before``, newest first, at most ``limit``."""
    return _x(
        conn, schema,
        "SELECT seq, at, action, plan_id, actor, hash FROM {s}.audit WHERE seq < %s "
        "ORDER BY seq DESC LIMIT %s", (before, limit),
    )  # fmt: skip


__all__ = [
    "audit_newest",
    "existing_pages",
    "graph_rows",
    "page_before",
    "page_plans",
    "page_sources",
    "reservations",
    "source_names",
]
