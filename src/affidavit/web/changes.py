"""The inbox as a change list, and the approvals of several plans at once.

What each plan does, where it came from, what waits and what it must follow are read from
:mod:`affidavit.service.changes`. Approving several plans is :func:`affidavit.service.vaults.
approve_many` — one batch through the one door, in dependency order, all or nothing, one commit —
as ``affidavit approve A B`` and ``affidavit approve --all --yes`` do: "Approve supported" takes
only what needs no person (``sure_only``), "Approve together" a plan with the plans it needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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
    record = inbox.get_plan(vault, plan_id)
    person = changes.kind_of(record.author, record.origin) != "agent"
    return offer_together(
        changes.pending_order(vault),
        vault_name,
        plan_id,
        person,
        lambda ids: fingerprint(vault, ids),
    )


def offer_together(
    order: list[tuple[str, list[changes.Dependency]]],
    vault_name: str,
    plan_id: str,
    person: bool,
    seen: Callable[[list[str]], str],
) -> tuple[list[str], Any]:
    """:func:`together_offer` of either backend: ``order`` the pending plans in review order
    with what each needs, ``person`` whether ``plan_id`` is a person's plan, ``seen`` the
    fingerprint of several plans."""
    from .desk import Offer

    ids = changes.chain(order, plan_id)
    if len(ids) < 2:
        return ids, None
    needs = dict(order)
    if person and any(d.agent for pid in ids for d in needs.get(pid, [])):
        return ids, None  # W13: a person's plan never depends on an agent's
    others = ", ".join(pid[:12] for pid in ids if pid != plan_id)
    offer = Offer(
        action=f"/web/{vault_name}/plans/{plan_id}/approve-together",
        label=f"Approve {others} and this plan together (one commit)",
        fields=(("seen", seen(ids)),),
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


def inbox_view(vault: Vault, wanted: dict[str, str]) -> dict[str, Any]:
    everything = changes.change_list(vault)
    return inbox_context(everything, wanted)


def inbox_context(everything: list[changes.ChangeOut], wanted: dict[str, str]) -> dict[str, Any]:
    """The inbox screen of a change list (either backend's), filtered as ``wanted``."""
    shown = changes.filtered(everything, **wanted)
    return {
        "changes": shown,
        "total": len(everything),
        "facets": changes.facets(everything),
        "wanted": wanted,
        "supported": supported_ids(everything, shown),
    }


def supported_view(vault: Vault, wanted: dict[str, str]) -> dict[str, Any]:
    everything = changes.change_list(vault)
    shown = changes.filtered(everything, **wanted)
    ids = supported_ids(everything, shown)
    preview = svc.approval_preview(vault, ids) if ids else []
    skipped = [c for c in shown if c.plan.id not in ids]
    return {
        "preview": preview,
        "ids": ids,
        "skipped": skipped,
        "seen": fingerprint(vault, ids),
        "wanted": wanted,
    }


def approve_supported(vault: Vault, ids: list[str], seen: str, actor: str, vault_name: str) -> str:
    if not ids:
        raise ConflictError("no plan was listed to approve; go back to the inbox.")
    check_fingerprint(vault, ids, seen)
    for pid in ids:  # W13: an agent's plan is approved on its own page, never in bulk
        record = inbox.get_plan(vault, pid)
        if changes.kind_of(record.author, record.origin) == "agent":
            raise ConflictError(agent_in_bulk(record.id, vault_name))
    done = svc.approve_many(vault, ids, actor, sure_only=True)
    applied = [r for r in done.results if r.applied]
    commit = f" (commit {done.commit[:10]})" if done.commit else ""
    return (
        f"Approved what is supported of {len(applied)} plan(s){commit}; what waits for "
        "a person stays in the inbox."
    )


def agent_in_bulk(plan_id: str, vault_name: str) -> str:
    return (
        f"plan {plan_id[:12]} is an agent's: a bulk approval never takes it. "
        f"Open it (/web/{vault_name}/plans/{plan_id}) and decide it on its own."
    )


def approve_together(
    vault: Vault, plan_id: str, seen: str, actor: str, vault_name: str
) -> tuple[str, str | None]:
    ids, _ = together_offer(vault, vault_name, inbox.resolve_plan_id(vault, plan_id))
    check_fingerprint(vault, ids, seen)
    done = svc.approve_many(vault, ids, actor, sure_only=True)
    commit = f" (commit {done.commit[:10]})" if done.commit else ""
    names = ", ".join(pid[:12] for pid in ids)
    waits = [pid for pid in ids if inbox.get_plan(vault, pid).status == "pending"]
    rest = f"; what waits for a person stays in {len(waits)} of them" if waits else ""
    message = f"Approved plans {names} together{commit}{rest}."
    return message, waits[0] if waits else next_pending(vault, ids[-1])


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/inbox")
    async def inbox_page(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        wanted = _shown(request)
        view = await desk.run(visit, lambda w: w.inbox_view(wanted))
        return desk.page("inbox.html", **desk.context(visit, title="Inbox", **view))

    @router.get("/web/{vault}/approve-supported")
    async def supported_preview(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        desk.require(visit, "approve", "approving plans")
        wanted = _shown(request)
        view = await desk.run(visit, lambda w: w.supported_view(wanted))
        return desk.page(
            "supported.html", **desk.context(visit, title="Approve what is supported", **view)
        )

    @router.post("/web/{vault}/approve-supported")
    async def approve_supported_plans(request: Request, vault: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving plans")
        ids = visit.form.get("plan", [])[:1000]
        seen, actor = visit.field("seen"), visit.session.principal.actor
        try:
            message = await desk.run(visit, lambda w: w.approve_supported(ids, seen, actor, vault))
        except WebRefusal as refusal:
            return desk.refusal(refusal, visit)
        desk.flash(visit, message)
        return desk.redirect(f"/web/{vault}/inbox")

    @router.post("/web/{vault}/plans/{plan_id}/approve-together")
    async def approve_plans_together(request: Request, vault: str, plan_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "approving plans")
        seen, actor = visit.field("seen"), visit.session.principal.actor
        try:
            message, next_id = await desk.run(
                visit, lambda w: w.approve_together(plan_id, seen, actor, vault)
            )
        except WebRefusal as refusal:
            return desk.refusal(refusal, visit)
        desk.flash(visit, message)
        return desk.redirect(decide_url(vault, next_id))


def supported_ids(everything: list[changes.ChangeOut], shown: list[changes.ChangeOut]) -> list[str]:
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
    "agent_in_bulk",
    "approve_supported",
    "approve_together",
    "check_fingerprint",
    "decide_url",
    "fingerprint",
    "inbox_context",
    "inbox_view",
    "next_pending",
    "offer_together",
    "routes",
    "supported_ids",
    "supported_view",
    "together_offer",
]
