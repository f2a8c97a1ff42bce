"""One chunk of an ingest: its task, the model call, the reply proposed and settled.

The part of :class:`.pipeline.Ingestor` that asks the model about one chunk: the task (the
chunk, the related pages, a fresh nonce), the request (numbered sentences or free quotes, the
full or compact schema), the call (recorded with the job), the re-asks of an invalid reply, the
reviewer's verdict, and the plan settled (applied with ``--yes``); also a chunk an interrupted
run left in flight, and the ``ingested_chunks`` row of each chunk.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import replace
from threading import Thread
from typing import TYPE_CHECKING, Any, Literal

from ..clock import iso
from ..db import transaction
from ..errors import AdmissionError, PlanValidationError, ProviderError
from ..gate.admission import Admission
from ..gate.hints import seeded
from ..inbox import Proposal, held
from ..plan.compact import compact_plan_schema
from ..plan.nonce import issue_nonce
from ..plan.stored import admission_text
from ..providers.base import Completion, IngestTask, Message, ModelRequest, Provider, Usage
from ..sources.lineage import chain
from ..sources.sentences import sentences_of
from ..sources.store import SourceRecord, SourceStore
from ..store.apply import Approval, Step, apply
from ..support.kept import parse_behind
from ..vault import Vault
from .ahead import Ahead
from .chunking import PART_BREAK, Chunk, part_headings, shown_parts, sparse_text
from .citing import UNCHANGED, keep_changed
from .cost import Budget
from .holding import HELD, Held, hold_replacing, proposed_spans
from .prompts import REVIEW_SCHEMA, ingest_messages, reask_message, review_messages
from .reading import ChunkReading
from .related import known_slugs, related_pages, source_page
from .replies import InvalidReply, parse_reply
from .report import ChunkOutcome, IngestReport
from .retarget import propose_onto_existing

if TYPE_CHECKING:
    from .lineage import VersionFollow

Citations = Literal["sentence", "quote"]
"""How an ingest asks the model to cite: by host-numbered sentence, or by free quote."""
STARTED = "started"
"""``ingested_chunks.outcome`` of a chunk whose model request is in flight (with its nonce)."""


class ChunkAsking:
    """The methods of :class:`.pipeline.Ingestor` that ask the model about one chunk; the
    attributes they read are set by its constructor."""

    vault: Vault
    provider: Provider
    store: SourceStore
    reviewer: Provider | None
    apply_now: bool
    actor: str
    step: Step | None
    citations: Citations
    small: bool
    schema: dict[str, Any]
    max_tokens: int
    report: IngestReport
    budget: Budget | None
    last_call: float | None
    ahead: Ahead | None
    _follows: list[tuple[VersionFollow, Any]]

    def _record_chunk(
        self, source_id: str, chunk: Chunk, plan_id: str | None, outcome: str, nonce: str | None
    ) -> None:
        with transaction(self.vault.db):
            self.vault.db.execute(
                'INSERT OR REPLACE INTO ingested_chunks (source_id, start, "end", plan_id, '
                "outcome, job_id, nonce) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (source_id, chunk.start, chunk.end, plan_id, outcome, self.report.job_id, nonce),
            )

    def _resume_chunk(self, chunk: Chunk, nonce: str | None) -> ChunkOutcome | None:
        """Finish a chunk an interrupted run left in flight: if its model reply became a plan
        (the plan consumed the chunk's nonce), settle that plan instead of asking again, so a
        resumed ingest proposes and applies each chunk's plan once. None: ask the model anew."""
        row = self.vault.db.execute(
            "SELECT p.id, p.status, p.plan_json, p.plan_z, p.admission, p.admission_z "
            "FROM nonces n "
            "JOIN plans p ON p.id = n.used_by "
            "WHERE n.nonce = ?",
            (nonce or "",),
        ).fetchone()
        if row is None:
            return None
        admission = Admission.from_json(json.loads(admission_text(row, self.vault.db)))
        result = ChunkOutcome(
            index=chunk.index,
            start=chunk.start,
            end=chunk.end,
            status=row["status"],
            plan_id=row["id"],
            message=f"plan {row['id'][:12]} of an interrupted run is {row['status']}",
            claims=admission.counts,
            reasons=_reasons(admission),
            operations=len(admission.admitted_ops),
        )
        if row["status"] != "pending":
            return result
        quarantined = any(op.status == "quarantined" for op in admission.ops)
        if not admission.needs_approval:  # the policy was applying it when the run stopped
            approval = Approval(actor="policy", kind="policy")
        elif self.apply_now and not quarantined and self.reviewer is None:
            approval = Approval(actor=self.actor, sure_only=True)
        else:  # a reviewer's verdict is not recorded: leave it for a person (fail closed)
            return result
        applied = apply(self.vault, row["id"], None, approval, step=self.step)
        if applied.applied:
            result.status = "partial" if applied.pending_ops else "applied"
        elif held(self.vault, row["id"]):  # its sure part went in before the run stopped
            result.status = "partial"
        result.message = applied.message
        return result

    # -- one chunk --------------------------------------------------------------------------
    def _task(
        self,
        record: SourceRecord,
        text: str,
        chunk: Chunk,
        count: int,
        query: str | None = None,
        nonce: str | None = None,
    ) -> IngestTask:
        """The chunk's task: what :meth:`_chunk_task` reads, with the related pages (``query``:
        their query, read ahead), the other known slugs and a fresh nonce (``nonce``: one given
        instead, for an estimate that issues none)."""
        task = self._chunk_task(record, text, chunk, count)
        if chunk.cite:
            task = replace(task, source_page=source_page(self.vault.db, record.id))
        pages = related_pages(self.vault.db, task.chunk, self.vault.config.related_pages, query)
        shown = {p.slug for p in pages}
        return replace(
            task,
            nonce=nonce or issue_nonce(self.vault.db, self.vault.clock, "ingest"),
            pages=tuple(pages),
            pending_slugs=tuple(sorted(known_slugs(self.vault.db) - shown)),
        )

    def _chunk_task(self, record: SourceRecord, text: str, chunk: Chunk, count: int) -> IngestTask:
        """The part of a chunk's task that depends on the source alone (no pages, no nonce):
        what the worker reading ahead is given."""
        return IngestTask(
            nonce="",
            source_id=record.id,
            source_name=record.name,
            chunk=sparse_text(text, chunk),
            chunk_start=chunk.start,
            chunk_index=chunk.index,
            chunk_count=count,
            flagged=tuple(
                (max(f.start, chunk.start) - chunk.start, min(f.end, chunk.end) - chunk.start)
                for f in record.flags
                if f.start < chunk.end and chunk.start < max(f.end, f.start + 1)
            ),
            open_fence=chunk.fence,
            open_section=_visible_section(text, chunk, record),
            shown=shown_parts(text, chunk) if chunk.parts else "",
        )

    def _call(
        self,
        provider: Provider,
        request: ModelRequest,
        purpose: str,
        reading: ChunkReading | None = None,
    ) -> Completion:
        """``provider`` answers ``request`` (recorded with the job), from what the worker read of
        the request's chunk (``reading``) when there is that."""
        started = time.monotonic()
        outcome = "ok"
        completion: Completion | None = None
        try:
            if reading is not None:
                completion = provider.complete_with(reading.prepared, request)
            else:
                completion = provider.complete(request)
            return completion
        except ProviderError as exc:
            outcome = f"error: {exc}"[:300]
            raise
        finally:
            self.last_call = time.monotonic() - started
            usage = completion.usage if completion else Usage()
            if self.budget is not None:
                self.budget.spend(request, completion)
            self.report.calls += 1
            self.report.prompt_tokens += usage.prompt_tokens
            self.report.completion_tokens += usage.completion_tokens
            with transaction(self.vault.db):
                self.vault.db.execute(
                    "INSERT INTO model_calls (job_id, at, provider, model, purpose, prompt_tokens, "
                    "completion_tokens, duration_ms, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        self.report.job_id,
                        iso(self.vault.clock()),
                        provider.name,
                        completion.model if completion else "",
                        purpose,
                        usage.prompt_tokens,
                        usage.completion_tokens,
                        int((time.monotonic() - started) * 1000),
                        outcome,
                    ),
                )

    def _short_id(self, source_id: str) -> str:
        """The shortest prefix (>= 12 hex) that names ``source_id`` alone: a small model spells a
        64-hex id one or two characters a token, so the compact schema offers the prefix."""
        for length in (12, 16, 24, 32):
            if self.store.resolve(source_id[:length]) == source_id:
                return source_id[:length]
        return source_id

    def _ingest_chunk(
        self, record: SourceRecord, text: str, chunk: Chunk, count: int
    ) -> ChunkOutcome:
        result = ChunkOutcome(index=chunk.index, start=chunk.start, end=chunk.end, status="failed")
        reading = self._reading(record, chunk)
        task = self._task(record, text, chunk, count, reading.query if reading else None)
        request, numbered = self.request_for(record, text, chunk, task)
        if self.budget is not None:
            self.budget.before_chunk(request)
        self._record_chunk(record.id, chunk, None, STARTED, task.nonce)
        behind = self._parse_shown(record, text, chunk) if numbered is not None else None
        attempts = int(self.vault.config.model("max_reasks")) + 1
        proposal: Proposal | None = None
        hold = ""
        left_out = 0
        waiting: list[Held] = []  # held for the lineage's proposals (.holding)
        for attempt in range(attempts):
            try:
                completion = self._call(
                    self.provider,
                    request,
                    "ingest" if attempt == 0 else "reask",
                    reading=reading,
                )
            except ProviderError as exc:
                result.message = f"model call failed: {exc}"
                return result
            finally:
                if behind is not None:  # the shown sentences were parsed during the call
                    behind.join()
                    behind = None
            try:
                plan = parse_reply(completion, task.nonce)
                waiting = []
                if chunk.cite:  # a new version's chunk: its changed text alone is new
                    numbered_text = sentences_of(record.id, text)
                    older = tuple(chain(self.vault.db, record.id))
                    plan, left_out = keep_changed(plan, record.id, numbered_text, chunk.cite, older)
                    # what replaced a claim's words: the lineage's proposals bring it (a
                    # resumed run's: proposed by the run it resumes, held back here)
                    follow = self._following(record.id)
                    replaced = (
                        follow.replaced
                        if follow is not None
                        else proposed_spans(
                            self.vault.db, record.id, record.short_id, numbered_text
                        )
                    )
                    plan, waiting = hold_replacing(plan, record.id, numbered_text, replaced)
                if plan.get("operations") == []:
                    result.status, result.message = "empty", "nothing to propose from this chunk"
                    result.reasons = _left_reasons(left_out, waiting)
                    if waiting:
                        self._hold(record.id, waiting)
                        result.message = "nothing new: the changed words wait in the inbox"
                    elif left_out:
                        result.message = "nothing new: every claim cited unchanged text"
                    return result
                hold = self._review(task, plan)
                with seeded(reading.hints if reading else None):
                    proposal = propose_onto_existing(
                        self.vault,
                        plan,
                        f"model:{self.provider.name}",
                        f"ingest:{record.name}#{chunk.index + 1}",
                        hold=hold,
                    )
                break
            except (InvalidReply, PlanValidationError, AdmissionError) as exc:
                result.message = f"invalid reply: {exc}"
                request = replace(
                    request,
                    messages=(
                        *request.messages,
                        Message("assistant", completion.text[:4000]),
                        reask_message(str(exc), task.nonce, by_sentence=numbered is not None),
                    ),
                )
        if proposal is None:
            result.message += f" (gave up after {attempts} attempt(s))"
            return result
        self._hold(record.id, waiting)
        settled = self._settle(proposal, result, held=bool(hold))
        settled.reasons.update(_left_reasons(left_out, waiting))
        return settled

    def _following(self, source_id: str) -> VersionFollow | None:
        """The new version ``source_id`` being followed in this run, if it is."""
        return next((f for f, _ in self._follows if f.record.id == source_id), None)

    def _hold(self, source_id: str, held: list[Held]) -> None:
        follow = self._following(source_id)
        if follow is not None:
            follow.held += held

    def request_for(
        self, record: SourceRecord, text: str, chunk: Chunk, task: IngestTask
    ) -> tuple[ModelRequest, str | None]:
        """The first model request for ``task`` and the chunk as numbered sentences (None when
        the model is to copy quotes): what a call sends, and what a dry run counts."""
        numbered, shown = self._numbered(record, text, chunk)
        schema = (
            compact_plan_schema(
                task.nonce,
                [self._short_id(record.id)],
                [p.slug for p in task.pages],
                sentences=(shown[0], shown[-1]) if shown else None,
                only=shown if chunk.cite else None,
                budget_tokens=self.max_tokens,
            )
            if self.small
            else self.schema
        )
        request = ModelRequest(
            messages=ingest_messages(
                task, schema, constrained=self.provider.supports_schema, numbered=numbered
            ),
            schema=schema,
            schema_name="plan",
            task=task,
            max_tokens=self.max_tokens,
        )
        return request, numbered

    def _parse_shown(self, record: SourceRecord, text: str, chunk: Chunk) -> Thread | None:
        """Parse the sentences the model is shown while it writes (a cited sentence is its
        claim's quote: the support check then finds it parsed, :mod:`affidavit.support.kept`)."""
        _, shown = self._numbered(record, text, chunk)
        numbered = sentences_of(record.id, text)
        state = None if self.vault.read_only else self.vault.state_dir
        return parse_behind(state, [numbered.sentence_text(n) for n in shown])

    def _reading(self, record: SourceRecord, chunk: Chunk) -> ChunkReading | None:
        """What the worker read of ``chunk`` (None: nothing, the chunk is read here)."""
        if self.ahead is None:
            return None
        ready, reading = self.ahead.take(_ahead_key(record.id, chunk))
        return reading if ready and isinstance(reading, ChunkReading) else None

    def _numbered(
        self, record: SourceRecord, text: str, chunk: Chunk
    ) -> tuple[str | None, tuple[int, ...]]:
        """The chunk as host-numbered sentences and the numbers it may cite: every number shown,
        or for a new version's chunk those of its changed sentences alone (:attr:`Chunk.cite`:
        never an unchanged one shown around them, never one in a gap between its parts);
        ``(None, ())`` when the model is to copy quotes (``citations="quote"``, or a chunk
        without sentences: a table, a list of headings)."""
        if self.citations != "sentence" or not self.provider.reads_prompt:
            return None, ()
        numbered = sentences_of(record.id, text)
        parts = chunk.parts or ((chunk.start, chunk.end),)
        shown = [s for lo, hi in parts for s in numbered.starting_in(lo, hi)]
        if chunk.cite:
            shown = [
                s for s in shown if any(lo <= s.start and s.end <= hi for lo, hi in chunk.cite)
            ]
        if not shown:
            return None, ()
        numbers = tuple(s.n for s in shown)
        if not chunk.parts:
            return _unnumber(numbered.render(chunk.start, chunk.end), chunk, numbers), numbers
        # a sparse chunk: its parts alone, each under the heading before it, "[…]" between
        lines = [
            "\n".join(x for x in (head, numbered.render(lo, hi)) if x)
            for head, (lo, hi) in zip(part_headings(text, chunk), chunk.parts, strict=True)
        ]
        return _unnumber(PART_BREAK.join(lines), chunk, numbers), numbers

    def _settle(self, proposal: Proposal, result: ChunkOutcome, held: bool) -> ChunkOutcome:
        admission = proposal.admission
        result.plan_id = proposal.plan_id
        result.status = proposal.status
        result.message = proposal.message
        result.claims = admission.counts
        result.operations = len(admission.admitted_ops)
        result.reasons = _reasons(admission)
        quarantined = any(op.status == "quarantined" for op in admission.ops)
        if self.apply_now and proposal.status == "pending" and not quarantined and not held:
            # `--yes` says yes before anything is shown: what waits for a person (W11) stays
            approval = Approval(actor=self.actor, sure_only=True)
            applied = apply(self.vault, proposal.plan_id, None, approval, step=self.step)
            if applied.applied:
                result.status = "partial" if applied.pending_ops else "applied"
            result.message = applied.message
        return result

    def _review(self, task: IngestTask, plan: dict[str, Any]) -> str:
        """Ask the reviewer about the plan; returns a hold reason, or "" when it looks fine."""
        if self.reviewer is None:
            return ""
        claims = _claim_texts(plan)
        nonce = issue_nonce(self.vault.db, self.vault.clock, "review")
        request = ModelRequest(
            messages=review_messages(nonce, task.shown or task.chunk, claims),
            schema=REVIEW_SCHEMA,
            schema_name="review",
            max_tokens=256,
        )
        try:
            verdict = parse_reply(self._call(self.reviewer, request, "review"), nonce)
        except ProviderError as exc:
            return f"reviewer gave no usable verdict ({exc}); held for a person"
        if verdict.get("verdict") == "ok":
            return ""
        if verdict.get("verdict") == "suspicious":
            return f"reviewer flagged the plan: {str(verdict.get('reason', ''))[:200]}"
        return "reviewer gave no usable verdict; held for a person"


_LABEL = re.compile(r"^\[s(\d+)\] ", re.M)


def _unnumber(rendered: str, chunk: Chunk, numbers: tuple[int, ...]) -> str:
    """A new version's chunk as numbered lines with only the sentences it may cite numbered:
    an unchanged sentence shown around a change is context, unnumbered as a heading is."""
    if not chunk.cite:
        return rendered
    allowed = set(numbers)
    return _LABEL.sub(lambda m: m.group() if int(m.group(1)) in allowed else "", rendered)


def _left_reasons(left_out: int, held: list[Held]) -> dict[str, int]:
    """The chunk's reasons for claims not in its plan: cited unchanged text, or held."""
    out = {UNCHANGED: left_out} if left_out else {}
    if held:
        out[HELD] = len(held)
    return out


def _ahead_key(source_id: str, chunk: Chunk) -> tuple[str, int, int]:
    return (source_id, chunk.start, chunk.end)


def _reasons(admission: Admission) -> dict[str, int]:
    """Why claims and operations of a plan were not admitted, counted."""
    reasons: Counter[str] = Counter()
    for op in admission.ops:
        for claim in op.claims:
            if claim.status != "admitted":
                reasons[f"{claim.status}: {claim.check}"] += 1
        if op.status == "rejected" and not op.claims:
            reasons[f"operation rejected: {op.check}"] += 1
    return dict(reasons)


def _claim_texts(plan: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    for op in plan.get("operations", []) if isinstance(plan.get("operations"), list) else []:
        if not isinstance(op, dict):
            continue
        for key in ("claims", "entries"):
            for claim in op.get(key, []) if isinstance(op.get(key), list) else []:
                if isinstance(claim, dict) and isinstance(claim.get("text"), str):
                    texts.append(claim["text"])
        by = op.get("by")
        if isinstance(by, dict) and isinstance(by.get("text"), str):
            texts.append(by["text"])
        for key in ("title", "summary"):
            if isinstance(op.get(key), str):
                texts.append(op[key])
    return texts


def _visible_section(text: str, chunk: Chunk, record: SourceRecord) -> str:
    """The heading the chunk's first lines are under (:attr:`Chunk.section`), unless that
    heading line lies in a flagged span (an EPUB chapter's ``<title>``, hidden text): a section
    named after it would be quarantined by the gate, as the heading a reader never sees."""
    name = chunk.section
    if not name:
        return ""
    at = text.rfind(name, 0, chunk.start)
    if at >= 0 and any(f.start < at + len(name) and at < f.end for f in record.flags):
        return ""
    return name
