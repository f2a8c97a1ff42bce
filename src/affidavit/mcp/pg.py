"""The MCP tools over a vault of a PostgreSQL database (``serve --database URL``): :class:`PgWiki`,
the :class:`~.wiki.ToolWiki` the tools read and propose through, over
:class:`~affidavit.service.pg_vaults.PgVault` — its snapshots, its full-text search, its answerer,
its inbox and gate, its quotas (the REST API's: REST and MCP calls count together) — never a SQLite
vault. ``add_source`` stores a URL's or an allowed file's bytes in the database, its text
extracted and flagged as ``affidavit team add`` does.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from mcp.server.fastmcp.exceptions import ToolError
from psycopg_pool import PoolTimeout

from ..agents import caller_of
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
from ..sources.extract import charset_of
from ..sources.fetch import fetch_url
from ..sources.store import SourceRecord, url_name
from ..storage import pg_intake as intake
from ..storage.pg_served import charge
from ..storage.postgres_context import render
from ..storage.postgres_gate import PgSources
from .files import read_allowed
from .wiki import draft_of


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
        """As on a vault folder (:meth:`.wiki.SqliteWiki.add_source`): charged to ``caller``'s
        ``mcp.add_source_per_hour`` first, then a public http(s) URL fetched, or a file under
        ``mcp.source_dirs`` read (only by a server running as the vault's owner, W10); its text
        extracted and flagged as ``affidavit team add`` does (:mod:`affidavit.storage.pg_intake`)
        and stored in the database. The same bytes are the source already stored."""
        vault, config = self.vault, self.vault.config
        limits = (int(config.get("mcp.add_source_per_hour")), 0)
        with vault._locked() as conn:
            charge(conn, vault.schema, caller_of(caller), "add_source", limits, vault.clock())
        content_type: str | None = None
        if location.startswith(("http://", "https://")):
            fetched = fetch_url(
                location, max_bytes=config.max_url_bytes,
                timeout=float(config.url_timeout_seconds), max_redirects=config.max_redirects,
                allowed_hosts=config.allow_private_hosts, public_only=True,  # no SSRF into the host
            )  # fmt: skip
            data, origin, content_type = fetched.data, fetched.final_url, fetched.content_type
            name = url_name(origin)
        else:
            dirs = list(config.get("mcp.source_dirs"))
            if not dirs:
                raise ToolError(
                    "adding files is off: the vault's owner lists allowed directories in "
                    "mcp.source_dirs (affidavit.toml); ask them, or pass an http(s) URL."
                )
            self._as_owner()
            data, real, _ = read_allowed(location, dirs, None, config.max_url_bytes)
            origin, name = str(real), real.name
        added = intake.add(
            vault.storage, vault.name, config, data, origin, name,
            content_type=content_type,
            charset=charset_of(content_type) if content_type else None,
        )  # fmt: skip
        return (
            f"source {added.id[:16]} ({added.name}, {added.trust}): "
            f"{'added' if added.added else 'already stored'}. Next: read_source."
        )

    def _as_owner(self) -> None:
        """W10: a file is read for the vault only by a server running as its owner (the user
        the database names), never with another user's authority (a daemon run as root)."""
        with self.vault._read() as conn:
            row = conn.execute(
                "SELECT owner FROM affidavit.vaults WHERE name = %s", (self.vault.name,)
            ).fetchone()
        owner = str(row["owner"]) if row else ""
        try:
            me = pwd.getpwuid(os.geteuid()).pw_name
        except KeyError:
            me = ""
        if not me or me != owner:
            raise ToolError(
                f"this server can't add files here: it runs as {me or os.geteuid()}, not as the "
                f"vault's owner {owner or '(none)'}, and never reads a file with another user's "
                "authority; pass an http(s) URL, or ask the owner to add it."
            )


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


__all__ = ["PgWiki", "opened"]
