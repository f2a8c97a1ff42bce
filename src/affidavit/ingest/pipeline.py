"""``ingest``: sources in, plans through the gate, to the inbox or (with ``--yes``) applied.

For each source: add it to the store (a no-op for known bytes), split its text into chunks (never
truncated), and for each chunk not yet ingested ask the model for a plan. The prompt fences the
chunk in a fresh nonce (W2) and lists the existing pages most related to it (FTS5, bounded), so
the model extends pages instead of duplicating them. An invalid reply is sent back with the error,
at most ``model.max_reasks`` times. Every call's tokens and duration are recorded with the job.
"""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..clock import iso
from ..db import transaction
from ..errors import AffidavitError
from ..heap import few_arenas, few_collections
from ..plan.schema import plan_json_schema
from ..providers.base import IngestTask, Provider
from ..sources.store import SourceRecord, SourceStore
from ..store.apply import Batch, Step
from ..vault import Vault
from .adding import SourceAdding
from .ahead import Ahead
from .asking import STARTED as STARTED  # re-exported: where callers find it
from .asking import ChunkAsking, _ahead_key
from .asking import Citations as Citations  # re-exported: where callers find it
from .chunking import Chunk, changed_chunks, chunk_text
from .cost import Budget, BudgetSpent
from .lineage import VersionFollow, follow_version, fresh_units, propose_changes
from .report import IngestReport as IngestReport  # re-exported: where callers find it
from .report import SourceOutcome

Progress = Callable[[str, int, int], None]
"""Called as ``progress(source_name, chunks_done, chunk_count)``."""


SMALL_CONTEXT = 4096
PROMPT_OVERHEAD_TOKENS = 900
"""Instructions, the example and the related pages, measured at about 700 tokens, rounded up."""
CHARS_PER_TOKEN = 3
CARRIED = "carried"
"""``ingested_chunks.outcome`` of a new version's chunk with no new text: its claims were carried
from the version before (:mod:`.lineage`), nothing to read."""
BATCH_PLANS = 200
"""At most this many plans are applied together (one transaction, one fsync pass, one commit)."""
BATCH_SECONDS = 2.0
"""A batch is committed once it has been open this long: it holds the vault's writer lock."""
READ_CHUNK = "affidavit.ingest.reading:read_chunk"
"""What the worker computes for each chunk (:func:`.reading.read_chunk`)."""
AHEAD_MIN_CHUNKS = 8
"""An ingest of fewer chunks than this works in one process: starting the worker that reads
chunks ahead (:mod:`.ahead`) costs about as much as it saves."""
FAST_CALL_SECONDS = 1.0
"""Chunks are batched only while model calls return faster than this: a slow model is never
waited for with the writer lock held."""


def fit_to_context(context_length: int, max_output: int, chunk_chars: int) -> tuple[int, int]:
    """Reply budget and chunk size that fit the model's context window together with the prompt.

    Small models (SmolLM2 here runs with 4,096 tokens) get smaller chunks, never truncated ones: the source is
    still covered whole, by more chunks.
    """
    max_tokens = max(128, min(max_output, context_length // 3))
    room = context_length - max_tokens - PROMPT_OVERHEAD_TOKENS
    return max_tokens, max(500, min(chunk_chars, room * CHARS_PER_TOKEN))


class Ingestor(ChunkAsking, SourceAdding):
    """One ingest job over one vault with one provider (and optionally a reviewer)."""

    def __init__(
        self,
        vault: Vault,
        provider: Provider,
        *,
        store: SourceStore | None = None,
        reviewer: Provider | None = None,
        apply_now: bool = False,
        progress: Progress | None = None,
        actor: str = "ingest",
        job_id: str | None = None,
        checkpoint: Callable[[], None] | None = None,
        step: Step | None = None,
        citations: Citations = "sentence",
        batch_plans: int = BATCH_PLANS,
        batch_seconds: float = BATCH_SECONDS,
        lint_progress: Progress | None = None,
        adding_progress: Progress | None = None,
        budget: int | None = None,
    ) -> None:
        """``job_id`` names the queued job this ingest runs as (the queue owns its ``jobs`` row);
        ``checkpoint`` is called before each chunk and may raise to stop there (the chunks done
        so far stay recorded); ``step`` is passed on to every apply. ``citations`` is how the
        model is asked to cite: host-numbered ``sentence`` numbers (the default), or free
        ``quote`` text (kept for comparison, bench/bench_local_model.py). ``batch_plans`` and
        ``batch_seconds`` bound a batch of chunks applied together (:meth:`_batch_door`).
        ``lint_progress``, as ``(stage, done, total)``, follows the supersession pass and the
        automatic lint after the chunks (they read the whole wiki: on a large one they take a
        while); ``adding_progress``, as ``(label, files_read, file_count)``, the reading of a
        folder's files before them. ``budget``: tokens (prompt + completion) this run may
        spend; it stops cleanly before a chunk that would pass it (:class:`.cost.Budget`)."""
        self.vault = vault
        self.provider = provider
        self.store = store or SourceStore(vault)
        self.reviewer = reviewer
        self.apply_now = apply_now
        self.progress = progress
        self.lint_progress = lint_progress
        self.adding_progress = adding_progress
        self.actor = actor
        self.checkpoint = checkpoint
        self.step = step
        self.owns_job_row = job_id is None
        self.citations = citations
        self.batch: Batch | None = None
        self.batch_plans = batch_plans
        self.batch_seconds = batch_seconds
        self.last_call: float | None = None  # seconds the last model call took
        self.ahead: Ahead | None = None  # chunks read ahead in a worker (.reading)
        self.claims_before: int | None = None  # the largest claims rowid when the run started
        self._chunked: dict[str, tuple[str, list[Chunk], dict[int, tuple[str, str]]]] = {}
        self._follows: list[tuple[VersionFollow, SourceOutcome]] = []  # new versions read
        # Small context windows get a stricter subset of the schema, so a constrained reply
        # closes in time; the gate still checks every plan against the full schema.
        self.small = provider.supports_schema and provider.context_length <= SMALL_CONTEXT
        self.schema = plan_json_schema()
        self.report = IngestReport(job_id=job_id or "job-" + secrets.token_hex(6))
        self.budget = Budget(budget, provider) if budget is not None else None
        self.max_tokens, self.chunk_chars = fit_to_context(
            provider.context_length,
            int(vault.config.model("max_output_tokens")),
            vault.config.chunk_chars,
        )

    # -- the job ----------------------------------------------------------------------------
    def run(self, targets: list[str], trust: str | None = None) -> IngestReport:
        """Add and ingest every target (file, folder or URL); keeps going past a bad one."""
        few_arenas()  # before its threads start: they share one malloc arena
        with few_collections():  # its caches hold a million objects at 10 MB of sources
            return self._run(targets, trust)

    def _run(self, targets: list[str], trust: str | None) -> IngestReport:
        db = self.vault.db
        self.claims_before = int(
            db.execute("SELECT coalesce(max(rowid), 0) FROM claims").fetchone()[0]
        )
        if self.owns_job_row:
            from ..jobs.lease import recover_stale, start_inline  # no cycle at import

            at = iso(self.vault.clock())
            recover_stale(db, time.time(), at)  # runs a killed command left "running"
            start_inline(db, self.report.job_id, "ingest", at, json.dumps({"targets": targets}))
        status = "failed"
        try:
            try:
                self._ingest_targets(targets, trust)
            except BudgetSpent as stop:  # every chunk before it is recorded: a rerun resumes
                self.report.stopped = stop.detail
            finally:  # a stop at a checkpoint keeps what the batch holds: complete plans
                self._stop_ahead()
                self._close_batch()
            status = "done"
            self._auto_lint()
        finally:
            self._propose_changes()
            if self.owns_job_row:
                self._finish_job_row(status, targets)
        return self.report

    def _ingest_targets(self, targets: list[str], trust: str | None) -> None:
        for target in targets:
            # Sources are added before their chunks, outside any batch (each add is
            # its own commit), so a batch holds plans alone: all or nothing.
            self._close_batch()
            added = [self._add_one(name, add) for name, add in self._expand(target, trust)]
            records = [record for _, record in added if record is not None]
            self._start_ahead(records)
            started = 0
            for outcome, record in added:
                self.report.sources.append(outcome)
                if record is not None:
                    started += 1
                    if self.ahead is not None and 2 <= started < len(records):
                        # one source ahead: two sources' texts in memory at most
                        self.ahead.extend(self._ahead_items(records[started]))
                    self._ingest_added(record, outcome)
            self._stop_ahead()

    # -- the chunks' reading, ahead in a worker ------------------------------------------
    def _start_ahead(self, records: list[SourceRecord]) -> None:
        """Start the worker that reads chunks ahead when the provider has such a part and the
        sources are long enough to pay for it; it gets the first two sources' chunks (then
        each source's as the one before it starts)."""
        # a new version's chunks are mostly carried, known only once it is followed: read here
        chars = sum(record.text_chars for record in records if not record.previous_id)
        if self.provider.ahead and chars >= AHEAD_MIN_CHUNKS * self.chunk_chars:
            self.ahead = Ahead(READ_CHUNK)
            for record in records[:2]:
                self.ahead.extend(self._ahead_items(record))

    def _stop_ahead(self) -> None:
        ahead, self.ahead = self.ahead, None
        self._chunked.clear()
        if ahead is not None:
            ahead.close()
            seen = self.report.read_ahead or {"chunks": 0, "stopped": None}
            seen["chunks"] += ahead.computed
            seen["stopped"] = seen["stopped"] or ahead.stopped
            self.report.read_ahead = seen

    def _ahead_items(self, record: SourceRecord) -> list[tuple[Any, tuple[str, IngestTask]]]:
        if record.previous_id:  # a new version: the few chunks with new text are read here
            return []
        text, chunks, recorded = self._chunks_of(record)
        function = self.provider.ahead
        return [
            (
                _ahead_key(record.id, chunk),
                (function, self._chunk_task(record, text, chunk, len(chunks))),
            )
            for chunk in chunks
            if recorded.get(chunk.start, (STARTED, ""))[0] == STARTED
        ]

    def _chunks_of(
        self, record: SourceRecord
    ) -> tuple[str, list[Chunk], dict[int, tuple[str, str]]]:
        """A source's text, its chunks and what earlier runs recorded of them (by start)."""
        known = self._chunked.get(record.id)
        if known is not None:
            return known
        text = self.store.text(record.id)
        recorded = {
            r[0]: (r[1], r[2])
            for r in self.vault.db.execute(
                "SELECT start, outcome, nonce FROM ingested_chunks WHERE source_id = ?",
                (record.id,),
            )
        }
        found = (text, chunk_text(text, self.chunk_chars), recorded)
        if self.ahead is not None:
            self._chunked[record.id] = found
        return found

    def _batch_door(self) -> None:
        """Before a chunk: commit the open batch when it is full, old or the model slow, and
        open one while the model is fast, so the chunk's plan joins it (the door's
        :class:`~affidavit.store.apply.Batch`: proposals and applies of many chunks in one
        transaction, one render, one fsync pass and one git commit). Each chunk still sees the
        wiki as the chunks before it left it: they are applied in the open transaction."""
        fast = not self.provider.reads_prompt or (  # the host's own engine plans in-process
            self.last_call is not None and self.last_call < FAST_CALL_SECONDS
        )
        batch = self.batch
        if batch is not None and (
            not fast or len(batch.applied) >= self.batch_plans or batch.age >= self.batch_seconds
        ):
            self._close_batch()
        if self.batch is None and fast:
            self.batch = Batch(self.vault, step=self.step).open()

    def _close_batch(self) -> None:
        batch, self.batch = self.batch, None
        if batch is not None:
            batch.close()

    def _auto_lint(self) -> None:
        """Propose supersessions for facts the new claims changed (a new version's changes are
        the lineage's to propose); count the sources ingested, and run lint when
        ``lint.every_ingests`` is reached."""
        from ..lint.runner import (  # no cycle at import
            PROPOSAL_CHECKS,
            after_ingest,
            check_ahead,
            lint_claims_ahead,
            start_ingest_search,
            supersede_after_ingest,
        )

        by_source = [
            (c.plan_id, s.source_id)
            for s in self.report.sources
            for c in s.chunks
            if c.status in ("applied", "partial") and c.plan_id
        ]
        if not self.owns_job_row:  # a queued job may be a resumed attempt: all it applied
            by_source = [
                (str(r[0]), str(r[1]))
                for r in self.vault.db.execute(
                    "SELECT plan_id, source_id FROM ingested_chunks WHERE job_id = ? "
                    "AND outcome IN ('applied', 'partial') "
                    "AND plan_id IS NOT NULL ORDER BY rowid",
                    (self.report.job_id,),
                )
            ]
        applied = [plan for plan, _ in by_source]
        # A new version followed in this run has its changed claims proposed by the lineage, in
        # batches (_propose_changes): its plans skip the supersession pass, whose per-finding
        # fixes would propose the same claims again. One that states a version or date goes
        # through it still: lint orders it against other documents' releases too.
        lineage = {f.record.id for f, _ in self._follows if not f.record.stated_key}
        others = [plan for plan, source in by_source if source not in lineage]
        ingested = sum(1 for s in self.report.sources if s.status == "ingested")
        # both passes: one pair search, classified by a worker while the checks run here
        pending = start_ingest_search(self.vault, applied, ingested)
        try:
            checked = check_ahead(self.vault, self.lint_progress) if pending is not None else None
            search = pending.result(self.lint_progress) if pending is not None else None
        finally:  # a check that raised leaves no worker behind
            if pending is not None:
                pending.close()
        # this run's claims are past the rowids before it; a resumed job's may be older
        after = self.claims_before if self.owns_job_row else None
        # an incremental automatic lint due after it: one search for both passes' claims
        ahead = lint_claims_ahead(self.vault, ingested) if others and search is None else set()
        passed = supersede_after_ingest(self.vault, others, self.actor, search, after, ahead)
        found, fixes = passed.found, passed.fixes
        if found:
            self.report.supersessions = {
                "findings": [f.id for f in found],
                "plans": fixes.plans if fixes else [],
            }
        # the checks ran before the supersession pass: those that read its proposals run again
        report = after_ingest(
            self.vault,
            ingested,
            search=search,
            checked=checked,
            recheck=PROPOSAL_CHECKS if found else (),
            progress=self.lint_progress,
            settled={c for f, _ in self._follows for c in f.settled},
            covered=passed.covered,  # its search of the new claims' pairs serves the lint's
        )
        if report is not None:
            self.report.lint = {
                "run": report.run,
                "open": report.open,
                "new": len(report.new),
                "counts": report.counts(),
            }

    def _finish_job_row(self, status: str, targets: list[str]) -> None:
        """End this command's job row with its real counts (57/57 sources, not 0/0)."""
        sources = self.report.sources
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(Counter(s.status for s in sources).items()))
        with transaction(self.vault.db):
            self.vault.db.execute(
                "UPDATE jobs SET status = ?, finished_at = ?, detail = ?, progress_done = ?, "
                "progress_total = ?, progress_message = ? WHERE id = ?",
                (
                    status,
                    iso(self.vault.clock()),
                    json.dumps({"targets": targets, "totals": self.report.totals()}),
                    sum(1 for s in sources if s.status != "failed"),
                    len(sources),
                    f"{len(sources)} source(s): {kinds}"[:500],
                    self.report.job_id,
                ),
            )

    def _ingest_added(self, record: SourceRecord, outcome: SourceOutcome) -> None:
        try:
            self._ingest_source(record, outcome)
        except AffidavitError as exc:
            outcome.status, outcome.message = "failed", str(exc)

    def _ingest_source(self, record: SourceRecord, outcome: SourceOutcome) -> None:
        text, chunks, recorded = self._chunks_of(record)
        self._chunked.pop(record.id, None)
        if record.previous_id:  # a new version: its changed stretches alone are read
            follow = self._follow(record, chunks, recorded)
            if follow is not None:  # proposed after the chunks and the supersession pass
                outcome.lineage = follow.outcome.to_json()
                self._follows.append((follow, outcome))
            fresh = follow.outcome.fresh if follow else fresh_units(self.store, record)
            chunks = changed_chunks(text, fresh, self.chunk_chars)
            recorded = {k: v for k, v in recorded.items() if v[0] != CARRIED}
        self._read_chunks(record, outcome, text, chunks, recorded)

    def _read_chunks(
        self,
        record: SourceRecord,
        outcome: SourceOutcome,
        text: str,
        chunks: list[Chunk],
        recorded: dict[int, tuple[str, str]],
    ) -> None:
        done = {start for start, (outcome, _) in recorded.items() if outcome != STARTED}
        todo = [c for c in chunks if c.start not in done]
        if not todo and outcome.lineage is not None:
            outcome.message = f"{record.name} ({record.id[:12]}): no new text to read"
            return
        if not todo:
            outcome.status = "unchanged"
            outcome.message = (
                f"{record.name} ({record.id[:12]}) was already ingested; nothing to do"
            )
            return
        for number, chunk in enumerate(chunks):
            if chunk.start in done:
                continue
            self._batch_door()
            if self.checkpoint:
                self.checkpoint()
            in_flight = recorded.get(chunk.start)
            result = self._resume_chunk(chunk, in_flight[1]) if in_flight else None
            if result is None:
                result = self._ingest_chunk(record, text, chunk, len(chunks))
            outcome.chunks.append(result)
            self._record_chunk(record.id, chunk, result.plan_id, result.status, None)
            if self.progress:
                self.progress(record.name, number + 1, len(chunks))

    def _propose_changes(self) -> None:
        """What the new versions changed, proposed for a person (:func:`.lineage.
        propose_changes`) once the model read their new text: a claim the model wrote from the
        new words succeeds the old one. The supersession pass left these versions' claims to
        it (:meth:`_auto_lint`), but for a version that states its own version or date, whose
        stale fixes it does not propose twice."""
        follows, self._follows = self._follows, []
        for follow, outcome in follows:
            outcome.lineage = propose_changes(self.vault, follow, self.actor).to_json()

    def _follow(
        self, record: SourceRecord, chunks: list[Chunk], recorded: dict[int, tuple[str, str]]
    ) -> VersionFollow | None:
        """A new version of a known origin, not followed yet: carry first (:func:`.lineage.
        follow_version`), then record its whole-text chunks as carried: the model reads only
        the changed stretches (:func:`.chunking.changed_chunks`), recorded by their own start."""
        if recorded:  # followed by an earlier run (its chunks are recorded)
            return None
        self._batch_door()  # the carry joins the chunks' batch: one commit for both
        follow = follow_version(self.vault, self.store, record, self.actor)
        if follow is None:
            return None
        for chunk in chunks:
            self._record_chunk(record.id, chunk, None, CARRIED, None)
            recorded[chunk.start] = (CARRIED, "")
        return follow
