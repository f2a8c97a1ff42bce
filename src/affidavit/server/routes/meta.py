"""Routes outside any vault: health, who am I, the plan schema."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ... import __version__
from ...plan.schema import plan_json_schema
from ...service.models import Health, VaultAccess, Whoami
from ..auth import access
from ..deps import CallerDep, RegistryDep

router = APIRouter(prefix="/v1", tags=["meta"])


@router.get("/health", response_model=Health, **access("public"))
def health() -> Health:
    """Liveness: the daemon answers. Needs no credentials and tells nothing about vaults."""
    return Health(version=__version__)


@router.get("/whoami", response_model=Whoami, **access("authenticated"))
def whoami(caller: CallerDep, registry: RegistryDep) -> Whoami:
    """Who the daemon takes you for, and the vaults you may use with your role on each."""
    vaults = []
    for served in registry.vaults.values():
        role = caller.role_on(served)
        if role is not None:
            vaults.append(
                VaultAccess(
                    name=served.name, root=str(served.root), owner_uid=served.owner_uid, role=role
                )
            )
    return Whoami(
        transport=caller.transport,
        uid=caller.uid,
        user=caller.user,
        token_id=caller.token_id,
        vaults=vaults,
    )


@router.get("/plan-schema", **access("authenticated"))
def plan_schema() -> dict[str, Any]:
    """The JSON Schema of a plan: the closed set of operations (as `affidavit schema`)."""
    return plan_json_schema()
