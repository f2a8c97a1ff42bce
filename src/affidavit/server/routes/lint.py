"""Lint findings (SPEC W9): read and decide them, propose their fixes. Running lint is a job
(``POST …/jobs {"kind": "lint"}``); fix plans are approved like any plan."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ...clock import iso
from ...db import transaction
from ...lint.findings import FindingKind, FindingStore, Status, StoredFinding
from ...lint.fixes import propose_fixes
from ...plan.schema import CLAIM_ID_PATTERN
from ..auth import access
from ..deps import CallerDep, VaultDep, vault_param

router = APIRouter(
    prefix="/v1/vaults/{vault}/lint", dependencies=[Depends(vault_param)], tags=["lint"]
)


@router.get("/findings", response_model=list[StoredFinding], **access("read"))
def list_findings(
    vault: VaultDep,
    status: Annotated[list[Status] | None, Query()] = None,
    kind: Annotated[list[FindingKind] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[StoredFinding]:
    """Findings, errors first; ``status`` (default open) and ``kind`` may repeat."""
    return FindingStore(vault.db).list(tuple(status or ("open",)), tuple(kind or ()), limit)


@router.get("/findings/{finding_id}", response_model=StoredFinding, **access("read"))
def get_finding(
    vault: VaultDep, finding_id: Annotated[str, Path(min_length=4, max_length=80)]
) -> StoredFinding:
    """One finding with its verified quotes and the fix it would propose."""
    return FindingStore(vault.db).get(finding_id)


class DecisionRequest(BaseModel):
    """Dismiss, resolve or reopen a finding; ``note`` says why (kept in the audit log)."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    note: str = Field(default="", max_length=1000)


class FixRequest(BaseModel):
    """Propose fix plans for these findings; ``keep`` names, per contradiction, the claim kept."""

    model_config = ConfigDict(extra="forbid")

    findings: list[Annotated[str, Field(min_length=4, max_length=80)]] = Field(max_length=500)
    keep: dict[str, Annotated[str, Field(pattern=CLAIM_ID_PATTERN)]] = Field(default_factory=dict)


class FixResponse(BaseModel):
    plans: list[str]
    fixed: dict[str, str]
    skipped: dict[str, str]


@router.post("/findings/{finding_id}/decision", response_model=StoredFinding, **access("approve"))
def decide_finding(
    vault: VaultDep,
    caller: CallerDep,
    finding_id: Annotated[str, Path(min_length=4, max_length=80)],
    body: DecisionRequest,
) -> StoredFinding:
    """Dismiss (later runs keep it dismissed), resolve or reopen a finding; audited."""
    store = FindingStore(vault.db)
    with vault.write_lock(), transaction(vault.db):
        return store.decide(finding_id, body.status, caller.actor, iso(vault.clock()), body.note)


@router.post("/fixes", response_model=FixResponse, **access("propose"))
def propose_fix_plans(vault: VaultDep, caller: CallerDep, body: FixRequest) -> FixResponse:
    """Propose fix plans (at most 20 fixes each) for open findings; they wait in the inbox."""
    store = FindingStore(vault.db)
    chosen = [store.get(ref) for ref in body.findings]
    keep = {store.resolve_id(ref): claim for ref, claim in body.keep.items()}
    report = propose_fixes(vault, chosen, caller.actor, keep)
    return FixResponse(plans=report.plans, fixed=report.fixed, skipped=report.skipped)
