"""``Annotated`` dependencies of the routes: the caller, its role, and a vault of its own.

They are ``async`` on purpose: FastAPI runs a sync dependency in the thread pool, one hop per
dependency per request, and under load those hops (not the work) dominate. Only the route's own
body, which does the SQLite work, runs in a thread.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Path, Request

from ..service.backend import Forbidden
from ..service.models import AccessRole
from ..vault import Vault
from .auth import PRINCIPAL_KEY, ROLE_KEY, VAULT_KEY, Principal, allows
from .registry import Registry, ServedVault

VAULT_NAME = r"^[a-z0-9][a-z0-9-]{0,63}$"


def _state(request: Request) -> dict[str, Any]:
    state: dict[str, Any] = request.scope.setdefault("state", {})
    return state


async def _principal(request: Request) -> Principal:
    principal = _state(request).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):  # the guard always sets it before a route runs
        raise Forbidden("no authenticated caller")
    return principal


async def _served(request: Request) -> ServedVault:
    served = _state(request).get(VAULT_KEY)
    if not isinstance(served, ServedVault):
        raise Forbidden("no authorised vault")
    return served


async def _role(request: Request) -> AccessRole:
    role: AccessRole = _state(request)[ROLE_KEY]
    return role


async def _registry(request: Request) -> Registry:
    registry: Registry = request.app.state.registry
    return registry


async def _vault(served: Annotated[ServedVault, Depends(_served)]) -> AsyncIterator[Vault]:
    with served.borrow() as vault:  # a queue pop, or a new connection: brief
        yield vault


async def vault_param(
    vault: Annotated[
        str, Path(pattern=VAULT_NAME, description="The vault's name (GET /v1/whoami).")
    ],
) -> str:
    return vault


CallerDep = Annotated[Principal, Depends(_principal)]
RoleDep = Annotated[AccessRole, Depends(_role)]
ServedDep = Annotated[ServedVault, Depends(_served)]
VaultDep = Annotated[Vault, Depends(_vault)]
RegistryDep = Annotated[Registry, Depends(_registry)]


def require(role: AccessRole, level: str, what: str) -> None:
    """A check inside a route, for rights that depend on the request (e.g. ask with save)."""
    if not allows(role, level):
        raise Forbidden(f"{what} needs the {level} role; yours is {role}.")


__all__ = [
    "CallerDep",
    "RegistryDep",
    "RoleDep",
    "ServedDep",
    "VaultDep",
    "require",
    "vault_param",
]
