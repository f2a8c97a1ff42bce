"""The CLI's :class:`~.backend.Backend` over a vault of a PostgreSQL database (``--database URL
--vault NAME``): the same calls and models as :class:`~.backend.LocalBackend` and the daemon's
client, run by the services the daemon runs on PostgreSQL (:class:`~.pg_vaults.PgVault`: the one
door under the vault's advisory lock, W5's re-check, the audit chain). The actor is the local
user as the kernel knows this process, as the daemon names a caller on its Unix socket; the
database's credentials (the URL) are the authority, as for ``affidavit team``.
"""

from __future__ import annotations

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
from .pg_vaults import PgVault


class PgBackend:
    """The services of one PostgreSQL vault in this process, as ``actor``."""

    where = "database"

    def __init__(self, vault: PgVault, actor: str) -> None:
        self.vault = vault
        self.actor = actor

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse:
        return self.vault.search(query, k, min_trust)

    def ask(self, request: AskRequest) -> AskResponse:
        from .pg_ask import ask

        return ask(self.vault, request, self.actor)

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]:
        return self.vault.list_plans(statuses)

    def plan_detail(self, ref: str) -> PlanDetail:
        return self.vault.plan_detail(ref)

    def propose(self, plan: str, author: str | None, origin: str) -> ProposalOut:
        from ..client import plan_object

        data, origin = plan_object(plan, origin)
        return self.vault.propose(data, author or self.actor, origin)

    def approve(self, ref: str, ops: list[int] | None) -> ApproveResponse:
        return self.vault.approve(ref, ops, self.actor)

    def approve_many(
        self, refs: list[str], dry_run: bool = False, sure_only: bool = False
    ) -> ApproveManyResponse:
        return self.vault.approve_many(refs, self.actor, dry_run=dry_run, sure_only=sure_only)

    def reject(self, ref: str, reason: str) -> RejectResponse:
        return self.vault.reject(ref, reason, self.actor)

    def new_nonce(self, hours: int) -> NonceResponse:
        return self.vault.new_nonce(hours)

    def create_token(self, request: TokenCreateRequest) -> TokenCreated:
        info, secret = self.vault.create_token(
            request.role, request.lifetime(), request.label, self.actor
        )
        return TokenCreated(info=info, token=secret)

    def list_tokens(self) -> list[TokenInfo]:
        return self.vault.list_tokens()

    def revoke_token(self, token_id: str) -> TokenInfo:
        return self.vault.revoke_token(token_id, self.actor)


__all__ = ["PgBackend"]
