"""The wiki as a graph, for the desk's graph view: pages and their links, and (on demand) the
sources behind each page. Read-only; orphans (pages nothing links to) and broken links (links to
a page that doesn't exist) are marked so a person sees the wiki's shape and its holes at a glance.
"""

from __future__ import annotations

from typing import Any

from ..vault import Vault

GENERATED = ("index", "log", "context")
"""Pages the host generates: never orphans (nothing is expected to link to them)."""


def wiki_graph(vault: Vault, *, sources: bool = False) -> dict[str, Any]:
    """Cytoscape-ready elements: ``{"nodes": [...], "edges": [...], "orphans": [...],
    "broken": [...]}``; each node's ``data`` has ``id``, ``label``, ``kind`` (page, missing,
    source) and ``href`` (the desk's path, relative to the vault)."""
    pages = {
        str(r[0]): str(r[1])
        for r in vault.db.execute("SELECT slug, title FROM pages ORDER BY slug")
    }
    links = [(str(r[0]), str(r[1])) for r in vault.db.execute("SELECT src, dst FROM links")]
    cites = None
    if sources:
        cites = [
            (str(r[0]), str(r[1]), str(r[2]))
            for r in vault.db.execute(
                "SELECT DISTINCT c.page_slug, s.id, s.name FROM claims c "
                "JOIN evidence e ON e.claim_id = c.id JOIN sources s ON s.id = e.source_id "
                "WHERE c.status = 'active' AND c.page_slug != ''"
            )
        ]
    return graph_of(pages, links, cites)


def graph_of(
    pages: dict[str, str],
    links: list[tuple[str, str]],
    cites: list[tuple[str, str, str]] | None,
) -> dict[str, Any]:
    """:func:`wiki_graph` of any backend's rows: ``pages`` (slug → title, in slug order),
    ``links`` (src, dst), and ``cites`` (page, source id, source name) when sources are wanted."""
    linked = {dst for src, dst in links if src != dst}
    orphans = [slug for slug in pages if slug not in linked and slug not in GENERATED]
    broken = sorted({(src, dst) for src, dst in links if dst not in pages})
    nodes: list[dict[str, Any]] = [
        {
            "data": {"id": slug, "label": title, "kind": "page", "href": f"pages/{slug}"},
            "classes": "page orphan" if slug in orphans else "page",
        }
        for slug, title in pages.items()
    ]
    nodes += [
        {
            "data": {"id": dst, "label": f"{dst} (missing)", "kind": "missing", "href": ""},
            "classes": "missing",
        }
        for dst in sorted({dst for _, dst in broken})
    ]
    edges: list[dict[str, Any]] = [
        {
            "data": {"id": f"{src}->{dst}", "source": src, "target": dst},
            "classes": "broken" if dst not in pages else "link",
        }
        for src, dst in links
        if src in pages
    ]
    if cites is not None:
        seen: set[str] = set()
        for slug, source_id, name in cites:
            if slug not in pages:
                continue
            node = f"source:{source_id}"
            if node not in seen:
                seen.add(node)
                nodes.append(
                    {
                        "data": {
                            "id": node,
                            "label": str(name),
                            "kind": "source",
                            "href": f"sources/{source_id}",
                        },
                        "classes": "source",
                    }
                )
            edges.append(
                {
                    "data": {"id": f"{slug}=>{node}", "source": slug, "target": node},
                    "classes": "cites",
                }
            )
    return {
        "nodes": nodes,
        "edges": edges,
        "orphans": orphans,
        "broken": [{"page": src, "to": dst} for src, dst in broken],
    }


def page_sources(vault: Vault, slug: str) -> list[dict[str, Any]]:
    """The sources behind a page's active claims, most cited first."""
    rows = vault.db.execute(
        "SELECT s.id, s.name, s.trust, COUNT(DISTINCT c.id) FROM claims c "
        "JOIN evidence e ON e.claim_id = c.id JOIN sources s ON s.id = e.source_id "
        "WHERE c.page_slug = ? AND c.status = 'active' GROUP BY s.id ORDER BY 4 DESC, s.name",
        (slug,),
    ).fetchall()
    return [{"id": r[0], "name": r[1], "trust": r[2], "claims": r[3]} for r in rows]


__all__ = ["graph_of", "page_sources", "wiki_graph"]
