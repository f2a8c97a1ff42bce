"""What the mirror reads of a vault on PostgreSQL: its batches (verified against the audit log
by :meth:`PostgresStorage.batches`) and the pages, claims, evidence and sources their plans wrote.

Content on PostgreSQL is written only by the door, batch by batch, and only added to (the
``create_page`` and ``add_claims`` operations, docs/storage.md), so the wiki as it stood after
batch *n* is exactly the rows whose plan belongs to a batch numbered *n* or less: every read here
takes a range of batch numbers ``(after, upto]`` and tags each row with its batch's number. Every
value is a bound parameter; the schema name is validated and quoted by ``sql.Identifier``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from ..errors import IntegrityError
from ..sources.extract import MEDIA_EXTENSIONS
from ..storage.base import BatchRecord, check_vault_name
from ..storage.content import verified_bytes
from ..storage.postgres import PostgresStorage

_HEX64 = re.compile(r"[0-9a-f]{64}")

_BATCH_PLANS = (
    "WITH bp AS (SELECT b.seq, p.plan_id FROM {s}.batches b "
    "CROSS JOIN LATERAL jsonb_array_elements_text(b.plans::jsonb) AS p(plan_id) "
    "WHERE b.seq > %s AND b.seq <= %s) "
)


@dataclass(frozen=True)
class Rows:
    """The rows batches ``(after, upto]`` wrote, each tagged with its batch's number (first)."""

    pages: list[tuple[Any, ...]]  # seq, slug, title, summary, category, created_at, updated_at
    claims: list[tuple[Any, ...]]  # seq, id, page, section, position, text, status, trust,
    # superseded_by, created_at — in batch, then page-position order
    evidence: list[tuple[Any, ...]]  # seq, claim_id, idx, source_id, quote, start, end, location
    sources: list[tuple[Any, ...]]  # id, name, media_type, status (the sources cited)


def source_file(source_id: str, media_type: str) -> str:
    """``sources/<sha256>.<ext>``: where a source's original bytes go in the mirror (the name
    ``affidavit sources add`` gives it in a SQLite vault); the id is checked, never joined raw."""
    if not isinstance(source_id, str) or not _HEX64.fullmatch(source_id):
        raise IntegrityError(
            f"{source_id!r} is not a source id: the database was altered; restore it from a backup."
        )
    return f"sources/{source_id}.{MEDIA_EXTENSIONS.get(media_type, 'bin')}"


class VaultReader:
    """One PostgreSQL vault, read for the mirror."""

    def __init__(self, storage: PostgresStorage, vault: str) -> None:
        self.storage = storage
        self.vault = check_vault_name(vault)
        self.schema = f"v_{vault}"
        if vault not in storage.vaults():
            raise IntegrityError(
                f"no vault {vault!r} in this database; the vaults here are: "
                f"{', '.join(storage.vaults()) or 'none'}."
            )

    def _q(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    def batches(self) -> list[BatchRecord]:
        """Every committed batch, in order, each checked against its audit entries."""
        return self.storage.batches(self.vault, after=0)

    def rows(self, after: int, upto: int) -> Rows:
        """What batches ``(after, upto]`` wrote, read in one snapshot."""
        span = (after, upto)
        with self.storage.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur = conn.cursor(row_factory=tuple_row)
            pages = cur.execute(
                self._q(_BATCH_PLANS + "SELECT bp.seq, p.slug, p.title, p.summary, p.category, "
                        "p.created_at, p.updated_at FROM {s}.pages p JOIN bp ON bp.plan_id = "
                        "p.plan_id ORDER BY bp.seq, p.slug"), span,
            ).fetchall()  # fmt: skip
            claims = cur.execute(
                self._q(_BATCH_PLANS + "SELECT bp.seq, c.id, c.page_slug, c.section, c.position, "
                        "c.text, c.status, c.trust, c.superseded_by, c.created_at FROM {s}.claims "
                        "c JOIN bp ON bp.plan_id = c.plan_id ORDER BY bp.seq, c.page_slug, "
                        "c.position"), span,
            ).fetchall()  # fmt: skip
            evidence = cur.execute(
                self._q(_BATCH_PLANS + 'SELECT bp.seq, e.claim_id, e.idx, e.source_id, e.quote, '
                        'e.start, e."end", e.location FROM {s}.evidence e JOIN {s}.claims c ON '
                        "c.id = e.claim_id JOIN bp ON bp.plan_id = c.plan_id "
                        "ORDER BY bp.seq, e.claim_id, e.idx"), span,
            ).fetchall()  # fmt: skip
            sources = cur.execute(
                self._q(_BATCH_PLANS + "SELECT s.id, s.name, s.media_type, s.status FROM "
                        "{s}.sources s WHERE s.id IN (SELECT e.source_id FROM {s}.evidence e "
                        "JOIN {s}.claims c ON c.id = e.claim_id JOIN bp ON bp.plan_id = c.plan_id)"
                        " ORDER BY s.id"), span,
            ).fetchall()  # fmt: skip
        return Rows(pages, claims, evidence, sources)

    def source_data(self, source_id: str) -> bytes:
        """A source's original bytes, re-hashed against its id."""
        with self.storage.pool.connection() as conn:
            row = conn.execute(
                self._q("SELECT data FROM {s}.sources WHERE id = %s"), (source_id,)
            ).fetchone()
        if row is None:
            raise IntegrityError(
                f"source {source_id[:12]} is cited but not stored; restore a backup."
            )
        return verified_bytes(source_id, bytes(row["data"]))
