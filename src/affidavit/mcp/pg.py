"""The MCP tools over a vault of a PostgreSQL database (``serve --database URL``): :class:`PgWiki`,
the :class:`~.wiki.ToolWiki` the tools read and propose through, over
:class:`~affidavit.service.pg_vaults.PgVault` — its snapshots, its full-text search, its answerer,
its inbox and gate, its quotas (the REST API's: REST and MCP calls count together) — never a SQLite
vault. Adding a source is not served here yet: the tool says who adds one and how.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from mcp.server.fastmcp.exceptions import ToolError
from psycopg_pool import PoolTimeout

from ..config import Config
from ..lint.findings import StoredFinding
from ..service.models import (
    AskRequest,
    AskResponse,
    HitOut,
    PageDetail,
    PageSummary,
    PlanDetail,
    ProposalOut,
    SourceOut,
)
from ..service.pg_ask import ask
from ..service.pg_findings import PgFindings
from ..service.pg_vaults import PgVault
from ..sources.store import SourceRecord
from ..storage.postgres_context import render
from ..storage.postgres_gate import PgSources
from .wiki import draft_of

NO_ADD_SOURCE = (
    "add_source is not served on PostgreSQL yet: the vault's owner adds a source with "
    "`affidavit team add`, or a caller with the propose role queues an ingest job of its text "
    "(POST /v1/vaults/{vault}/jobs); then call list_sources."
)
"""What ``add_source`` answers on PostgreSQL: who adds a source, and how."""


class PgWiki:
    """:class:`~.wiki.ToolWiki` over one PostgreSQL vault."""

    def __init__(self, vault: PgVault) -> None:
        self.vault = vault

    @property
    def config(self) -> Config:
        return self.vault.config

    def sources(self) -> list[SourceOut]:
        return self.vault.list_sources()

    def source_text(self, ref: str) -> tuple[SourceRecord, str]:
        with self.vault._read() as conn:
            sources = PgSources(conn, self.vault.schema)
            record = sources.get(ref)
            return record, sources.text(record.id)

    def pages(self) -> list[PageSummary]:
        return self.vault.list_pages()

    def page(self, slug: str) -> PageDetail:
        return self.vault.get_page(slug, with_markdown=False)

    def search(self, query: str, limit: int, min_trust: str) -> list[HitOut]:
        return self.vault.search(query, limit, min_trust).hits

    def ask(self, request: AskRequest, author: str) -> AskResponse:
        return ask(self.vault, request, author)

    def counts(self) -> dict[str, int]:
        """As a SQLite vault names them (the REST route's ``claims`` is ``active_claims``)."""
        found = self.vault.counts()
        return {
            "sources": found["sources"],
            "pages": found["pages"],
            "active_claims": found["claims"],
            "pending_plans": found["pending_plans"],
            "audit_entries": found["audit_entries"],
        }

    def context(self) -> str:
        with self.vault._read() as conn:
            return render(conn, self.vault.schema)

    def findings(self) -> list[StoredFinding]:
        return PgFindings(self.vault).find(("open",), (), None)

    def plan(self, ref: str) -> PlanDetail:
        return self.vault.plan_detail(ref)

    def propose(self, operations: list[dict[str, Any]], author: str, origin: str) -> ProposalOut:
        draft_of(operations)
        nonce = self.vault.new_nonce(1, author).nonce  # an agent over its quota gets none
        return self.vault.propose({"nonce": nonce, "operations": operations}, author, origin)

    def add_source(self, location: str, caller: str) -> str:
        raise ToolError(NO_ADD_SOURCE.format(vault=self.vault.name))


@contextmanager
def opened(vault: PgVault) -> Iterator[PgWiki]:
    """The vault for one tool call; the database unreachable is a tool error, naming no URL."""
    try:
        yield PgWiki(vault)
    except (psycopg.OperationalError, PoolTimeout):
        raise ToolError(
            "the PostgreSQL database did not answer; retry shortly (the daemon's log says when "
            "it is back)."
        ) from None


__all__ = ["NO_ADD_SOURCE", "PgWiki", "opened"]
