"""A new version followed on PostgreSQL (issue 27 item 1, issue 26): a worker's ingest of a
changed file never states both facts.

What SQLite's ingest does (:mod:`affidavit.ingest.lineage`), through the same storage-neutral
parts, in the worker's fenced transactions through the PostgreSQL door:

1. **follow** (:meth:`PgLineage.follow`, one transaction under the vault's lock and the job's
   claim): every live claim resting on an older version of the origin is named in a
   ``carry_source`` plan, admitted by the one gate and applied by the policy
   (:data:`affidavit.gate.carry.CARRY_POLICY`); what the carry left behind is aligned with the new
   text (:func:`~affidavit.ingest.lineage.follow_changes`). Read after the lock, so two workers
   following one version (or two versions of one origin) never both carry a claim;
2. **only the changed text is read** (:func:`~affidavit.ingest.chunking.changed_chunks`) when the
   version before was read; each chunk's plan is cut before the gate — claims citing unchanged
   text or an older version are left out (:func:`~affidavit.ingest.citing.keep_changed`), claims
   citing text that replaced words a claim quotes are held (:func:`~affidavit.ingest.holding.
   hold_replacing`) for the proposal that retires that claim;
3. **proposals** (:meth:`PgLineage.propose`, one transaction): for each claim left behind, a
   ``supersede_claim`` by the model's held claim (or the new words) or a ``retract_claim`` with
   what replaced its words, grouped as SQLite groups them
   (:func:`~affidavit.ingest.lineage.change_groups`), each plan admitted and left pending for a
   person. A marker row (``ingested_chunks`` at start -1, outcome ``followed``) commits with
   them: a second job of the same version (a re-run, another worker) proposes nothing again
   and holds back what its chunks say of the words the pending plans cite
   (:func:`~affidavit.ingest.holding.proposed_spans`).

A chunk of a version that is no longer the newest of its origin — a newer one was followed
meanwhile — is not settled (:func:`superseded_by`): the newer version's job carries or proposes
what the older one's claims said, and an older fact must not come in after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..errors import AffidavitError, PlanValidationError
from ..hashing import canonical_json, sha256_hex
from ..ingest.chunking import Chunk, changed_chunks, chunk_text
from ..ingest.citing import keep_changed
from ..ingest.holding import Held, hold_replacing, proposed_spans
from ..ingest.lineage import (
    CARRY_CHUNK,
    VersionFollow,
    VersionOutcome,
    _packed,
    change_groups,
    changed_units,
    count_changes,
    follow_changes,
    lineage_summary,
    quoting_in,
)
from ..plan.schema import parse_plan
from ..retract import LINEAGE_ORIGIN as LINEAGE
from ..retract import pending_claims
from ..sources.sentences import sentences_of
from ..sources.store import SourceRecord
from ..storage import pg_served as rows
from ..storage.pg_sql import PgSql
from ..storage.postgres import Conn, PostgresDoor, _q, insert_plan
from ..store.blast import LIVE

if TYPE_CHECKING:
    from .pg_ingest import PgIngest

__all__ = ["FOLLOWED", "PgLineage", "superseded_by"]

FOLLOWED = "followed"
"""``ingested_chunks.outcome`` of the marker row (start -1) a version's proposals commit with."""
MARK = -1
FOLLOWING = -2
"""The marker (outcome ``following``) its carry commits with: from then on no chunk of an older
version of the origin is settled (:func:`superseded_by`)."""
NONCE_HOURS = 24


def superseded_by(conn: Conn, schema: str, record: SourceRecord) -> int | None:
    """The version of ``record``'s origin newer than it that a job followed already, if any."""
    if not record.origin_key:
        return None
    row = conn.execute(
        _q("SELECT s.version FROM {s}.sources s JOIN {s}.ingested_chunks c ON c.source_id = s.id "
           "AND c.start = %s WHERE s.origin_key = %s AND s.version > %s "
           "ORDER BY s.version DESC LIMIT 1", schema),
        (FOLLOWING, record.origin_key, record.version),
    ).fetchone()  # fmt: skip
    return int(row["version"]) if row else None


@dataclass
class PgLineage:
    """One new version in one ingest job: followed, read, proposed."""

    ingest: PgIngest
    record: SourceRecord
    text: str
    older: tuple[str, ...] = ()
    follow: VersionFollow | None = None
    """None when another job (or an earlier attempt) proposed this version's changes already."""
    replaced: list[tuple[int, int]] = field(default_factory=list)
    fresh: list[tuple[int, int]] | None = None
    """The changed units the model reads; None: the whole text (the version before was never
    read)."""
    held: list[Held] = field(default_factory=list)

    @property
    def schema(self) -> str:
        return self.ingest.schema

    # -- 1. follow -------------------------------------------------------------------------
    def follow_version(self) -> None:
        """Carry, and work out what changed, in one fenced transaction under the vault's lock."""
        record, schema = self.record, self.schema
        with self.ingest._door() as door:
            conn = door.conn
            db = PgSql(conn, schema)
            older = [str(r[0]) for r in _chain(db, record.id)]
            self.older = tuple(older)
            if not older:
                return
            texts: dict[str, str] = {}

            def text_of(source_id: str) -> str:
                if source_id not in texts:
                    texts[source_id] = str(db.execute(
                        "SELECT text FROM sources WHERE id = ?", (source_id,)
                    ).fetchone()[0])  # fmt: skip
                return texts[source_id]

            self.fresh = (
                changed_units(text_of(older[0]), self.text)
                if _read(db, older[0], self.ingest.claim.job_id)
                else None
            )
            self.ingest._mark(conn, record, FOLLOWING, "following")
            marked = db.execute(
                "SELECT 1 FROM ingested_chunks WHERE source_id = ? AND start = ?",
                (record.id, MARK),
            ).fetchone()
            numbered = sentences_of(record.id, self.text)
            if marked is not None:  # proposed already: hold back what the pending plans cite
                self.replaced = proposed_spans(db, record.id, record.short_id, numbered)
                return
            outcome = VersionOutcome(record.id, record.version, older)
            follow = self.follow = VersionFollow(record, outcome)
            waiting = pending_claims(db, LINEAGE)
            by_source: dict[str, list[str]] = {}
            marks = ",".join("?" * len(older))
            live = ",".join("?" * len(LIVE))
            for claim_id, source_id, _ in db.execute(
                f"SELECT e.claim_id, e.source_id, min(c.created_at) FROM evidence e "
                f"JOIN claims c ON c.id = e.claim_id WHERE e.source_id IN ({marks}) "
                f"AND c.status IN ({live}) GROUP BY e.claim_id, e.source_id "
                'ORDER BY min(c.created_at), e.claim_id COLLATE "C"',
                (*older, *LIVE),
            ):
                by_source.setdefault(str(source_id), []).append(str(claim_id))
            left: dict[str, list[str]] = {}
            for source_id in older:
                claims = list(dict.fromkeys(by_source.get(source_id, [])))
                if not claims:
                    continue
                carried = self._carry(door, source_id, claims, outcome)
                left[source_id] = [c for c in claims if c not in carried and c not in waiting]
                outcome.left += len(left[source_id])
            follow_changes(
                follow, older, self.text, text_of, left,
                lambda source_id, claims: db.execute(
                    'SELECT c.id, c.page_slug, e.start, e."end", e.quote FROM claims c '
                    "JOIN evidence e ON e.claim_id = c.id WHERE e.source_id = ? "
                    f"AND c.id IN ({','.join('?' * len(claims))}) "
                    'ORDER BY c.id COLLATE "C", e.idx',
                    (source_id, *claims),
                ).fetchall(),
            )  # fmt: skip
            if self.fresh is not None:
                self.fresh = follow.outcome.fresh
            # also what pending plans of this version cite (an earlier attempt's, unmarked)
            self.replaced = sorted(
                {*follow.replaced, *proposed_spans(db, record.id, record.short_id, numbered)}
            )

    def _carry(
        self, door: PostgresDoor, source_id: str, claims: list[str], outcome: VersionOutcome
    ) -> set[str]:
        """Propose the carry of ``claims`` from ``source_id`` and apply it by the policy (never
        an agent's, W13); the claims carried."""
        carried: set[str] = set()
        record = self.record
        for n in range(0, len(claims), CARRY_CHUNK):
            ops = [{"op": "carry_source", "source": source_id, "to": record.id,
                    "claims": claims[n : n + CARRY_CHUNK]}]  # fmt: skip
            summary = (
                f"Carry claims of {record.name} to version {record.version} ({record.short_id})"
            )
            made = self._plan(door, ops, summary, f"{LINEAGE}:carry:{record.short_id}", apply=True)
            if made is None:
                continue
            plan_id, admission, applied = made
            outcome.plans.append(plan_id)
            if not applied:
                continue
            for op in admission.ops:
                if op.kind == "carry_source" and op.passes:
                    carried |= set(op.detail.get("carried", {}))
        outcome.carried += len(carried)
        return carried

    # -- 2. what the model reads, and what of its plan waits -------------------------------
    def chunks(self, chunk_chars: int) -> list[Chunk]:
        if self.fresh is None:
            return chunk_text(self.text, chunk_chars)
        return changed_chunks(self.text, self.fresh, chunk_chars)

    def cut(self, plan: dict[str, Any], chunk: Chunk) -> tuple[dict[str, Any], int, int]:
        """``plan`` without the claims citing unchanged text or an older version, and without
        those held for the proposals (kept here); (plan, left out, held)."""
        numbered = sentences_of(self.record.id, self.text)
        left_out = 0
        if chunk.cite:
            plan, left_out = keep_changed(plan, self.record.id, numbered, chunk.cite, self.older)
        plan, waiting = hold_replacing(plan, self.record.id, numbered, self.replaced)
        self.held += waiting
        return plan, left_out, len(waiting)

    # -- 3. proposals ----------------------------------------------------------------------
    def propose(self) -> dict[str, Any] | None:
        """Propose what changed, for a person, with the marker; what it did (``lineage`` of
        the source's result), or None when another job proposed it."""
        follow, record = self.follow, self.record
        if follow is None:
            return None
        with self.ingest._door() as door:
            conn = door.conn
            db = PgSql(conn, self.schema)
            if db.execute(
                "SELECT 1 FROM ingested_chunks WHERE source_id = ? AND start = ?",
                (record.id, MARK),
            ).fetchone():
                return None  # another job of this version proposed it meanwhile
            follow.held = self.held
            named = pending_claims(db, LINEAGE) | pending_claims(db, "lint")
            follow.changes = [c for c in follow.changes if c.claim not in named]
            spans = [c.pair for c in follow.changes if c.pair]
            quoting = quoting_in(
                db.execute(
                    'SELECT c.id, c.page_slug, e.start, e."end" FROM evidence e JOIN claims c '
                    "ON c.id = e.claim_id WHERE e.source_id = ? AND c.status = 'active' "
                    'ORDER BY c.id COLLATE "C"',
                    (record.id,),
                ).fetchall()
                if spans
                else [],
                spans,
            )

            def known(page: str) -> bool:
                found = db.execute("SELECT 1 FROM pages WHERE slug = ?", (page,)).fetchone()
                return found is not None

            groups = change_groups(follow, self.text, quoting, known)
            for part in _packed(groups):
                withdrawn = sum(op["op"] in ("supersede_claim", "retract_claim") for op in part)
                made = self._plan(door, part, lineage_summary(record, withdrawn),
                                  f"{LINEAGE}:{record.short_id}", apply=False)  # fmt: skip
                if made is not None:
                    follow.outcome.plans.append(made[0])
            count_changes(follow.outcome, follow, groups)
            self.ingest._mark(conn, record, MARK, FOLLOWED)
        return follow.outcome.to_json()

    # -- one plan through the gate -----------------------------------------------------------
    def _plan(
        self, door: PostgresDoor, ops: list[dict[str, Any]], summary: str, origin: str,
        *, apply: bool,
    ) -> tuple[str, Any, bool] | None:  # fmt: skip
        """Propose ``ops`` as one plan in the door's transaction (a savepoint: a refused plan
        leaves nothing) and, when ``apply`` and the policy lets it in without a person, apply
        it; (plan id, admission, applied), or None when nothing of it passes the gate."""
        from ..evidence import Verifier
        from ..gate.admission import admit
        from ..storage.postgres_gate import PgReads, PgSources

        ingest, conn, schema = self.ingest, door.conn, self.schema
        now = ingest.clock()
        try:
            with conn.transaction():
                nonce = rows.issue_nonce(conn, schema, LINEAGE, now, timedelta(hours=NONCE_HOURS))
                plan = parse_plan({"nonce": nonce, "summary": summary[:300], "operations": ops})
                plan_json = canonical_json(plan.to_json())
                plan_id = sha256_hex(plan_json)
                rows.use_nonce(conn, schema, plan.nonce, plan_id, now)
                sources = PgSources(conn, schema)
                admission = admit(
                    PgReads(conn, schema), ingest.config, sources, Verifier(sources), plan,
                    plan_id, agent=ingest.agent,
                )  # fmt: skip
                if not admission.admitted_ops:
                    raise PlanValidationError("no operation passes the gate")
                insert_plan(
                    conn, schema, plan_id, author=ingest.requested_by, origin=origin,
                    plan_json=plan_json, created_at=iso(now),
                    expires_at=iso(now + timedelta(hours=ingest.config.expiry_hours)),
                )  # fmt: skip
                rows.set_admission(conn, schema, plan_id, admission.to_json())
        except AffidavitError:
            return None
        applied = False
        if apply and not ingest.agent and not admission.needs_approval:
            try:
                with conn.transaction():
                    door.apply_plan(plan_id, now=iso(now), actor="policy",
                                    config=ingest.config, approval="policy")  # fmt: skip
                applied = True
            except AffidavitError:
                pass
        return plan_id, admission, applied


def _read(db: PgSql, source_id: str, job_id: str) -> bool:
    """Whether ``source_id`` was read: chunks of it settled, and no other ingest job of it
    queued or running (one between two chunks has none in flight, yet is not done)."""
    settled = db.execute(
        "SELECT 1 FROM ingested_chunks WHERE source_id = ? AND start >= 0 "
        "AND outcome != 'started' LIMIT 1",
        (source_id,),
    ).fetchone()
    if settled is None:
        return False
    reading = db.execute(  # a source id is hex: nothing in it is a LIKE pattern
        "SELECT 1 FROM jobs WHERE status IN ('queued', 'running') AND id != ? "
        "AND kind = 'ingest_stored' AND payload LIKE ? LIMIT 1",
        (job_id, f'%"{source_id}"%'),
    ).fetchone()
    return reading is None


def _chain(db: PgSql, source_id: str) -> list[tuple[str]]:
    """The older versions of ``source_id``, newest first (``previous_id`` followed)."""
    out: list[tuple[str]] = []
    seen = {source_id}
    current: str | None = source_id
    while current is not None:
        row = db.execute("SELECT previous_id FROM sources WHERE id = ?", (current,)).fetchone()
        current = str(row[0]) if row is not None and row[0] is not None else None
        if current is None or current in seen:
            break
        seen.add(current)
        out.append((current,))
    return out
