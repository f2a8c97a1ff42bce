"""What a retraction would take out of the wiki: its blast radius (a pure read of the database).

Retracting a source withdraws every live claim whose evidence all comes from retracted sources
(this one, or ones retracted before). A claim with evidence from another source stays, keeps that
evidence, and its trust becomes the weakest tier of the sources it still rests on. A synthesis —
a claim that names the claims it rests on in ``derived_from``, such as a saved answer — can't
outlive what it rests on, so it goes too, transitively.

The gate records the radius in a ``retract_source`` admission so a person sees it before approving;
approval recomputes it against the current wiki; the door (:mod:`affidavit.store.apply`) computes it
once more inside its transaction and writes exactly what it says. One function serves all three.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ..config import TRUST_TIERS

LIVE = ("active", "quarantined", "pending")
"""Claim statuses a retraction takes out (superseded and retracted claims are history already)."""

__all__ = [
    "LIVE",
    "BlastRadius",
    "ClaimImpact",
    "ClaimReads",
    "KeptClaim",
    "OpenPlan",
    "SourceReads",
    "SqliteClaims",
    "blast_radius",
    "claim_radius",
    "derived_closure",
]


@dataclass(frozen=True)
class ClaimImpact:
    """A claim a retraction would withdraw. ``rests_on``: for a synthesis, the withdrawn claims
    it was derived from; ``sources``: the (retracted) sources its evidence cites."""

    id: str
    page: str  # '' for an entry of context.md
    section: str
    text: str
    status: str
    trust: str
    rests_on: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class KeptClaim:
    """A claim that cites the source but keeps other evidence, with its trust before and after."""

    id: str
    page: str
    text: str
    trust: str
    new_trust: str
    remaining_sources: list[str]


@dataclass(frozen=True)
class OpenPlan:
    """A pending plan whose evidence cites the source (it will fail provenance once retracted)."""

    id: str
    author: str
    origin: str
    quotes: int


@dataclass
class BlastRadius:
    """Everything a retraction would change. ``retracted`` and ``derived`` go; ``kept`` stay."""

    source: str  # the full id ('' for a claim retraction)
    source_name: str = ""
    retracted: list[ClaimImpact] = field(default_factory=list)
    kept: list[KeptClaim] = field(default_factory=list)
    derived: list[ClaimImpact] = field(default_factory=list)
    empty_pages: list[str] = field(default_factory=list)
    open_plans: list[OpenPlan] = field(default_factory=list)

    @property
    def goes(self) -> list[str]:
        """Ids of every claim the retraction withdraws, in order: direct ones, then syntheses."""
        return [c.id for c in self.retracted] + [c.id for c in self.derived]

    @property
    def pages(self) -> list[str]:
        """Pages whose rendering changes (``''`` stands for context.md)."""
        gone = {c.page for c in (*self.retracted, *self.derived)}
        return sorted(gone | {c.page for c in self.kept})

    @property
    def counts(self) -> dict[str, int]:
        return {
            "retracted": len(self.retracted),
            "kept": len(self.kept),
            "derived": len(self.derived),
            "empty_pages": len(self.empty_pages),
            "open_plans": len(self.open_plans),
        }

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["counts"] = self.counts
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> BlastRadius:
        return BlastRadius(
            source=data["source"],
            source_name=data.get("source_name", ""),
            retracted=[ClaimImpact(**c) for c in data.get("retracted", [])],
            kept=[KeptClaim(**c) for c in data.get("kept", [])],
            derived=[ClaimImpact(**c) for c in data.get("derived", [])],
            empty_pages=list(data.get("empty_pages", [])),
            open_plans=[OpenPlan(**p) for p in data.get("open_plans", [])],
        )


def _weakest(tiers: list[str]) -> str:
    return min(tiers, key=TRUST_TIERS.index)


def _impact(row: Mapping[str, Any], rests_on: list[str], sources: list[str]) -> ClaimImpact:
    return ClaimImpact(
        id=row["id"],
        page=row["page_slug"],
        section=row["section"],
        text=row["text"],
        status=row["status"],
        trust=row["trust"],
        rests_on=rests_on,
        sources=sources,
    )


class ClaimReads(Protocol):
    """What a claim's blast radius reads (:func:`claim_radius`): SQLite's :class:`SqliteClaims`,
    PostgreSQL's ``storage.postgres_gate.PgReads``."""

    def claim_rows(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        """The rows of the claims ``ids`` that exist, by id (every column of ``claims``)."""

    def derived_rows(self, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        """The claims in ``statuses`` with a ``derived_from``, by page, position and id."""

    def active_claims(self, page: str) -> list[str]:
        """The ids of ``page``'s active claims."""


class SourceReads(ClaimReads, Protocol):
    """What a source's blast radius reads besides (:func:`blast_radius`): SQLite's
    :class:`SqliteClaims`, PostgreSQL's ``storage.postgres_gate.PgReads``."""

    def source_name(self, source_id: str) -> str:
        """The source's name ('' when there is no such source)."""

    def retracted_sources(self) -> set[str]:
        """The ids of the sources retracted already."""

    def citing_claims(self, source_id: str, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        """The claims in ``statuses`` with evidence from ``source_id``, by page, position, id."""

    def evidence_sources(self, claim_id: str) -> list[tuple[str, str]]:
        """(source id, its trust) of each distinct source the claim's evidence cites, by id."""

    def pending_plans(self) -> list[tuple[str, str, str, str]]:
        """(id, author, origin, plan JSON) of every pending plan, by creation time and id."""


class SqliteClaims:
    """:class:`ClaimReads` on a vault's SQLite connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def claim_rows(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        out: dict[str, Mapping[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT * FROM claims WHERE id IN ({marks})", chunk):
                out[row["id"]] = row
        return out

    def derived_rows(self, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        return self.db.execute(
            # the few derived claims, through their partial index (claims_derived), not every
            # claim: "+status" keeps the planner off the status index
            "SELECT * FROM claims WHERE derived_from != '[]' AND +status IN "
            f"({','.join('?' * len(statuses))}) ORDER BY page_slug, position, id",
            statuses,
        ).fetchall()

    def active_claims(self, page: str) -> list[str]:
        rows = self.db.execute(
            "SELECT id FROM claims WHERE page_slug = ? AND status = 'active' ORDER BY position, id",
            (page,),
        )
        return [str(r[0]) for r in rows]

    def source_name(self, source_id: str) -> str:
        row = self.db.execute("SELECT name FROM sources WHERE id = ?", (source_id,)).fetchone()
        return str(row[0]) if row else ""

    def retracted_sources(self) -> set[str]:
        return {
            str(r[0]) for r in self.db.execute("SELECT id FROM sources WHERE status = 'retracted'")
        }

    def citing_claims(self, source_id: str, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        marks = ",".join("?" * len(statuses))
        return self.db.execute(
            f"SELECT DISTINCT c.* FROM claims c JOIN evidence e ON e.claim_id = c.id "
            f"WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
            f"AND c.status IN ({marks}) ORDER BY c.page_slug, c.position, c.id",
            (source_id, *statuses),
        ).fetchall()

    def evidence_sources(self, claim_id: str) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT DISTINCT e.source_id, s.trust FROM evidence e "
            "JOIN sources s ON s.id = e.source_id WHERE e.claim_id = ? ORDER BY e.source_id",
            (claim_id,),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def pending_plans(self) -> list[tuple[str, str, str, str]]:
        rows = self.db.execute(
            "SELECT id, author, origin, plan_json FROM plans WHERE status = 'pending' "
            "ORDER BY created_at, id"
        )
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def _reads(db: sqlite3.Connection | ClaimReads) -> ClaimReads:
    return SqliteClaims(db) if isinstance(db, sqlite3.Connection) else db


def derived_closure(
    db: sqlite3.Connection | ClaimReads, ids: list[str], skip: Collection[str] = ()
) -> list[ClaimImpact]:
    """Live claims derived (``derived_from``), directly or through others, from claims ``ids``.

    Returned in the order they are reached, each naming the withdrawn claims it rests on. Claims
    in ``ids`` and ``skip`` (already gone some other way) are never returned.
    """
    rows = _reads(db).derived_rows(LIVE)
    parents = {row["id"]: [str(p) for p in json.loads(row["derived_from"])] for row in rows}
    by_id = {row["id"]: row for row in rows}
    gone = set(ids)
    out: list[ClaimImpact] = []
    changed = True
    while changed:
        changed = False
        for cid, rests in parents.items():
            if cid in gone or cid in skip:
                continue
            hit = [p for p in rests if p in gone]
            if hit:
                out.append(_impact(by_id[cid], hit, []))
                gone.add(cid)
                changed = True
    return out


def _empty_pages(reads: ClaimReads, goes: set[str], skip: Collection[str] = ()) -> list[str]:
    """Pages with active claims now that would have none once ``goes`` (and ``skip``, claims
    already on their way out) are withdrawn."""
    if not goes:
        return []
    pages = reads.claim_rows(sorted(goes))
    out = []
    for slug in sorted({row["page_slug"] for row in pages.values() if row["page_slug"]}):
        active = set(reads.active_claims(slug))
        if active and active <= goes | set(skip):
            out.append(slug)
    return out


def _cites(value: Any, source_id: str) -> int:
    """How many evidence items in a plan's JSON cite ``source_id`` (by full id or prefix)."""
    if isinstance(value, list):
        return sum(_cites(v, source_id) for v in value)
    if not isinstance(value, dict):
        return 0
    ref = value.get("source")
    here = int(
        "quote" in value
        and isinstance(ref, str)
        and len(ref) >= 12
        and source_id.startswith(ref.lower())
    )
    return here + sum(_cites(v, source_id) for v in value.values())


def _open_plans(reads: SourceReads, source_id: str, exclude_plan: str) -> list[OpenPlan]:
    out = []
    for plan_id, author, origin, plan_json in reads.pending_plans():
        if plan_id == exclude_plan:
            continue
        count = _cites(json.loads(plan_json), source_id)
        if count:
            out.append(OpenPlan(plan_id, author, origin, count))
    return out


def blast_radius(
    db: sqlite3.Connection | SourceReads,
    source_id: str,
    *,
    exclude_plan: str = "",
    also_retracted: Collection[str] = (),
    skip: Collection[str] = (),
) -> BlastRadius:
    """What retracting the source ``source_id`` (its full id) would do to the wiki as it is now.

    Only reads. ``exclude_plan`` leaves one plan (the retraction itself) out of ``open_plans``.
    ``also_retracted`` counts further sources as retracted and ``skip`` leaves out claims already
    withdrawn: the gate passes what earlier operations of the same plan retract.
    """
    reads: SourceReads = SqliteClaims(db) if isinstance(db, sqlite3.Connection) else db
    radius = BlastRadius(source=source_id, source_name=reads.source_name(source_id))
    retracted_sources = reads.retracted_sources() | {source_id, *also_retracted}
    for row in reads.citing_claims(source_id, LIVE):
        if row["id"] in skip:
            continue
        evidence = reads.evidence_sources(row["id"])
        remaining = [(e[0], e[1]) for e in evidence if e[0] not in retracted_sources]
        if remaining:
            radius.kept.append(
                KeptClaim(
                    id=row["id"],
                    page=row["page_slug"],
                    text=row["text"],
                    trust=row["trust"],
                    new_trust=_weakest([t for _, t in remaining]),
                    remaining_sources=[s for s, _ in remaining],
                )
            )
        else:
            radius.retracted.append(_impact(row, [], [e[0] for e in evidence]))
    radius.derived = derived_closure(reads, [c.id for c in radius.retracted], skip)
    radius.empty_pages = _empty_pages(reads, set(radius.goes), skip)
    radius.open_plans = _open_plans(reads, source_id, exclude_plan)
    return radius


def claim_radius(
    db: sqlite3.Connection | ClaimReads, claim_ids: list[str], *, skip: Collection[str] = ()
) -> BlastRadius:
    """What retracting the claims ``claim_ids`` would do: they go, with their syntheses."""
    reads = _reads(db)
    rows = reads.claim_rows(claim_ids)
    radius = BlastRadius(source="")
    radius.retracted = [_impact(rows[c], [], []) for c in claim_ids if c in rows]
    radius.derived = derived_closure(reads, [c.id for c in radius.retracted], skip)
    radius.empty_pages = _empty_pages(reads, set(radius.goes), skip)
    return radius
