"""Reading a vault in the desk: pages with their footnotes, sources at a span, search, ask, audit.

Every view reads through :mod:`affidavit.service.vaults` and :mod:`affidavit.service.review`;
``ask`` with "save as a page proposal" is :func:`affidavit.service.vaults.ask` with ``save`` (the
gate, then the inbox), and needs the propose role like the API's route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..service import review
from ..service import vaults as svc
from ..service.graph import page_sources
from ..service.models import AskRequest, PageDetail
from ..vault import Vault
from .desk import WebDesk, WebRefusal

AUDIT_SHOWN = 50
"""Audit entries per page of the desk's audit screen (newest first)."""


def page_view(vault: Vault, slug: str) -> dict[str, Any]:
    """A page as sections of claims, each with numbered footnotes into their sources."""
    page = svc.get_page(vault, slug, with_markdown=False)
    return page_screen(
        page,
        lambda source_id: svc.get_source(vault, source_id).name,
        lambda: review.page_history(vault, slug),
        lambda: page_sources(vault, page.slug),
    )


def page_screen(
    page: PageDetail,
    name_of: Callable[[str], str],
    history: Callable[[], list[Any]],
    sources: Callable[[], list[dict[str, Any]]],
) -> dict[str, Any]:
    """The page screen of either backend: ``name_of`` a source's name by id, ``history`` the
    changes that wrote the page (newest first), ``sources`` the sources behind it."""
    sections: dict[str, list[dict[str, Any]]] = {}
    notes: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for claim in page.claims:
        refs = []
        for ev in claim.evidence:
            if ev.source_id not in names:
                names[ev.source_id] = name_of(ev.source_id)
            notes.append({"n": len(notes) + 1, "ev": ev, "name": names[ev.source_id]})
            refs.append(len(notes))
        sections.setdefault(claim.section or "", []).append({"claim": claim, "refs": refs})
    return {
        "page": page,
        "sections": sections,
        "notes": notes,
        "history": history(),
        "sources": sources(),
    }


def audit_view(vault: Vault, before: int | None) -> dict[str, Any]:
    """The audit screen: entries newest first before ``before``, and the chain's verdict."""
    entries, older = review.audit_newest(vault, before, AUDIT_SHOWN)
    return {
        "entries": entries,
        "older": older,
        "newest": before is None,
        "problems": review.audit_verdict(vault),
    }


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/pages")
    async def pages(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        rows = await desk.run(visit, lambda w: w.pages())
        return desk.page("pages.html", **desk.context(visit, pages=rows, title="Pages"))

    @router.get("/web/{vault}/pages/{slug}")
    async def page(request: Request, vault: str, slug: str) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda w: w.page_view(slug))
        return desk.page("page.html", **desk.context(visit, title=view["page"].title, **view))

    @router.get("/web/{vault}/sources")
    async def sources(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        rows = await desk.run(visit, lambda w: w.sources())
        return desk.page("sources.html", **desk.context(visit, sources=rows, title="Sources"))

    @router.get("/web/{vault}/sources/{source_id}")
    async def source(
        request: Request, vault: str, source_id: str, start: int = 0, end: int = 0
    ) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda w: w.source_view(source_id, start, end))
        title = f"Source {view['source'].name}"
        return desk.page("source.html", **desk.context(visit, title=title, **view))

    @router.get("/web/{vault}/search")
    async def search(request: Request, vault: str, q: str = "") -> Response:
        visit = desk.visit(request, vault)
        if len(q) > 1000:
            raise WebRefusal(400, "the query is longer than 1000 characters.", "Shorten it.")
        result = await desk.run(visit, lambda w: w.search(q)) if q.strip() else None
        context = desk.context(visit, title="Search and ask", q=q, result=result, answer=None)
        return desk.page("search.html", **context)

    @router.post("/web/{vault}/ask")
    async def ask(request: Request, vault: str) -> Response:
        visit = await desk.post(request, vault)
        question = visit.field("question").strip()[:2000]
        save = visit.field("save") == "1"
        if save:
            desk.require(visit, "propose", "saving an answer as a page proposal")
        if not question:
            raise WebRefusal(400, "ask a question.", "Type it in the box.")
        actor = visit.session.principal.actor  # a token's saved answer is its plan (W13)
        answer = await desk.run(
            visit, lambda w: w.ask(AskRequest(question=question, save=save), actor)
        )
        context = desk.context(visit, title="Search and ask", q=question, result=None)
        return desk.page("search.html", answer=answer, **context)

    @router.get("/web/{vault}/audit")
    async def audit(request: Request, vault: str, before: int | None = None) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda w: w.audit_view(before))
        return desk.page("audit.html", **desk.context(visit, title="Audit log", **view))


__all__ = ["AUDIT_SHOWN", "audit_view", "page_screen", "page_view", "routes"]
