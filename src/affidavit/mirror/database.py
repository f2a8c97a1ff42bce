"""What the mirror reads of a vault on PostgreSQL: its batches (verified against the audit log
by :meth:`PostgresStorage.batches`) and the pages, claims, evidence and sources their plans wrote.

Content on PostgreSQL is written only by the door, batch by batch, and rows are only added to,
but for what later batches' "applied" entries name (claims they ended, context entries they moved
to the archive page, each such claim keeping its place in the context in ``archived_from``), so
the wiki as it stood after batch *n* is the rows whose plan belongs to a batch numbered *n* or
less, with those changes up to *n* (:mod:`.shadow` follows them): every read here
takes a range of batch numbers ``(after, upto]`` and tags each row with its batch's number. Every
value is a bound parameter; the schema name is validated and quoted by ``sql.Identifier``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from ..errors import IntegrityError
from ..storage.base import BatchRecord, check_vault_name
from ..storage.content import verified_bytes
from ..storage.postgres import PostgresStorage
from ..storage.postgres_context import source_file

__all__ = ["Rows", "VaultReader", "source_file"]


@dataclass(frozen=True)
class Rows:
    """The rows batches ``(after, upto]`` wrote, each tagged with its batch's number (first)."""

    pages: list[tuple[Any, ...]]  # seq, slug, title, summary, category, created_at, updated_at
    claims: list[tuple[Any, ...]]  # seq, id, page, section, position, text, status, trust,
    # superseded_by, created_at, archived_from — in batch, then page-position order
    evidence: list[tuple[Any, ...]]  # seq, claim_id, idx, source_id, quote, start, end, location
    sources: list[tuple[Any, ...]]  # id, name, media_type, status (the sources cited)
    links: list[tuple[Any, ...]] = field(default_factory=list)  # seq, plan_id, src, dst
    retractions: list[tuple[Any, ...]] = field(default_factory=list)
    """The "retracted" audit entries: seq (the batch's), then the entry's seq, at, action,
    plan_id, actor, detail (why each claim went: what a page's "Retracted" list shows)."""
    carries: list[tuple[Any, ...]] = field(default_factory=list)
    """Evidence a ``carry_source`` re-pointed: seq (the carrying batch's), plan_id, claim_id,
    idx, then the evidence's source_id, quote, start, end, location after it — in order.
    ``evidence`` holds each row as written (before any carry)."""


def _carried(
    cur: Any,
    schema: str,
    evidence: list[tuple[Any, ...]],
    batches: list[BatchRecord],
    after: int,
    upto: int,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``evidence`` as written (a row a carry re-pointed since: as ``evidence_carried`` kept
    it), and the carries of batches ``(after, upto]``, each with the row's values after it."""
    rows = cur.execute(
        sql.SQL(
            "SELECT h.batch_id, h.plan_id, h.claim_id, h.idx, h.source_id, h.quote, h.start, "
            'h."end", h.location, e.source_id, e.quote, e.start, e."end", e.location '
            "FROM {s}.evidence_carried h JOIN {s}.evidence e ON e.claim_id = h.claim_id "
            "AND e.idx = h.idx ORDER BY h.n"
        ).format(s=sql.Identifier(schema))
    ).fetchall()
    seq_of = {r.batch_id: r.seq for r in batches}
    history: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
    for r in rows:
        history.setdefault((r[2], r[3]), []).append(r)
    carries = []
    for (claim, idx), steps in history.items():
        for k, step in enumerate(steps):
            seq = seq_of.get(step[0])
            if seq is None:  # a carry committed since the batches were read: not yet
                break
            values = steps[k + 1][4:9] if k + 1 < len(steps) else step[9:14]
            if after < seq <= upto:
                carries.append((seq, step[1], claim, idx, *values))
    written = [
        (*r[:3], *history[(r[1], r[2])][0][4:9]) if (r[1], r[2]) in history else r for r in evidence
    ]
    carries.sort(key=lambda r: r[0])  # stable: each row's carries stay in their order
    return written, carries


def _batch_of(applied: list[tuple[int, int]], seq: int) -> int | None:
    """The batch of the audit entry ``seq``: that of the first "applied" entry after it
    (``applied``: (entry seq, batch seq) in order; a batch's other entries precede its plans'
    "applied" ones). None: no committed batch holds it."""
    at = bisect.bisect_right(applied, (seq, 2**62))
    return applied[at][1] if at < len(applied) else None


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

    def rows(self, batches: list[BatchRecord], after: int, upto: int) -> Rows:
        """What batches ``(after, upto]`` of ``batches`` (:meth:`batches`) wrote, read in one
        snapshot. A row's batch is the one that wrote it (``batch_id``, pg006; before that, its
        plan's); a retraction's audit entry is its batch's (the batch of the next "applied"
        entry); rows of no batch of the range (written by a batch that committed since, or
        before ``after``) are left out."""
        seq_of = {plan: r.seq for r in batches[after:upto] for plan in r.plans}
        by_id = {r.batch_id: r.seq for r in batches[after:upto]}
        applied = [(e.seq, r.seq) for r in batches for e in r.entries]
        plans = sql.SQL("") if after == 0 else sql.SQL("WHERE {c}plan_id = ANY(%s)")
        params = [] if after == 0 else [list(seq_of)]
        with self.storage.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur = conn.cursor(row_factory=tuple_row)

            def read(text: str, prefix: str = "") -> list[tuple[Any, ...]]:
                where = plans.format(c=sql.SQL(prefix))
                query = sql.SQL(text).format(s=sql.Identifier(self.schema), where=where)
                rows = cur.execute(query, params if "{where}" in text else []).fetchall()
                tagged = [
                    (seq_of.get(r[0]) if r[1] is None else by_id.get(r[1]), *r[2:]) for r in rows
                ]
                return [r for r in tagged if r[0] is not None]

            pages = read(
                "SELECT plan_id, batch_id, slug, title, summary, category, created_at, updated_at "
                "FROM {s}.pages {where}"
            )
            claims = read(
                "SELECT plan_id, batch_id, id, page_slug, section, position, text, status, trust, "
                "superseded_by, created_at, archived_from FROM {s}.claims {where}"
            )
            evidence = read(
                "SELECT c.plan_id, c.batch_id, e.claim_id, e.idx, e.source_id, e.quote, e.start, "
                'e."end", e.location FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id '
                "{where}",
                "c.",
            )
            links = read("SELECT plan_id, batch_id, plan_id, src, dst FROM {s}.links {where}")
            retractions = [
                (seq, *r)
                for r in cur.execute(
                    sql.SQL(
                        "SELECT seq, at, action, plan_id, actor, detail FROM {s}.audit "
                        "WHERE action = 'retracted' ORDER BY seq"
                    ).format(s=sql.Identifier(self.schema))
                ).fetchall()
                if (seq := _batch_of(applied, int(r[0]))) is not None and after < seq <= upto
            ]
            evidence, carries = _carried(cur, self.schema, evidence, batches, after, upto)
            cited = sorted({r[3] for r in evidence} | {r[4] for r in carries})
            sources = cur.execute(
                sql.SQL(
                    "SELECT id, name, media_type, status FROM {s}.sources WHERE id = ANY(%s) "
                    "ORDER BY id"
                ).format(s=sql.Identifier(self.schema)),
                (cited,),
            ).fetchall()
        pages.sort(key=lambda r: (r[0], r[1]))
        claims.sort(key=lambda r: (r[0], r[2], r[4]))
        evidence.sort(key=lambda r: (r[0], r[1], r[2]))
        links.sort(key=lambda r: (r[0], r[2], r[3]))
        return Rows(pages, claims, evidence, sources, links, retractions, carries)

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
