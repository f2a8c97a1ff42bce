"""Lint findings (SPEC W9): read them. Running lint is a job (``POST …/jobs {"kind": "lint"}``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from ...lint.findings import FindingKind, FindingStore, Status, StoredFinding
from ..auth import access
from ..deps import VaultDep, vault_param

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
