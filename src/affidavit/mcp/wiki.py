"""What the MCP tools read and write, behind one small protocol (:class:`ToolWiki`) both backends
implement: a SQLite :class:`~affidavit.vault.Vault` here (:class:`SqliteWiki`), a PostgreSQL vault
in :mod:`.pg` (over :class:`~affidavit.service.pg_vaults.PgVault`). The tools themselves
(:mod:`.server`) are one copy: their lines, paging, quotas' order and refusals do not depend on
the backend. Errors are the services' own (:class:`~affidavit.errors.AffidavitError`); the
server's door turns them into tool errors naming the next call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.fastmcp.exceptions import ToolError

from .. import agents
from ..config import Config
from ..lint.findings import FindingStore, StoredFinding
from ..plan.schema import parse_plan
from ..service import vaults as svc
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
from ..sources.store import SourceRecord, SourceStore
from ..store.render import render_context
from ..vault import Vault
from .files import read_allowed


def draft_of(operations: list[dict[str, Any]]) -> str:
    """The plan ``operations`` make, with a placeholder nonce: checked against the schema
    first, so a malformed plan consumes no nonce and no quota."""
    draft = json.dumps({"nonce": "0" * 16, "operations": operations})
    parse_plan(draft)
    return draft


class ToolWiki(Protocol):
    """One vault as the MCP tools see it, for one call."""

    @property
    def config(self) -> Config: ...

    def sources(self) -> list[SourceOut]: ...

    def source_text(self, ref: str) -> tuple[SourceRecord, str]:
        """A source by id or unique prefix, and its stored text."""
        ...

    def pages(self) -> list[PageSummary]: ...

    def page(self, slug: str) -> PageDetail:
        """A page's claims with their evidence (its markdown may be left out)."""
        ...

    def search(self, query: str, limit: int, min_trust: str) -> list[HitOut]: ...

    def ask(self, request: AskRequest, author: str) -> AskResponse:
        """An answer, never saved from an MCP call (``request.save`` is false)."""
        ...

    def counts(self) -> dict[str, int]: ...

    def context(self) -> str:
        """``wiki/context.md`` as the vault's rows render it now."""
        ...

    def findings(self) -> list[StoredFinding]:
        """The open lint findings, errors first."""
        ...

    def plan(self, ref: str) -> PlanDetail: ...

    def propose(self, operations: list[dict[str, Any]], author: str, origin: str) -> ProposalOut:
        """Check the plan's schema, then the agent ``author``'s quota (before a nonce is
        spent), then issue a nonce and propose it through the gate as ``author``'s plan."""
        ...

    def add_source(self, location: str, caller: str) -> str:
        """Store a source from ``location``, charged to ``caller``: the tool's answer line."""
        ...


class SqliteWiki:
    """:class:`ToolWiki` over a SQLite vault, through :mod:`affidavit.service.vaults`."""

    def __init__(self, vault: Vault, vectors: Callable[[Vault], Any]) -> None:
        self.vault = vault
        self._vectors = vectors

    @property
    def config(self) -> Config:
        return self.vault.config

    def sources(self) -> list[SourceOut]:
        return svc.list_sources(self.vault)

    def source_text(self, ref: str) -> tuple[SourceRecord, str]:
        store = SourceStore(self.vault)
        record = store.get(ref)
        return record, store.text(record.id)

    def pages(self) -> list[PageSummary]:
        return svc.list_pages(self.vault)

    def page(self, slug: str) -> PageDetail:
        return svc.get_page(self.vault, slug, with_markdown=False)  # lines, not the file

    def search(self, query: str, limit: int, min_trust: str) -> list[HitOut]:
        vectors = self._vectors(self.vault)
        return svc.search(self.vault, query, limit, min_trust, vectors).hits

    def ask(self, request: AskRequest, author: str) -> AskResponse:
        return svc.ask(self.vault, request, self._vectors(self.vault), author)

    def counts(self) -> dict[str, int]:
        return svc.counts(self.vault)

    def context(self) -> str:
        return render_context(self.vault.db)

    def findings(self) -> list[StoredFinding]:
        return FindingStore(self.vault.db).list()

    def plan(self, ref: str) -> PlanDetail:
        return svc.plan_detail(self.vault, ref)

    def propose(self, operations: list[dict[str, Any]], author: str, origin: str) -> ProposalOut:
        draft_of(operations)
        agents.check(self.vault, agents.caller_of(author), "propose_plan")
        nonce = svc.new_nonce(self.vault, 1).nonce
        plan = json.dumps({"nonce": nonce, "operations": operations})
        # charged and held as an agent's by the gate's door, from this author and origin
        return svc.propose(self.vault, plan, author, origin)

    def add_source(self, location: str, caller: str) -> str:
        vault = self.vault
        if vault.read_only:  # never read a file or URL with more authority than the owner
            raise ToolError(f"this server can't add sources here: {vault.read_only}")
        agents.charge(vault, caller, "add_source")
        store = SourceStore(vault)
        if location.startswith(("http://", "https://")):
            result = store.add_url(location, public_only=True)  # no SSRF into the host
        else:
            dirs = list(vault.config.get("mcp.source_dirs"))
            if not dirs:
                raise ToolError(
                    "adding files is off: the vault's owner lists allowed directories in "
                    "mcp.source_dirs (affidavit.toml); ask them, or pass an http(s) URL."
                )
            data, real, mode = read_allowed(location, dirs, vault)
            result = store.add_bytes(data, str(real), real.name, mode=mode)
        record = result.record
        return (
            f"source {record.id[:16]} ({record.name}, {record.trust}): "
            f"{'added' if result.added else 'already stored'}. Next: read_source."
        )


__all__ = ["SqliteWiki", "ToolWiki", "draft_of"]
