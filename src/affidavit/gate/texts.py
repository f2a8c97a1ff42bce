"""An operation's own texts, judged one by one (W11): a page's title and summary, a heading.

Each text is checked against the quotes of the claims that go in with it — the page's claims for
a title or summary, the operation's own for its heading — never against the claims' text, so a
drifting claim can't carry a title. A title that is a cited source's own name (its file name)
is the host's metadata and goes in as it is. The cited sources' names count as supported, and so do
generic heading words, and a text found verbatim in a cited source outside flagged spans (a
heading of the source); one found only inside a flagged span quarantines its operation.

A text supported only by the quotes of claims that wait for a person (:mod:`.split`) waits with
them. An *unsupported* text is rejected alone and an *uncertain* one waits for a person; neither
sinks the page's claims. The page then gets the host's text, taken from the claims that go in
(:class:`HostTexts`): each is the source's own words or a text the check already found supported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..errors import AffidavitError
from ..plan.schema import LINE_PATTERN, AddClaims, ClaimDraft, CreatePage, Plan
from ..support import SUPPORTED, UNCERTAIN, UNSUPPORTED, SupportChecker, headings_above
from ..support.batch import Item
from ..words import stems
from .grounding import GENERIC_HEADINGS, Grounding
from .reads import GateSources, WikiReads
from .verdicts import QUARANTINED, REJECTED, ClaimResult, Held, OpResult, QuoteResult, TextResult

TITLE_SHARE = 0.5
SUMMARY_SHARE = 0.75
HEADING_SHARE = 0.5
MAX = {"title": 120, "summary": 300, "section heading": 80}
"""The plan schema's limits, which a host text keeps too."""
DEFAULT_SECTION = {"create_page": "Overview", "add_claims": "Notes"}
UNTITLED = "Untitled page"
_LINE = re.compile(LINE_PATTERN)


def quote_span(sources: GateSources, quote: QuoteResult) -> str:
    """The stored source text at a verified quote's offsets ('' for an unverified quote)."""
    if not quote.verified or quote.source_id is None or quote.start is None or quote.end is None:
        return ""
    return sources.text(quote.source_id)[quote.start : quote.end]


@dataclass
class _Basis:
    """What a text is judged against: the quotes (the sources' own words) and their sources, of
    the claims that go in (``sure``) and of every passing claim (``all``), and the numbers of
    the claims that wait."""

    sure_quotes: list[str]
    sure_sources: list[str]
    all_quotes: list[str]
    all_sources: list[str]
    waiting: list[int]


def _one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace collapsed if it fits a one-line field of ``limit``, else ''."""
    line = " ".join(text.split())
    return line if 0 < len(line) <= limit and _LINE.fullmatch(line) else ""


class HostTexts:
    """The host's own title, summary and headings for a page whose proposed ones don't go in,
    taken deterministically from the claims that do (the first one's first verified quote)."""

    def __init__(self, sources: GateSources, grounding: Grounding) -> None:
        self.sources = sources
        self.grounding = grounding

    def _first_quote(self, claim: ClaimResult) -> QuoteResult | None:
        return next((q for q in claim.evidence if q.verified and q.source_id), None)

    def _heading(self, quote: QuoteResult, which: int, limit: int) -> str:
        """The source's own heading above ``quote`` (``which``: 0 the document's title when it
        comes first, -1 the nearest), if it stands verbatim outside any flagged span."""
        assert quote.source_id is not None and quote.start is not None
        try:
            found = headings_above(self.sources.text(quote.source_id), quote.start)
        except AffidavitError:
            return ""
        if not found:
            return ""
        heading = _one_line(found[which], limit)
        if len(heading) < 3:
            return ""
        verdict = self.grounding.verbatim(heading, [quote.source_id])
        return heading if verdict is not None and verdict.grounded else ""

    def title(self, claims: list[ClaimResult]) -> str:
        """The source's title (or heading) above the first claim's quote; else the first claim
        (supported by its quotes), its quote, or the source's name; else :data:`UNTITLED`."""
        for claim in claims:
            quote = self._first_quote(claim)
            if quote is None:
                continue
            name = self.sources.get(quote.source_id or "").name
            return (
                self._heading(quote, 0, MAX["title"])
                or _one_line(claim.text, MAX["title"])
                or _one_line(quote_span(self.sources, quote), MAX["title"])
                or _one_line(name, MAX["title"])
                or UNTITLED
            )
        return UNTITLED

    def summary(self, claims: list[ClaimResult], title: str) -> str:
        """The first claim (supported by its quotes), else its first quote, else ``title``."""
        for claim in claims:
            quote = self._first_quote(claim)
            found = _one_line(claim.text, MAX["summary"])
            if not found and quote is not None:
                found = _one_line(quote_span(self.sources, quote), MAX["summary"])
            if found:
                return found
        return title

    def section(self, claim: ClaimResult, default: str) -> str:
        """The heading the claim's first quote stands under in its source, else ``default``."""
        quote = self._first_quote(claim)
        found = self._heading(quote, -1, MAX["section heading"]) if quote is not None else ""
        return found or default


class TextJudge:
    """Judges the titles, summaries and headings of a plan's operations (see the module)."""

    def __init__(
        self,
        wiki: WikiReads,
        sources: GateSources,
        grounding: Grounding,
        checker: SupportChecker,
    ) -> None:
        self.wiki = wiki
        self.sources = sources
        self.grounding = grounding
        self.checker = checker
        self.host = HostTexts(sources, grounding)
        self._generic = frozenset(stems(" ".join(GENERIC_HEADINGS)))

    # -- the bases ------------------------------------------------------------------------------
    def _basis(self, claims: list[ClaimResult], going: set[int]) -> _Basis:
        """``claims`` (passing); ``going``: the ids (``id()``) of those that go in."""
        basis = _Basis([], [], [], [], [])
        for claim in claims:
            spans = [(quote_span(self.sources, q), q.source_id) for q in claim.evidence]
            for span, source in spans:
                basis.all_quotes.append(span)
                basis.all_sources.append(source or "")
                if id(claim) in going:
                    basis.sure_quotes.append(span)
                    basis.sure_sources.append(source or "")
            if id(claim) not in going:
                basis.waiting.append(claim.index + 1)
        return basis

    def _stored(self, claim_ids: list[str], extra: list[ClaimResult]) -> _Basis:
        """The quotes of claims already in the wiki (active) and of ``extra`` (passing claims a
        person approves now): the basis of a text approved after the rest went in."""
        basis = self._basis(extra, {id(c) for c in extra})
        for quote, source in self.wiki.active_quotes(claim_ids):
            for target in (basis.sure_quotes, basis.all_quotes):
                target.append(quote)
            for target in (basis.sure_sources, basis.all_sources):
                target.append(source)
        return basis

    # -- one text -------------------------------------------------------------------------------
    def judge(self, op: OpResult, result: TextResult, basis: _Basis, share: float) -> None:
        """Decide ``result`` against ``basis`` (see the module)."""
        what, text = result.what, result.text
        if not basis.all_quotes:
            return  # no claim passes: the operation is rejected (the page would have none)
        cited = sorted(set(basis.all_sources) - {""})
        if what == "title" and self.grounding.names_source(text, cited):
            result.support = SUPPORTED  # the source's own name: metadata, never a claim
            return
        allowed = self.grounding.name_stems(cited)
        if what == "section heading":
            allowed |= self._generic
        # (with no claim that goes in, only the allowed words — generic heading words, the
        # sources' names — can support it)
        sure = self.checker.check(text, basis.sure_quotes, share=share, allowed=allowed)
        if sure.verdict == SUPPORTED:
            result.support = SUPPORTED
            return
        wider = (
            self.checker.check(text, basis.all_quotes, share=share, allowed=allowed)
            if basis.waiting
            else sure
        )
        waiting = ", ".join(str(n) for n in basis.waiting)
        if wider.verdict == SUPPORTED:
            result.support, result.missing = UNCERTAIN, list(sure.missing)
            result.reason = f"only the quotes of claims that wait for a person ({waiting}) say it"
            return
        found = self._verbatim(text, basis)
        if found is not None:
            verdict, reason = found
            if verdict == QUARANTINED:
                result.decide(QUARANTINED, "sanitizer", f"the {what} {reason}")
                result.support = UNCERTAIN
                op.decide(QUARANTINED, "sanitizer", f"the {what} {reason}")
                return
            result.support, result.reason = verdict, reason
            return
        result.missing = list(wider.missing)
        if wider.verdict == UNCERTAIN or text.rstrip().endswith("?"):
            # a question (a saved answer's title) asserts nothing, but a person reads it
            result.support = UNCERTAIN
            result.reason = wider.reason or "a question: a person reads it"
            return
        result.support = UNSUPPORTED
        result.decide(REJECTED, "support", f"the {what} says what its quotes don't: {wider.reason}")

    def _verbatim(self, text: str, basis: _Basis) -> tuple[str, str] | None:
        """(verdict, reason) when a cited source has ``text`` verbatim: supported when a source
        of the claims that go in has it outside flagged spans, uncertain when only a waiting
        claim's source has it, quarantined when only a flagged span has it; None otherwise."""
        if len(text.strip()) < 3:
            return None
        sure = sorted(set(basis.sure_sources) - {""})
        others = sorted(set(basis.all_sources) - {""} - set(sure))
        for ids, verdict in ((sure, SUPPORTED), (others, UNCERTAIN)):
            found = self.grounding.verbatim(text, ids) if ids else None
            if found is None:
                continue
            if found.flagged:
                return QUARANTINED, found.reason
            if verdict == SUPPORTED:
                return SUPPORTED, ""
            return (
                UNCERTAIN,
                "found verbatim only in a source that claims waiting for a person cite",
            )
        return None

    # -- the plan's parse batch -------------------------------------------------------------------
    def items(
        self,
        plan: Plan,
        chosen: Iterable[int],
        remainder: Mapping[int, Held],
        verified: Callable[[ClaimDraft], list[QuoteResult] | None],
    ) -> list[Item]:
        """The checks :meth:`judge_plan` will likely run on the chosen operations' titles,
        summaries and headings, before their claims are judged: each against the quotes of
        every claim whose quotes all verified (``verified``), for
        :func:`affidavit.support.batch.prepare` to parse their texts in one batch with the
        claims'. A check :meth:`judge` runs on fewer quotes (a claim fails or waits) finds its
        text parsed all the same; held texts (``remainder``) are judged against the wiki and
        parsed then. Only the parse is shared: every verdict is the one :meth:`judge` gives."""
        ops = [(i, plan.operations[i]) for i in chosen if i not in remainder]
        pages: dict[str, list[tuple[int, list[QuoteResult]]]] = {}
        for i, op in ops:
            if isinstance(op, CreatePage | AddClaims):
                page = op.slug if isinstance(op, CreatePage) else op.page
                found = [(i, v) for v in map(verified, op.claims) if v is not None]
                pages.setdefault(page, []).extend(found)
        out: list[Item] = []
        for i, op in ops:
            if not isinstance(op, CreatePage | AddClaims):
                continue
            page = op.slug if isinstance(op, CreatePage) else op.page
            texts: list[tuple[str, str, list[QuoteResult], float]] = []
            every = [q for _, quotes in pages.get(page, []) for q in quotes]
            if isinstance(op, CreatePage):
                texts += [("title", op.title, every, TITLE_SHARE)]
                texts += [("summary", op.summary, every, SUMMARY_SHARE)]
            own = [q for n, quotes in pages.get(page, []) if n == i for q in quotes]
            texts.append(("section heading", op.section, own, HEADING_SHARE))
            for what, text, quotes, share in texts:
                cited = sorted({q.source_id for q in quotes if q.source_id})
                if not quotes or (what == "title" and self.grounding.names_source(text, cited)):
                    continue
                allowed = self.grounding.name_stems(cited)
                if what == "section heading":
                    allowed |= self._generic
                spans = tuple(quote_span(self.sources, q) for q in quotes)
                out.append((text, spans, share, tuple(sorted(allowed)), ()))
        return out

    # -- a plan ---------------------------------------------------------------------------------
    def judge_plan(
        self, plan: Plan, results: list[OpResult], remainder: Mapping[int, Held]
    ) -> None:
        """Judge every passing page operation's texts; set the host's texts where the proposed
        ones don't go in whole (rejected, or waiting while the rest goes in)."""
        claims_of: dict[str, list[tuple[ClaimResult, bool]]] = {}
        for r in results:
            op = plan.operations[r.index]
            if isinstance(op, CreatePage | AddClaims) and r.passes and r.index not in remainder:
                page = op.slug if isinstance(op, CreatePage) else op.page
                claims_of.setdefault(page, []).extend(
                    (c, r.sure) for c in r.claims if c.passes and not c.role
                )
        for r in results:
            op = plan.operations[r.index]
            if not r.passes or not isinstance(op, CreatePage | AddClaims):
                continue
            if r.index in remainder:
                self._remainder(op, r, remainder[r.index])
                continue
            self._fresh(op, r, claims_of)

    def _fresh(
        self,
        op: CreatePage | AddClaims,
        r: OpResult,
        claims_of: Mapping[str, list[tuple[ClaimResult, bool]]],
    ) -> None:
        own = [c for c in r.claims if c.passes and not c.role]
        page = op.slug if isinstance(op, CreatePage) else op.page
        pairs = claims_of.get(page, [])
        page_claims = [c for c, _ in pairs]
        going = {id(c) for c, op_sure in pairs if op_sure and c.sure}
        texts: list[tuple[str, str, list[ClaimResult], float]] = []
        if isinstance(op, CreatePage):
            texts += [
                ("title", op.title, page_claims, TITLE_SHARE),
                ("summary", op.summary, page_claims, SUMMARY_SHARE),
            ]
        texts.append(("section heading", op.section, own, HEADING_SHARE))
        for what, text, claims, share in texts:
            result = TextResult(what, text)
            r.texts.append(result)
            self.judge(r, result, self._basis(claims, going), share)
            if result.waits and result.status != QUARANTINED:
                r.uncertain[what] = list(result.missing)
        self._hosts(op, r, [c for c in page_claims if id(c) in going] or page_claims, own)

    def _hosts(
        self,
        op: CreatePage | AddClaims,
        r: OpResult,
        page_claims: list[ClaimResult],
        own: list[ClaimResult],
    ) -> None:
        """The host's texts for those that may not go in as proposed."""
        replaced = {t.what: t for t in r.texts if t.status == REJECTED or t.waits}
        if "title" in replaced or "summary" in replaced:
            title = self.host.title(page_claims)
            if "title" in replaced:
                replaced["title"].host = title
            if "summary" in replaced:
                replaced["summary"].host = self.host.summary(page_claims, title)
        if "section heading" in replaced:
            default = DEFAULT_SECTION[op.op]
            for claim in own:
                claim.section = self.host.section(claim, default)
            first = next((c for c in own if c.sure), own[0] if own else None)
            replaced["section heading"].host = first.section if first else default

    def _remainder(self, op: CreatePage | AddClaims, r: OpResult, held: Held) -> None:
        """The held texts of an operation whose rest went in earlier, judged again against the
        wiki as it is (W5): a title or summary against the page's active claims and the held
        claims approved now, a heading against the operation's own claims."""
        own = [c for c in r.claims if c.passes and not c.role]
        page = op.slug if isinstance(op, CreatePage) else op.page
        values = {"title": ("title", TITLE_SHARE), "summary": ("summary", SUMMARY_SHARE)}
        for what in held.texts:
            if what in values and isinstance(op, CreatePage):
                text = op.title if what == "title" else op.summary
                ids = self.wiki.active_claims(page)
                basis, share = self._stored(ids, own), values[what][1]
            elif what == "section heading":
                text, basis, share = (
                    op.section,
                    self._stored(list(held.written), own),
                    HEADING_SHARE,
                )
            else:
                continue
            result = TextResult(what, text)
            r.texts.append(result)
            if not basis.all_quotes:  # W5: the claims it rested on are gone
                result.decide(REJECTED, "support", f"no active claim says the {what} now")
                continue
            self.judge(r, result, basis, share)
            if result.passes and result.support != SUPPORTED and result.status != QUARANTINED:
                r.uncertain[what] = list(result.missing)
        heading = r.text("section heading")
        if not held.heading and (heading is None or not heading.passes):
            default = DEFAULT_SECTION[op.op]  # the claims go where the rest went: the host's
            for claim in own:
                claim.section = self.host.section(claim, default)


def host_texts(op: str, texts: Mapping[str, TextResult], held: Held) -> tuple[dict[str, str], bool]:
    """What an operation written in part (its sure part) shows instead of its own texts: the
    host's text for each title, summary or heading that doesn't go in now (rejected, or held for
    a person) — never the rejected text — and whether the operation's own heading goes in. One
    decision for both doors (:mod:`affidavit.store.writer`, :mod:`affidavit.storage.postgres_content`)."""

    def goes(what: str) -> bool:
        text = texts.get(what)
        return text is None or (text.passes and what not in held.texts)

    fallback = {"title": UNTITLED, "summary": UNTITLED}
    host = {
        w: t.host or fallback.get(w, DEFAULT_SECTION[op]) for w, t in texts.items() if not goes(w)
    }
    return host, goes("section heading")
