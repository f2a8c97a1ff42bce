"""What the gate reads of the wiki, as a contract either backend meets (SPEC W4; docs/storage.md).

Admission only reads: the pages a plan names, the slugs pending plans reserve, a named claim's
status, trust, page, text and stored quotes, whether a link exists, a page's live claims (for the
consistency check) and its active claims' quotes (for a title or summary approved later). Those
reads are :class:`WikiReads`; :class:`SqliteReads` makes them on a vault's SQLite connection,
:class:`affidavit.storage.postgres_gate.PgReads` on a PostgreSQL vault's schema, inside the
door's transaction. What the gate reads of sources is :class:`GateSources`, which the vault's
:class:`~affidavit.sources.store.SourceStore` is and PostgreSQL's ``PgSources`` is too.

A retracted claim's or source's blast radius reads through the same contract
(:class:`~affidavit.store.blast.SourceReads`), and so do ``update_context`` replacing the
context and ``carry_source`` (a source's earlier versions, the claims citing it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..agents import agent_reservations
from ..sources.lineage import chain
from ..sources.sanitizer import Flag
from ..sources.store import SourceRecord
from ..store.blast import SourceReads, SqliteClaims
from .duplicates import LIVE, PageIndex, PageIndexes


@dataclass(frozen=True)
class ClaimRow:
    """A claim as the gate reads it."""

    id: str
    page_slug: str
    text: str
    status: str
    trust: str


class WikiReads(SourceReads, Protocol):
    """The gate's reads of the wiki (pages, reservations, claims, links; a claim's or a source's
    blast radius, :class:`~affidavit.store.blast.SourceReads`)."""

    backend: str

    def existing_pages(self, slugs: Sequence[str]) -> set[str]:
        """Those of ``slugs`` that are pages now."""

    def page_plan(self, slug: str) -> str | None:
        """The plan that created page ``slug`` (None: no such page)."""

    def page_texts(self, slug: str) -> dict[str, str]:
        """Page ``slug``'s title and summary ({} when there is no such page)."""

    def reservations(self) -> dict[str, str]:
        """Every reserved slug with the pending plan reserving it."""

    def agent_reservations(self) -> dict[str, str]:
        """The slugs reserved by agents' pending plans (W13), with the plan of each."""

    def claim(self, claim_id: str) -> ClaimRow | None: ...

    def claim_quotes(self, claim_id: str) -> list[tuple[str, str]]:
        """The claim's stored evidence as (source id, quote), in order."""

    def active_claims(self, page: str) -> list[str]:
        """The ids of ``page``'s active claims, in page order (``""``: the context's)."""

    def active_quotes(self, claim_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(quote, source id) of every evidence of those of ``claim_ids`` that are active, by
        claim id and evidence index."""

    def link_exists(self, src: str, dst: str) -> bool: ...

    def page_index(self, slug: str, indexes: PageIndexes) -> PageIndex:
        """``slug``'s live claims (:data:`.duplicates.LIVE`) as the consistency check reads
        them, with ``indexes``' way of comparing claims."""

    def versions_before(self, source_id: str) -> list[str]:
        """The versions of its origin a source replaces, newest first (itself excluded),
        following ``previous_id`` (:func:`affidavit.sources.lineage.chain`)."""

    def carry_rows(
        self, source_id: str
    ) -> tuple[dict[str, tuple[str, str]], list[tuple[str, int, str, str, int, int]]]:
        """What ``carry_source`` reads of the claims citing ``source_id``: each one's (status,
        trust), and every evidence item of those claims as (claim, idx, source, quote, start,
        end), by claim and idx."""


class GateSources(Protocol):
    """What the gate reads of sources: ids resolved, texts, records, flags and integrity."""

    def resolve(self, ref: str) -> str | None: ...

    def text(self, source_id: str) -> str: ...

    def get(self, id_or_prefix: str) -> SourceRecord: ...

    def flags(self, source_id: str) -> list[Flag]: ...

    def check_integrity(self, source_id: str) -> list[str]: ...


class SqliteReads(SqliteClaims):
    """:class:`WikiReads` on a vault's SQLite connection (the door's, inside its transaction)."""

    backend = "sqlite"

    def existing_pages(self, slugs: Sequence[str]) -> set[str]:
        marks = ",".join("?" * len(slugs))
        rows = self.db.execute(f"SELECT slug FROM pages WHERE slug IN ({marks})", list(slugs))
        return {str(r[0]) for r in rows}

    def page_plan(self, slug: str) -> str | None:
        row = self.db.execute("SELECT plan_id FROM pages WHERE slug = ?", (slug,)).fetchone()
        return None if row is None else str(row[0])

    def page_texts(self, slug: str) -> dict[str, str]:
        row = self.db.execute("SELECT title, summary FROM pages WHERE slug = ?", (slug,)).fetchone()
        return {} if row is None else {"title": str(row[0]), "summary": str(row[1])}

    def reservations(self) -> dict[str, str]:
        rows = self.db.execute("SELECT slug, plan_id FROM slug_reservations")
        return {str(r[0]): str(r[1]) for r in rows}

    def agent_reservations(self) -> dict[str, str]:
        return agent_reservations(self.db)

    def claim(self, claim_id: str) -> ClaimRow | None:
        row = self.db.execute(
            "SELECT id, page_slug, text, status, trust FROM claims WHERE id = ?", (claim_id,)
        ).fetchone()
        return None if row is None else ClaimRow(*(str(v) for v in tuple(row)))

    def claim_quotes(self, claim_id: str) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT source_id, quote FROM evidence WHERE claim_id = ? ORDER BY idx", (claim_id,)
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def active_quotes(self, claim_ids: Sequence[str]) -> list[tuple[str, str]]:
        if not claim_ids:
            return []
        marks = ",".join("?" * len(claim_ids))
        rows = self.db.execute(
            "SELECT e.quote, e.source_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
            f"WHERE c.status = 'active' AND c.id IN ({marks}) ORDER BY c.id, e.idx",
            list(claim_ids),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def link_exists(self, src: str, dst: str) -> bool:
        row = self.db.execute("SELECT 1 FROM links WHERE src = ? AND dst = ?", (src, dst))
        return row.fetchone() is not None

    def page_index(self, slug: str, indexes: PageIndexes) -> PageIndex:
        return indexes.page(self.db, slug)

    def versions_before(self, source_id: str) -> list[str]:
        return chain(self.db, source_id)

    def carry_rows(
        self, source_id: str
    ) -> tuple[dict[str, tuple[str, str]], list[tuple[str, int, str, str, int, int]]]:
        status = {
            str(row[0]): (str(row[1]), str(row[2]))
            for row in self.db.execute(
                "SELECT c.id, c.status, c.trust FROM claims c "
                "WHERE c.id IN (SELECT claim_id FROM evidence WHERE source_key = "
                "(SELECT key FROM source_keys WHERE source_id = ?))",
                (source_id,),
            )
        }
        evidence = [
            (str(r[0]), int(r[1]), str(r[2]), str(r[3]), int(r[4]), int(r[5]))
            for r in self.db.execute(
                'SELECT claim_id, idx, source_id, quote, start, "end" FROM evidence '
                "WHERE claim_id IN (SELECT claim_id FROM evidence WHERE source_key = "
                "(SELECT key FROM source_keys WHERE source_id = ?)) "
                "ORDER BY claim_id, idx",
                (source_id,),
            )
        ]
        return status, evidence


__all__ = ["LIVE", "ClaimRow", "GateSources", "SqliteReads", "WikiReads"]
