"""An ingest job on a PostgreSQL vault (``ingest_stored``), run by a worker on any host under its
claim (:class:`~affidavit.storage.jobs.Claim`).

For each stored source: its text (bytes and text re-hashed), split into chunks as SQLite's ingest
splits them (:func:`~affidavit.ingest.chunking.chunk_text`); for each chunk not yet ingested, a
fresh nonce (W2), the model's plan (the extractive engine reads the task; a language model the
same prompt as on SQLite, re-asked on an invalid reply), then **one transaction** through the
PostgreSQL door: the job's claim checked and its row locked
(:meth:`~affidavit.storage.postgres_jobs.PostgresJobStore.held`), the nonce consumed, the plan
admitted by the one gate, recorded, applied by the policy when it lets the plan in without a
person (never an agent's, W13), and the chunk's checkpoint (``ingested_chunks``, pg008) written.

So every write is fenced: a worker whose lease expired and whose job another worker claimed
changes nothing (:class:`~affidavit.storage.jobs.LeaseLost`, the transaction rolled back). And
each chunk's plan is proposed and applied exactly once: its checkpoint commits with it, so a job
re-run after a worker died (kill -9 anywhere) skips the chunks whose transaction committed and
asks again for the one that did not (nothing of it was written).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from ..agents import is_agent
from ..clock import Clock, iso, utc_now
from ..config import Config
from ..errors import AffidavitError, ConflictError, PlanValidationError, ProviderError
from ..hashing import canonical_json, sha256_hex
from ..ingest.chunking import Chunk, chunk_text, shown_parts, sparse_text
from ..ingest.prompts import ingest_messages, reask_message
from ..ingest.replies import InvalidReply, parse_reply
from ..plan.schema import parse_plan, plan_json_schema
from ..providers.base import IngestTask, Message, ModelRequest, Provider
from ..sources.store import SourceRecord
from ..storage import pg_served as rows
from ..storage.jobs import Claim, LeaseLost
from ..storage.postgres import Conn, PostgresDoor, _q, insert_plan
from ..storage.postgres_jobs import PostgresJobStore
from .payloads import StoredIngestPayload
from .pg_lineage import PgLineage, superseded_by

STARTED = "started"
NONCE_HOURS = 24
SUPERSEDED = "superseded"
"""A chunk of a version whose origin has a newer version followed already: not settled."""
FINAL = ("applied", "partial", "pending", "rejected", "empty", "invalid", SUPERSEDED)
"""A chunk's outcome once decided; ``partial``: the policy applied its plan's sure part and the
rest waits for a person (the plan's pending remainder), as on SQLite."""
"""A chunk's outcomes once its transaction committed: a re-run skips it."""


def idle_timeout_ms(lease_seconds: float) -> int:
    """How long the server lets a worker's session idle inside a transaction before ending it
    (its locks released): the lease, but at least 10 s — a CPU-starved host may think that long
    between two statements of a healthy transaction, and ending it costs the chunk's redo."""
    return int(max(lease_seconds, 10.0) * 1000)


def check_claim(jobs: PostgresJobStore, claim: Claim, conn: Conn, lease_seconds: float) -> None:
    """The claim is current (its job's row locked to the end of ``conn``'s transaction) and no
    one asked to cancel; else raise (:class:`LeaseLost`, :class:`Cancelled`), which rolls the
    transaction back: every write of a job goes through this first."""
    # a worker paused in this transaction loses it (and the locks) once it idled its lease
    conn.execute(
        "SELECT set_config('idle_in_transaction_session_timeout', %s, true)",
        (str(idle_timeout_ms(lease_seconds)),),
    )
    by = jobs.held(conn, claim)
    if by is not None:
        raise Cancelled(by)


class Cancelled(AffidavitError):
    """A person asked to cancel the job (``POST …/jobs/{id}/cancel``); the worker stopped."""

    def __init__(self, by: str) -> None:
        super().__init__(f"cancelled by {by}")
        self.by = by


class Stopped(AffidavitError):
    """The worker is stopping (SIGTERM) or lost its lease: the job is left for another claim."""


@dataclass
class SourceDone:
    source_id: str
    name: str
    chunks: Counter[str] = field(default_factory=Counter)
    plans: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str = ""
    lineage: dict[str, Any] | None = None
    """A new version's carry and proposals (as SQLite's ``ingest --json``'s ``lineage``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "name": self.name,
            "status": "failed" if self.error else "ingested",
            "chunks": dict(sorted(self.chunks.items())),
            "plans": self.plans,
            "problems": self.problems[:20],
            "error": self.error,
            **({"lineage": self.lineage} if self.lineage is not None else {}),
        }


class PgIngest:
    """One attempt of an ``ingest_stored`` job, every write carrying ``claim``."""

    def __init__(
        self,
        jobs: PostgresJobStore,
        claim: Claim,
        provider: Provider,
        *,
        requested_by: str,
        config: Config | None = None,
        clock: Clock = utc_now,
        stop: threading.Event | None = None,
        lease_seconds: float = 30.0,
    ) -> None:
        self.jobs = jobs
        self.lease_seconds = lease_seconds
        self.storage = jobs.storage
        self.claim = claim
        self.vault = claim.vault
        self.schema = f"v_{claim.vault}"
        self.provider = provider
        self.config = config or Config()
        self.clock = clock
        self.stop = stop or threading.Event()
        self.requested_by = requested_by
        self.agent = is_agent(requested_by, "job")
        # an agent's job proposes an agent's plans (W13: never applied by the policy)
        self.author = requested_by if self.agent else f"model:{provider.name}"
        self.schema_json = plan_json_schema()
        from ..ingest.pipeline import fit_to_context

        self.max_tokens, self.chunk_chars = fit_to_context(
            provider.context_length,
            int(self.config.model("max_output_tokens")),
            self.config.chunk_chars,
        )
        self.done = 0
        self.total = 0
        self.lineage: PgLineage | None = None  # the source being read, when a new version

    # -- fenced writes -------------------------------------------------------------------
    def _checked(self, conn: Conn) -> None:
        check_claim(self.jobs, self.claim, conn, self.lease_seconds)

    @contextmanager
    def _fenced(self) -> Iterator[Conn]:
        with self.storage._tx() as conn:
            self._checked(conn)
            yield conn

    @contextmanager
    def _door(self) -> Iterator[PostgresDoor]:
        with self.storage.door(self.vault, f"{self.claim.job_id}-{uuid.uuid4().hex[:12]}") as door:
            self._checked(door.conn)
            yield door

    # -- the job -------------------------------------------------------------------------
    def run(self, payload: StoredIngestPayload) -> dict[str, Any]:
        """Ingest every source of ``payload``; the job's result. Raises :class:`Cancelled`,
        :class:`Stopped` or :class:`LeaseLost` to stop (what committed stays)."""
        done: list[SourceDone] = []
        for source_id in dict.fromkeys(payload.sources):
            outcome = SourceDone(source_id, source_id[:12])
            done.append(outcome)
            try:
                record, text = self._source(source_id)
            except AffidavitError as exc:
                outcome.error = str(exc)
                continue
            outcome.name = record.name
            lineage = None
            if record.previous_id:  # a new version: carried, its changed text alone read
                lineage = PgLineage(self, record, text)
                lineage.follow_version()
            self.lineage = lineage
            chunks = (lineage.chunks(self.chunk_chars) if lineage is not None
                      else chunk_text(text, self.chunk_chars))  # fmt: skip
            self.total += len(chunks)
            recorded = self._recorded(source_id)
            for chunk in chunks:
                before = recorded.get(chunk.start)
                if before is not None and before[0] in FINAL:
                    outcome.chunks[before[0]] += 1
                    if before[1]:
                        outcome.plans.append(before[1])
                    self.done += 1
                    continue
                self._checkpoint()
                status, plan_id, message = self._chunk(record, text, chunk, len(chunks))
                outcome.chunks[status] += 1
                if plan_id:
                    outcome.plans.append(plan_id)
                if message:
                    outcome.problems.append(f"chunk {chunk.index + 1}: {message}")
                self.done += 1
                self.jobs.progress(
                    self.claim, self.done, self.total,
                    f"{record.name}: chunk {chunk.index + 1}/{len(chunks)} {status}",
                )  # fmt: skip
            if lineage is not None:
                self._checkpoint()
                outcome.lineage = lineage.propose()
        totals: Counter[str] = Counter()
        for source in done:
            totals.update(source.chunks)
        return {
            "totals": dict(sorted(totals.items())),
            "sources": [s.to_json() for s in done],
            "failed": [s.source_id for s in done if s.error],
        }

    def _checkpoint(self) -> None:
        if self.stop.is_set():
            raise Stopped(f"worker {self.claim.owner} is stopping; job {self.claim.job_id} waits")

    def _source(self, source_id: str) -> tuple[SourceRecord, str]:
        from ..storage.postgres_gate import PgSources

        with self.storage._tx() as conn:
            sources = PgSources(conn, self.schema)
            record = sources.get(source_id)
            if record.status != "active":
                raise ConflictError(f"source {source_id[:12]} is {record.status}: not ingested.")
            return record, sources.intact_text(record.id)

    def _recorded(self, source_id: str) -> dict[int, tuple[str, str]]:
        with self.storage._tx() as conn:
            found = conn.execute(
                _q("SELECT start, outcome, plan_id FROM {s}.ingested_chunks WHERE source_id = %s",
                   self.schema), (source_id,),
            ).fetchall()  # fmt: skip
        return {int(r["start"]): (str(r["outcome"]), str(r["plan_id"] or "")) for r in found}

    def _record(
        self, conn: Conn, record: SourceRecord, chunk: Chunk, outcome: str,
        nonce: str | None, plan_id: str | None,
    ) -> None:  # fmt: skip
        conn.execute(
            _q('INSERT INTO {s}.ingested_chunks AS c (source_id, start, "end", outcome, nonce, '
               "plan_id, job_id, fence) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
               "ON CONFLICT (source_id, start) DO UPDATE SET outcome = excluded.outcome, "
               "nonce = excluded.nonce, plan_id = excluded.plan_id, job_id = excluded.job_id, "
               "fence = excluded.fence WHERE c.outcome = 'started'", self.schema),
            (record.id, chunk.start, chunk.end, outcome, nonce, plan_id, self.claim.job_id,
             self.claim.fence),
        )  # fmt: skip

    def _mark(self, conn: Conn, record: SourceRecord, start: int, outcome: str) -> None:
        """A row of ``ingested_chunks`` that is no chunk (``start`` < 0): a version's marker."""
        conn.execute(
            _q('INSERT INTO {s}.ingested_chunks (source_id, start, "end", outcome, job_id, fence) '
               "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (source_id, start) DO NOTHING",
               self.schema),
            (record.id, start, start, outcome, self.claim.job_id, self.claim.fence),
        )  # fmt: skip

    # -- one chunk -----------------------------------------------------------------------
    def _task(self, record: SourceRecord, text: str, chunk: Chunk, count: int) -> IngestTask:
        """The chunk's task with a fresh nonce, its checkpoint "started" (a fenced write)."""
        with self._fenced() as conn:
            nonce = rows.issue_nonce(
                conn, self.schema, "ingest", self.clock(), timedelta(hours=NONCE_HOURS)
            )
            self._record(conn, record, chunk, STARTED, nonce, None)
            slugs = conn.execute(
                _q("SELECT slug FROM {s}.pages UNION SELECT slug FROM {s}.slug_reservations "
                   "ORDER BY 1", self.schema)
            ).fetchall()  # fmt: skip
            page = conn.execute(
                _q("SELECT c.page_slug FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id "
                   "JOIN {s}.pages p ON p.slug = c.page_slug WHERE e.source_id = %s "
                   "AND c.status = 'active' AND p.category = 'sources' GROUP BY c.page_slug "
                   'ORDER BY count(*) DESC, c.page_slug COLLATE "C" LIMIT 1', self.schema),
                (record.id,),
            ).fetchone() if chunk.cite else None  # fmt: skip
        return IngestTask(
            nonce=nonce,
            source_id=record.id,
            source_name=record.name,
            chunk=sparse_text(text, chunk),
            chunk_start=chunk.start,
            chunk_index=chunk.index,
            chunk_count=count,
            pending_slugs=tuple(str(r["slug"]) for r in slugs),
            flagged=tuple(
                (max(f.start, chunk.start) - chunk.start, min(f.end, chunk.end) - chunk.start)
                for f in record.flags
                if f.start < chunk.end and chunk.start < max(f.end, f.start + 1)
            ),
            open_fence=chunk.fence,
            open_section=chunk.section,
            shown=shown_parts(text, chunk) if chunk.parts else "",
            source_page=str(page["page_slug"]) if page else "",
        )

    def _chunk(
        self, record: SourceRecord, text: str, chunk: Chunk, count: int
    ) -> tuple[str, str | None, str]:
        """Ask for the chunk's plan and settle it; (outcome, plan id, message)."""
        task = self._task(record, text, chunk, count)
        request = ModelRequest(
            messages=ingest_messages(
                task, self.schema_json, constrained=self.provider.supports_schema
            ),
            schema=self.schema_json,
            schema_name="plan",
            task=task,
            max_tokens=self.max_tokens,
        )
        attempts = int(self.config.model("max_reasks")) + 1
        why = ""
        for _ in range(attempts):
            try:
                completion = self.provider.complete(request)
            except ProviderError as exc:  # left "started": a later job on the source asks again
                return "failed", None, f"model call failed: {exc}"[:300]
            self._checkpoint()
            try:
                plan = parse_reply(completion, task.nonce)
                cut = ""
                if self.lineage is not None:  # a new version: what is new, what waits
                    plan, left_out, held = self.lineage.cut(plan, chunk)
                    cut = _cut_message(left_out, held)
                if plan.get("operations") == []:
                    return self._settle_empty(record, chunk, task.nonce, cut)
                status, plan_id, message = self._settle(record, chunk, task.nonce, plan)
                return status, plan_id, "; ".join(m for m in (message, cut) if m)
            except (InvalidReply, PlanValidationError) as exc:
                why = str(exc)
                request = replace(
                    request,
                    messages=(
                        *request.messages,
                        Message("assistant", completion.text[:4000]),
                        reask_message(why, task.nonce),
                    ),
                )
        with self._fenced() as conn:
            self._record(conn, record, chunk, "invalid", task.nonce, None)
        return "invalid", None, f"invalid reply after {attempts} attempt(s): {why}"[:300]

    def _settle_empty(
        self, record: SourceRecord, chunk: Chunk, nonce: str, why: str = ""
    ) -> tuple[str, None, str]:
        with self._fenced() as conn:
            self._record(conn, record, chunk, "empty", nonce, None)
        return "empty", None, why

    def _settle(
        self, record: SourceRecord, chunk: Chunk, nonce: str, raw: dict[str, Any]
    ) -> tuple[str, str | None, str]:
        """In one transaction through the door, under the job's claim: consume the nonce,
        admit the plan, record it, apply it by the policy when it may, checkpoint the chunk."""
        from ..evidence import Verifier
        from ..gate.admission import admit
        from ..storage.postgres_gate import PgReads, PgSources

        plan = parse_plan(raw)
        plan_json = canonical_json(plan.to_json())
        plan_id = sha256_hex(plan_json)
        now = self.clock()
        origin = f"ingest:{record.name}#{chunk.index + 1}"[:200]
        with self._door() as door:
            conn = door.conn
            settled = conn.execute(
                _q("SELECT outcome, plan_id, job_id FROM {s}.ingested_chunks "
                   "WHERE source_id = %s AND start = %s", self.schema), (record.id, chunk.start),
            ).fetchone()  # fmt: skip
            if settled is not None and settled["outcome"] in FINAL:  # another job, meanwhile
                why = f"settled by job {settled['job_id']} meanwhile"
                return str(settled["outcome"]), settled["plan_id"], why
            newer = superseded_by(conn, self.schema, record)
            if newer is not None:  # its job carried or proposed what this one's claims say
                self._record(conn, record, chunk, SUPERSEDED, nonce, None)
                return SUPERSEDED, None, f"version {newer} of {record.name} was read since"
            rows.use_nonce(conn, self.schema, plan.nonce, plan_id, now)
            sources = PgSources(conn, self.schema)
            admission = admit(
                PgReads(conn, self.schema), self.config, sources, Verifier(sources), plan,
                plan_id, agent=self.agent,
            )  # fmt: skip
            if not admission.admitted_ops:
                reasons = "; ".join(f"op {op.index + 1}: {op.reason}" for op in admission.ops)
                self._record(conn, record, chunk, "rejected", nonce, None)
                return "rejected", None, f"no operation passes the gate: {reasons}"[:300]
            insert_plan(
                conn, self.schema, plan_id, author=self.author, origin=origin,
                plan_json=plan_json, created_at=iso(now),
                expires_at=iso(now + timedelta(hours=self.config.expiry_hours)),
            )  # fmt: skip
            rows.set_admission(conn, self.schema, plan_id, admission.to_json())
            status, message = "pending", ""
            if not self.agent and not admission.needs_approval:
                try:
                    with conn.transaction():  # a savepoint: a refusal keeps the proposal
                        entry = door.apply_plan(plan_id, now=iso(now), actor="policy",
                                                config=self.config, approval="policy")  # fmt: skip
                    # the sure part applied; what waits for a person stays the plan's remainder
                    status = "partial" if json.loads(entry.detail).get("pending_ops") else "applied"
                except ConflictError as exc:
                    message = f"plan {plan_id[:12]} waits for a person: {exc}"[:300]
            self._record(conn, record, chunk, status, nonce, plan_id)
        return status, plan_id, message


def _cut_message(left_out: int, held: int) -> str:
    """What a new version's chunk plan lost before the gate (as SQLite's chunk reasons)."""
    parts = []
    if held:
        parts.append(f"{held} claim(s) held: they restate words the new version replaced; "
                     "its proposal in the inbox carries them")  # fmt: skip
    if left_out:
        parts.append(f"{left_out} claim(s) left out: they cite unchanged text of the new version")
    return "; ".join(parts)


__all__ = ["Cancelled", "LeaseLost", "PgIngest", "Stopped", "check_claim"]
