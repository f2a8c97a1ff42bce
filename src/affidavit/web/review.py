"""The review desk's inbox: pending plans, one plan's operations beside their sources, decisions.

Nothing is decided here: approval is :func:`affidavit.service.vaults.approve` (the gate's checks
again, then the one door), rejection :func:`~affidavit.service.vaults.reject`. The desk adds one
refusal of its own kind: a decision sent from a screen that showed the plan in another state
(expired, decided, partly approved elsewhere) is refused before anything runs.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import inbox
from ..errors import ConflictError
from ..service import review
from ..service import vaults as svc
from ..service.models import PlanDetail, SourceOut
from ..vault import Vault
from .desk import Visit, WebDesk, WebRefusal


def plan_view(vault: Vault, plan_id: str) -> dict[str, Any]:
    """Everything the plan screen shows, read through the services."""
    detail = svc.plan_detail(vault, plan_id)
    record = inbox.get_plan(vault, detail.id)
    pending = set(inbox.pending_ops(vault, record)) if record.status == "pending" else set()
    sources: dict[str, SourceOut] = {}
    quotes = {(q.op, q.claim, q.evidence): q for q in detail.quotes}
    ops = []
    for op_verdict, op_plan in zip(
        detail.admission["ops"], detail.plan["operations"], strict=False
    ):
        index = op_verdict["index"]
        claims = []
        for claim in op_verdict.get("claims", []):
            evidence = []
            for n, ev in enumerate(claim.get("evidence", [])):
                shown = quotes.get((index, claim["index"], n))
                flags = []
                if shown is not None:
                    source = sources.get(shown.source_id)
                    if source is None:
                        source = sources[shown.source_id] = svc.get_source(vault, shown.source_id)
                    flags = [
                        f
                        for f in source.flags
                        if f.start < (ev.get("end") or 0) and f.end > (ev.get("start") or 0)
                    ]
                evidence.append({"raw": ev, "shown": shown, "flags": flags})
            claims.append({**claim, "evidence_view": evidence})
        ops.append(
            {
                "n": index + 1,
                "verdict": op_verdict,
                "plan": op_plan,
                "claims": claims,
                "pending": index in pending,
                "applied": index + 1 in detail.applied_ops,
                "before": _before(vault, op_plan),
            }
        )
    return {
        "detail": detail,
        "ops": ops,
        "seen": review.plan_fingerprint(vault, detail.id),
        "next_id": _next_pending(vault, detail.id),
    }


def _before(vault: Vault, op: dict[str, Any]) -> dict[str, Any] | None:
    """The page an operation changes, as it is now (None when it does not exist yet)."""
    slug = op.get("page") or op.get("slug")
    if not isinstance(slug, str):
        return None
    row = vault.db.execute("SELECT title FROM pages WHERE slug = ?", (slug,)).fetchone()
    if row is None:
        return {"slug": slug, "exists": False, "claims": []}
    claims = [
        r[0]
        for r in vault.db.execute(
            "SELECT text FROM claims WHERE page_slug = ? AND status = 'active' "
            "ORDER BY position, id LIMIT 200",
            (slug,),
        )
    ]
    return {"slug": slug, "exists": True, "title": row[0], "claims": claims}


def _next_pending(vault: Vault, after: str) -> str | None:
    plans = [p.id for p in svc.list_plans(vault, ("pending",))]
    if after in plans:
        rest = plans[plans.index(after) + 1 :] + plans[: plans.index(after)]
        return rest[0] if rest else None
    return plans[0] if plans else None


def _decide_url(vault: str, plan_id: str | None) -> str:
    return f"/web/{vault}/plans/{plan_id}" if plan_id else f"/web/{vault}/inbox"


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/inbox")
    async def inbox_page(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        plans = await desk.run(visit, lambda v: svc.list_plans(v, ("pending",)))
        return desk.page("inbox.html", **desk.context(visit, plans=plans, title="Inbox"))

    @router.get("/web/{vault}/plans/{plan_id}")
    async def plan_page(request: Request, vault: str, plan_id: str) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda v: plan_view(v, plan_id))
        detail: PlanDetail = view["detail"]
        title = f"Plan {detail.id[:12]}"
        return desk.page("plan.html", **desk.context(visit, title=title, **view))

    @router.post("/web/{vault}/plans/{plan_id}/approve")
    async def approve(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving a plan")
        everything = visit.field("action") == "all"
        chosen = visit.form.get("op", [])

        def work(v: Vault) -> tuple[str, str | None]:
            review.check_unchanged(v, plan_id, visit.field("seen"))
            record = inbox.get_plan(v, plan_id)
            pending = [i + 1 for i in inbox.pending_ops(v, record)]
            if everything:
                ops = pending
            else:
                try:
                    ops = sorted({int(n) for n in chosen})
                except ValueError as exc:
                    raise ConflictError("the operations ticked are not numbers.") from exc
                if not ops:
                    raise ConflictError(
                        "tick at least one operation to approve (x toggles one), or use "
                        "'Approve all'."
                    )
                if not set(ops) <= set(pending):
                    raise ConflictError(
                        f"plan {record.id[:12]} changed since you opened it: operation(s) "
                        f"{sorted(set(ops) - set(pending))} are no longer pending."
                    )
            result = svc.approve(v, record.id, ops, visit.session.principal.actor)
            done = ", ".join(str(n) for n in result.ops)
            commit = f" (commit {result.commit[:10]})" if result.commit else ""
            message = f"Approved operation(s) {done} of plan {record.id[:12]}{commit}."
            return message, _next_pending(v, record.id)

        return await _decided(desk, visit, vault, work)

    @router.post("/web/{vault}/plans/{plan_id}/reject")
    async def reject(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "rejecting a plan")
        reason = visit.field("reason").strip()

        def work(v: Vault) -> tuple[str, str | None]:
            if not reason:
                raise ConflictError("say why you reject the plan: the reason is recorded.")
            review.check_unchanged(v, plan_id, visit.field("seen"))
            result = svc.reject(v, plan_id, reason[:2000], visit.session.principal.actor)
            return f"Rejected plan {result.plan_id[:12]}: {result.reason}", _next_pending(
                v, result.plan_id
            )

        return await _decided(desk, visit, vault, work)


async def _decided(desk: WebDesk, visit: Visit, vault: str, work: Any) -> Response:
    try:
        message, next_id = await desk.run(visit, work)
    except WebRefusal as refusal:
        return desk.refusal(refusal, visit)
    desk.flash(visit, message)
    return desk.redirect(_decide_url(vault, next_id))


__all__ = ["plan_view", "routes"]
