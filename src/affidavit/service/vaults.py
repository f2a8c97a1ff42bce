"""The service API over one vault: what the daemon's routes and the in-process CLI both call.

Every function takes an open :class:`~affidavit.vault.Vault` (and, where something is decided, the
actor) and returns a model of :mod:`affidavit.service.models`. Rules live here once; the routes and
the CLI only translate. Writes go only through the existing door: proposals through
:func:`affidavit.inbox.propose`, approvals through :func:`affidavit.inbox.approve` (→ the one
``store.apply``); nothing here writes a wiki file.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from typing import Any

from .. import agents, inbox
from ..agents import caller_of, is_agent, proposer_of, quoted
from ..ask import Asker, render_answer
from ..ask.answer import Answer
from ..ask.log import AskLog
from ..ask.save import propose_answer
from ..config import Config
from ..errors import ConfigError, ConflictError, NotFoundError
from ..gate.verdicts import Held, OpResult
from ..inbox import Proposal
from ..plan.nonce import issue_nonce
from ..plan.schema import Plan
from ..providers.base import Provider
from ..providers.from_config import provider_from_config
from ..retract import describe_radius
from ..retrieval.search import Hit, Retriever, VectorSearch
from ..sources.store import SourceRecord, SourceStore
from ..store.apply import ApplyResult
from ..store.blast import BlastRadius
from ..store.render import render_page
from ..vault import Vault
from .models import (
    ApproveManyResponse,
    ApproveResponse,
    AskRequest,
    AskResponse,
    AuditEntryOut,
    AuditPage,
    ClaimEvidenceOut,
    ClaimOut,
    EvidenceOut,
    FlagOut,
    HitOut,
    NonceResponse,
    PageDetail,
    PageSummary,
    PlanDetail,
    PlanPreview,
    PlanSummary,
    ProposalOut,
    ProposerWords,
    QuoteContext,
    RejectResponse,
    SearchResponse,
    SourceOut,
    WaitingOut,
)
from .quote_context import quote_context
from .waiting import waiting

ALL_STATUSES = ("pending", "applied", "rejected", "expired")


def duration(delta: timedelta) -> str:
    """``23h59m``, ``5m``, ``-2h00m``: a plan's age or time left, as the inbox shows it."""
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds >= 3600:
        return f"{sign}{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{sign}{seconds // 60}m"


# --- the vault --------------------------------------------------------------------------------


def counts(vault: Vault) -> dict[str, int]:
    db = vault.db
    return {
        "sources": db.execute("SELECT count(*) FROM sources").fetchone()[0],
        "pages": db.execute("SELECT count(*) FROM pages").fetchone()[0],
        "active_claims": db.execute(
            "SELECT count(*) FROM claims WHERE status = 'active'"
        ).fetchone()[0],
        "pending_plans": db.execute(
            "SELECT count(*) FROM plans WHERE status = 'pending'"
        ).fetchone()[0],
        "audit_entries": db.execute("SELECT count(*) FROM audit").fetchone()[0],
    }


# --- sources, pages, claims ---------------------------------------------------------------------


def _source(record: SourceRecord) -> SourceOut:
    data = record.to_json()
    data["flags"] = [FlagOut(**f.to_json()) for f in record.flags]
    return SourceOut(**data)


def list_sources(vault: Vault) -> list[SourceOut]:
    return [_source(record) for record in SourceStore(vault).list()]


def get_source(vault: Vault, ref: str) -> SourceOut:
    return _source(SourceStore(vault).get(ref))


def list_pages(vault: Vault) -> list[PageSummary]:
    rows = vault.db.execute(
        "SELECT p.*, (SELECT count(*) FROM claims c WHERE c.page_slug = p.slug "
        "AND c.status = 'active') AS active FROM pages p ORDER BY p.slug"
    ).fetchall()
    return [
        PageSummary(
            slug=r["slug"],
            title=r["title"],
            summary=r["summary"],
            category=r["category"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            active_claims=r["active"],
        )
        for r in rows
    ]


def _claim(
    db: sqlite3.Connection, row: sqlite3.Row, evidence: list[sqlite3.Row] | None = None
) -> ClaimOut:
    if evidence is None:
        evidence = db.execute(
            'SELECT source_id, quote, start, "end", location FROM evidence WHERE claim_id = ? '
            "ORDER BY idx",
            (row["id"],),
        ).fetchall()
    return ClaimOut(
        id=row["id"],
        page=row["page_slug"],
        section=row["section"],
        position=row["position"],
        text=row["text"],
        status=row["status"],
        trust=row["trust"],
        plan_id=row["plan_id"],
        created_at=row["created_at"],
        superseded_by=row["superseded_by"],
        derived_from=json.loads(row["derived_from"] or "[]"),
        evidence=[
            ClaimEvidenceOut(
                source_id=e["source_id"],
                quote=e["quote"],
                start=e["start"],
                end=e["end"],
                location=e["location"],
            )
            for e in evidence
        ],
    )


def get_page(vault: Vault, slug: str, *, with_markdown: bool = True) -> PageDetail:
    """A page with its claims and evidence; ``with_markdown=False`` skips rendering its file's
    markdown (``markdown`` is then empty), for screens that show the claims themselves."""
    db = vault.db
    page = db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()
    markdown = (render_page(db, slug) if with_markdown else "") if page is not None else None
    if page is None or markdown is None:
        raise NotFoundError(f"no page {slug!r}. GET …/pages lists the pages.")
    claims = db.execute(
        "SELECT * FROM claims WHERE page_slug = ? ORDER BY position, id", (slug,)
    ).fetchall()
    evidence: dict[str, list[sqlite3.Row]] = {row["id"]: [] for row in claims}
    for e in db.execute(  # all the page's evidence in one query, not one per claim
        'SELECT e.claim_id, e.source_id, e.quote, e.start, e."end", e.location FROM evidence e '
        "JOIN claims c ON c.id = e.claim_id WHERE c.page_slug = ? ORDER BY e.claim_id, e.idx",
        (slug,),
    ):
        evidence[e["claim_id"]].append(e)
    return PageDetail(
        slug=page["slug"],
        title=page["title"],
        summary=page["summary"],
        category=page["category"],
        created_at=page["created_at"],
        updated_at=page["updated_at"],
        links_to=[
            r[0] for r in db.execute("SELECT dst FROM links WHERE src = ? ORDER BY dst", (slug,))
        ],
        linked_from=[
            r[0] for r in db.execute("SELECT src FROM links WHERE dst = ? ORDER BY src", (slug,))
        ],
        claims=[_claim(db, row, evidence[row["id"]]) for row in claims],
        markdown=markdown,
    )


def get_claim(vault: Vault, claim_id: str) -> ClaimOut:
    row = vault.db.execute("SELECT * FROM claims WHERE id = ?", (claim_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no claim {claim_id!r}. Search finds claims: GET …/search?q=...")
    return _claim(vault.db, row)


# --- search and ask ---------------------------------------------------------------------------


def vectors_for(vault: Vault) -> VectorSearch | None:
    """Dense retrieval when the [embeddings] extra is installed and the vault indexed."""
    from ..retrieval.dense import dense_search

    return dense_search(vault)


def _hit(hit: Hit) -> HitOut:
    # the dataclasses' own fields (vars), not asdict: its recursive deep copy was a sixth of a
    # search request's time in the daemon
    data = dict(vars(hit))
    data["evidence"] = [EvidenceOut(**vars(e)) for e in hit.evidence]
    return HitOut(**data)


def search(
    vault: Vault, query: str, k: int, min_trust: str, vectors: VectorSearch | None
) -> SearchResponse:
    hits = Retriever(vault.db, vectors).search(query, k=k, min_trust=min_trust)
    return SearchResponse(query=query, hits=[_hit(h) for h in hits])


def ask_provider(config: Config, model: str | None) -> Provider | None:
    """The provider an answer asks: ``model`` when the request names one, else the vault's
    (None: the extractive answerer). The caller closes it."""
    name = model or str(config.model("provider"))
    try:
        return None if name == "extractive" else provider_from_config(config, name)
    except ConfigError as exc:
        if model is None:
            raise  # the vault's own model is misconfigured: the owner must fix it
        raise ConflictError(f"model {name!r} can't answer in this vault: {exc}") from exc


def ask_response(answer: Answer, saved: ProposalOut | Proposal | None) -> AskResponse:
    """The answer as the API returns it, with the plan that saved it (``save``)."""
    data: dict[str, Any] = answer.to_json(citations=False)
    data["citations"] = [_hit(h) for h in answer.cited()]
    plan_id = None if saved is None else saved.plan_id
    return AskResponse(
        **data,
        saved_plan=plan_id,
        save_message=saved.message if saved is not None else None,
        markdown=render_answer(answer),
    )


def ask(
    vault: Vault,
    request: AskRequest,
    vectors: VectorSearch | None,
    author: str,
    log: AskLog | None = None,
) -> AskResponse:
    """Answer a question (W8); with ``save`` the answer is proposed to the inbox (W4) as
    ``author``'s plan: every door names its caller (a token's saved answer, from the API or the
    web desk, is an agent's plan, W13), none has a default to forget."""
    provider = ask_provider(vault.config, request.model)
    try:
        answer = Asker(vault, provider, Retriever(vault.db, vectors), log=log).ask(
            request.question, min_trust=request.min_trust
        )
    finally:
        if provider is not None:
            provider.close()
    proposal = (
        propose_answer(vault, answer, author)
        if request.save and answer.verdict == "answered"
        else None
    )
    return ask_response(answer, proposal)


# --- plans ------------------------------------------------------------------------------------


def new_nonce(vault: Vault, hours: int, caller: str = "") -> NonceResponse:
    """A fresh nonce for one plan. An agent ``caller`` (a token) over its proposal quota gets
    none: it could not propose with it (W13)."""
    if caller and is_agent(caller, ""):
        agents.check(vault, caller_of(caller), "propose_plan")
    value = issue_nonce(vault.db, vault.clock, "propose", timedelta(hours=hours))
    return NonceResponse(nonce=value, valid_hours=hours)


def propose(
    vault: Vault,
    plan: str | bytes | dict[str, Any],
    author: str,
    origin: str,
    *,
    hold: str = "",
) -> ProposalOut:
    """Put a plan through the gate (W4); ``hold`` keeps it in the inbox whatever the policy.
    An agent's plan (a token's, an MCP client's) is charged to its caller's quota and always
    waits for a person, through every door (:mod:`affidavit.agents`, W13)."""
    proposal = inbox.propose(vault, plan, author, origin, hold=hold)
    shown = (
        _waiting(vault, inbox.get_plan(vault, proposal.plan_id))
        if proposal.status in ("pending", "partial")
        else []
    )
    return ProposalOut(
        plan_id=proposal.plan_id,
        status=proposal.status,
        new=proposal.new,
        message=proposal.message,
        admission=proposal.admission.to_json(),
        waiting=shown,
    )


def _waiting(vault: Vault, record: inbox.PlanRecord) -> list[WaitingOut]:
    """What of a pending plan waits for a person, and why (:mod:`.waiting`)."""
    if record.status != "pending":
        return []
    done = set(inbox.applied_ops(vault, record.id))
    return waiting(record.plan, record.admission, inbox.held(vault, record.id), done)


def _summary(vault: Vault, record: inbox.PlanRecord) -> PlanSummary:
    age, left = inbox.age(vault, record)
    return PlanSummary(
        id=record.id,
        status=record.status,
        author=record.author,
        origin=record.origin,
        proposer=proposer_of(record.author, record.origin),
        created_at=record.created_at,
        expires_at=record.expires_at,
        age=duration(age),
        expires_in=duration(left),
        operations=len(record.plan.operations),
        counts=record.admission.counts,
        waiting=_waiting(vault, record),
    )


def list_plans(vault: Vault, statuses: tuple[str, ...] = ("pending",)) -> list[PlanSummary]:
    return [_summary(vault, r) for r in inbox.list_plans(vault, statuses)]


def proposer_says(plan: Plan) -> list[ProposerWords]:
    """The free text of ``plan`` — its summary, each operation's reason — that no check of the
    gate reads: a reviewer sees it as the proposer's words (it may say anything, e.g. that the
    owner already approved), and the wiki never shows it."""
    out = [ProposerWords(op=None, field="summary", text=plan.summary)] if plan.summary else []
    for n, op in enumerate(plan.operations, start=1):
        reason = getattr(op, "reason", "")
        if reason:
            out.append(ProposerWords(op=n, field="reason", text=str(reason)))
    return out


def plan_detail(vault: Vault, ref: str) -> PlanDetail:
    """A plan with every verdict, and each verified quote shown in its source's context."""
    record = inbox.get_plan(vault, ref)
    store = SourceStore(vault)
    quotes: list[QuoteContext] = []
    for op in record.admission.ops:
        for claim in op.claims:
            for n, quote in enumerate(claim.evidence):
                if not (quote.verified and quote.source_id):
                    continue
                if quote.start is None or quote.end is None:
                    continue
                source = store.get(quote.source_id)
                text = store.text(source.id)
                quotes.append(
                    quote_context(
                        source, text, quote.start, quote.end,
                        op=op.index, claim=claim.index, evidence=n,
                    )
                )  # fmt: skip
    summary = _summary(vault, record)
    data = record.to_json()
    applied = (
        [i + 1 for i in inbox.applied_ops(vault, record.id)] if record.status == "pending" else []
    )
    return PlanDetail(
        **data,
        age=summary.age,
        expires_in=summary.expires_in,
        quotes=quotes,
        applied_ops=applied,
        waiting=summary.waiting,
        proposer_says=proposer_says(record.plan),
    )


def approve(vault: Vault, ref: str, ops: list[int] | None, actor: str) -> ApproveResponse:
    return _approved(inbox.approve(vault, ref, ops, actor))


def _approved(result: ApplyResult) -> ApproveResponse:
    return ApproveResponse(
        plan_id=result.plan_id,
        applied=result.applied,
        message=result.message,
        ops=[i + 1 for i in result.ops],
        claims=result.claims,
        commit=result.commit,
    )


def _op_line(op: Any, verdict: OpResult | None) -> str:
    what = {
        "create_page": lambda: f"{op.slug} ({op.title}), {len(op.claims)} claim(s)",
        "add_claims": lambda: f"{op.page} (+{len(op.claims)} claims)",
        "link_pages": lambda: f"{op.page} → {op.to}",
        "update_context": lambda: f"{op.mode}, {len(op.entries)} entries",
        "supersede_claim": lambda: f"{op.claim}",
        "retract_claim": lambda: f"{op.claim}",
        "retract_source": lambda: f"{op.source}",
        "carry_source": lambda: f"{op.source[:12]} → {op.to[:12]}, {len(op.claims)} claim(s)",
        "update_page": lambda: f"{op.page}: new {' and '.join(_page_words(op))}",
    }[op.op]()
    status = f" [{verdict.status}]" if verdict is not None and verdict.status != "admitted" else ""
    return f"{op.op}: {what}{status}"


def _page_words(op: Any) -> list[str]:
    return [w for w in ("title", "summary") if getattr(op, w) is not None]


def _rest_line(op: Any, held: Held) -> str:
    """What approving the rest of an operation the policy applied in part would write."""
    parts = [*held.texts] + [f"claim {n + 1}" for n in held.claims]
    where = getattr(op, "slug", None) or getattr(op, "page", None) or "context"
    return f"{op.op}: the rest of {where}, which waits for a person: {', '.join(parts)}"


def _withdrawal_lines(verdict: OpResult) -> list[str]:
    """Every claim the operation ends, in words."""
    if "radius" in verdict.detail:
        return describe_radius(BlastRadius.from_json(verdict.detail["radius"]))
    old = next((c for c in verdict.claims if c.role == "superseded"), None)
    new = next((c for c in verdict.claims if c.role in ("", "successor")), None)
    claim = verdict.detail.get("claim", "")
    lines = [f"Superseding {claim}:" if claim else "Superseding a claim:"]
    if old is not None:
        lines.append(f"    goes:    {old.text}")
    if new is not None:
        lines.append(f"    becomes: {new.text}")
    return lines


def approval_preview(vault: Vault, refs: list[str]) -> list[PlanPreview]:
    """What approving each of ``refs`` would do (pending operations, and each withdrawn claim)."""
    out = []
    for ref in refs:
        record = inbox.get_plan(vault, ref)
        ops = inbox.pending_ops(vault, record) if record.status == "pending" else []
        verdicts = {op.index: op for op in record.admission.ops}
        rest = inbox.held(vault, record.id) if record.status == "pending" else {}
        lines = [
            f"{i + 1}. "
            + (
                _rest_line(record.plan.operations[i], rest[i])
                if i in rest
                else _op_line(record.plan.operations[i], verdicts.get(i))
            )
            for i in ops
        ]
        withdrawals: list[str] = []
        for i in inbox.withdrawals_of(record, ops):
            withdrawals += [f"op {i + 1}: " + line for line in _withdrawal_lines(verdicts[i])[:1]]
            withdrawals += _withdrawal_lines(verdicts[i])[1:]
            reason = getattr(record.plan.operations[i], "reason", "")
            if reason:
                withdrawals.append("    " + quoted(str(reason)))
        out.append(
            PlanPreview(
                plan_id=record.id,
                ops=[i + 1 for i in ops],
                lines=lines,
                withdrawals=withdrawals,
                waiting=[w.line for w in _waiting(vault, record)],
            )
        )
    return out


def approve_many(
    vault: Vault, refs: list[str], actor: str, *, dry_run: bool = False, sure_only: bool = False
) -> ApproveManyResponse:
    """Approve several plans as one batch (dependency order, all or nothing), or with
    ``dry_run`` only say what that would do. ``sure_only``: texts that wait for a person stay
    (W11: nothing was shown before the approval)."""
    preview = approval_preview(vault, refs)
    if dry_run:
        return ApproveManyResponse(preview=preview, results=[], commit=None)
    approved = inbox.approve_many(vault, refs, None, actor, sure_only=sure_only)
    results = [_approved(r) for r in approved]
    commit = next((r.commit for r in results if r.commit), None)
    return ApproveManyResponse(preview=preview, results=results, commit=commit)


def reject(vault: Vault, ref: str, reason: str, actor: str) -> RejectResponse:
    record = inbox.reject(vault, ref, reason, actor)
    return RejectResponse(plan_id=record.id, status=record.status, reason=record.reason)


# --- audit ------------------------------------------------------------------------------------


def audit_page(vault: Vault, after: int, limit: int) -> AuditPage:
    rows = vault.db.execute(
        "SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit + 1)
    ).fetchall()
    entries = [
        AuditEntryOut(
            seq=r["seq"],
            at=r["at"],
            action=r["action"],
            plan_id=r["plan_id"],
            actor=r["actor"],
            detail=json.loads(r["detail"]),
            hash=r["hash"],
        )
        for r in rows[:limit]
    ]
    more = len(rows) > limit
    return AuditPage(entries=entries, next_after=entries[-1].seq if more and entries else None)


__all__ = [
    "ALL_STATUSES",
    "approval_preview",
    "approve",
    "approve_many",
    "ask",
    "audit_page",
    "counts",
    "duration",
    "get_claim",
    "get_page",
    "get_source",
    "list_pages",
    "list_plans",
    "list_sources",
    "new_nonce",
    "plan_detail",
    "propose",
    "proposer_says",
    "reject",
    "search",
    "vectors_for",
]
