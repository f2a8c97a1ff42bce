"""Admission: decide, operation by operation and claim by claim, what a plan may write (SPEC W4).

Checks run in SPEC order and the first failure decides:

    schema → targets → evidence → support → provenance → sanitizer → trust → consistency → policy

``schema`` and ``targets`` fail the whole plan (nothing is recorded or written). The later checks
decide per claim and per operation; every decision carries the check's name and a reason, and
every quote's verification result (``verified: true/false`` with offsets) is kept in the record.
``support`` (W11) reads each claim's quotes as the source's own words at the verified offsets and
asks whether the claim's text says only what they say; a page's title, summary and headings are
checked against the quotes of its claims (never the claims' text, :mod:`.texts`). Judgement is
text by text: an unsupported text is rejected alone with its words named, an uncertain one waits
for a person, and neither sinks the supported texts of its plan. What waits when the policy
applies the rest is marked on each claim, text and operation (:mod:`.split`); a plan whose rest
went in earlier is re-admitted for its held part only (``remainder``).
Admission only reads; writing is :func:`affidavit.store.apply.apply`'s job. (The consistency
check's page indexes follow the connection's changes through a temp table of its own,
:mod:`.duplicates`: nothing of the vault's.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..agents import AGENT_POLICY
from ..config import Config
from ..errors import AdmissionError
from ..evidence import Verifier
from ..plan.schema import (
    AddClaims,
    CarrySource,
    ClaimDraft,
    CreatePage,
    LinkPages,
    Plan,
    RetractClaim,
    RetractSource,
    SupersedeClaim,
    UpdateContext,
    UpdatePage,
)
from ..sources.sanitizer import flag_reason
from ..sources.sentences import check_evidence
from ..sources.store import SourceRecord
from ..sources.visibility import unconfirmed
from ..store.blast import LIVE
from ..support import UNSUPPORTED, SupportChecker, check_version, headings_above, load_model
from ..support.batch import Item, claim_item, prepare
from ..support.facts import compare
from . import withdrawals
from .carry import CARRY_POLICY, carriage, carry_target_problem
from .duplicates import PageIndex, PageIndexes
from .grounding import Grounding
from .hints import SEEDED_COMPARABLES, comparable
from .page_words import PAGE_WORDS_POLICY, page_words
from .reads import GateSources, SqliteReads, WikiReads
from .split import mark_ops
from .texts import HEADING_SHARE, SUMMARY_SHARE, TITLE_SHARE, TextJudge, quote_span
from .verdicts import (
    ADMITTED,
    QUARANTINED,
    REJECTED,
    WITHDRAWALS,
    Admission,
    ClaimResult,
    Held,
    OpResult,
    QuoteResult,
    TextResult,
    trust_rank,
)

__all__ = [
    "ADMITTED",
    "CHECK_ORDER",
    "HEADING_SHARE",
    "QUARANTINED",
    "REJECTED",
    "SUMMARY_SHARE",
    "TITLE_SHARE",
    "WITHDRAWALS",
    "Admission",
    "ClaimResult",
    "Held",
    "OpResult",
    "QuoteResult",
    "TextResult",
    "admit",
    "trust_rank",
]

CHECK_ORDER = (
    "schema",
    "targets",
    "evidence",
    "support",
    "provenance",
    "sanitizer",
    "trust",
    "consistency",
    "policy",
)


@lru_cache(maxsize=4096)
def _comparable(text: str) -> tuple[str, frozenset[str]]:
    """:func:`.hints.comparable` of a claim's text (a page's index keeps those of its claims,
    this cache those of the claims just checked, which their page's index takes when they are
    applied), or the one computed ahead (:func:`.hints.seeded`)."""
    seeded = SEEDED_COMPARABLES.pop(text, None)
    return seeded if seeded is not None else comparable(text)


def _claims_of(op: object) -> list[ClaimDraft]:
    if isinstance(op, (CreatePage, AddClaims)):
        return list(op.claims)
    if isinstance(op, UpdateContext):
        return list(op.entries)
    if isinstance(op, SupersedeClaim):
        return [op.by] if op.by is not None else []
    return []


def _slugs_named(op: object) -> list[str]:
    """The pages an operation creates, extends or links."""
    if isinstance(op, CreatePage):
        return [op.slug]
    if isinstance(op, AddClaims):
        return [op.page]
    if isinstance(op, LinkPages):
        return [op.page, op.to]
    return []


def _page_of(op: object) -> str | None:
    if isinstance(op, CreatePage):
        return op.slug
    if isinstance(op, AddClaims):
        return op.page
    return None


class _Gate:
    def __init__(
        self,
        wiki: WikiReads,
        config: Config,
        sources: GateSources,
        verifier: Verifier,
        support: SupportChecker,
    ) -> None:
        self.wiki = wiki
        self.config = config
        self.sources = sources
        self.verifier = verifier
        self.checker = support
        self._source_ok: dict[str, str] = {}
        self._records: dict[str, SourceRecord] = {}
        self._claims_of_page: dict[str, PageIndex] = {}
        self._quotes: dict[tuple[str, str], QuoteResult] = {}  # (source, quote) -> its check
        self.retracting: set[str] = set()  # sources the plan being admitted retracts
        self.ended: set[str] = set()  # claims superseded or retracted by earlier operations

    # -- targets (whole plan) -------------------------------------------------------------
    def targets(
        self,
        plan: Plan,
        selected: list[int],
        plan_id: str,
        applying: bool,
        remainder: Mapping[int, Held],
        agent: bool,
    ) -> None:
        """The whole plan's targets. A person's plan never waits on an agent's pending plan
        (W13): a page only an agent's plan would create doesn't exist for it, and it may create
        a page an agent's plan reserved. An agent's plan meets every reservation."""
        chosen = [(i, plan.operations[i]) for i in selected]
        named = sorted({slug for _, op in chosen for slug in _slugs_named(op)})
        # only the pages the plan names (the wiki's other pages are no business of its targets)
        existing = self.wiki.existing_pages(named)
        reserved = self.wiki.reservations()
        pending = {slug: by for slug, by in reserved.items() if by != plan_id}
        squatted = {} if agent else self.wiki.agent_reservations()
        pending = {slug: by for slug, by in pending.items() if slug not in squatted}
        created = {op.slug for _, op in chosen if isinstance(op, CreatePage)}
        problems: list[str] = []

        def missing(n: int, slug: str) -> str | None:
            if slug in existing or slug in created:
                return None
            if slug in pending:
                if not applying:
                    return None  # a dependency on a pending plan, resolved at approval
                return (
                    f"op {n}: page '{slug}' doesn't exist yet; pending plan "
                    f"{pending[slug][:12]} creates it: approve that plan first"
                )
            if slug in squatted:  # never a hint to approve an agent's plan for the owner's
                return (
                    f"op {n}: page '{slug}' neither exists nor is created here; only an agent's "
                    "pending plan proposes it, and a person's plan never depends on an agent's: "
                    "create the page in this plan"
                )
            return f"op {n}: page '{slug}' neither exists nor is created here"

        for i, op in chosen:
            n = i + 1
            if isinstance(op, CreatePage) and i in remainder:
                if self.wiki.page_plan(op.slug) != plan_id:  # its page went in with the rest
                    problems.append(
                        f"op {n}: page '{op.slug}' is not the one this plan created with the rest"
                    )
            elif isinstance(op, CreatePage):
                if op.slug in existing:
                    problems.append(
                        f"op {n}: page '{op.slug}' already exists"
                        + (AGENT_LATE if agent and applying else "")
                    )
                    continue
                by = reserved.get(op.slug)
                if by is not None and by != plan_id and by not in squatted.values():
                    problems.append(
                        f"op {n}: slug '{op.slug}' is reserved by pending plan {by[:12]}"
                        + (AGENT_LATE if agent and applying else "")
                    )
            elif isinstance(op, AddClaims):
                problems += filter(None, [missing(n, op.page)])
            elif isinstance(op, LinkPages):
                problems += filter(None, [missing(n, op.page), missing(n, op.to)])
            for draft in _claims_of(op):
                for source_claim in draft.derived_from:
                    row = self.wiki.claim(source_claim)
                    if row is None or row.status != "active":
                        problems.append(
                            f"op {n}: derived from claim {source_claim}, which is not active"
                        )
            if isinstance(op, SupersedeClaim):
                problems += filter(None, [self._claim_problem(n, op.claim, ("active",))])
                if op.successor is not None:
                    problems += filter(
                        None, [self._claim_problem(n, op.successor, ("active",), "successor ")]
                    )
            elif isinstance(op, RetractClaim):
                problems += filter(None, [self._claim_problem(n, op.claim, LIVE)])
            elif isinstance(op, RetractSource):
                problems += filter(None, [self._retractable(n, op.source)])
            elif isinstance(op, CarrySource):
                problems += filter(None, [carry_target_problem(self, n, op)])
        if problems:
            raise AdmissionError("targets", "plan rejected (targets): " + "; ".join(problems))

    def _claim_problem(
        self, n: int, claim_id: str, statuses: tuple[str, ...], what: str = ""
    ) -> str | None:
        row = self.wiki.claim(claim_id)
        if row is None:
            return f"op {n}: {what}claim {claim_id} does not exist"
        if row.status not in statuses:
            wanted = " or ".join(statuses)
            return f"op {n}: {what}claim {claim_id} is {row.status}, not {wanted}"
        return None

    def _retractable(self, n: int, ref: str) -> str | None:
        source_id = self.sources.resolve(ref)
        if source_id is None:
            return f"op {n}: source {ref} does not exist (or the prefix is ambiguous)"
        status = self.sources.get(source_id).status
        if status != "active":
            return f"op {n}: source {source_id[:12]} is {status} already"
        return None

    # -- per-claim checks -----------------------------------------------------------------
    def check_quotes(self, drafts: list[ClaimDraft]) -> None:
        """Look up the free quotes of ``drafts`` in one call, the quotes of each source together
        (one search of its suffix array, not one call per claim). What is found for a quote
        depends only on it and its source's stored text, which doesn't change while the gate
        runs, so :meth:`evidence` takes the result from here. If a source can't be read, nothing
        is kept: each claim's check then fails (or not) in its turn, as it would have."""
        pairs = list(
            dict.fromkeys(
                (item.source, item.quote)
                for draft in drafts
                for item in draft.evidence
                if item.cited is None and item.quote is not None
            )
        )
        if len(pairs) < 2:
            return
        try:
            found = self.verifier.check_many(pairs)
        except Exception:  # the claim that cites it raises it in its turn
            return
        self._quotes = dict(zip(pairs, found, strict=True))

    def verified(self, draft: ClaimDraft) -> list[QuoteResult] | None:
        """The checks of ``draft``'s quotes found by :meth:`check_quotes`, if all were found
        and verified (else None)."""
        found = [
            self._quotes.get((item.source, item.quote))
            if item.cited is None and item.quote is not None
            else None
            for item in draft.evidence
        ]
        verified = [q for q in found if q is not None and q.verified]
        return verified if verified and len(verified) == len(found) else None

    def prepare_support(self, drafts: list[ClaimDraft], texts: Iterable[Item] = ()) -> None:
        """Parse in one batch what the support checks of ``drafts`` (their quotes verified by
        :meth:`check_quotes`) and ``texts`` (a page's title, summary and headings:
        :meth:`.TextJudge.items`) will parse: the checks then find it cached, with the verdicts
        they give one by one (:mod:`affidavit.support.batch`)."""
        items = []
        for draft in drafts:
            verified = self.verified(draft)
            if verified is not None:
                spans = [quote_span(self.sources, q) for q in verified]
                items.append(claim_item(draft.text, spans, quote_context(self.sources, verified)))
        prepare([*items, *texts])

    def evidence(self, draft: ClaimDraft, result: ClaimResult) -> None:
        for item in draft.evidence:
            known = (
                self._quotes.get((item.source, item.quote))
                if item.cited is None and item.quote is not None
                else None
            )
            if known is None:
                known = check_evidence(self.verifier, self.sources, item)
            result.evidence.append(known)
        bad = [q for q in result.evidence if not q.verified]
        if bad:
            result.decide(REJECTED, "evidence", "; ".join(q.reason for q in bad))

    def spans(self, result: ClaimResult) -> list[str]:
        """The source's own words at each verified quote's offsets (never the proposer's string)."""
        return [quote_span(self.sources, q) for q in result.evidence]

    def support(self, result: ClaimResult) -> None:
        verdict = self.checker.check(
            result.text, self.spans(result), context=quote_context(self.sources, result.evidence)
        )
        result.support = verdict.verdict
        result.unsupported = list(verdict.missing)
        result.support_reason = verdict.reason
        if verdict.verdict == UNSUPPORTED:
            result.decide(
                REJECTED, "support", f"the claim says what its quotes don't: {verdict.reason}"
            )

    def _record(self, source_id: str) -> SourceRecord:
        """A cited source's record, read once per plan (its claims mostly cite a few sources;
        the plan's own retractions are in ``retracting``, not in the record)."""
        record = self._records.get(source_id)
        if record is None:
            record = self._records[source_id] = self.sources.get(source_id)
        return record

    def _source_problem(self, source_id: str) -> str:
        if source_id in self.retracting:
            return f"source {source_id[:12]} is retracted by this plan"
        if source_id not in self._source_ok:
            record = self._record(source_id)
            problem = ""
            if record.status != "active":
                problem = f"source {source_id[:12]} is {record.status}"
            else:
                issues = self.sources.check_integrity(source_id)
                if issues:
                    problem = "; ".join(issues)
            self._source_ok[source_id] = problem
        return self._source_ok[source_id]

    def provenance(self, result: ClaimResult) -> None:
        for quote in result.evidence:
            assert quote.source_id is not None
            problem = self._source_problem(quote.source_id)
            if problem:
                result.decide(REJECTED, "provenance", problem)
                return

    def sanitizer(self, result: ClaimResult) -> None:
        hits: list[str] = []
        for quote in result.evidence:
            assert quote.source_id is not None and quote.start is not None
            assert quote.end is not None
            for flag in self.sources.flags(quote.source_id):
                overlaps = flag.start < quote.end and quote.start < max(flag.end, flag.start + 1)
                if overlaps:
                    hits.append(flag_reason(flag))
        if hits:
            result.decide(QUARANTINED, "sanitizer", "; ".join(dict.fromkeys(hits)))

    def trust(self, result: ClaimResult, superseded: str | None) -> None:
        tiers = []
        for quote in result.evidence:
            assert quote.source_id is not None
            tiers.append(self._record(quote.source_id).trust)
        result.trust = min(tiers, key=trust_rank)
        if superseded is not None:
            row = self.wiki.claim(superseded)
            if row is not None and trust_rank(result.trust) < trust_rank(row.trust):
                result.decide(
                    REJECTED,
                    "trust",
                    f"{_a(result.trust)} claim can't supersede {_a(row.trust)} claim by itself; "
                    "propose a retraction, or let a person decide on a lint finding",
                )

    def check_claim(
        self,
        draft: ClaimDraft,
        claim: ClaimResult,
        page: str | None,
        superseded: str | None,
        seen: set[tuple[str, ...]],
    ) -> None:
        """Run the per-claim checks in order; a rejection stops them, a quarantine does not."""
        self.evidence(draft, claim)
        if claim.status == REJECTED:
            return
        self.support(claim)
        if claim.status == REJECTED:
            return
        self.provenance(claim)
        if claim.status == REJECTED:
            return
        self.sanitizer(claim)
        self.trust(claim, superseded)
        if claim.status == REJECTED:
            return
        self.consistency(page, claim, seen, superseded)

    def _page_claims(self, page: str) -> PageIndex:
        """The live claims of ``page``, as the index kept across admissions holds them
        (:mod:`.duplicates`), brought up to date once per admission (the database doesn't
        change while the gate runs)."""
        index = self._claims_of_page.get(page)
        if index is None:
            index = self._claims_of_page[page] = self.wiki.page_index(page, _PAGES)
        return index

    def same(self, page: str, text: str) -> str | None:
        """A live claim of ``page`` whose text is ``text``'s, once normalised (None: none)."""
        normal, mine = _comparable(text)
        claims = self._page_claims(page)
        for claim_id in claims.candidates(normal, mine, NEAR_DUPLICATE):
            if claims.items[claim_id][1] == normal:
                return claim_id
        return None

    def consistency(
        self,
        page: str | None,
        result: ClaimResult,
        seen: set[tuple[str, ...]],
        superseded: str | None = None,
    ) -> None:
        """A claim repeating one of its page's live claims is refused — not the claim this one
        supersedes (``superseded``): a replacement is meant to be close to what it replaces."""
        normal, mine = _comparable(result.text)
        key = (page or "", normal)
        if key in seen:
            result.decide(REJECTED, "consistency", "duplicate of a claim earlier in this plan")
            return
        claims = self._page_claims(page or "")
        for claim_id in claims.candidates(normal, mine, NEAR_DUPLICATE):
            if claim_id == superseded:
                continue
            text, their_normal, theirs = claims.items[claim_id]
            if their_normal == key[1]:
                result.decide(REJECTED, "consistency", f"duplicate of existing claim {claim_id}")
                return
            if len(mine) >= NEAR_MIN_WORDS and len(theirs) >= NEAR_MIN_WORDS:
                similarity = len(mine & theirs) / len(mine | theirs)
                # A near-copy that changes a number, date or name is a changed fact, not a
                # duplicate: it is admitted so lint can show both versions (stale/contradiction).
                if similarity >= NEAR_DUPLICATE and not compare(result.text, text).conflicting:
                    result.decide(
                        REJECTED,
                        "consistency",
                        f"near-duplicate of existing claim {claim_id} "
                        f"({similarity:.0%} of their words in common)",
                    )
                    return
        seen.add(key)


def admit(
    db: sqlite3.Connection | WikiReads,
    config: Config,
    sources: GateSources,
    verifier: Verifier,
    plan: Plan,
    plan_id: str,
    selected: list[int] | None = None,
    *,
    applying: bool = False,
    support: SupportChecker | None = None,
    remainder: Mapping[int, Held] | None = None,
    agent: bool = False,
) -> Admission:
    """Run every admission check on the ``selected`` operations of ``plan`` (default: all).

    At proposal (``applying=False``) an operation may extend a page that a pending plan creates;
    when applying, every page it names must exist. Raises :class:`AdmissionError` when the
    targets check fails the whole plan. ``support`` is the support checker (default: the
    deterministic layer with the model ``support.model`` names, if any). ``remainder`` names
    selected operations whose rest went in earlier: only their held claims and texts are
    checked (against the wiki as it is now, W5), and their verdicts hold only those.
    ``agent``: the plan is an agent's (:func:`affidavit.agents.proposer_of`, decided by the
    caller from the recorded author and origin): never applied by policy, not even in part, and
    it never reserves a page against a person's.
    """
    held = dict(remainder or {})
    chosen = sorted(set(selected)) if selected is not None else list(range(len(plan.operations)))
    for index in chosen:
        if not 0 <= index < len(plan.operations):
            raise AdmissionError(
                "targets",
                f"operation {index + 1} does not exist; this plan has {len(plan.operations)}.",
            )
    checker = support if support is not None else SupportChecker(load_model(config))
    wiki = SqliteReads(db) if isinstance(db, sqlite3.Connection) else db
    gate = _Gate(wiki, config, sources, verifier, checker)
    held = {i: h for i, h in held.items() if i in chosen}
    gate.targets(plan, chosen, plan_id, applying, held, agent)
    for index in chosen:
        op = plan.operations[index]
        if isinstance(op, RetractSource):
            gate.retracting.add(sources.resolve(op.source) or op.source)
    drafts = [
        draft
        for index in chosen
        for k, draft in enumerate(_claims_of(plan.operations[index]))
        if index not in held or k in held[index].claims
    ]
    gate.check_quotes(drafts)
    judge = TextJudge(wiki, sources, Grounding(sources, verifier), checker)
    try:
        texts = judge.items(plan, chosen, held, gate.verified)
    except Exception:  # a source that can't be read fails its texts in their turn, as before
        texts = []
    gate.prepare_support(drafts, texts)
    seen: set[tuple[str, ...]] = set()
    done_sources: set[str] = set()
    results: list[OpResult] = []
    for index in chosen:
        op = plan.operations[index]
        result = OpResult(index=index, kind=op.op)
        results.append(result)
        if isinstance(op, SupersedeClaim) and op.successor is not None:
            withdrawals.succession(gate, op, result)
            continue
        if isinstance(op, SupersedeClaim) and withdrawals.restated(gate, op, result, gate.same):
            continue
        if isinstance(op, RetractClaim):
            withdrawals.retraction(gate, op, result)
            continue
        if isinstance(op, RetractSource):
            withdrawals.source_retraction(gate, op, result, plan_id, done_sources)
            continue
        if isinstance(op, CarrySource):
            carriage(gate, op, result)
            continue
        if isinstance(op, UpdatePage):
            page_words(gate, judge, plan, op, result, results[:-1])
            continue
        if isinstance(op, UpdateContext):
            withdrawals.context_replacement(gate, op, result)
        superseded = op.claim if isinstance(op, SupersedeClaim) else None
        page = _page_of(op)
        if isinstance(op, SupersedeClaim):
            row = wiki.claim(op.claim)
            page = row.page_slug if row else None
        for claim_index, draft in enumerate(_claims_of(op)):
            if index in held and claim_index not in held[index].claims:
                continue  # went in with the rest of the operation
            claim = ClaimResult(index=claim_index, text=draft.text)
            result.claims.append(claim)
            gate.check_claim(draft, claim, page, superseded, seen)
        if isinstance(op, LinkPages):
            if wiki.link_exists(op.page, op.to):
                result.decide(REJECTED, "consistency", f"{op.page} already links to {op.to}")
            elif ("link", op.page, op.to) in seen:
                result.decide(REJECTED, "consistency", "the same link appears earlier in this plan")
            else:
                seen.add(("link", op.page, op.to))
        elif index in held:
            pass  # its held texts may pass without a claim: decided after them
        elif result.claims and not any(c.passes for c in result.claims):
            first = next(c for c in result.claims if not c.passes)
            result.decide(
                REJECTED, first.check, "no claim of this operation passed: " + first.reason
            )
        elif any(c.status == QUARANTINED for c in result.claims):
            result.decide(QUARANTINED, "sanitizer", "some evidence overlaps sanitizer flags")
        if isinstance(op, SupersedeClaim) and result.passes:
            if op.claim in gate.ended:
                result.decide(
                    REJECTED, "consistency", f"an earlier operation of this plan ends {op.claim}"
                )
            gate.ended.add(op.claim)
    _cascade(plan, results, set(held))
    mark_ops(plan, results, set(held))
    judge.judge_plan(plan, results, held)
    _remainders(results, held)
    admission = Admission(
        plan_id=plan_id,
        selected=chosen,
        ops=results,
        support_version=check_version(checker.model),
        agent=agent,
    )
    _policy(config, admission)
    _unrendered(admission, sources)
    _hold_agents(admission)
    return admission


def _remainders(results: list[OpResult], held: Mapping[int, Held]) -> None:
    """An operation completing an earlier approval passes if any held claim or text does."""
    for r in results:
        if r.index not in held or not r.passes:
            continue
        if not any(c.passes for c in r.claims) and not any(t.passes for t in r.texts):
            first = next((c for c in r.claims if not c.passes), None)
            text = next((t for t in r.texts if not t.passes), None)
            why = first.reason if first else text.reason if text else "nothing is left of it"
            r.decide(REJECTED, "consistency", "nothing of what waited passes now: " + why)


NEAR_DUPLICATE = 0.9
"""Jaccard similarity of two claims' word stems above which the newer one is dropped."""
NEAR_MIN_WORDS = 5
_PAGES = PageIndexes(_comparable, NEAR_MIN_WORDS, size=4096)
"""Pages' live claims as the consistency check compares them, kept across admissions."""


def quote_context(sources: GateSources, quotes: list[QuoteResult]) -> list[str]:
    """The headings each verified quote stands under in its stored source (W11's host-known
    context: the document's title and the nearest heading above the quote)."""
    out: list[str] = []
    for q in quotes:
        if q.verified and q.source_id is not None and q.start is not None:
            out += headings_above(sources.text(q.source_id), q.start)
    return list(dict.fromkeys(out))


def _cascade(plan: Plan, results: list[OpResult], remainder: set[int]) -> None:
    """Reject pages left without claims, and the operations that depend on rejected pages (a
    page created with the rest of its operation, ``remainder``, exists already)."""
    by_index = {r.index: r for r in results}
    changed = True
    while changed:
        changed = False
        live_pages: dict[str, bool] = {}
        for r in results:
            op = plan.operations[r.index]
            if isinstance(op, CreatePage) and r.passes:
                live_pages[op.slug] = r.index in remainder or any(c.passes for c in r.claims)
        for r in results:
            op = plan.operations[r.index]
            if isinstance(op, AddClaims) and r.passes and op.page in live_pages:
                live_pages[op.page] = True
        for r in results:
            op = plan.operations[r.index]
            if isinstance(op, CreatePage) and r.passes and not live_pages[op.slug]:
                r.decide(REJECTED, "consistency", "the page would have no verified claim")
                changed = True
        dead = {
            plan.operations[r.index].slug  # type: ignore[union-attr]
            for r in results
            if isinstance(plan.operations[r.index], CreatePage) and not r.passes
        }
        for r in results:
            op = plan.operations[r.index]
            targets: list[str] = []
            if isinstance(op, AddClaims):
                targets = [op.page]
            elif isinstance(op, LinkPages):
                targets = [op.page, op.to]
            hit = [t for t in targets if t in dead]
            if hit and r.passes:
                r.decide(REJECTED, "targets", f"depends on page '{hit[0]}', which was rejected")
                changed = True
    del by_index


WITHDRAWAL_POLICY = (
    "plans that supersede or retract claims (or replace context entries) always wait for a "
    "person, whatever "
    "policy.auto_apply says: they take facts out of the wiki, and the blast radius of a "
    "retraction (syntheses, emptied pages) is a judgement no trust tier makes"
)


UNCERTAIN_POLICY = (
    "the support check is uncertain whether some text is supported by its quotes (W11) and "
    "nothing of the plan goes in without it: uncertain texts always wait for a person, whatever "
    "policy.auto_apply says; `affidavit inbox show` says why for each"
)
SPLIT_POLICY = (
    "policy.auto_apply 'trusted': the supported texts, resting on trusted sources, are applied; "
    "the uncertain ones wait for a person as the plan's pending remainder (W11, judged text by "
    "text); `affidavit inbox show` says why for each"
)


def _unrendered(admission: Admission, sources: GateSources) -> None:
    """Say so when a waiting plan rests on HTML or PDF below ``trusted`` whose visibility no
    renderer confirmed (W12: no renderer installed): such evidence is never applied by policy,
    and the reviewer reads why and how to install one."""
    if not admission.needs_approval:
        return
    for op in admission.ops:
        for claim in op.claims:
            if not claim.passes or claim.trust == "trusted":
                continue
            for quote in claim.evidence:
                if quote.source_id is None:
                    continue
                note = unconfirmed(sources.get(quote.source_id))
                if note:
                    admission.policy_reason += f"; {note}"
                    return


def _a(tier: str) -> str:
    return ("an " if tier[:1] in "aeiou" else "a ") + tier


def _wait(admission: Admission, reason: str) -> None:
    admission.needs_approval = True
    admission.policy_reason = reason


def _hold_agents(admission: Admission) -> None:
    """W13, after the policy whatever it decided: an agent's plan the policy would apply (whole,
    or its sure part) waits whole for a person instead; a plan that waits anyway keeps the
    policy's own reason."""
    if admission.agent and not admission.needs_approval:
        _wait(admission, AGENT_POLICY)


AGENT_LATE = (
    ": a person's plan took it after this agent's plan was proposed (W13: the owner's work goes "
    "first); reject this plan, or let the agent propose onto the page"
)


def _policy(config: Config, admission: Admission) -> None:
    """Whether the policy applies the plan at once (its sure part, when some texts wait) or the
    plan waits for a person; the first reason to wait decides."""
    passing = [op for op in admission.ops if op.passes]
    weak = [c.trust for op in passing for c in op.claims if c.passes and c.trust != "trusted"]
    if not passing:
        return _wait(admission, "nothing in the plan passed the gate")
    if all(op.kind == "carry_source" for op in passing):
        admission.needs_approval = False  # W13 still holds an agent's (_hold_agents)
        admission.policy_reason = CARRY_POLICY
        return None
    if any(withdrawals.ends_claims(op.kind, op.detail) for op in passing):
        return _wait(admission, WITHDRAWAL_POLICY)
    if any(op.kind == "update_page" for op in passing):
        return _wait(admission, PAGE_WORDS_POLICY)
    if config.auto_apply == "never":
        return _wait(admission, "policy.auto_apply is 'never': every plan waits for approval")
    if any(op.status == QUARANTINED for op in passing):
        return _wait(admission, "quarantined claims always wait for a person")
    if weak:
        return _wait(admission, f"policy.auto_apply is 'trusted' but some evidence is {weak[0]}")
    if not admission.sure_ops:
        return _wait(admission, UNCERTAIN_POLICY)
    admission.needs_approval = False
    admission.policy_reason = (
        SPLIT_POLICY
        if admission.waiting
        else "policy.auto_apply 'trusted': every claim rests on trusted sources"
    )
