"""The services over one vault of a PostgreSQL database, with the same request and response models
as the SQLite vault's (:mod:`.vaults`): search (:class:`~affidavit.storage.pg_search.PgFullText`),
pages, claims, nonces, the inbox (propose, list, show, approve, reject) and tokens.

Every write to the wiki goes through the PostgreSQL door (:meth:`PostgresStorage.door` and
:meth:`PostgresDoor.apply_plan`): under the vault's advisory lock, the plan re-checked (W5) and
admitted again by the one gate, then written, audited and numbered. A proposal is parsed
(W1), its nonce consumed (W2) and admitted by the same gate read-only, so the inbox shows the
verdicts the approver decides on; a plan of which nothing passes is refused at once. The policy
may apply a person's plan at once (``policy.auto_apply``); an agent's plan (a token's) always
waits for a person (W13). What is not ported yet says so (:data:`NOT_PORTED`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg

from ..agents import caller_of, is_agent, proposer_of, quoted
from ..clock import Clock, iso, parse_iso, utc_now
from ..config import Config
from ..errors import AdmissionError, ConflictError, NotFoundError
from ..gate.verdicts import Admission, Held
from ..hashing import canonical_json, sha256_hex
from ..plan.schema import Plan, parse_plan
from ..retrieval.search import allowed_tiers
from ..storage import pg_served as rows
from ..storage.base import AuditEntry, check_text, check_vault_name
from ..storage.pg_search import PgFullText
from ..storage.postgres import Conn, NothingSure, PostgresDoor, PostgresStorage
from ..storage.postgres_content import decided_of, load_plan
from ..store.batch import creation_order
from .models import (
    ApproveManyResponse,
    ApproveResponse,
    AuditEntryOut,
    AuditPage,
    ClaimEvidenceOut,
    ClaimOut,
    FlagOut,
    NonceResponse,
    PageDetail,
    PageSummary,
    PlanDetail,
    PlanPreview,
    PlanSummary,
    ProposalOut,
    QuoteContext,
    RejectResponse,
    SearchResponse,
    SourceOut,
    TokenInfo,
)
from .quote_context import quote_context
from .vaults import (  # the same records and lines as on SQLite
    _hit,
    _op_line,
    _rest_line,
    _withdrawal_lines,
    duration,
    proposer_says,
)
from .waiting import waiting

NOT_PORTED = (
    "On PostgreSQL this daemon serves: GET …/ (the vault), …/search, POST …/ask, GET …/pages, "
    "…/pages/{slug}, "
    "…/claims/{id}, …/sources, …/sources/{id}, …/audit, …/plans, …/plans/{id}; POST …/nonces, "
    "…/plans, …/plans/{id}/approve (whole, or some operations), …/plans/approve (whole plans), "
    "…/plans/{id}/reject; "
    "…/tokens (owner); GET/POST …/jobs, …/jobs/{id}, …/jobs/{id}/cancel, …/jobs/{id}/events "
    "(ingest of the sources sent, or a lint, run by `affidavit worker --database`); GET "
    "…/lint/findings, …/lint/findings/{id}; POST …/lint/findings/{id}/decision, …/lint/fixes. "
    "…/plans/approve previews (dry_run); sure_only applies what needs no person and keeps "
    "the texts that wait as each plan's pending remainder, as on SQLite. The CLI's inbox, "
    "approve, reject, findings and lint take --database URL --vault NAME. /mcp/{vault} serves the MCP tools. serve --web serves the review desk at /web/. Not "
    "yet: running lint outside a job, and watches (docs/team.md). Use them on a SQLite vault."
)


def _source(row: dict[str, Any]) -> SourceOut:
    """A source as the API shows it; it has no files on PostgreSQL (its bytes are in the
    database: `affidavit mirror` writes them under sources/)."""
    fields = ("id", "origin", "name", "media_type", "text_sha256", "size_bytes", "text_chars",
              "trust", "status", "added_at")  # fmt: skip
    flags = [FlagOut(kind=f["kind"], start=f["start"], end=f["end"], detail=f["detail"])
             for f in row["flags"]]  # fmt: skip
    return SourceOut(original_file="", text_file="", flags=flags, **{k: row[k] for k in fields})


@dataclass
class PgVault:
    """One vault of a PostgreSQL database, as the daemon serves it."""

    storage: PostgresStorage
    name: str
    config: Config = field(default_factory=Config)
    clock: Clock = utc_now

    def __post_init__(self) -> None:
        check_vault_name(self.name)
        self.schema = f"v_{self.name}"
        self._search = PgFullText(self.storage, self.name)

    @contextmanager
    def _read(self) -> Iterator[Conn]:
        """One consistent snapshot (REPEATABLE READ, read only) on a pooled connection."""
        with self.storage.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield conn

    @contextmanager
    def _locked(self) -> Iterator[Conn]:
        """A write that must not race the door (a rejection, a token): the door's transaction
        under the vault's advisory lock, applying no plan (so it takes no batch number)."""
        with self.storage.door(self.name, f"host-{uuid.uuid4()}") as door:
            yield door.conn

    # --- reading ---------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        with self._read() as conn:
            return rows.counts(conn, self.schema)

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse:
        allowed_tiers(min_trust)  # a tier that doesn't exist is refused as on SQLite
        hits = self._search.search(query, k=k, min_trust=min_trust)
        return SearchResponse(query=query, hits=[_hit(h) for h in hits])

    def list_pages(self) -> list[PageSummary]:
        with self._read() as conn:
            return [PageSummary(**r) for r in rows.page_rows(conn, self.schema)]

    def get_page(self, slug: str, *, with_markdown: bool = True) -> PageDetail:
        """A page with its claims, each quote checked against its source's re-hashed text, its
        links, and its markdown as the mirror renders it — all from one snapshot;
        ``with_markdown=False`` leaves the markdown out (empty), for screens showing claims."""
        from ..mirror.page import render_one
        from ..storage.postgres_content import read_page

        with self._read() as conn:
            page = read_page(conn, self.schema, check_text("slug", slug))
            if page is None:
                raise NotFoundError(f"no page {slug[:80]!r}. GET …/pages lists the pages.")
            links_to, linked_from = rows.links(conn, self.schema, slug)
            extra = rows.claim_extras(conn, self.schema, slug)
            markdown = (render_one(conn, self.schema, slug) or "") if with_markdown else ""
        claims = [
            ClaimOut(
                id=c.id,
                page=page.slug,
                section=c.section,
                position=c.position,
                text=c.text,
                status=c.status,
                trust=c.trust,
                plan_id=c.plan_id,
                created_at=c.created_at,
                superseded_by=extra[c.id][0],
                derived_from=extra[c.id][1],
                evidence=[
                    ClaimEvidenceOut(
                        source_id=e.source_id,
                        quote=e.quote,
                        start=e.start,
                        end=e.end,
                        location=e.location,
                    )
                    for e in c.evidence
                ],
            )
            for c in page.claims
        ]
        return PageDetail(
            slug=page.slug, title=page.title, summary=page.summary, category=page.category,
            created_at=page.created_at, updated_at=page.updated_at, links_to=links_to,
            linked_from=linked_from, claims=claims, markdown=markdown,
        )  # fmt: skip

    def get_claim(self, claim_id: str) -> ClaimOut:
        with self._read() as conn:
            found = rows.claim_row(conn, self.schema, claim_id)
        if found is None:
            raise NotFoundError(f"no claim {claim_id[:80]!r}. Search finds claims: GET …/search?q=")
        row, evidence = found
        return ClaimOut(
            id=row["id"], page=row["page_slug"], section=row["section"], position=row["position"],
            text=row["text"], status=row["status"], trust=row["trust"], plan_id=row["plan_id"],
            created_at=row["created_at"], superseded_by=row["superseded_by"],
            derived_from=rows.derived_from(row),
            evidence=[ClaimEvidenceOut(source_id=e.source_id, quote=e.quote, start=e.start,
                                       end=e.end, location=e.location) for e in evidence],
        )  # fmt: skip

    def list_sources(self) -> list[SourceOut]:
        with self._read() as conn:
            return [_source(r) for r in rows.source_rows(conn, self.schema)]

    def get_source(self, ref: str) -> SourceOut:
        with self._read() as conn:
            return _source(rows.source_rows(conn, self.schema, ref)[0])

    def audit_page(self, after: int, limit: int) -> AuditPage:
        """The hash-chained audit log, oldest first, ``limit`` entries after ``after``."""
        with self._read() as conn:
            found = rows.audit_rows(conn, self.schema, after, limit + 1)
        entries = [
            AuditEntryOut(
                seq=r["seq"],
                at=r["at"],
                action=r["action"],
                plan_id=r["plan_id"],
                actor=r["actor"],
                detail=_json(r["detail"]),
                hash=r["hash"],
            )
            for r in found[:limit]
        ]
        more = len(found) > limit
        return AuditPage(entries=entries, next_after=entries[-1].seq if more and entries else None)

    # --- the inbox -------------------------------------------------------------------------

    def _charge(self, author: str, record: bool = True) -> None:
        """W13's quotas on an agent's proposal (a token's, here), as on SQLite: refused with
        the time the next one is allowed, before anything is spent on it."""
        limits = (
            int(self.config.get("mcp.propose_per_hour")),
            int(self.config.get("mcp.pending_per_caller")),
        )
        with self._locked() as conn:
            rows.charge(conn, self.schema, caller_of(author), "propose_plan", limits,
                        self.clock(), record=record)  # fmt: skip

    def new_nonce(self, hours: int, caller: str = "") -> NonceResponse:
        """A fresh nonce for one plan; an agent ``caller`` over its proposal quota gets none."""
        if caller and is_agent(caller, "api"):
            self._charge(caller, record=False)
        with self.storage.pool.connection() as conn, conn.transaction():
            value = rows.issue_nonce(
                conn, self.schema, "propose", self.clock(), timedelta(hours=hours)
            )
        return NonceResponse(nonce=value, valid_hours=hours)

    def _admit(self, conn: Conn, plan: Plan, plan_id: str, agent: bool) -> Admission:
        """The gate, read-only, on the vault as it is now (the door admits it again)."""
        from ..evidence import Verifier
        from ..gate.admission import admit
        from ..storage.postgres_content import WRITABLE
        from ..storage.postgres_gate import PgReads, PgSources

        for index, op in enumerate(plan.operations):
            if not isinstance(op, WRITABLE):
                raise AdmissionError(
                    "schema",
                    f"operation {index + 1} ({op.op}) can't be proposed on PostgreSQL yet: the "
                    "door there doesn't write it (docs/storage.md).",
                )
        sources = PgSources(conn, self.schema)
        return admit(
            PgReads(conn, self.schema), self.config, sources, Verifier(sources), plan, plan_id,
            agent=agent,
        )  # fmt: skip

    def propose(self, raw: dict[str, Any], author: str, origin: str) -> ProposalOut:
        """Check a plan (schema, nonce, the gate) and put it in the inbox; the policy may apply
        a person's plan at once. Proposing the same plan again changes nothing."""
        plan = parse_plan(raw)
        plan_json = canonical_json(plan.to_json())
        plan_id = sha256_hex(plan_json)
        existing = self.storage.plan(self.name, plan_id)
        if existing is not None:
            return ProposalOut(
                plan_id=plan_id, status=existing.status, new=False, admission={},
                message=f"plan {plan_id[:12]} was already proposed and is {existing.status}; "
                "nothing changed",
            )  # fmt: skip
        agent = is_agent(author, origin)
        if agent:  # before anything is spent on it: a refused call writes nothing
            self._charge(author)
        now = self.clock()
        expires = now + timedelta(hours=self.config.expiry_hours)
        with self.storage.pool.connection() as conn, conn.transaction():
            rows.use_nonce(conn, self.schema, plan.nonce, plan_id, now)
            admission = self._admit(conn, plan, plan_id, agent)
            if not admission.admitted_ops:  # recorded rejected with its nonce, as on SQLite
                rows.record_rejected(
                    conn, self.schema, plan_id, author=author, origin=origin,
                    plan_json=plan_json, admission=admission.to_json(), now=now,
                    expires_at=iso(expires), ops=len(plan.operations),
                )  # fmt: skip
        if not admission.admitted_ops:
            counts = admission.counts
            return ProposalOut(
                plan_id=plan_id, status="rejected", new=True, admission=admission.to_json(),
                message=f"plan {plan_id[:12]} rejected: {counts['admitted']} claim(s) admitted, "
                f"{counts['quarantined']} quarantined, {counts['rejected']} rejected",
            )  # fmt: skip
        try:
            self.storage.propose(
                self.name, plan_id, author=author, origin=origin, plan_json=plan_json,
                created_at=iso(now), expires_at=iso(expires),
            )  # fmt: skip
        except psycopg.errors.UniqueViolation:  # the same plan, proposed at the same moment
            raise ConflictError(f"plan {plan_id[:12]} was just proposed; GET …/plans.") from None
        with self.storage.pool.connection() as conn, conn.transaction():
            rows.set_admission(conn, self.schema, plan_id, admission.to_json())
        counts = admission.counts
        tally = (
            f"{counts['admitted']} claim(s) admitted, {counts['quarantined']} quarantined, "
            f"{counts['rejected']} rejected"
        )
        status, message = "pending", f"plan {plan_id[:12]} is in the inbox"
        if not agent and not admission.needs_approval:  # in SQLite's words (inbox.propose)
            try:
                done = self._apply(plan_id, author, "policy")
                status, message = "applied", f"{done.message} ({tally})"
                after = self.storage.plan(self.name, plan_id)
                if after is not None and after.status == "pending":  # the rest waits
                    status = "partial"
                    message = (
                        f"{done.message} ({tally}). {admission.policy_reason}: "
                        f"`affidavit inbox show {plan_id[:12]}`."
                    )
            except ConflictError as exc:  # the wiki changed meanwhile: a person decides
                message = f"plan {plan_id[:12]} is in the inbox: {exc}"
        elif admission.needs_approval:
            message += f": {tally}. {admission.policy_reason}."
        shown: list[Any] = []
        if status == "pending":
            shown = waiting(plan, admission, {}, set())
        elif status == "partial":  # what the policy left: the plan's remainder, as stored
            with self._read() as conn:
                shown = self._summary(rows.plan_row(conn, self.schema, plan_id), iso(now)).waiting
        return ProposalOut(
            plan_id=plan_id, status=status, new=True, message=message,
            admission=admission.to_json(), waiting=shown,
        )  # fmt: skip

    def _summary(self, row: dict[str, Any], now_iso: str) -> PlanSummary:
        plan = parse_plan(str(row["plan_json"]))
        recorded = _json(row["admission"])
        admission = (
            Admission.from_json(recorded)
            if "ops" in recorded
            else Admission(str(row["id"]), [], [])
        )
        status = str(row["status"])
        if status == "pending" and str(row["expires_at"]) <= now_iso:
            status = "expired"  # as SQLite's inbox shows it (no write on a read)
        now = parse_iso(now_iso)
        decided = set(_decided(row)[1])
        held = _held(row)
        return PlanSummary(
            id=row["id"], status=status, author=row["author"], origin=row["origin"],
            proposer=proposer_of(str(row["author"]), str(row["origin"])),
            created_at=row["created_at"], expires_at=row["expires_at"],
            age=duration(now - parse_iso(str(row["created_at"]))),
            expires_in=duration(max(parse_iso(str(row["expires_at"])) - now, timedelta())),
            operations=len(plan.operations), counts=admission.counts,
            waiting=waiting(plan, admission, held, decided) if status == "pending" else [],
        )  # fmt: skip

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]:
        now = iso(self.clock())
        wanted = tuple({"expired": "pending"}.get(s, s) for s in statuses) + statuses
        with self._read() as conn:
            found = [self._summary(r, now) for r in rows.plan_rows(conn, self.schema, wanted)]
        return [p for p in found if p.status in statuses]

    def plan_detail(self, ref: str) -> PlanDetail:
        """A plan with every verdict, and each verified quote shown in its source's context
        (the source's text re-hashed first), as on SQLite."""
        from ..storage.postgres_gate import PgSources

        now = iso(self.clock())
        quotes: list[QuoteContext] = []
        with self._read() as conn:
            plan_id = rows.resolve_plan(conn, self.schema, ref)
            row = rows.plan_row(conn, self.schema, plan_id)
            recorded = _json(row["admission"])
            admission = Admission.from_json(recorded) if "ops" in recorded else None
            sources = PgSources(conn, self.schema)
            for op in admission.ops if admission else []:
                for claim in op.claims:
                    for n, quote in enumerate(claim.evidence):
                        if not (quote.verified and quote.source_id) or quote.start is None:
                            continue
                        if quote.end is None:
                            continue
                        source = sources.get(quote.source_id)
                        text = sources.text(source.id)
                        quotes.append(
                            quote_context(
                                source, text, quote.start, quote.end,
                                op=op.index, claim=claim.index, evidence=n,
                            )
                        )  # fmt: skip
        summary = self._summary(row, now)
        plan = parse_plan(str(row["plan_json"]))
        if row["status"] == "pending":  # approved in part so far, as on SQLite
            applied = [i + 1 for i in _decided(row)[0]]
        elif admission is not None and row["status"] == "applied":
            applied = [i + 1 for i in admission.admitted_ops]
        else:
            applied = []
        return PlanDetail(
            id=plan_id, author=row["author"], origin=row["origin"], status=summary.status,
            reason=row["reason"], created_at=row["created_at"], expires_at=row["expires_at"],
            decided_at=row["decided_at"], decided_by=row["decided_by"], age=summary.age,
            expires_in=summary.expires_in, plan=plan.to_json(), admission=recorded,
            quotes=quotes, applied_ops=applied, waiting=summary.waiting,
            proposer_says=proposer_says(plan),
        )  # fmt: skip

    def _apply(
        self, plan_id: str, actor: str, approval: str, ops: list[int] | None = None
    ) -> ApproveResponse:
        """Apply through the door; ``ops`` (0-based) a person's selection, the others waiting."""
        with self.storage.door(self.name, f"api-{uuid.uuid4()}") as door:
            return self._one(door, plan_id, actor, approval, ops)

    def _one(
        self,
        door: PostgresDoor,
        plan_id: str,
        actor: str,
        approval: str,
        ops: list[int] | None = None,
        *,
        sure_only: bool = False,
    ) -> ApproveResponse:
        """One plan's part of a batch, under the door's lock. A plan applied already (by
        another approver, another daemon: a race) is "nothing to do", as on SQLite — the
        second approver learns it went in, and it went in once; one of which nothing goes in
        without a person, under an approval that takes only that, is left waiting."""
        found = door.plan(plan_id)
        if found is not None and found.status == "applied":
            return ApproveResponse(
                plan_id=plan_id, applied=False, ops=[], claims=[], commit=None,
                message=f"plan {plan_id[:12]} is already applied; nothing to do",
            )  # fmt: skip
        try:
            entry = door.apply_plan(plan_id, now=iso(self.clock()), actor=actor,
                                    config=self.config, approval=approval, ops=ops,
                                    sure_only=sure_only)  # fmt: skip
        except NothingSure as exc:
            if approval == "policy":
                raise
            return ApproveResponse(
                plan_id=plan_id, applied=False, ops=[], claims=[], commit=None,
                message=f"{exc} (`affidavit inbox show {plan_id[:12]}`)",
            )  # fmt: skip
        return _approved(plan_id, door.admissions[plan_id], entry)

    def approve(self, ref: str, ops: list[int] | None, actor: str) -> ApproveResponse:
        """Apply a pending plan through the door, every operation the gate admits now, or only
        the operations ``ops`` (1-based) names — the others stay pending until the plan expires
        or they are decided too; exactly once, whichever daemon approves it (the door re-checks
        it under the vault's lock)."""
        with self._read() as conn:
            plan_id = rows.resolve_plan(conn, self.schema, ref)
        return self._apply(plan_id, actor, "person", None if ops is None else [i - 1 for i in ops])

    def approve_many(
        self, refs: list[str], actor: str, *, dry_run: bool = False, sure_only: bool = False
    ) -> ApproveManyResponse:
        """Approve several whole plans as one batch (W6): in the order given, each re-checked
        and admitted under the vault's lock, all or nothing, one batch number. ``dry_run``:
        only say what that would do (:meth:`preview`, as on SQLite). ``sure_only`` (an approval
        given unseen, ``approve --all --yes``): each plan's sure part goes in and the texts that
        wait for a person (W11) stay as its pending remainder, as on SQLite; a plan of which
        nothing goes in without a person is left waiting (``applied: false``)."""
        with self._read() as conn:
            ids = list(dict.fromkeys(rows.resolve_plan(conn, self.schema, r) for r in refs))
            # a plan that extends a page another of the batch creates goes after it (as SQLite's
            # door orders a batch): `approve --all` in the inbox's order would refuse it
            ids = creation_order([(i, load_plan(conn, self.schema, i)) for i in ids])
        if not ids:
            raise ConflictError("name at least one plan to approve (`affidavit inbox` lists them).")
        preview = self.preview(ids)
        if dry_run:
            return ApproveManyResponse(preview=preview, results=[], commit=None)
        with self.storage.door(self.name, f"api-{uuid.uuid4()}") as door:
            results = [
                self._one(door, plan_id, actor, "person", sure_only=sure_only) for plan_id in ids
            ]
        return ApproveManyResponse(preview=preview, results=results, commit=None)

    def apply_selections(
        self, selections: list[tuple[str, list[int]]], actor: str
    ) -> list[ApproveResponse]:
        """A person's approval of some operations (0-based) of each plan (full ids), in the
        order given, as one batch through the door: all or nothing, one batch number."""
        with self.storage.door(self.name, f"api-{uuid.uuid4()}") as door:
            return [self._one(door, plan_id, actor, "person", ops) for plan_id, ops in selections]

    def preview(self, plan_ids: list[str]) -> list[PlanPreview]:
        """What approving each plan (full ids) would do, as SQLite's preview says it: its
        operations still pending, each claim a withdrawal among them ends, and each text that
        waits for a person — from one snapshot, writing nothing."""
        with self._read() as conn:
            found = [rows.plan_row(conn, self.schema, p) for p in plan_ids]
        return [plan_preview(row, iso(self.clock())) for row in found]

    def reject(self, ref: str, reason: str, actor: str) -> RejectResponse:
        with self._locked() as conn:
            plan_id = rows.resolve_plan(conn, self.schema, ref)
            rows.reject(conn, self.schema, plan_id, reason, actor, self.clock())
        return RejectResponse(plan_id=plan_id, status="rejected", reason=reason)

    # --- tokens ----------------------------------------------------------------------------

    def _token(self, row: dict[str, Any]) -> TokenInfo:
        status = rows.token_status(row, iso(self.clock()))
        fields = ("id", "role", "label", "created_at", "created_by", "expires_at", "revoked_at")
        return TokenInfo(status=status, **{k: row[k] for k in fields})

    def create_token(
        self, role: str, lifetime: timedelta, label: str, actor: str
    ) -> tuple[TokenInfo, str]:
        longest = timedelta(days=int(self.config.get("server.token_max_days")))
        if lifetime > longest:
            raise ConflictError(
                f"a token of this vault lives at most {longest.days} days "
                "(server.token_max_days); ask for less."
            )
        with self._locked() as conn:
            row, secret = rows.create_token(
                conn, self.schema, role, lifetime, label, actor, self.clock()
            )
        return self._token(row), secret

    def list_tokens(self) -> list[TokenInfo]:
        with self._read() as conn:
            return [self._token(r) for r in rows.list_tokens(conn, self.schema)]

    def revoke_token(self, token_id: str, actor: str) -> TokenInfo:
        with self._locked() as conn:
            return self._token(rows.revoke_token(conn, self.schema, token_id, actor, self.clock()))


def _approved(plan_id: str, admission: Admission, entry: AuditEntry) -> ApproveResponse:
    """What an approval wrote, in SQLite's words (:mod:`affidavit.store.apply`): the
    operations and claims of the door's "applied" audit entry, the texts that wait for a
    person, what it ended, and the operations still pending with the command that approves
    them."""
    detail = _json(entry.detail)
    written = sorted(int(op["index"]) for op in detail.get("ops", []))
    claims = [str(c) for c in detail.get("claims", [])]
    rest = ",".join(str(int(i) + 1) for i in detail.get("pending_ops", []))
    ended = [(k, len(detail.get(k, []))) for k in ("superseded", "retracted")]
    held = [op.get("held") or {} for op in detail.get("ops", [])]
    waits = sum(len(h.get("claims", [])) + len(h.get("texts", [])) for h in held)
    message = (
        f"applied plan {plan_id[:12]}: {len(written)} operation(s), {len(claims)} claim(s)"
        + (f"; {waits} text(s) wait for a person" if waits else "")
        + "".join(f", {n} {k}" for k, n in ended if n)
        + (
            f"; operation(s) {rest} still pending (`affidavit approve {plan_id[:12]} --ops {rest}`)"
            if rest
            else ""
        )
    )
    del admission  # the audit entry says what was written: whole, in part, or a remainder
    return ApproveResponse(
        plan_id=plan_id, applied=True, ops=[i + 1 for i in written], claims=claims, commit=None,
        message=message,
    )  # fmt: skip


def _decided(row: dict[str, Any]) -> tuple[list[int], list[int]]:
    """A plan row's operations applied by partial approvals and those decided, 0-based."""
    return decided_of(row, str(row["id"]))


def _held(row: dict[str, Any]) -> dict[int, Held]:
    """A pending plan row's remainder (``plans.held``): the parts of its applied operations
    that wait for a person; read back untrusted (malformed is refused)."""
    from ..store.batch import held_of

    return held_of(str(row.get("held") or "{}"))


def plan_preview(row: dict[str, Any], now_iso: str) -> PlanPreview:
    """What approving the plan of ``row`` would do (:func:`.vaults.approval_preview`'s lines):
    nothing for a plan that is no longer pending."""
    from ..gate.withdrawals import ends_claims

    plan = parse_plan(str(row["plan_json"]))
    recorded = _json(row["admission"])
    admission = Admission.from_json(recorded) if "ops" in recorded else None
    pending = row["status"] == "pending" and str(row["expires_at"]) > now_iso
    if admission is None or not pending:
        return PlanPreview(plan_id=str(row["id"]), ops=[], lines=[], withdrawals=[])
    decided = set(_decided(row)[1])
    held = _held(row)
    ops = sorted({*(i for i in admission.admitted_ops if i not in decided), *held})
    verdicts = {op.index: op for op in admission.ops}
    withdrawals: list[str] = []
    for i in ops:
        if not ends_claims(verdicts[i].kind, verdicts[i].detail):
            continue
        said = _withdrawal_lines(verdicts[i])
        withdrawals += [f"op {i + 1}: " + line for line in said[:1]] + said[1:]
        reason = getattr(plan.operations[i], "reason", "")
        if reason:
            withdrawals.append("    " + quoted(str(reason)))
    return PlanPreview(
        plan_id=str(row["id"]), ops=[i + 1 for i in ops],
        lines=[
            f"{i + 1}. "
            + (_rest_line(plan.operations[i], held[i]) if i in held
               else _op_line(plan.operations[i], verdicts.get(i)))
            for i in ops
        ],
        withdrawals=withdrawals,
        waiting=[w.line for w in waiting(plan, admission, held, decided)],
    )  # fmt: skip


def _json(value: object) -> dict[str, Any]:
    data = json.loads(str(value) or "{}")
    return data if isinstance(data, dict) else {}


__all__ = ["NOT_PORTED", "PgVault", "plan_preview"]
