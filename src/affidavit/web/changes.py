"""The inbox as a change list, and the approvals of several plans at once.

What each plan does, where it came from, what waits and what it must follow are read from
:mod:`affidavit.service.changes`. Approving several plans is :func:`affidavit.service.vaults.
approve_many` — one batch through the one door, in dependency order, all or nothing, one commit —
as ``affidavit approve A B`` and ``affidavit approve --all --yes`` do: "Approve supported" takes
only what needs no person (``sure_only``), "Approve together" a plan with the plans it needs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import inbox
from ..errors import ConflictError
from ..service import changes, review
from ..service import vaults as svc
from ..vault import Vault
from .desk import WebDesk, WebRefusal

FILTERS = ("source", "author", "kind", "verdict")


def fingerprint(vault: Vault, plan_ids: list[str]) -> str:
    """One digest of several plans' reviewable states (:func:`review.plan_fingerprint`)."""
    parts = [review.plan_fingerprint(vault, pid) for pid in plan_ids]
    return hashlib.sha256("\n".join([*plan_ids, *parts]).encode()).hexdigest()[:24]


def check_fingerprint(vault: Vault, plan_ids: list[str], seen: str) -> None:
    for pid in plan_ids:
        record = inbox.get_plan(vault, pid)
        if record.status != "pending":
            raise review.StaleScreen(
                f"plan {pid[:12]} changed since you opened it: it is now {record.status}. "
                "Reload the inbox; nothing was written."
            )
    if fingerprint(vault, plan_ids) != seen:
        raise review.StaleScreen(
            "some of these plans changed since you opened the page (operations decided "
            "elsewhere). Reload it and decide again; nothing was written."
        )


def together_offer(vault: Vault, vault_name: str, plan_id: str) -> tuple[list[str], Any]:
    """The plans to approve with ``plan_id`` (dependencies first), and the desk's offer to do it
    (None when the plan needs no other, or needs an agent's plan it may not lean on)."""
    from .desk import Offer

    order = changes.pending_order(vault)
    ids = changes.chain(order, plan_id)
    if len(ids) < 2:
        return ids, None
    record = inbox.get_plan(vault, plan_id)
    needs = dict(order)
    if changes.kind_of(record.author, record.origin) != "agent" and any(
        d.agent for pid in ids for d in needs.get(pid, [])
    ):
        return ids, None  # W13: a person's plan never depends on an agent's
    others = ", ".join(pid[:12] for pid in ids if pid != plan_id)
    offer = Offer(
        action=f"/web/{vault_name}/plans/{plan_id}/approve-together",
        label=f"Approve {others} and this plan together (one commit)",
        fields=(("seen", fingerprint(vault, ids)),),
        explain=f"What is supported of {len(ids)} plans ("
        + ", ".join(pid[:12] for pid in ids)
        + "), in dependency order, all or nothing, in one commit. Texts that wait for a person "
        "stay in the inbox for you to decide.",
    )
    return ids, offer


def _shown(request: Request) -> dict[str, str]:
    wanted = {name: request.query_params.get(name, "")[:200] for name in FILTERS}
    order = request.query_params.get("order", "oldest")
    wanted["order"] = order if order in changes.ORDERS else "oldest"
    return wanted


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/inbox")
    async def inbox_page(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        wanted = _shown(request)

        def work(v: Vault) -> dict[str, Any]:
            everything = changes.change_list(v)
            shown = changes.filtered(everything, **wanted)
            supported = _supported(everything, shown)
            return {
                "changes": shown,
                "total": len(everything),
                "facets": changes.facets(everything),
                "wanted": wanted,
                "supported": supported,
            }

        view = await desk.run(visit, work)
        return desk.page("inbox.html", **desk.context(visit, title="Inbox", **view))

    @router.get("/web/{vault}/approve-supported")
    async def supported_preview(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        desk.require(visit, "approve", "approving plans")
        wanted = _shown(request)

        def work(v: Vault) -> dict[str, Any]:
            everything = changes.change_list(v)
            shown = changes.filtered(everything, **wanted)
            ids = _supported(everything, shown)
            preview = svc.approval_preview(v, ids) if ids else []
            skipped = [c for c in shown if c.plan.id not in ids]
            return {
                "preview": preview,
                "ids": ids,
                "skipped": skipped,
                "seen": fingerprint(v, ids),
                "wanted": wanted,
            }

        view = await desk.run(visit, work)
        return desk.page(
            "supported.html", **desk.context(visit, title="Approve what is supported", **view)
        )

    @router.post("/web/{vault}/approve-supported")
    async def approve_supported(request: Request, vault: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving plans")
        ids = visit.form.get("plan", [])[:1000]

        def work(v: Vault) -> str:
            if not ids:
                raise ConflictError("no plan was listed to approve; go back to the inbox.")
            check_fingerprint(v, ids, visit.field("seen"))
            for pid in ids:  # W13: an agent's plan is approved on its own page, never in bulk
                record = inbox.get_plan(v, pid)
                if changes.kind_of(record.author, record.origin) == "agent":
                    raise ConflictError(
                        f"plan {record.id[:12]} is an agent's: a bulk approval never takes it. "
                        f"Open it (/web/{vault}/plans/{record.id}) and decide it on its own."
                    )
            done = svc.approve_many(v, ids, visit.session.principal.actor, sure_only=True)
            applied = [r for r in done.results if r.applied]
            commit = f" (commit {done.commit[:10]})" if done.commit else ""
            return (
                f"Approved what is supported of {len(applied)} plan(s){commit}; what waits for "
                "a person stays in the inbox."
            )

        try:
            message = await desk.run(visit, work)
        except WebRefusal as refusal:
            return desk.refusal(refusal, visit)
        desk.flash(visit, message)
        return desk.redirect(f"/web/{vault}/inbox")

    @router.post("/web/{vault}/plans/{plan_id}/approve-together")
    async def approve_together(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving plans")

        def work(v: Vault) -> tuple[str, str | None]:
            ids, _ = together_offer(v, vault, inbox.resolve_plan_id(v, plan_id))
            check_fingerprint(v, ids, visit.field("seen"))
            actor = visit.session.principal.actor
            done = svc.approve_many(v, ids, actor, sure_only=True)
            commit = f" (commit {done.commit[:10]})" if done.commit else ""
            names = ", ".join(pid[:12] for pid in ids)
            waits = [pid for pid in ids if inbox.get_plan(v, pid).status == "pending"]
            rest = f"; what waits for a person stays in {len(waits)} of them" if waits else ""
            message = f"Approved plans {names} together{commit}{rest}."
            return message, waits[0] if waits else next_pending(v, ids[-1])

        try:
            message, next_id = await desk.run(visit, work)
        except WebRefusal as refusal:
            return desk.refusal(refusal, visit)
        desk.flash(visit, message)
        return desk.redirect(decide_url(vault, next_id))


def _supported(everything: list[changes.ChangeOut], shown: list[changes.ChangeOut]) -> list[str]:
    """The plans of ``shown`` a bulk approval takes — a person's (an agent's plan is approved
    one by one, W13) — each after the pending plans it needs (a person's too); ``everything``:
    the whole change list, where the plans they need are."""
    order = [(c.plan.id, c.after) for c in everything]
    agents = {c.plan.id for c in everything if c.kind == "agent"}
    ids: list[str] = []
    for c in shown:
        if c.kind == "agent":
            continue
        for pid in changes.chain(order, c.plan.id):
            if pid not in ids and pid not in agents:
                ids.append(pid)
    return ids


def next_pending(vault: Vault, after: str) -> str | None:
    """The pending plan to review after ``after``: the next in review order (a plan after the
    plans it needs), wrapping around."""
    plans = [pid for pid, _ in changes.pending_order(vault)]
    if after in plans:
        rest = plans[plans.index(after) + 1 :] + plans[: plans.index(after)]
        return rest[0] if rest else None
    return plans[0] if plans else None


def decide_url(vault: str, plan_id: str | None) -> str:
    return f"/web/{vault}/plans/{plan_id}" if plan_id else f"/web/{vault}/inbox"


__all__ = [
    "check_fingerprint",
    "decide_url",
    "fingerprint",
    "next_pending",
    "routes",
    "together_offer",
]
