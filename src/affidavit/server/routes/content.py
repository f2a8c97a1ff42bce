"""Reading a vault: its summary, sources, pages, claims, search, ask and the audit log."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response
from pydantic import BaseModel

from ...service import vaults as svc
from ...service.models import (
    AskRequest,
    AskResponse,
    AuditPage,
    ClaimOut,
    PageDetail,
    PageSummary,
    SearchResponse,
    SourceOut,
    Tier,
    VaultInfo,
)
from ..auth import access
from ..deps import CallerDep, RoleDep, ServedDep, VaultDep, require, vault_param

router = APIRouter(prefix="/v1/vaults/{vault}", dependencies=[Depends(vault_param)])


def as_json(model: BaseModel) -> Response:
    """A response model already built by a service, serialised once (FastAPI would validate it
    again against ``response_model``, which stays for the OpenAPI document)."""
    return Response(model.model_dump_json(), media_type="application/json")


@router.get("", response_model=VaultInfo, tags=["vaults"], **access("read"))
def vault_info(served: ServedDep, vault: VaultDep, role: RoleDep) -> VaultInfo:
    """The vault's name, root, owner, your role and its counts."""
    return VaultInfo(
        name=served.name,
        root=str(served.root),
        owner_uid=served.owner_uid,
        role=role,
        counts=svc.counts(vault),
    )


@router.get("/sources", response_model=list[SourceOut], tags=["sources"], **access("read"))
def list_sources(vault: VaultDep) -> list[SourceOut]:
    """Every stored source, oldest first, with its sanitizer flags."""
    return svc.list_sources(vault)


@router.get("/sources/{source_id}", response_model=SourceOut, tags=["sources"], **access("read"))
def get_source(
    vault: VaultDep, source_id: Annotated[str, Path(min_length=4, max_length=64)]
) -> SourceOut:
    """One source by id or unique id prefix (at least 4 hex digits)."""
    return svc.get_source(vault, source_id)


@router.get("/pages", response_model=list[PageSummary], tags=["pages"], **access("read"))
def list_pages(vault: VaultDep) -> list[PageSummary]:
    """Every page with its title, summary and number of active claims."""
    return svc.list_pages(vault)


@router.get("/pages/{slug}", response_model=PageDetail, tags=["pages"], **access("read"))
def get_page(vault: VaultDep, slug: str) -> Response:
    """A page: its claims with their evidence, its links, and its rendered markdown."""
    return as_json(svc.get_page(vault, slug))


@router.get("/claims/{claim_id}", response_model=ClaimOut, tags=["claims"], **access("read"))
def get_claim(vault: VaultDep, claim_id: str) -> ClaimOut:
    """One claim with its evidence (verbatim quotes and their offsets)."""
    return svc.get_claim(vault, claim_id)


@router.get("/search", response_model=SearchResponse, tags=["search"], **access("read"))
def search(
    served: ServedDep,
    vault: VaultDep,
    q: Annotated[str, Query(min_length=1, max_length=1000, description="The query.")],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    min_trust: Tier = "untrusted",
) -> Response:
    """The claims that best match ``q`` (FTS5 BM25, plus vectors when indexed)."""
    return as_json(svc.search(vault, q, k, min_trust, served.vector_search(vault)))


@router.post("/ask", response_model=AskResponse, tags=["ask"], **access("read"))
def ask(
    served: ServedDep, vault: VaultDep, role: RoleDep, caller: CallerDep, body: AskRequest
) -> Response:
    """Answer a question; every sentence cites claims. ``save`` needs the propose role, and the
    saved answer is the caller's plan (a token's waits for a person). (The daemon's lane,
    :mod:`affidavit.server.fastlane`, answers a plain request itself, with the same checks.)"""
    if body.save:
        require(role, "propose", "saving an answer")
    return as_json(
        svc.ask(vault, body, served.vector_search(vault), caller.actor, served.ask_log())
    )


@router.get("/audit", response_model=AuditPage, tags=["audit"], **access("read"))
def audit(
    vault: VaultDep,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> AuditPage:
    """The hash-chained audit log, oldest first, ``limit`` entries after ``after``."""
    return svc.audit_page(vault, after, limit)
