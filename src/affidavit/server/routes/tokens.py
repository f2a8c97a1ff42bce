"""API tokens of a vault: only its owner, on the Unix socket, may create, list or revoke them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from ...service import tokens as token_store
from ...service.backend import check_token_request
from ...service.models import TokenCreated, TokenCreateRequest, TokenInfo
from ..auth import access
from ..deps import CallerDep, VaultDep, vault_param

router = APIRouter(
    prefix="/v1/vaults/{vault}/tokens", dependencies=[Depends(vault_param)], tags=["tokens"]
)


@router.get("", response_model=list[TokenInfo], **access("owner"))
def list_tokens(vault: VaultDep) -> list[TokenInfo]:
    """Every token of the vault with its role, expiry and status (never a secret)."""
    return token_store.list_tokens(vault.db, vault.clock)


@router.post("", response_model=TokenCreated, status_code=201, **access("owner"))
def create_token(vault: VaultDep, caller: CallerDep, body: TokenCreateRequest) -> TokenCreated:
    """Create a token of one role; the secret is in this response only (stored hashed)."""
    check_token_request(vault, body)
    info, secret = token_store.create_token(
        vault.db,
        vault.clock,
        body.role,
        body.lifetime(),
        body.label,
        caller.actor,
    )
    return TokenCreated(info=info, token=secret)


@router.delete("/{token_id}", response_model=TokenInfo, **access("owner"))
def revoke_token(
    vault: VaultDep,
    caller: CallerDep,
    token_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")],
) -> TokenInfo:
    """Revoke a token at once."""
    return token_store.revoke_token(vault.db, vault.clock, token_id, caller.actor)
