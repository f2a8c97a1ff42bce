"""The wiki as a graph in the desk: pages and links (and sources, on demand), drawn in the browser
by Cytoscape.js (vendored as ``static/cytoscape.min.js``, MIT, no build step) from
:func:`affidavit.service.graph.wiki_graph`; orphans and broken links are also listed as text."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from .desk import SECURITY_HEADERS, WebDesk


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/graph")
    async def graph_page(request: Request, vault: str, sources: int = 0) -> Response:
        visit = desk.visit(request, vault)
        graph = await desk.run(visit, lambda w: w.graph(False))
        context = desk.context(
            visit,
            title="Graph",
            pages=sum(1 for n in graph["nodes"] if n["data"]["kind"] == "page"),
            links=len(graph["edges"]),
            orphans=graph["orphans"],
            broken=graph["broken"],
            sources=bool(sources),
        )
        return desk.page("graph.html", **context)

    @router.get("/web/{vault}/graph.json")
    async def graph_json(request: Request, vault: str, sources: int = 0) -> Response:
        visit = desk.visit(request, vault)
        graph = await desk.run(visit, lambda w: w.graph(bool(sources)))
        return JSONResponse(graph, headers=SECURITY_HEADERS)


__all__ = ["routes"]
