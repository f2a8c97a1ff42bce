"""The web desk over a vault of a PostgreSQL database (``serve --database URL --web``):
:class:`PgDesk`, the :class:`~.wiki.DeskWiki` the handlers read and decide through, over
:class:`~affidavit.service.pg_vaults.PgVault` — its snapshots, full-text search, answerer,
inbox and door — never a SQLite vault. The screens are SQLite's (:func:`.browse.page_screen`,
:func:`.review.plan_screen`, :func:`.changes.inbox_context`, …) and so are the rules a decision
keeps: a stale screen is refused before anything runs, an agent's plan is never approved in
bulk, and every approval is the PostgreSQL door's (under the vault's advisory lock, re-checked,
exactly once whichever daemon takes it). A page has no git history here: its history is the
applied plans that wrote it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import psycopg
from fastapi import Request
from fastapi.responses import Response
from psycopg_pool import PoolTimeout

from .. import inbox
from ..agents import is_agent
from ..clock import iso
from ..errors import AffidavitError, ConflictError
from ..gate.verdicts import Admission
from ..jobs.models import Job, JobEvent
from ..lint.findings import FindingStore, Status, StoredFinding
from ..plan.schema import parse_plan
from ..retract import describe_radius, retract_source_op
from ..server.job_stream import event_stream, resume_at
from ..service import changes
from ..service.graph import graph_of
from ..service.models import (
    AskRequest,
    AskResponse,
    PageSummary,
    PlanPreview,
    SearchResponse,
    SourceOut,
)
from ..service.pg_ask import ask
from ..service.pg_findings import PgFindings
from ..service.pg_jobs import PgJobs
from ..service.pg_vaults import PgVault
from ..service.review import Commit, Excerpt, StaleScreen, cut
from ..storage import pg_desk as reads
from ..storage import pg_served as rows
from ..storage.pg_sql import PgSql
from ..storage.postgres_content import decided_of
from ..storage.postgres_gate import PgReads, PgSources
from ..store.blast import blast_radius
from .browse import AUDIT_SHOWN, page_screen
from .changes import agent_in_bulk, inbox_context, offer_together, supported_ids
from .desk import Offer, WebRefusal
from .review import chosen_ops, not_approved, plan_screen, slug_of
from .upkeep import source_screen
from .wiki import Choice, Decided, DeskWiki

Order = list[tuple[str, list[changes.Dependency]]]
"""The pending plans in review order, each with the plans it needs."""
Pending = tuple[dict[str, Any], inbox.PlanRecord, list[int], list[changes.Dependency]]
"""A pending plan's row, its record, its operations to decide and the plans it needs."""
HISTORY_SHOWN = 50
"""Plans listed as a page's history."""


class PgDesk:
    """:class:`~.wiki.DeskWiki` over one vault of a PostgreSQL database."""

    backend = "postgresql"

    def __init__(self, vault: PgVault) -> None:
        self.vault = vault
        self.schema = vault.schema

    # --- reading ---------------------------------------------------------------------------

    def pages(self) -> list[PageSummary]:
        return self.vault.list_pages()

    def page_view(self, slug: str) -> dict[str, Any]:
        page = self.vault.get_page(slug, with_markdown=False)
        with self.vault._read() as conn:
            ids = sorted({e.source_id for c in page.claims for e in c.evidence})
            names = reads.source_names(conn, self.schema, ids)
            behind = reads.page_sources(conn, self.schema, page.slug)
            plans = reads.page_plans(conn, self.schema, page.slug, HISTORY_SHOWN)
        history = [
            Commit(
                sha=str(p["id"]),
                at=str(p["decided_at"] or p["created_at"]),
                subject=f"plan {str(p['id'])[:12]} by {p['author']} ({p['origin']})",
            )
            for p in plans
        ]
        return page_screen(
            page, lambda sid: names.get(sid, sid[:12]), lambda: history, lambda: behind
        )

    def sources(self) -> list[SourceOut]:
        return self.vault.list_sources()

    def source_view(self, source_id: str, start: int, end: int) -> dict[str, Any]:
        shown = self.vault.get_source(source_id)
        with self.vault._read() as conn:
            store = PgSources(conn, self.schema)
            record = store.get(shown.id)
            text = store.text(record.id)

        def at(a: int, b: int) -> Excerpt:
            return cut(record, text, a, b)

        excerpt = at(start, end) if end > start else None
        radius: list[str] = []
        if shown.status == "active":  # what retracting it would take out, on the same snapshot
            with self.vault._read() as conn:
                radius = describe_radius(blast_radius(PgReads(conn, self.schema), shown.id))
        return source_screen(shown, excerpt, radius, lambda flag: at(flag.start, flag.end))

    def retract_source(self, source_id: str, reason: str, actor: str) -> Decided:
        """Propose the ``retract_source`` plan of a source (an id or unique prefix of this
        vault's), as ``affidavit sources retract`` does on a folder: it waits in the inbox for a
        person (the gate never lets the policy apply a withdrawal), who approves it through the
        door, the blast radius checked again then (W5)."""
        shown = self.vault.get_source(source_id)
        short = shown.id[:12]
        if shown.status != "active":
            raise ConflictError(
                f"source {short} ({shown.name}) is {shown.status} already; nothing to retract."
            )
        plan = {
            "nonce": self.vault.new_nonce(1, actor).nonce,
            "summary": f"Retract source {shown.name} ({short}): {reason}"[:300],
            "operations": [retract_source_op(shown.id, reason)],
        }
        out = self.vault.propose(plan, actor, f"sources retract:{short}")
        return out.message, out.plan_id

    def search(self, query: str) -> SearchResponse:
        return self.vault.search(query, 10, "untrusted")

    def ask(self, request: AskRequest, actor: str) -> AskResponse:
        return ask(self.vault, request, actor)

    def audit_view(self, before: int | None) -> dict[str, Any]:
        with self.vault._read() as conn:
            found = reads.audit_newest(
                conn, self.schema, before if before is not None else 2**62, AUDIT_SHOWN + 1
            )
        entries = [dict(r) for r in found[:AUDIT_SHOWN]]
        older = int(found[AUDIT_SHOWN - 1]["seq"]) if len(found) > AUDIT_SHOWN else None
        return {
            "entries": entries,
            "older": older,
            "newest": before is None,
            "problems": self.vault.storage.verify_audit(self.vault.name),
        }

    # --- the inbox -------------------------------------------------------------------------

    def _pending_rows(self, conn: Any) -> list[dict[str, Any]]:
        now = iso(self.vault.clock())
        found = rows.plan_rows(conn, self.schema, ("pending",))
        return [r for r in found if str(r["expires_at"]) > now]  # expired: no longer decidable

    def _pending_plans(self, conn: Any) -> list[Pending]:
        """Each pending plan (not expired) with its operations (0-based) still to decide and
        the pending plans it must follow (:class:`affidavit.service.changes._Deps`' rule), in
        the inbox's order (oldest first)."""
        found = self._pending_rows(conn)
        reserved = reads.reservations(conn, self.schema)
        records = [_record(r) for r in found]
        pending = {rec.id: _pending(row, rec) for row, rec in zip(found, records, strict=True)}
        wanted = sorted({s for rec in records for i in pending[rec.id] for s in _needs(rec, i)})
        exists = reads.existing_pages(conn, self.schema, wanted)
        agents = {rec.id for rec in records if is_agent(rec.author, rec.origin)}
        out = []
        for row, record in zip(found, records, strict=True):
            after: dict[str, changes.Dependency] = {}
            own = {
                getattr(op, "slug", "") for op in record.plan.operations if op.op == "create_page"
            }
            for i in pending[record.id]:
                for slug in _needs(record, i):
                    maker = reserved.get(slug)
                    if not slug or slug in own or slug in exists or maker in (None, record.id):
                        continue
                    assert maker is not None
                    after.setdefault(
                        maker, changes.Dependency(plan_id=maker, page=slug, agent=maker in agents)
                    )
            out.append((row, record, pending[record.id], list(after.values())))
        return out

    def change_list(self) -> list[changes.ChangeOut]:
        """Every pending plan as a change (:func:`affidavit.service.changes.change_list`'s
        lines), from one snapshot."""
        now = iso(self.vault.clock())
        with self.vault._read() as conn:
            plans = self._pending_plans(conn)
            cited = sorted({q.source_id for p in plans for q in _quotes(p[1]) if q.source_id})
            names = reads.source_names(conn, self.schema, cited)
        out = []
        for row, record, ops, after in plans:
            summary = self.vault._summary(row, now)
            sources: list[str] = []
            for quote in _quotes(record):
                if quote.source_id:
                    name = names.get(quote.source_id, quote.source_id[:12])
                    if name not in sources:
                        sources.append(name)
            refused = any(not op.passes for op in record.admission.ops)
            out.append(
                changes.ChangeOut(
                    plan=summary,
                    does=changes.does(record, ops),
                    kind=changes.kind_of(record.author, record.origin),
                    origin=changes.origin_words(record.author, record.origin),
                    sources=sources,
                    verdict="refused in part"
                    if refused
                    else ("waits" if summary.waiting else "supported"),
                    after=after,
                    before=[],
                )
            )
        return changes.linked(out)

    def _order(self) -> Order:
        """The pending plans in review order with what each needs (no summaries: cheaper than
        :meth:`change_list`, the same order)."""
        with self.vault._read() as conn:
            pending = [(p[1].id, p[3]) for p in self._pending_plans(conn)]
        return changes.needs_first(pending)

    def inbox_view(self, wanted: dict[str, str]) -> dict[str, Any]:
        return inbox_context(self.change_list(), wanted)

    def supported_view(self, wanted: dict[str, str]) -> dict[str, Any]:
        everything = self.change_list()
        shown = changes.filtered(everything, **wanted)
        ids = supported_ids(everything, shown)
        return {
            "preview": self.vault.preview(ids) if ids else [],
            "ids": ids,
            "skipped": [c for c in shown if c.plan.id not in ids],
            "seen": self.fingerprint(ids),
            "wanted": wanted,
        }

    # --- one plan ----------------------------------------------------------------------------

    def _state(self, ref: str) -> tuple[dict[str, Any], str, list[int]]:
        """A plan's row, its status as the inbox shows it (a pending plan past its expiry is
        expired) and its operations (0-based) still to decide."""
        now = iso(self.vault.clock())
        with self.vault._read() as conn:
            row = rows.plan_row(conn, self.schema, rows.resolve_plan(conn, self.schema, ref))
        status = str(row["status"])
        if status == "pending" and str(row["expires_at"]) <= now:
            status = "expired"
        return row, status, _pending(row, _record(row)) if status == "pending" else []

    def plan_fingerprint(self, ref: str) -> str:
        """:func:`affidavit.service.review.plan_fingerprint` of a plan of this vault."""
        row, status, pending = self._state(ref)
        state = [row["id"], status, row["expires_at"], pending]
        return hashlib.sha256(json.dumps(state).encode()).hexdigest()[:24]

    def fingerprint(self, plan_ids: list[str]) -> str:
        """:func:`.changes.fingerprint` of plans of this vault."""
        parts = [self.plan_fingerprint(pid) for pid in plan_ids]
        return hashlib.sha256("\n".join([*plan_ids, *parts]).encode()).hexdigest()[:24]

    def check_unchanged(self, ref: str, seen: str) -> dict[str, Any]:
        """Refuse a decision taken on a screen that showed the plan in another state; the
        plan's row."""
        row, status, _ = self._state(ref)
        if status != "pending":
            raise StaleScreen(
                f"plan {str(row['id'])[:12]} changed since you opened it: it is now {status}. "
                "Reload the inbox; nothing was written."
            )
        if self.plan_fingerprint(str(row["id"])) != seen:
            raise StaleScreen(
                f"plan {str(row['id'])[:12]} changed since you opened it (some of its operations "
                "were decided elsewhere). Reload it and decide again; nothing was written."
            )
        return row

    def check_fingerprint(self, plan_ids: list[str], seen: str) -> None:
        for pid in plan_ids:
            _, status, _ = self._state(pid)
            if status != "pending":
                raise StaleScreen(
                    f"plan {pid[:12]} changed since you opened it: it is now {status}. "
                    "Reload the inbox; nothing was written."
                )
        if self.fingerprint(plan_ids) != seen:
            raise StaleScreen(
                "some of these plans changed since you opened the page (operations decided "
                "elsewhere). Reload it and decide again; nothing was written."
            )

    def together_offer(
        self, vault_name: str, plan_id: str, order: Order | None = None
    ) -> tuple[list[str], Offer | None]:
        row, _, _ = self._state(plan_id)
        person = changes.kind_of(str(row["author"]), str(row["origin"])) != "agent"
        found: tuple[list[str], Offer | None] = offer_together(
            self._order() if order is None else order,
            vault_name,
            str(row["id"]),
            person,
            self.fingerprint,
        )
        return found

    def next_pending(self, after: str, order: Order | None = None) -> str | None:
        plans = [pid for pid, _ in (self._order() if order is None else order)]
        if after in plans:
            rest = plans[plans.index(after) + 1 :] + plans[: plans.index(after)]
            return rest[0] if rest else None
        return plans[0] if plans else None

    def _before(self, op: dict[str, Any]) -> dict[str, Any] | None:
        slug = slug_of(op)
        if slug is None:
            return None
        with self.vault._read() as conn:
            found = reads.page_before(conn, self.schema, slug)
        if found is None:
            return {"slug": slug, "exists": False, "claims": []}
        return {"slug": slug, "exists": True, "title": found[0], "claims": found[1]}

    def plan_view(self, plan_id: str, vault_name: str) -> dict[str, Any]:
        detail = self.vault.plan_detail(plan_id)
        _, status, pending = self._state(detail.id)
        together: tuple[list[str], Offer | None] = ([], None)
        preview: PlanPreview | None = None
        order = self._order()  # read once for the screen
        if status == "pending":
            together = self.together_offer(vault_name, detail.id, order)
            preview = self.vault.preview([detail.id])[0]
        return plan_screen(
            detail,
            set(pending),
            self.vault.get_source,
            self._before,
            together,
            preview,
            self.plan_fingerprint(detail.id),
            self.next_pending(detail.id, order),
        )

    # --- decisions: each through PgVault's door ---------------------------------------------

    def approve(self, plan_id: str, choice: Choice, actor: str, vault_name: str) -> Decided:
        row = self.check_unchanged(plan_id, choice.seen)
        pid = str(row["id"])
        pending = [i + 1 for i in self._state(pid)[2]]
        ops, refused = chosen_ops(choice, pid, pending)
        messages = []
        try:
            if choice.action == "supported":  # what waits stays as the plan's remainder
                (done,) = self.vault.approve_many([pid], actor, sure_only=True).results
                messages.append(
                    f"Approved what is supported of plan {pid[:12]}; what waits for a person "
                    "stays in the inbox."
                    if done.applied
                    else done.message
                )
            elif ops:
                result = self.vault.approve(pid, ops, actor)
                done_ops = ", ".join(str(n) for n in result.ops)
                messages.append(f"Approved operation(s) {done_ops} of plan {pid[:12]}.")
        except ConflictError as exc:
            _, offer = self.together_offer(vault_name, pid)
            refusal = not_approved(exc, offer, vault_name, pid, self.plan_fingerprint(pid))
            if refusal is None:
                raise
            raise refusal from exc
        if refused:
            messages.append(self._left_out(pid, refused, actor))
        return " ".join(messages), self.next_pending(pid)

    def _left_out(self, plan_id: str, refused: list[int], actor: str) -> str:
        """:func:`.review._left_out` here: the plan rejected when nothing else of it is left."""
        _, status, left = self._state(plan_id)
        if status != "pending":
            return ""
        shown = ", ".join(str(n) for n in refused)
        if {i + 1 for i in left} <= set(refused):
            reason = f"a person said no to operation(s) {shown}"
            waiting = self.vault.plan_detail(plan_id).waiting
            texts = [w.line for w in waiting if w.op in refused]
            if texts:
                reason += ": " + "; ".join(texts)[:1500]
            self.vault.reject(plan_id, reason, actor)
            return f"Rejected the rest of plan {plan_id[:12]}: {reason[:200]}"
        return f"Operation(s) {shown} of plan {plan_id[:12]} stay pending (you said no to them)."

    def reject(self, plan_id: str, reason: str, seen: str, actor: str) -> Decided:
        if not reason:
            raise ConflictError("say why you reject the plan: the reason is recorded.")
        row = self.check_unchanged(plan_id, seen)
        result = self.vault.reject(str(row["id"]), reason[:2000], actor)
        message = f"Rejected plan {result.plan_id[:12]}: {result.reason}"
        return message, self.next_pending(result.plan_id)

    def approve_supported(self, ids: list[str], seen: str, actor: str, vault_name: str) -> str:
        if not ids:
            raise ConflictError("no plan was listed to approve; go back to the inbox.")
        self.check_fingerprint(ids, seen)
        for pid in ids:  # W13: an agent's plan is approved on its own page, never in bulk
            row, _, _ = self._state(pid)
            if changes.kind_of(str(row["author"]), str(row["origin"])) == "agent":
                raise ConflictError(agent_in_bulk(str(row["id"]), vault_name))
        done = self.vault.approve_many(ids, actor, sure_only=True)
        applied = [r for r in done.results if r.applied]
        return (
            f"Approved what is supported of {len(applied)} plan(s); what waits for a person "
            "stays in the inbox."
        )

    def approve_together(self, plan_id: str, seen: str, actor: str, vault_name: str) -> Decided:
        row, _, _ = self._state(plan_id)
        ids, _ = self.together_offer(vault_name, str(row["id"]))
        self.check_fingerprint(ids, seen)
        self.vault.approve_many(ids, actor, sure_only=True)
        names = ", ".join(pid[:12] for pid in ids)
        waits = [pid for pid in ids if self._state(pid)[1] == "pending"]
        rest = f"; what waits for a person stays in {len(waits)} of them" if waits else ""
        message = f"Approved plans {names} together{rest}."
        return message, waits[0] if waits else self.next_pending(ids[-1])

    # --- lint findings and jobs: PgFindings and PgJobs, as the API's routes --------------------

    def findings_page(
        self, status: Status, kind: str, severity: str, offset: int, limit: int
    ) -> tuple[tuple[StoredFinding, ...], int, dict[str, int]]:
        with self.vault._read() as conn:
            store = FindingStore(PgSql(conn, self.schema))
            return store.page(status, kind, severity, offset, limit)

    def decide_finding(self, ref: str, status: Status, actor: str, note: str) -> StoredFinding:
        return PgFindings(self.vault).decide(ref, status, actor, note)

    def propose_fix(self, ref: str, actor: str) -> tuple[list[str], str]:
        found = PgFindings(self.vault).get(ref)
        report = PgFindings(self.vault).propose_fixes([found.id], {}, actor)
        return report.plans, report.skipped.get(found.id, "")

    def jobs(self, limit: int) -> list[Job]:
        return PgJobs(self.vault).list(None, limit)

    def graph(self, sources: bool) -> dict[str, Any]:
        with self.vault._read() as conn:
            return graph_of(*reads.graph_rows(conn, self.schema, sources))


async def pg_job_events(
    request: Request, served: Any, job_id: str, after: int, last_event_id: str | None
) -> Response:
    """A job's events as the API's ``…/jobs/{id}/events`` streams them on PostgreSQL."""
    jobs = PgJobs(served.service)
    try:
        full = await anyio.to_thread.run_sync(jobs.queue.resolve, served.name, job_id)
    except AffidavitError as exc:
        raise WebRefusal.of(exc) from exc

    def poll(seq: int) -> tuple[list[JobEvent], Job]:
        return jobs.events(full, seq), jobs.get(full)

    return event_stream(poll, resume_at(after, last_event_id), request.app.state.stopping)


def _record(row: dict[str, Any]) -> inbox.PlanRecord:
    """A plan row as the inbox's record (what :mod:`affidavit.service.changes` reads)."""
    recorded = json.loads(str(row["admission"]) or "{}")
    admission = (
        Admission.from_json(recorded)
        if isinstance(recorded, dict) and "ops" in recorded
        else Admission(str(row["id"]), [], [])
    )
    return inbox.PlanRecord(
        id=str(row["id"]), author=str(row["author"]), origin=str(row["origin"]),
        status=str(row["status"]), reason=str(row["reason"]), created_at=str(row["created_at"]),
        expires_at=str(row["expires_at"]), decided_at=row["decided_at"],
        decided_by=row["decided_by"], plan=parse_plan(str(row["plan_json"])), admission=admission,
    )  # fmt: skip


def _pending(row: dict[str, Any], record: inbox.PlanRecord) -> list[int]:
    """The operations (0-based) of a pending plan still to decide: those the gate admitted
    that no approval has decided yet, and those applied in part whose rest waits for a person
    (:func:`affidavit.service.pg_vaults.plan_preview`'s, SQLite's ``inbox.pending_ops``)."""
    from ..store.batch import held_of

    decided = set(decided_of(row, record.id)[1])
    held = held_of(str(row.get("held") or "{}"))
    return [i for i in record.admission.admitted_ops if i not in decided or i in held]


def _needs(record: inbox.PlanRecord, i: int) -> list[str]:
    op = record.plan.operations[i]
    if op.op == "add_claims":
        return [str(getattr(op, "page", ""))]
    if op.op == "link_pages":
        return [str(getattr(op, "page", "")), str(getattr(op, "to", ""))]
    return []


def _quotes(record: inbox.PlanRecord) -> Iterator[Any]:
    for op in record.admission.ops:
        for claim in op.claims:
            yield from claim.evidence


@contextmanager
def pg_desk(served: Any) -> Iterator[DeskWiki]:
    """A served vault of the database for one request; the database unreachable is a page
    saying so (503), naming no URL."""
    try:
        yield PgDesk(served.service)
    except (psycopg.OperationalError, PoolTimeout):
        raise WebRefusal(
            503,
            "the PostgreSQL database did not answer.",
            "Retry shortly; if it persists, check the database server (the daemon's log says "
            "when it is back).",
        ) from None


__all__ = ["PgDesk", "pg_desk", "pg_job_events"]
