"""The inbox as a change list: what each pending plan does, where it came from, what it waits for
and which plans must go in before it — read-only, for the desk and the API alike (no rules here).

A plan's **dependencies** are the pending plans that create a page it writes into (``add_claims``
to, or ``link_pages`` from or to, a page that does not exist yet): the door applies them in that
order within one batch (:func:`affidavit.store.batch.dependency_order`) and refuses the later one
alone. The change list names them so a person approves them together.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from .. import inbox
from ..agents import agent_reservations, proposer_of
from ..errors import NotFoundError
from ..sources.store import SourceStore
from ..vault import Vault
from . import vaults as svc
from .models import PlanSummary, Response

Verdict = Literal["supported", "waits", "refused in part"]
ORDERS = ("oldest", "newest")
KINDS = ("ingest", "lint", "doctor", "ask", "retraction", "agent", "api", "other")


class Dependency(Response):
    plan_id: str = Field(description="The pending plan that must go in first.")
    page: str = Field(description="The page it creates that this plan writes into.")
    agent: bool = Field(description="Whether that plan is an agent's (never approved for you).")


class ChangeOut(Response):
    """One pending plan as a line of a change list."""

    plan: PlanSummary
    does: str = Field(description="What approving it does, in one line.")
    kind: str = Field(description=f"Where it came from: one of {', '.join(KINDS)}.")
    origin: str = Field(description="Its origin in words (ingest of which file, lint, …).")
    sources: list[str] = Field(description="The names of the sources its quotes cite.")
    verdict: Verdict = Field(
        description="'supported' (nothing waits for a person's judgement but the approval), "
        "'waits' (some texts are uncertain, W11), 'refused in part' (the gate refused some "
        "operations)."
    )
    after: list[Dependency] = Field(description="Pending plans that must be approved first.")
    before: list[str] = Field(description="Pending plans that need this one first.")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def does(record: inbox.PlanRecord, ops: Iterable[int] | None = None) -> str:
    """What approving ``ops`` (0-based; all operations when None) of a plan does, in one line."""
    chosen = set(range(len(record.plan.operations)) if ops is None else ops)
    created: list[str] = []
    added: dict[str, int] = {}
    links: list[str] = []
    supersedes = retracts = context = 0
    sources: list[str] = []
    worded: list[str] = []
    for i, op in enumerate(record.plan.operations):
        if i not in chosen:
            continue
        kind = op.op
        if kind == "create_page":
            created.append(f"{op.slug} (+{len(op.claims)})")  # type: ignore[union-attr]
        elif kind == "add_claims":
            page = op.page  # type: ignore[union-attr]
            added[page] = added.get(page, 0) + len(op.claims)  # type: ignore[union-attr]
        elif kind == "link_pages":
            links.append(f"{op.page} → {op.to}")  # type: ignore[union-attr]
        elif kind == "supersede_claim":
            supersedes += 1
        elif kind == "retract_claim":
            retracts += 1
        elif kind == "retract_source":
            sources.append(str(op.source)[:12])  # type: ignore[union-attr]
        elif kind == "update_context":
            context += len(op.entries)  # type: ignore[union-attr]
        elif kind == "update_page":
            worded.append(str(op.page))  # type: ignore[union-attr]
    parts = []
    if created:
        shown = ", ".join(created[:4]) + (
            f" and {len(created) - 4} more" if len(created) > 4 else ""
        )
        parts.append(f"creates {shown}")
    if added:
        items = sorted(added.items())
        shown = (
            items[0][0] if len(items) == 1 else ", ".join(f"{page} (+{n})" for page, n in items[:4])
        )
        more = f" and {len(items) - 4} more pages" if len(items) > 4 else ""
        parts.append(f"adds {_plural(sum(added.values()), 'claim')} to {shown}{more}")
    if links:
        more = f" and {len(links) - 3} more" if len(links) > 3 else ""
        parts.append(f"links {', '.join(links[:3])}{more}")
    if supersedes:
        parts.append(f"supersedes {_plural(supersedes, 'claim')}")
    if retracts:
        parts.append(f"retracts {_plural(retracts, 'claim')}")
    if sources:
        parts.append(f"retracts source {', '.join(sources)}")
    if context:
        parts.append(f"writes {_plural(context, 'context entry')}".replace("entrys", "entries"))
    if worded:
        parts.append(f"rewords {', '.join(worded[:3])}" + (" and more" if len(worded) > 3 else ""))
    return "; ".join(parts) or "nothing left to apply"


def kind_of(author: str, origin: str) -> str:
    if proposer_of(author, origin) == "agent":
        return "agent"
    head = origin.split(":", 1)[0]
    return {
        "ingest": "ingest",
        "lint": "lint",
        "doctor": "doctor",
        "ask": "ask",
        "sources retract": "retraction",
        "api": "api",
    }.get(head, "other")


def origin_words(author: str, origin: str) -> str:
    """Where a plan came from, in words (the origin as recorded: untrusted text, shown as text)."""
    head, _, rest = origin.partition(":")
    if head == "ingest" and rest:
        name, _, chunk = rest.rpartition("#")
        return f"ingest of {name or rest}" + (f", part {chunk}" if chunk.isdigit() else "")
    if head == "lint":
        return "a lint finding's fix"
    if head == "doctor":
        return f"a hand edit of {rest}" if rest else "a hand edit"
    if head == "ask":
        return f"a saved answer: {rest}" if rest else "a saved answer"
    if head == "sources retract":
        return f"retracting source {rest}"
    who = "an agent" if proposer_of(author, origin) == "agent" else author
    return f"{who} ({origin})" if origin else who


def _needs(op: object) -> list[str]:
    kind = getattr(op, "op", "")
    if kind == "add_claims":
        return [str(getattr(op, "page", ""))]
    if kind == "link_pages":
        return [str(getattr(op, "page", "")), str(getattr(op, "to", ""))]
    return []


def _verdict(summary: PlanSummary, record: inbox.PlanRecord) -> Verdict:
    if any(not op.passes for op in record.admission.ops):
        return "refused in part"
    return "waits" if summary.waiting else "supported"


class _Deps:
    """The pending plans each pending plan must follow (read once per call)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.reserved = {
            str(r[0]): str(r[1])
            for r in vault.db.execute("SELECT slug, plan_id FROM slug_reservations")
        }
        self.agents = set(agent_reservations(vault.db).values())
        self.exists: dict[str, bool] = {}

    def after(self, record: inbox.PlanRecord, ops: list[int]) -> list[Dependency]:
        own = {getattr(op, "slug", "") for op in record.plan.operations if op.op == "create_page"}
        found: dict[str, Dependency] = {}
        for i in ops:
            for slug in _needs(record.plan.operations[i]):
                if not slug or slug in own:
                    continue
                if slug not in self.exists:
                    self.exists[slug] = (
                        self.vault.db.execute(
                            "SELECT 1 FROM pages WHERE slug = ?", (slug,)
                        ).fetchone()
                        is not None
                    )
                maker = self.reserved.get(slug)
                if self.exists[slug] or maker is None or maker == record.id:
                    continue
                found.setdefault(
                    maker, Dependency(plan_id=maker, page=slug, agent=maker in self.agents)
                )
        return list(found.values())


def pending_order(vault: Vault) -> list[tuple[str, list[Dependency]]]:
    """The pending plans' ids in review order (oldest first, each after the plans it needs),
    with what each needs: cheaper than :func:`change_list` (no summaries, no sources)."""
    deps = _Deps(vault)
    rows = [
        (record.id, deps.after(record, inbox.pending_ops(vault, record)))
        for record in inbox.list_plans(vault, ("pending",))
    ]
    return needs_first(rows)


def needs_first(
    rows: list[tuple[str, list[Dependency]]],
) -> list[tuple[str, list[Dependency]]]:
    """``rows`` (plan id, what it needs) reordered so each plan comes after the plans of ``rows``
    it needs, otherwise in the order given; a cycle keeps the given order for the rest."""
    rows = list(rows)
    ids = {pid for pid, _ in rows}
    placed: set[str] = set()
    out: list[tuple[str, list[Dependency]]] = []
    while rows:
        ready = [
            n
            for n, (_, after) in enumerate(rows)
            if all(d.plan_id in placed or d.plan_id not in ids for d in after)
        ]
        row = rows.pop(ready[0] if ready else 0)  # a cycle: the given order for the rest
        out.append(row)
        placed.add(row[0])
    return out


def change_list(vault: Vault) -> list[ChangeOut]:
    """Every pending plan as a change, oldest first (each after the plans it must follow)."""
    records = inbox.list_plans(vault, ("pending",))
    deps = _Deps(vault)
    names: dict[str, str] = {}
    store = SourceStore(vault)
    out: list[ChangeOut] = []
    for record in records:
        summary = svc._summary(vault, record)
        ops = inbox.pending_ops(vault, record)
        cited: list[str] = []
        for op in record.admission.ops:
            for claim in op.claims:
                for quote in claim.evidence:
                    sid = quote.source_id
                    if not sid:
                        continue
                    if sid not in names:
                        try:
                            names[sid] = store.get(sid).name
                        except NotFoundError:  # a missing source: its id will do
                            names[sid] = sid[:12]
                    if names[sid] not in cited:
                        cited.append(names[sid])
        out.append(
            ChangeOut(
                plan=summary,
                does=does(record, ops),
                kind=kind_of(record.author, record.origin),
                origin=origin_words(record.author, record.origin),
                sources=cited,
                verdict=_verdict(summary, record),
                after=deps.after(record, ops),
                before=[],
            )
        )
    return linked(out)


def linked(out: list[ChangeOut]) -> list[ChangeOut]:
    """``out`` with each change's ``before`` (the changes that need it) filled from the others'
    ``after``, in dependency order (:func:`in_dependency_order`)."""
    by_id = {c.plan.id: c for c in out}
    for change in out:
        for dep in change.after:
            if dep.plan_id in by_id:
                by_id[dep.plan_id].before.append(change.plan.id)
    return in_dependency_order(out)


def in_dependency_order(changes: list[ChangeOut]) -> list[ChangeOut]:
    """``changes`` as given, except that a plan comes after the plans it depends on."""
    ids = {c.plan.id for c in changes}
    placed: set[str] = set()
    out: list[ChangeOut] = []
    waiting = list(changes)
    while waiting:
        ready = [
            n
            for n, change in enumerate(waiting)
            if all(d.plan_id in placed or d.plan_id not in ids for d in change.after)
        ]
        change = waiting.pop(ready[0] if ready else 0)  # a cycle: the given order for the rest
        out.append(change)
        placed.add(change.plan.id)
    return out


def chain(order: list[tuple[str, list[Dependency]]], plan_id: str) -> list[str]:
    """The pending plans that must be approved with ``plan_id`` (its dependencies, theirs, …),
    dependencies first, the plan last (``order``: :func:`pending_order`)."""
    by_id = dict(order)
    seen: set[str] = set()  # marked before its dependencies: a cycle ends here
    out: list[str] = []

    def visit(pid: str) -> None:
        if pid in seen or pid not in by_id:
            return
        seen.add(pid)
        for dep in by_id[pid]:
            visit(dep.plan_id)
        out.append(pid)

    visit(plan_id)
    return out


def filtered(
    changes: list[ChangeOut],
    *,
    source: str = "",
    author: str = "",
    kind: str = "",
    verdict: str = "",
    order: str = "oldest",
) -> list[ChangeOut]:
    """The changes that match every filter given ('' matches all); ``order`` 'newest' reverses."""
    out = [
        c
        for c in changes
        if (not source or source in c.sources or source in c.origin)
        and (not author or c.plan.author == author)
        and (not kind or c.kind == kind)
        and (not verdict or c.verdict == verdict)
    ]
    # newest first, yet each plan still after the plans it depends on
    return in_dependency_order(list(reversed(out))) if order == "newest" else out


def facets(changes: list[ChangeOut]) -> dict[str, list[str]]:
    """The values each filter can take in ``changes`` (for the filter menus)."""
    return {
        "source": sorted({s for c in changes for s in c.sources}),
        "author": sorted({c.plan.author for c in changes}),
        "kind": [k for k in KINDS if any(c.kind == k for c in changes)],
        "verdict": [
            v
            for v in ("supported", "waits", "refused in part")
            if any(c.verdict == v for c in changes)
        ],
    }


__all__ = [
    "ChangeOut",
    "Dependency",
    "chain",
    "change_list",
    "does",
    "facets",
    "filtered",
    "in_dependency_order",
    "kind_of",
    "origin_words",
    "pending_order",
]
