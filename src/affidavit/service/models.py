"""The typed API: pydantic models every front door shares (daemon routes, HTTP client, CLI).

Requests forbid unknown fields and bound every size; responses are what the services return and
what the daemon serialises, so the CLI prints the same thing in-process and through the daemon.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Tier = Literal["untrusted", "semi-trusted", "trusted"]
TokenRole = Literal["read", "propose", "approve"]
AccessRole = Literal["read", "propose", "approve", "owner"]
ProviderName = Literal["extractive", "openai", "anthropic", "local"]
PlanStatus = Literal["pending", "applied", "rejected", "expired", "refused"]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- errors ----------------------------------------------------------------------------------


class ErrorDetail(Response):
    type: str = Field(
        description="The error class, e.g. NotFoundError, Forbidden, Unauthenticated."
    )
    message: str
    fix: str = Field(description="What to do about it.")


class ErrorBody(Response):
    """The one error body of every failed request."""

    error: ErrorDetail


# --- who am I ---------------------------------------------------------------------------------


class Health(Response):
    status: Literal["ok"] = "ok"
    version: str


class VaultAccess(Response):
    name: str
    root: str
    owner_uid: int
    role: AccessRole


class Whoami(Response):
    transport: Literal["unix", "tcp"]
    uid: int | None = Field(description="Kernel-attested UID of the caller (Unix socket only).")
    user: str | None
    token_id: str | None = Field(description="The bearer token's public id (TCP only).")
    vaults: list[VaultAccess]


class VaultInfo(Response):
    name: str
    root: str
    owner_uid: int
    role: AccessRole
    counts: dict[str, int]


# --- sources, pages, claims ---------------------------------------------------------------------


class FlagOut(Response):
    kind: str
    start: int
    end: int
    detail: str


class SourceOut(Response):
    id: str
    origin: str
    name: str
    media_type: str
    original_file: str
    text_file: str
    text_sha256: str
    size_bytes: int
    text_chars: int
    trust: str
    status: str
    added_at: str
    origin_key: str = Field(
        default="", description="The normalised origin every version of this document shares."
    )
    version: int = Field(default=1, description="1 for the first bytes of its origin, then 2, 3…")
    previous_id: str | None = Field(default=None, description="The version this one replaces.")
    stated: str = Field(
        default="",
        description="The version or date the document states about itself ('3.2', "
        "'2024-05-01'), which orders releases of one document for lint; '' when none.",
    )
    flags: list[FlagOut]


class ClaimEvidenceOut(Response):
    source_id: str
    quote: str = Field(description="The source's own text at start:end (never the proposer's).")
    start: int
    end: int
    location: str


class ClaimOut(Response):
    id: str
    page: str = Field(description="The page's slug; '' for an entry of context.md.")
    section: str
    position: int
    text: str
    status: str
    trust: str
    plan_id: str
    created_at: str
    superseded_by: str | None
    derived_from: list[str]
    evidence: list[ClaimEvidenceOut]


class PageSummary(Response):
    slug: str
    title: str
    summary: str
    category: str
    created_at: str
    updated_at: str
    active_claims: int


class PageDetail(Response):
    slug: str
    title: str
    summary: str
    category: str
    created_at: str
    updated_at: str
    links_to: list[str]
    linked_from: list[str]
    claims: list[ClaimOut]
    markdown: str = Field(description="The page as rendered from the database (byte-stable).")


# --- search and ask ---------------------------------------------------------------------------


class EvidenceOut(Response):
    source_id: str
    source_name: str
    quote: str = Field(description="The source's own text at start:end (never the proposer's).")
    location: str
    start: int
    end: int


class HitOut(Response):
    claim_id: str
    page: str
    page_title: str
    text: str
    trust: str
    score: float
    evidence: list[EvidenceOut]
    section: str = Field(default="", description="The heading the claim stands under.")
    same: list[str] = Field(
        default_factory=list, description="Claims with the same text merged into this one."
    )
    more_sources: int = Field(
        default=0, description="Sources that state it beyond the quotes shown (limit 5)."
    )


class SearchResponse(Response):
    query: str
    hits: list[HitOut]


class AskRequest(Request):
    question: str = Field(min_length=1, max_length=2000)
    min_trust: Tier = "untrusted"
    model: ProviderName | None = Field(
        default=None, description="Answer with this provider instead of the vault's model."
    )
    save: bool = Field(
        default=False, description="Propose the answer as a synthesis page (needs 'propose')."
    )


class CitedTextOut(Response):
    text: str
    claims: list[str]


class DroppedOut(Response):
    text: str
    reason: str
    verdict: str = Field(
        default="", description="The support check's verdict when it dropped the sentence."
    )
    unsupported: list[str] = Field(
        default_factory=list, description="The sentence's words its cited quotes don't support."
    )


class SentenceSupportOut(Response):
    text: str
    claims: list[str]
    verdict: Literal["supported", "uncertain", "unsupported", "uncited"]
    unsupported: list[str]
    reason: str


class PageRefOut(Response):
    slug: str
    title: str


class PendingChangeOut(Response):
    claim: str = Field(description="The cited claim.")
    plan: str = Field(description="The pending plan that would retire it.")
    op: Literal["supersede_claim", "retract_claim"]
    origin: str = Field(description="Where the plan came from (lineage:…, lint, a person).")


class AskResponse(Response):
    question: str
    verdict: Literal["answered", "not_in_wiki"]
    answer: list[CitedTextOut]
    short_answer: CitedTextOut | None
    dropped: list[DroppedOut]
    support: list[SentenceSupportOut] = Field(
        default_factory=list, description="The support check's verdict on every reply sentence."
    )
    citations: list[HitOut]
    claims_given: list[str]
    context_tokens: int
    claims_left_out: int
    provider: str
    closest_pages: list[PageRefOut] = Field(
        default_factory=list, description="Not in the wiki: the pages nearest the question."
    )
    unknown_names: list[str] = Field(
        default_factory=list, description="Names the question asks about that no claim holds."
    )
    titled_names: list[str] = Field(
        default_factory=list,
        description="Names the question asks about that only page titles hold (no claim says "
        "anything about them).",
    )
    pending_changes: list[PendingChangeOut] = Field(
        default_factory=list,
        description="Pending plans that would supersede or retract a claim the answer cites "
        "(review them before relying on it).",
    )
    saved_plan: str | None
    save_message: str | None = Field(description="The inbox's message when the answer was saved.")
    markdown: str = Field(description="The answer rendered with footnotes carrying the quotes.")


# --- plans and the inbox ------------------------------------------------------------------------


class NonceRequest(Request):
    hours: int = Field(default=24, ge=1, le=168)


class NonceResponse(Response):
    nonce: str
    valid_hours: int


class ProposeRequest(Request):
    plan: dict[str, Any] = Field(
        description="A plan of the closed schema (`affidavit schema`), with a fresh nonce."
    )
    origin: str = Field(default="api", max_length=120, pattern=r"^[\w.:/ -]*$")


class ProposalOut(Response):
    plan_id: str
    status: str = Field(
        description="'applied', 'partial' (applied; some texts wait for a person), 'pending' "
        "or 'rejected'."
    )
    new: bool
    message: str
    admission: dict[str, Any]
    waiting: list[WaitingOut] = Field(
        default_factory=list,
        description="Each text that waits for a person, and why (W11).",
    )


class WaitingOut(Response):
    """A text of a pending plan that waits for a person, and why, in one line (W11)."""

    op: int = Field(description="The operation (1-based).")
    part: str = Field(
        description="'claim N', 'title', 'summary', 'section heading', or 'operation' (the "
        "whole operation waits)."
    )
    text: str = Field(description="The proposer's text that waits.")
    verdict: str = Field(
        description="'uncertain' (the support check couldn't confirm it), 'quarantined' "
        "(flagged evidence), 'leans' (it leans on a claim that doesn't go in), 'waits'."
    )
    why: str = Field(description="The words or the structure the host could not confirm.")
    words: list[str] = Field(description="The text's words its quotes don't support.")
    applied: bool = Field(description="The rest of its operation is in the wiki already.")
    line: str = Field(description="All of it in one line, as the CLI prints it.")


class PlanSummary(Response):
    id: str
    status: str
    author: str
    origin: str
    proposer: Literal["person", "agent"] = Field(
        description="Who proposed it, as the host recorded it: 'agent' for a plan that came "
        "through MCP or from a token caller; bulk approval takes only a person's plans unless "
        "the agents' are asked for.",
    )
    created_at: str
    expires_at: str
    age: str
    expires_in: str
    operations: int
    counts: dict[str, int]
    waiting: list[WaitingOut] = Field(
        default_factory=list,
        description="Each text of a pending plan that waits for a person, and why (W11).",
    )


class ContextSpan(Response):
    """Characters of a quote's context that a reader of the document does not see (W12)."""

    start: int = Field(description="Offset into before + quote + after.")
    end: int
    why: str = Field(description="Why a reader does not see it, as the source's flag says.")


class QuoteContext(Response):
    """A verified quote of a plan shown in its source: ``before`` + ``quote`` + ``after``."""

    op: int
    claim: int
    evidence: int
    source_id: str
    source_name: str
    location: str
    before: str
    quote: str
    after: str
    hidden: list[ContextSpan] = Field(
        default_factory=list,
        description="Spans of the context the document hides from its reader (hidden runs, "
        "white text, comments): stored text, never the document's visible words.",
    )


class ProposerWords(Response):
    """Free text the proposer wrote (a plan's summary, an operation's reason): its own words,
    checked by nothing, shown marked as such and never rendered into the wiki."""

    op: int | None = Field(description="The operation (1-based); null for the plan's summary.")
    field: str = Field(description="Which field: 'summary' or 'reason'.")
    text: str = Field(description="What the proposer wrote, verbatim.")


class PlanDetail(Response):
    id: str
    author: str
    origin: str
    status: str
    reason: str
    created_at: str
    expires_at: str
    decided_at: str | None
    decided_by: str | None
    age: str
    expires_in: str
    plan: dict[str, Any]
    admission: dict[str, Any]
    quotes: list[QuoteContext]
    applied_ops: list[int] = Field(
        default_factory=list,
        description="Operations (1-based) of a pending plan applied by an earlier partial "
        "approval, or by the policy while some of their texts wait (those are in 'waiting').",
    )
    waiting: list[WaitingOut] = Field(
        default_factory=list,
        description="Each text of a pending plan that waits for a person, and why (W11).",
    )
    proposer_says: list[ProposerWords] = Field(
        default_factory=list,
        description="The plan's free text (its summary, each operation's reason): the proposer's "
        "own words, unchecked; a surface shows them as such ('the proposer says: …').",
    )


class ApproveRequest(Request):
    ops: list[int] | None = Field(
        default=None,
        max_length=20,
        description="Apply only these operations (1-based; the others stay pending); every "
        "admitted operation not applied yet when omitted.",
    )


class ApproveResponse(Response):
    plan_id: str
    applied: bool
    message: str
    ops: list[int]
    claims: list[str]
    commit: str | None


class ApproveManyRequest(Request):
    plans: list[str] = Field(
        min_length=1, max_length=1000, description="Plan ids (or prefixes) to approve together."
    )
    dry_run: bool = Field(
        default=False, description="Only say what approving them would do; apply nothing."
    )
    sure_only: bool = Field(
        default=False,
        description="Take only what needs no person: texts that wait for one (uncertain, W11) "
        "stay in the inbox as each plan's pending remainder (what `approve --all --yes` does: "
        "nothing was shown before it).",
    )


class PlanPreview(Response):
    """What approving one plan would do: its pending operations and every claim a withdrawal
    among them takes out of the wiki."""

    plan_id: str
    ops: list[int]
    lines: list[str]
    withdrawals: list[str]
    waiting: list[str] = Field(
        default_factory=list, description="Each text that waits for a person, and why (W11)."
    )


class ApproveManyResponse(Response):
    preview: list[PlanPreview]
    results: list[ApproveResponse]
    commit: str | None


class RejectRequest(Request):
    reason: str = Field(min_length=1, max_length=500)


class RejectResponse(Response):
    plan_id: str
    status: str
    reason: str


# --- audit -------------------------------------------------------------------------------------


class AuditEntryOut(Response):
    seq: int
    at: str
    action: str
    plan_id: str | None
    actor: str
    detail: dict[str, Any]
    hash: str


class AuditPage(Response):
    entries: list[AuditEntryOut]
    next_after: int | None = Field(
        description="Pass as ?after= for the next page; null at the end."
    )


# --- tokens ------------------------------------------------------------------------------------


class TokenCreateRequest(Request):
    role: TokenRole
    expires_seconds: int | None = Field(
        default=None, ge=1, le=315_360_000, description="Lifetime in seconds (exact)."
    )
    expires_hours: int | None = Field(
        default=None,
        ge=1,
        le=87_600,
        description="Lifetime in hours, when expires_seconds is not given (default 720).",
    )
    label: str = Field(default="", max_length=80, pattern=r"^[\w.:@ -]*$")

    @model_validator(mode="after")
    def _one_lifetime(self) -> TokenCreateRequest:
        if self.expires_seconds is not None and self.expires_hours is not None:
            raise ValueError("give expires_seconds or expires_hours, not both")
        return self

    def lifetime(self) -> timedelta:
        """The token's lifetime, exactly as asked (720 hours when neither field is given)."""
        if self.expires_seconds is not None:
            return timedelta(seconds=self.expires_seconds)
        return timedelta(hours=self.expires_hours if self.expires_hours is not None else 720)


class TokenInfo(Response):
    id: str
    role: TokenRole
    label: str
    created_at: str
    created_by: str
    expires_at: str
    revoked_at: str | None
    status: Literal["active", "expired", "revoked"]


class TokenCreated(Response):
    info: TokenInfo
    token: str = Field(description="The secret bearer token. Shown once; only its hash is kept.")


__all__ = [
    "AccessRole",
    "ApproveRequest",
    "ApproveResponse",
    "AskRequest",
    "AskResponse",
    "AuditEntryOut",
    "AuditPage",
    "CitedTextOut",
    "ClaimEvidenceOut",
    "ClaimOut",
    "ContextSpan",
    "DroppedOut",
    "ErrorBody",
    "ErrorDetail",
    "EvidenceOut",
    "FlagOut",
    "Health",
    "HitOut",
    "NonceRequest",
    "NonceResponse",
    "PageDetail",
    "PageRefOut",
    "PageSummary",
    "PendingChangeOut",
    "PlanDetail",
    "PlanSummary",
    "ProposalOut",
    "ProposeRequest",
    "ProposerWords",
    "QuoteContext",
    "RejectRequest",
    "RejectResponse",
    "SearchResponse",
    "SentenceSupportOut",
    "SourceOut",
    "Tier",
    "TokenCreateRequest",
    "TokenCreated",
    "TokenInfo",
    "TokenRole",
    "VaultAccess",
    "VaultInfo",
    "Whoami",
]
