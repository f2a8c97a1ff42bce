"""The review desk's inbox: pending plans, one plan's operations beside their sources, decisions.

Nothing is decided here: approval is :func:`affidavit.service.vaults.approve` (the gate's checks
again, then the one door), rejection :func:`~affidavit.service.vaults.reject`. The desk adds one
refusal of its own kind: a decision sent from a screen that showed the plan in another state
(expired, decided, partly approved elsewhere) is refused before anything runs.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import inbox
from ..agents import PROPOSER_SAYS
from ..errors import ConflictError
from ..service import review
from ..service import vaults as svc
from ..service.models import PlanDetail, SourceOut
from ..vault import Vault
from .changes import decide_url, next_pending, together_offer
from .desk import Offer, Visit, WebDesk, WebRefusal


def plan_view(vault: Vault, plan_id: str, vault_name: str = "") -> dict[str, Any]:
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
            role = inbox.claim_role(
                claim.get("role", ""),
                op_verdict["status"],
                index + 1 in detail.applied_ops,
                detail.status,
            )
            claims.append({**claim, "role": role, "evidence_view": evidence})
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
    waits = waiting_view(detail)
    waiting_ops = {w["item"].op for w in waits}
    for op in ops:
        op["ticked"] = op["pending"] and op["n"] not in waiting_ops
    together: tuple[list[str], Offer | None] = ([], None)
    preview = None
    if record.status == "pending":
        together = together_offer(vault, vault_name, detail.id)
        preview = svc.approval_preview(vault, [detail.id])[0]
    return {
        "detail": detail,
        "ops": ops,
        "waits": waits,
        # the host's words only: the proposer's reason is shown marked, with its operation
        "withdrawals": [
            line
            for line in (preview.withdrawals if preview else [])
            if not line.strip().startswith(PROPOSER_SAYS)
        ],
        "after": [pid for pid in together[0] if pid != detail.id],
        "together": together[1],
        "seen": review.plan_fingerprint(vault, detail.id),
        "next_id": next_pending(vault, detail.id),
    }


def marked(text: str, words: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into runs, each marked when it is one of ``words`` (the words the support
    check could not confirm), matched as whole words, case aside."""
    wanted = {w.lower() for phrase in words for w in re.findall(r"\w+", phrase)}
    runs: list[tuple[str, bool]] = []
    for piece in re.split(r"(\w+)", text):
        hit = bool(piece) and piece.lower() in wanted
        if runs and runs[-1][1] == hit:
            runs[-1] = (runs[-1][0] + piece, hit)
        elif piece:
            runs.append((piece, hit))
    return runs


def waiting_view(detail: PlanDetail) -> list[dict[str, Any]]:
    """Each text of the plan that waits for a person, its unconfirmed words marked, beside the
    quotes it rests on (a claim's own; a title's, summary's or heading's: its operation's)."""
    out = []
    for item in detail.waiting:
        claim = int(item.part.split()[1]) - 1 if item.part.startswith("claim ") else None
        quotes = [
            q for q in detail.quotes if q.op == item.op - 1 and (claim is None or q.claim == claim)
        ][: 5 if claim is not None else 3]
        out.append({"item": item, "runs": marked(item.text, item.words), "quotes": quotes})
    return out


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


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/plans/{plan_id}")
    async def plan_page(request: Request, vault: str, plan_id: str) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda v: plan_view(v, plan_id, vault))
        detail: PlanDetail = view["detail"]
        title = f"Plan {detail.id[:12]}"
        return desk.page("plan.html", **desk.context(visit, title=title, **view))

    @router.post("/web/{vault}/plans/{plan_id}/approve")
    async def approve(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving a plan")
        action = visit.field("action")
        chosen = visit.form.get("op", [])
        said_no = visit.form.get("no", [])

        def work(v: Vault) -> tuple[str, str | None]:
            review.check_unchanged(v, plan_id, visit.field("seen"))
            record = inbox.get_plan(v, plan_id)
            pending = [i + 1 for i in inbox.pending_ops(v, record)]
            try:
                ops = _numbers(chosen)
                refused = _numbers(said_no)
            except ValueError as exc:
                raise ConflictError("the operations ticked are not numbers.") from exc
            if action == "all":  # every pending operation: no "no" left out
                ops, refused = pending, []
            ops = [n for n in ops if n not in refused]
            if action != "supported":
                if not ops and not refused:
                    raise ConflictError(
                        "tick at least one operation to approve (x toggles one, y accepts a "
                        "waiting text), or use 'Approve all'."
                    )
                if not set(ops) | set(refused) <= set(pending):
                    raise review.StaleScreen(
                        f"plan {record.id[:12]} changed since you opened it: operation(s) "
                        f"{sorted((set(ops) | set(refused)) - set(pending))} are no longer "
                        "pending. Reload it and decide again; nothing was written."
                    )
            messages = []
            actor = visit.session.principal.actor
            try:
                if action == "supported":
                    done = svc.approve_many(v, [record.id], actor, sure_only=True)
                    commit = f" (commit {done.commit[:10]})" if done.commit else ""
                    messages.append(f"Approved what is supported of plan {record.id[:12]}{commit}.")
                elif ops:
                    result = svc.approve(v, record.id, ops, actor)
                    done_ops = ", ".join(str(n) for n in result.ops)
                    commit = f" (commit {result.commit[:10]})" if result.commit else ""
                    messages.append(
                        f"Approved operation(s) {done_ops} of plan {record.id[:12]}{commit}."
                    )
            except ConflictError as exc:
                _, offer = together_offer(v, vault, record.id)
                if offer is not None:
                    raise WebRefusal(
                        409, str(exc), title="Not approved: another plan goes first", offer=offer
                    ) from exc
                if "Reject it" not in str(exc):
                    raise
                reject = Offer(  # the plan no longer fits the wiki: the desk offers the reject
                    action=f"/web/{vault}/plans/{record.id}/reject",
                    label="Reject this plan",
                    fields=(
                        ("seen", review.plan_fingerprint(v, record.id)),
                        ("reason", f"no longer fits the wiki: {exc}"[:2000]),
                    ),
                    explain="Recorded as the reason: the message above. Propose it again to "
                    "review it against the wiki as it is now.",
                )
                raise WebRefusal(409, str(exc), title="Not approved", offer=reject) from exc
            if refused:
                messages.append(_left_out(v, record.id, refused, actor))
            return " ".join(messages), next_pending(v, record.id)

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
            return f"Rejected plan {result.plan_id[:12]}: {result.reason}", next_pending(
                v, result.plan_id
            )

        return await _decided(desk, visit, vault, work)


async def _decided(desk: WebDesk, visit: Visit, vault: str, work: Any) -> Response:
    try:
        message, next_id = await desk.run(visit, work)
    except WebRefusal as refusal:
        return desk.refusal(refusal, visit)
    desk.flash(visit, message)
    return desk.redirect(decide_url(vault, next_id))


def _numbers(values: list[str]) -> list[int]:
    return sorted({int(n) for n in values})


def _left_out(vault: Vault, plan_id: str, refused: list[int], actor: str) -> str:
    """The operations a person said no to (``n`` on a waiting text): when nothing else of the plan
    is pending, the plan is rejected with them as the reason; otherwise they stay pending."""
    record = inbox.get_plan(vault, plan_id)
    if record.status != "pending":
        return ""
    left = [i + 1 for i in inbox.pending_ops(vault, record)]
    shown = ", ".join(str(n) for n in refused)
    if set(left) <= set(refused):
        reason = f"a person said no to operation(s) {shown}"
        texts = [w.line for w in svc.plan_detail(vault, plan_id).waiting if w.op in refused]
        if texts:
            reason += ": " + "; ".join(texts)[:1500]
        svc.reject(vault, plan_id, reason, actor)
        return f"Rejected the rest of plan {plan_id[:12]}: {reason[:200]}"
    return f"Operation(s) {shown} of plan {plan_id[:12]} stay pending (you said no to them)."


__all__ = ["plan_view", "routes"]
