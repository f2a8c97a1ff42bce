"""The daemon's continuous watches of a vault: add, list, remove (``affidavit watch add``).

A watch makes the daemon read a folder as itself for as long as it is registered, so adding one
is held to what an ingest job is held to (:func:`.jobs.reads_as_daemon`): the vault's owner, on
the Unix socket, as the daemon's own user (or root) — never a token, whatever its role. Listing
and removing read nothing: ``approve`` is enough.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path

from ...watch.registered import WatchCreate, WatchInfo, add_watch, list_watches, remove_watch
from ..auth import access
from ..deps import CallerDep, RoleDep, VaultDep, vault_param
from .jobs import reads_as_daemon

router = APIRouter(
    prefix="/v1/vaults/{vault}/watches", dependencies=[Depends(vault_param)], tags=["watches"]
)


@router.post("", response_model=WatchInfo, status_code=201, **access("owner"))
def add(
    vault: VaultDep,
    caller: CallerDep,
    role: RoleDep,
    body: Annotated[WatchCreate, Body(description="The folder to follow.")],
) -> WatchInfo:
    """Follow a folder: each burst of changes in it is queued as a ``watch`` job. Adding a
    folder already followed updates it, and restores it if it was refused."""
    reads_as_daemon(caller, role, "a watch", True)
    return add_watch(vault, body, caller.actor)


@router.get("", response_model=list[WatchInfo], **access("approve"))
def list_all(vault: VaultDep) -> list[WatchInfo]:
    """The folders the daemon follows for this vault, with their status and last job."""
    return list_watches(vault)


@router.delete("/{watch_id}", response_model=WatchInfo, **access("approve"))
def remove(
    vault: VaultDep, watch_id: Annotated[str, Path(pattern=r"^watch-[0-9a-f]{8}$")]
) -> WatchInfo:
    """Stop following a folder (what it ingested stays)."""
    return remove_watch(vault, watch_id)
