"""The review desk's inbox: pending plans, one plan's operations beside their sources, decisions.

Nothing is decided here: approval is :func:`affidavit.service.vaults.approve` (the gate's checks
again, then the one door), rejection :func:`~affidavit.service.vaults.reject`. The desk adds one
refusal of its own kind: a decision sent from a screen that showed the plan in another state
(expired, decided, partly approved elsewhere) is refused before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import inbox
from ..agents import PROPOSER_SAYS
from ..errors import ConflictError
from ..service import review
from ..service import vaults as svc
from ..service.models import PlanDetail, PlanPreview, SourceOut
from ..vault import Vault
from .changes import decide_url, next_pending, together_offer
from .desk import Offer, Visit, WebDesk, WebRefusal
from .wiki import Choice, Decided


def plan_view(vault: Vault, plan_id: str, vault_name: str = "") -> dict[str, Any]:
    """Everything the plan screen shows, read through the services."""
    detail = svc.plan_detail(vault, plan_id)
    record = inbox.get_plan(vault, detail.id)
    pending = set(inbox.pending_ops(vault, record)) if record.status == "pending" else set()
    together: tuple[list[str], Offer | None] = ([], None)
    preview = None
    if record.status == "pending":
        together = together_offer(vault, vault_name, detail.id)
        preview = svc.approval_preview(vault, [detail.id])[0]
    return plan_screen(
        detail,
        pending,
        lambda source_id: svc.get_source(vault, source_id),
        lambda op: _before(vault, op),
        together,
        preview,
        review.plan_fingerprint(vault, detail.id),
        next_pending(vault, detail.id),
    )


def plan_screen(
    detail: PlanDetail,
    pending: set[int],
    source_of: Callable[[str], SourceOut],
    before_of: Callable[[dict[str, Any]], dict[str, Any] | None],
    together: tuple[list[str], Offer | None],
    preview: PlanPreview | None,
    seen: str,
    next_id: str | None,
) -> dict[str, Any]:
    """The plan screen of either backend: each operation beside its verified quotes and their
    sources' flags; ``pending``: the operations (0-based) still to decide."""
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
                        source = sources[shown.source_id] = source_of(shown.source_id)
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
                "before": before_of(op_plan),
            }
        )
    waits = waiting_view(detail)
    waiting_ops = {w["item"].op for w in waits}
    for op in ops:
        op["ticked"] = op["pending"] and op["n"] not in waiting_ops
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
        "seen": seen,
        "next_id": next_id,
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


def slug_of(op: dict[str, Any]) -> str | None:
    """The page an operation changes (None for one that names no page)."""
    slug = op.get("page") or op.get("slug")
    return slug if isinstance(slug, str) else None


def _before(vault: Vault, op: dict[str, Any]) -> dict[str, Any] | None:
    """The page an operation changes, as it is now (None when it does not exist yet)."""
    slug = slug_of(op)
    if slug is None:
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


def approve(vault: Vault, plan_id: str, choice: Choice, actor: str, vault_name: str) -> Decided:
    """A person's approval from a plan's screen: the ticked operations (or all, or what is
    supported), the ones said no to left out; refused when the screen is stale."""
    review.check_unchanged(vault, plan_id, choice.seen)
    record = inbox.get_plan(vault, plan_id)
    pending = [i + 1 for i in inbox.pending_ops(vault, record)]
    ops, refused = chosen_ops(choice, record.id, pending)
    messages = []
    try:
        if choice.action == "supported":
            done = svc.approve_many(vault, [record.id], actor, sure_only=True)
            commit = f" (commit {done.commit[:10]})" if done.commit else ""
            messages.append(f"Approved what is supported of plan {record.id[:12]}{commit}.")
        elif ops:
            result = svc.approve(vault, record.id, ops, actor)
            done_ops = ", ".join(str(n) for n in result.ops)
            commit = f" (commit {result.commit[:10]})" if result.commit else ""
            messages.append(f"Approved operation(s) {done_ops} of plan {record.id[:12]}{commit}.")
    except ConflictError as exc:
        _, offer = together_offer(vault, vault_name, record.id)
        seen = review.plan_fingerprint(vault, record.id)
        refusal = not_approved(exc, offer, vault_name, record.id, seen)
        if refusal is None:
            raise
        raise refusal from exc
    if refused:
        messages.append(_left_out(vault, record.id, refused, actor))
    return " ".join(messages), next_pending(vault, record.id)


def chosen_ops(choice: Choice, plan_id: str, pending: list[int]) -> tuple[list[int], list[int]]:
    """The operations (1-based) to approve and those said no to, checked against the plan's
    ``pending`` ones: a screen that ticked one no longer pending is stale."""
    try:
        ops = _numbers(choice.ticked)
        refused = _numbers(choice.said_no)
    except ValueError as exc:
        raise ConflictError("the operations ticked are not numbers.") from exc
    if choice.action == "all":  # every pending operation: no "no" left out
        ops, refused = pending, []
    ops = [n for n in ops if n not in refused]
    if choice.action != "supported":
        if not ops and not refused:
            raise ConflictError(
                "tick at least one operation to approve (x toggles one, y accepts a "
                "waiting text), or use 'Approve all'."
            )
        if not set(ops) | set(refused) <= set(pending):
            raise review.StaleScreen(
                f"plan {plan_id[:12]} changed since you opened it: operation(s) "
                f"{sorted((set(ops) | set(refused)) - set(pending))} are no longer "
                "pending. Reload it and decide again; nothing was written."
            )
    return ops, refused


def not_approved(
    exc: ConflictError, together: Offer | None, vault_name: str, plan_id: str, seen: str
) -> WebRefusal | None:
    """The refusal of an approval the door refused: with the offer to approve the plans it
    needs together, or to reject a plan that no longer fits the wiki; else None (the error
    shows as it is)."""
    if together is not None:
        return WebRefusal(
            409, str(exc), title="Not approved: another plan goes first", offer=together
        )
    if "Reject it" not in str(exc):
        return None
    reject_offer = Offer(  # the plan no longer fits the wiki: the desk offers the reject
        action=f"/web/{vault_name}/plans/{plan_id}/reject",
        label="Reject this plan",
        fields=(("seen", seen), ("reason", f"no longer fits the wiki: {exc}"[:2000])),
        explain="Recorded as the reason: the message above. Propose it again to "
        "review it against the wiki as it is now.",
    )
    return WebRefusal(409, str(exc), title="Not approved", offer=reject_offer)


def reject(vault: Vault, plan_id: str, reason: str, seen: str, actor: str) -> Decided:
    if not reason:
        raise ConflictError("say why you reject the plan: the reason is recorded.")
    review.check_unchanged(vault, plan_id, seen)
    result = svc.reject(vault, plan_id, reason[:2000], actor)
    return f"Rejected plan {result.plan_id[:12]}: {result.reason}", next_pending(
        vault, result.plan_id
    )


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/plans/{plan_id}")
    async def plan_page(request: Request, vault: str, plan_id: str) -> Response:
        visit = desk.visit(request, vault)
        view = await desk.run(visit, lambda w: w.plan_view(plan_id, vault))
        detail: PlanDetail = view["detail"]
        title = f"Plan {detail.id[:12]}"
        return desk.page("plan.html", **desk.context(visit, title=title, **view))

    @router.post("/web/{vault}/plans/{plan_id}/approve")
    async def approve_plan(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving a plan")
        choice = Choice(
            action=visit.field("action"),
            ticked=visit.form.get("op", []),
            said_no=visit.form.get("no", []),
            seen=visit.field("seen"),
        )
        actor = visit.session.principal.actor
        return await _decided(
            desk, visit, vault, lambda w: w.approve(plan_id, choice, actor, vault)
        )

    @router.post("/web/{vault}/plans/{plan_id}/reject")
    async def reject_plan(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "rejecting a plan")
        reason = visit.field("reason").strip()
        seen, actor = visit.field("seen"), visit.session.principal.actor
        return await _decided(desk, visit, vault, lambda w: w.reject(plan_id, reason, seen, actor))


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


__all__ = ["approve", "chosen_ops", "not_approved", "plan_screen", "plan_view", "reject", "routes"]
