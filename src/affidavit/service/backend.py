"""Front doors of the CLI: the same service API in-process or through the daemon.

:class:`Backend` is what CLI commands call. :class:`LocalBackend` runs the services of
:mod:`affidavit.service.vaults` on a vault opened in this process; the daemon's client
(:class:`affidavit.client.DaemonBackend`) sends the same calls over the Unix socket and gets the
same models back. Who the actor is differs: in-process it is the local user; through the daemon
the daemon decides from the kernel's peer credentials.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from ..agents import local_actor
from ..errors import AffidavitError
from ..vault import Vault
from . import tokens as token_store
from . import vaults as svc
from .models import (
    ApproveManyResponse,
    ApproveResponse,
    AskRequest,
    AskResponse,
    NonceResponse,
    PlanDetail,
    PlanSummary,
    ProposalOut,
    RejectResponse,
    SearchResponse,
    TokenCreated,
    TokenCreateRequest,
    TokenInfo,
)


class Forbidden(AffidavitError):
    """The caller is authenticated but not allowed to do this (HTTP 403)."""


class Unauthenticated(AffidavitError):
    """The caller did not prove who it is (HTTP 401)."""


def vault_owner(root: Path) -> int:
    """The owner of a vault: the UID owning its directory, as the kernel reports it."""
    return os.stat(root).st_uid


class Backend(Protocol):
    """The calls the CLI makes; both front doors implement them with the same models."""

    where: str

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse: ...

    def ask(self, request: AskRequest) -> AskResponse: ...

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]: ...

    def plan_detail(self, ref: str) -> PlanDetail: ...

    def propose(self, plan: str, author: str | None, origin: str) -> ProposalOut: ...

    def approve(self, ref: str, ops: list[int] | None) -> ApproveResponse: ...

    def approve_many(
        self, refs: list[str], dry_run: bool = False, sure_only: bool = False
    ) -> ApproveManyResponse: ...

    def reject(self, ref: str, reason: str) -> RejectResponse: ...

    def new_nonce(self, hours: int) -> NonceResponse: ...

    def create_token(self, request: TokenCreateRequest) -> TokenCreated: ...

    def list_tokens(self) -> list[TokenInfo]: ...

    def revoke_token(self, token_id: str) -> TokenInfo: ...


def check_token_request(vault: Vault, request: TokenCreateRequest) -> None:
    """A token may not outlive the vault's ``server.token_max_days``."""
    longest = int(vault.config.get("server.token_max_days"))
    if request.lifetime() > timedelta(days=longest):
        raise Forbidden(
            f"tokens of this vault live at most {longest} days (server.token_max_days); "
            f"ask for --expires {longest}d or less."
        )


class LocalBackend:
    """The services run in this process on an open vault, as the local user."""

    where = "in-process"

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.actor = local_actor()
        self._vectors: Any = None
        self._vectors_loaded = False

    def _vectors_once(self) -> Any:
        if not self._vectors_loaded:
            self._vectors = svc.vectors_for(self.vault)
            self._vectors_loaded = True
        return self._vectors

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse:
        return svc.search(self.vault, query, k, min_trust, self._vectors_once())

    def ask(self, request: AskRequest) -> AskResponse:
        return svc.ask(self.vault, request, self._vectors_once(), self.actor)

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]:
        return svc.list_plans(self.vault, statuses)

    def plan_detail(self, ref: str) -> PlanDetail:
        return svc.plan_detail(self.vault, ref)

    def propose(self, plan: str, author: str | None, origin: str) -> ProposalOut:
        return svc.propose(self.vault, plan, author or self.actor, origin)

    def approve(self, ref: str, ops: list[int] | None) -> ApproveResponse:
        return svc.approve(self.vault, ref, ops, self.actor)

    def approve_many(
        self, refs: list[str], dry_run: bool = False, sure_only: bool = False
    ) -> ApproveManyResponse:
        return svc.approve_many(self.vault, refs, self.actor, dry_run=dry_run, sure_only=sure_only)

    def reject(self, ref: str, reason: str) -> RejectResponse:
        return svc.reject(self.vault, ref, reason, self.actor)

    def new_nonce(self, hours: int) -> NonceResponse:
        return svc.new_nonce(self.vault, hours)

    def _require_owner(self) -> None:
        owner = vault_owner(self.vault.root)
        if os.getuid() != owner:
            raise Forbidden(
                f"only the vault's owner (UID {owner}) manages its tokens; you are UID "
                f"{os.getuid()}. Run the command as the owner."
            )

    def create_token(self, request: TokenCreateRequest) -> TokenCreated:
        self._require_owner()
        check_token_request(self.vault, request)
        info, secret = token_store.create_token(
            self.vault.db,
            self.vault.clock,
            request.role,
            request.lifetime(),
            request.label,
            self.actor,
        )
        return TokenCreated(info=info, token=secret)

    def list_tokens(self) -> list[TokenInfo]:
        self._require_owner()
        return token_store.list_tokens(self.vault.db, self.vault.clock)

    def revoke_token(self, token_id: str) -> TokenInfo:
        self._require_owner()
        return token_store.revoke_token(self.vault.db, self.vault.clock, token_id, self.actor)


__all__ = [
    "Backend",
    "Forbidden",
    "LocalBackend",
    "Unauthenticated",
    "check_token_request",
    "vault_owner",
]
