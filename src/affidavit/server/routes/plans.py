"""Plans and the inbox: nonces, proposals, the inbox, approval and rejection (W4, W5).

Proposals go through :func:`affidavit.inbox.propose` (the gate) and approvals through
:func:`affidavit.inbox.approve` (the one door); the author and the approver recorded in the plan
and the audit log are the authenticated caller, never a name the client sends.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query

from ...service import vaults as svc
from ...service.models import (
    ApproveManyRequest,
    ApproveManyResponse,
    ApproveRequest,
    ApproveResponse,
    NonceRequest,
    NonceResponse,
    PlanDetail,
    PlanSummary,
    ProposalOut,
    ProposeRequest,
    RejectRequest,
    RejectResponse,
)
from ..auth import access
from ..deps import CallerDep, VaultDep, vault_param

router = APIRouter(prefix="/v1/vaults/{vault}", dependencies=[Depends(vault_param)], tags=["plans"])
PlanStatusQuery = Literal["pending", "applied", "rejected", "expired", "all"]


@router.post("/nonces", response_model=NonceResponse, **access("propose"))
def new_nonce(vault: VaultDep, caller: CallerDep, body: NonceRequest) -> NonceResponse:
    """A fresh single-use nonce for one plan (its "nonce" field); a token over its proposal
    quota gets none (429)."""
    return svc.new_nonce(vault, body.hours, caller.actor)


@router.post("/plans", response_model=ProposalOut, **access("propose"))
def propose(vault: VaultDep, caller: CallerDep, body: ProposeRequest) -> ProposalOut:
    """Check a plan (schema, nonce, every quote) and put it in the inbox (or apply it at once
    when the policy allows)."""
    return svc.propose(vault, body.plan, caller.actor, f"api:{body.origin}")


@router.get("/plans", response_model=list[PlanSummary], **access("read"))
def list_plans(
    vault: VaultDep, status: Annotated[PlanStatusQuery, Query()] = "pending"
) -> list[PlanSummary]:
    """The inbox: pending plans (or those of another status, or ``all``) with age and expiry."""
    statuses = svc.ALL_STATUSES if status == "all" else (status,)
    return svc.list_plans(vault, statuses)


@router.get("/plans/{plan_id}", response_model=PlanDetail, **access("read"))
def get_plan(vault: VaultDep, plan_id: str) -> PlanDetail:
    """A plan with every verdict and each verified quote in its source's context."""
    return svc.plan_detail(vault, plan_id)


@router.post("/plans/approve", response_model=ApproveManyResponse, **access("approve"))
def approve_many(
    vault: VaultDep, caller: CallerDep, body: ApproveManyRequest
) -> ApproveManyResponse:
    """Approve several plans as one batch: in dependency order, all or nothing, one commit.
    With ``dry_run``, only what it would do: each plan's pending operations and every claim a
    withdrawal among them ends. With ``sure_only``, texts that wait for a person stay."""
    return svc.approve_many(
        vault, body.plans, caller.actor, dry_run=body.dry_run, sure_only=body.sure_only
    )


@router.post("/plans/{plan_id}/approve", response_model=ApproveResponse, **access("approve"))
def approve(
    vault: VaultDep, caller: CallerDep, plan_id: str, body: ApproveRequest
) -> ApproveResponse:
    """Approve all admitted operations, or ``ops`` (1-based), and apply them (checked again first)."""
    return svc.approve(vault, plan_id, body.ops, caller.actor)


@router.post("/plans/{plan_id}/reject", response_model=RejectResponse, **access("approve"))
def reject(vault: VaultDep, caller: CallerDep, plan_id: str, body: RejectRequest) -> RejectResponse:
    """Reject a pending plan with a reason; its reserved slugs are released."""
    return svc.reject(vault, plan_id, body.reason, caller.actor)
