"""What the desk's handlers read and decide through, behind one small protocol (:class:`DeskWiki`)
both backends implement: a SQLite :class:`~affidavit.vault.Vault` here (:class:`SqliteDesk`), a
vault of a PostgreSQL database in :mod:`.pg` (over :class:`~affidavit.service.pg_vaults.PgVault`).
The handlers, their session, CSRF, origin and role checks and the templates are one copy; each
method returns what a template shows, or the flash message of a decision and the plan to show
next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..jobs.models import Job
from ..lint.findings import Status, StoredFinding
from ..server.registry import ServedVault
from ..service import review
from ..service import vaults as svc
from ..service.models import AskRequest, AskResponse, PageSummary, SearchResponse, SourceOut
from ..vault import Vault


@dataclass(frozen=True)
class Choice:
    """A person's decision on one plan's screen: the button (``all``, ``selected``,
    ``supported``), the operations ticked (``op``) and said no to (``no``), as the form sent them,
    and the fingerprint of the plan as the screen showed it (``seen``)."""

    action: str
    ticked: list[str] = field(default_factory=list)
    said_no: list[str] = field(default_factory=list)
    seen: str = ""


Decided = tuple[str, str | None]
"""A decision's flash message, and the pending plan to show next (None: the inbox)."""


class DeskWiki(Protocol):
    """One vault as the desk's handlers see it, for one request."""

    backend: str
    """``sqlite`` or ``postgresql``: what a page not ported says it is served over."""

    def pages(self) -> list[PageSummary]: ...

    def page_view(self, slug: str) -> dict[str, Any]:
        """A page as sections of claims with numbered footnotes, its sources and history."""
        ...

    def sources(self) -> list[SourceOut]: ...

    def source_view(self, source_id: str, start: int, end: int) -> dict[str, Any]:
        """A source with a span of its stored text, its flags, and what retracting it takes."""
        ...

    def retract_source(self, source_id: str, reason: str, actor: str) -> Decided:
        """Propose retracting a source (``affidavit sources retract``): the plan to show next."""
        ...

    def search(self, query: str) -> SearchResponse: ...

    def ask(self, request: AskRequest, actor: str) -> AskResponse: ...

    def audit_view(self, before: int | None) -> dict[str, Any]: ...

    def inbox_view(self, wanted: dict[str, str]) -> dict[str, Any]: ...

    def supported_view(self, wanted: dict[str, str]) -> dict[str, Any]: ...

    def plan_view(self, plan_id: str, vault_name: str) -> dict[str, Any]: ...

    def approve(self, plan_id: str, choice: Choice, actor: str, vault_name: str) -> Decided:
        """Approve what ``choice`` says of one plan, refusing a stale screen first."""
        ...

    def reject(self, plan_id: str, reason: str, seen: str, actor: str) -> Decided: ...

    def approve_supported(self, ids: list[str], seen: str, actor: str, vault_name: str) -> str:
        """What is supported of several persons' plans, one batch (the inbox's bulk approval)."""
        ...

    def approve_together(self, plan_id: str, seen: str, actor: str, vault_name: str) -> Decided:
        """A plan with the pending plans it needs, dependencies first, one batch."""
        ...

    def findings_page(
        self, status: Status, kind: str, severity: str, offset: int, limit: int
    ) -> tuple[tuple[StoredFinding, ...], int, dict[str, int]]:
        """A page of lint findings, how many match, and how many of each kind have ``status``."""
        ...

    def decide_finding(self, ref: str, status: Status, actor: str, note: str) -> StoredFinding: ...

    def propose_fix(self, ref: str, actor: str) -> tuple[list[str], str]:
        """The fix plan of one finding, pending in the inbox: its ids, or why there is none."""
        ...

    def jobs(self, limit: int) -> list[Job]:
        """The newest jobs."""
        ...

    def graph(self, sources: bool) -> dict[str, Any]:
        """The wiki as Cytoscape elements (:func:`affidavit.service.graph.graph_of`)."""
        ...


class SqliteDesk:
    """:class:`DeskWiki` over a SQLite vault: the desk's views and decisions as they always were
    (:mod:`.browse`, :mod:`.review`, :mod:`.changes`, :mod:`.upkeep`)."""

    backend = "sqlite"

    def __init__(self, vault: Vault, served: ServedVault) -> None:
        self.vault = vault
        self.served = served

    def pages(self) -> list[PageSummary]:
        return svc.list_pages(self.vault)

    def page_view(self, slug: str) -> dict[str, Any]:
        from .browse import page_view

        return page_view(self.vault, slug)

    def sources(self) -> list[SourceOut]:
        return svc.list_sources(self.vault)

    def source_view(self, source_id: str, start: int, end: int) -> dict[str, Any]:
        from .upkeep import source_view

        return source_view(self.vault, source_id, start, end)

    def retract_source(self, source_id: str, reason: str, actor: str) -> Decided:
        done, _ = review.source_retraction(self.vault, source_id, reason, actor, dry_run=False)
        assert done.proposal is not None  # not a dry run
        return done.proposal.message, done.proposal.plan_id

    def search(self, query: str) -> SearchResponse:
        vectors = self.served.vector_search(self.vault)
        return svc.search(self.vault, query, 10, "untrusted", vectors)

    def ask(self, request: AskRequest, actor: str) -> AskResponse:
        return svc.ask(self.vault, request, self.served.vector_search(self.vault), actor)

    def audit_view(self, before: int | None) -> dict[str, Any]:
        from .browse import audit_view

        return audit_view(self.vault, before)

    def inbox_view(self, wanted: dict[str, str]) -> dict[str, Any]:
        from .changes import inbox_view

        return inbox_view(self.vault, wanted)

    def supported_view(self, wanted: dict[str, str]) -> dict[str, Any]:
        from .changes import supported_view

        return supported_view(self.vault, wanted)

    def plan_view(self, plan_id: str, vault_name: str) -> dict[str, Any]:
        from .review import plan_view

        return plan_view(self.vault, plan_id, vault_name)

    def approve(self, plan_id: str, choice: Choice, actor: str, vault_name: str) -> Decided:
        from .review import approve

        return approve(self.vault, plan_id, choice, actor, vault_name)

    def reject(self, plan_id: str, reason: str, seen: str, actor: str) -> Decided:
        from .review import reject

        return reject(self.vault, plan_id, reason, seen, actor)

    def approve_supported(self, ids: list[str], seen: str, actor: str, vault_name: str) -> str:
        from .changes import approve_supported

        return approve_supported(self.vault, ids, seen, actor, vault_name)

    def approve_together(self, plan_id: str, seen: str, actor: str, vault_name: str) -> Decided:
        from .changes import approve_together

        return approve_together(self.vault, plan_id, seen, actor, vault_name)

    def findings_page(
        self, status: Status, kind: str, severity: str, offset: int, limit: int
    ) -> tuple[tuple[StoredFinding, ...], int, dict[str, int]]:
        return review.findings_page(self.vault, status, kind, severity, offset, limit)

    def decide_finding(self, ref: str, status: Status, actor: str, note: str) -> StoredFinding:
        return review.decide_finding(self.vault, ref, status, actor, note)

    def propose_fix(self, ref: str, actor: str) -> tuple[list[str], str]:
        return review.propose_finding_fix(self.vault, ref, actor)

    def jobs(self, limit: int) -> list[Job]:
        from ..jobs.queue import JobQueue

        return JobQueue(self.vault).list(limit=limit)

    def graph(self, sources: bool) -> dict[str, Any]:
        from ..service.graph import wiki_graph

        return wiki_graph(self.vault, sources=sources)


__all__ = ["Choice", "Decided", "DeskWiki", "SqliteDesk"]
