"""The extractive engine's findings: contradictions, stale claims, duplicates and missing links,
without a model.

Two active claims are compared when they share rare words (each claim is put in the buckets of its
few rarest words, so a wiki of 100k claims is not compared pair by pair). A pair whose evidence
overlaps (the same quote, e.g. a page claim and its context entry) is one fact recorded twice on
purpose and is skipped. Otherwise:

- two claims that rest on different sources, about the same thing and differing in one fact (a
  number, date or name, a negation, an opposite word), by :func:`affidavit.support.facts.disagreement`
  → the facts changed; one source is never taken to disagree with itself;
- a restatement (similarity >= ``lint.restatement``) from another source with different words on
  both sides and no changed number, date or name → one source revised the other's sentence;
- near-identical (similarity >= ``lint.duplicate``) with nothing changed → a duplicate.

A changed fact is **stale** (the older claim, superseded by the newer) only with evidence that one
source replaces the other: a claim citing a later version of the same origin (same path or URL,
:mod:`affidavit.sources.lineage`) than the other cites — never the time either was ingested (issue 24
item 3: on a single release nothing is stale) — and when the newer claim is at least as trusted.
Otherwise — unrelated sources, or a less trusted newer version, which can never supersede by
itself (W7) — a changed fact is a **contradiction**, which has no fix until a person names the
claim to keep (a person's word); a rewording without a changed fact is no finding at all. Every finding quotes
each claim's evidence, says why it was raised (``Finding.why``: the shared subject, the fact, what
each side says), and still goes through the quote gate.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ..gate.admission import trust_rank
from ..sources.lineage import version_keys
from ..storage.queries import Sql, plain_rows
from ..store.render import CONTEXT_ARCHIVE
from ..support.facts import Disagreement, Sentence, analyse, compare, compare_analysed, disagreement
from ..words import stems
from .findings import Finding
from .quotes import ProposedQuote
from .reading import read_claim, sentence

RARE_WORDS = 6
"""Buckets per claim: its rarest words (facts and context stems)."""
MAX_BUCKET = 60
"""Words shared by more claims than this are too common to pair claims on."""
TITLE_OVERLAP = 0.5
"""Share of title words two unlinked pages need in common to be about the same subject."""


@dataclass
class ClaimRow:
    id: str
    page: str
    text: str
    trust: str
    created_at: str
    evidence: list[tuple[str, str, int, int]] = field(default_factory=list)
    """(source id, quote, start, end)"""
    newest: str = ""
    """When the newest source it cites was added (orders duplicates only, never staleness)."""
    origins: tuple[tuple[str, int], ...] = ()
    """(origin key, version) of each source it cites (:mod:`affidavit.sources.lineage`), and
    (document key, rank) of the version or date each states (:mod:`affidavit.sources.stated`)."""


@dataclass(frozen=True)
class Candidate:
    """A finding before the quote gate, with the quotes it will have to show."""

    finding: Finding
    quotes: list[ProposedQuote]


@dataclass(frozen=True)
class Thresholds:
    same_subject: float = 0.5
    restatement: float = 0.75
    duplicate: float = 0.9


def load_claims(db: Sql) -> list[ClaimRow]:
    """Every active claim with its evidence and the age of its newest source.

    A context entry (in context.md or its archive page) that quotes exactly what a page claim
    quotes is left out: it is the same
    fact, recorded twice on purpose, and would only double every finding.
    """
    cursor = plain_rows(db)  # plain tuples on SQLite: several times cheaper for bulk reads
    claims: dict[str, ClaimRow] = {}
    for row in cursor.execute(
        "SELECT id, page_slug, text, trust, created_at FROM claims WHERE status = 'active' "
        "ORDER BY created_at, id"
    ):
        claims[row[0]] = ClaimRow(row[0], row[1], row[2], row[3], row[4])
    added: dict[str, str] = {}
    versions: dict[str, tuple[tuple[str, int], ...]] = {}
    for source_id, when, key, version, stated_key, stated_rank in cursor.execute(
        "SELECT id, added_at, origin_key, version, stated_key, stated_rank FROM sources"
    ):
        added[source_id] = when
        versions[source_id] = version_keys(key, version, stated_key, stated_rank)
    for claim_id, source_id, quote, start, end in cursor.execute(
        'SELECT claim_id, source_id, quote, start, "end" FROM evidence ORDER BY claim_id, idx'
    ):
        claim = claims.get(claim_id)
        when = added.get(source_id)
        if claim is None or when is None:  # (evidence of no source: the join left it out)
            continue
        claim.evidence.append((source_id, quote, start, end))
        claim.newest = max(claim.newest, when)
        for pair in versions[source_id]:
            if pair not in claim.origins:
                claim.origins += (pair,)

    def overview(c: ClaimRow) -> bool:
        return c.page in ("", CONTEXT_ARCHIVE)

    on_pages = {(e[0], e[2], e[3]) for c in claims.values() if not overview(c) for e in c.evidence}
    return [
        c
        for c in claims.values()
        if c.evidence
        and (not overview(c) or any((e[0], e[2], e[3]) not in on_pages for e in c.evidence))
    ]


@dataclass(frozen=True)
class Subjects:
    """Which pages may hold claims about the same subject: the same page, linked pages, or
    pages whose titles share at least half their words and don't name different things
    ("2020 coronavirus pandemic in Hawaii" and "... in Italy" share most words but not their
    subject). Claims on unrelated pages ("the film holds 57 %" on two films' pages) are never
    compared."""

    titles: dict[str, tuple[frozenset[str], str]]
    links: frozenset[tuple[str, str]]
    known: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)
    """Pairs of pages decided so far: claims are many, pages few."""

    @classmethod
    def load(cls, db: Sql) -> Subjects:
        titles = {
            row[0]: (frozenset(stems(row[1])), str(row[1]))
            for row in db.execute("SELECT slug, title FROM pages")
        }
        links = frozenset((row[0], row[1]) for row in db.execute("SELECT src, dst FROM links"))
        return cls(titles, links)

    def related(self, a: str, b: str) -> bool:
        if not a or not b or a == b:
            return True
        known = self.known.get((a, b))
        if known is None:
            known = self.known[(a, b)] = self._related(a, b)
        return known

    def _related(self, a: str, b: str) -> bool:
        if (a, b) in self.links or (b, a) in self.links:
            return True
        (ta, title_a), (tb, title_b) = (
            self.titles.get(a, (frozenset(), "")),
            self.titles.get(b, (frozenset(), "")),
        )
        if not (ta | tb) or len(ta & tb) / len(ta | tb) < TITLE_OVERLAP:
            return False
        return not compare(title_a, title_b).conflicting

    def among(self, pages: Iterable[str]) -> PageRelation:
        """:meth:`related` over ``pages`` as sets: each page's related pages among them."""
        return PageRelation(self, frozenset(pages))


class PageRelation:
    """For each of a set of pages, the pages of the set :meth:`Subjects.related` relates it to,
    worked out once per page: a link either way, or a title that may share half its words — a
    title shares at least one of its rarest few stems with any such title (prefix filtering: of
    two titles with ``n`` stems in common, each has one of them among its ``len - n + 1`` rarest),
    so only those are compared, not every pair of pages."""

    def __init__(self, subjects: Subjects, pages: frozenset[str]) -> None:
        self.subjects = subjects
        self.pages = pages
        self.anywhere = frozenset(p for p in pages if not p)
        """Pages related to every page: a context entry's ('')."""
        self.linked: dict[str, set[str]] = defaultdict(set)
        for a, b in subjects.links:
            if a in pages and b in pages:
                self.linked[a].add(b)
                self.linked[b].add(a)
        titled = {p: t[0] for p in pages if p and (t := subjects.titles.get(p)) and t[0]}
        df: dict[str, int] = defaultdict(int)
        for words in titled.values():
            for w in words:
                df[w] += 1
        self.prefix: dict[str, list[str]] = {}
        self.index: dict[str, list[str]] = defaultdict(list)
        for page, words in titled.items():
            ordered = sorted(words, key=lambda w: (df[w], w))
            keep = len(ordered) - math.ceil(TITLE_OVERLAP * len(ordered)) + 2  # one to spare
            self.prefix[page] = ordered[:keep]
            for w in self.prefix[page]:
                self.index[w].append(page)
        self.known: dict[str, frozenset[str] | None] = {}

    def of(self, page: str) -> frozenset[str] | None:
        """The pages related to ``page`` (itself included); None: every page."""
        if page in self.known:
            return self.known[page]
        if not page:
            out = None
        else:
            near = {page, *self.anywhere, *self.linked.get(page, ())}
            for w in self.prefix.get(page, ()):
                near.update(q for q in self.index[w] if q not in near)
            related = self.subjects.related
            out = frozenset(q for q in near if related(page, q))
        self.known[page] = out
        return out


def _overlap(a: ClaimRow, b: ClaimRow) -> bool:
    for sa, _, start_a, end_a in a.evidence:
        for sb, _, start_b, end_b in b.evidence:
            if sa == sb and start_a < end_b and start_b < end_a:
                return True
    return False


def rare_buckets(
    claims: list[ClaimRow], readings: list[tuple[set[str], bool]] | None = None
) -> list[list[int]]:
    """For each word shared by 2 to :data:`MAX_BUCKET` claims and among the
    :data:`RARE_WORDS` rarest of one of them, the claims (indexes, ascending) that have it
    among theirs; in the order the words were first put to use. ``readings``: each claim's
    :func:`~affidavit.lint.reading.read_claim`, if read already."""
    words = (
        [w for w, _ in readings]
        if readings is not None
        else [read_claim(c.text)[0] for c in claims]
    )
    df: Counter[str] = Counter()
    for ws in words:
        df.update(ws)
    sharable = {w for w, n in df.items() if 1 < n <= MAX_BUCKET}
    buckets: dict[str, list[int]] = defaultdict(list)
    for index, ws in enumerate(words):
        shared = list(ws & sharable)
        shared.sort(key=lambda w: (df[w], w))
        for w in shared[:RARE_WORDS]:
            buckets[w].append(index)
    return list(buckets.values())


def candidate_pairs(claims: list[ClaimRow]) -> Iterator[tuple[ClaimRow, ClaimRow]]:
    """Pairs of claims that share one of their rarest words, each pair once."""
    seen: set[tuple[int, int]] = set()
    for members in rare_buckets(claims):
        for i, j in combinations(members, 2):
            if (i, j) in seen:
                continue
            seen.add((i, j))
            yield claims[i], claims[j]


def related_pairs(
    claims: list[ClaimRow],
    subjects: Subjects,
    involving: set[int] | None = None,
    readings: list[tuple[set[str], bool]] | None = None,
) -> list[tuple[int, int]]:
    """What ``[(i, j) for a, b in candidate_pairs(claims) if subjects.related(a.page, b.page)]``
    gives in indexes (with ``involving``, only pairs one of those indexes is part of), in the same
    order, without going through the pairs of unrelated pages: in each bucket the claims are
    grouped by page, and only the groups of related pages are paired. A bucket's pairs come in
    the order :func:`itertools.combinations` gives them (its claims are in ascending order), and
    each pair where it first comes."""
    pages = [c.page for c in claims]
    relation = subjects.among(pages)
    near_to = {page: relation.of(page) for page in relation.pages}
    size = len(claims)
    seen: set[int] = set()
    out: list[tuple[int, int]] = []
    for members in rare_buckets(claims, readings):
        if involving is not None and involving.isdisjoint(members):
            continue
        groups: dict[str, list[int]] = {}
        for m in members:
            groups.setdefault(pages[m], []).append(m)
        if len(groups) == 1:
            pairs: list[tuple[int, int]] = list(combinations(members, 2))
        else:
            pairs = []
            for page, mine in groups.items():
                pairs += combinations(mine, 2)
                near = near_to[page]
                for other in groups if near is None else near.intersection(groups):
                    if other > page:  # each two pages once: the relation is symmetric
                        pairs += ((min(i, j), max(i, j)) for i in mine for j in groups[other])
            pairs.sort()
        for i, j in pairs:
            key = i * size + j
            if key in seen:
                continue
            seen.add(key)
            if involving is None or i in involving or j in involving:
                out.append((i, j))
    return out


def _quotes(*claims: ClaimRow) -> list[ProposedQuote]:
    return [
        ProposedQuote(c.evidence[0][1], claim_id=c.id, source_id=c.evidence[0][0]) for c in claims
    ]


def replaces(new: ClaimRow, old: ClaimRow) -> bool:
    """Whether ``new`` cites a later version of an origin (or a later release of a document, by
    the version or date both state) that ``old`` cites an earlier version of — the only
    evidence of "newer" lint takes from the sources alone."""
    return any(
        key == other and version > earlier
        for key, version in new.origins
        for other, earlier in old.origins
        if key
    )


def _order(a: ClaimRow, b: ClaimRow) -> tuple[ClaimRow, ClaimRow]:
    """(older, newer): by the newest source each cites, then creation, then id."""
    return (a, b) if (a.newest, a.created_at, a.id) <= (b.newest, b.created_at, b.id) else (b, a)


def _why(found: Disagreement | None) -> dict[str, str]:
    if found is None:
        return {"subject": "", "fact": "reworded", "a": "", "b": ""}
    return found.to_json()


def _said(why: dict[str, str]) -> str:
    """What each side says, as the message shows it: ``40,000 against 45,000``."""
    if why["fact"] == "reworded":
        return "the same sentence in different words"
    if why["fact"] == "negation":
        return f"“{why['a'] or why['b']}” on one side only"
    return f"{why['a']} against {why['b']}"


def _sides(why: dict[str, str], a: str, b: str) -> str:
    """Who says what: ``c-1 says 40,000, c-2 says 45,000``."""
    if why["fact"] == "negation":
        says, not_ = (a, b) if why["a"] else (b, a)
        return f"{says} says “{why['a'] or why['b']}”, {not_} doesn't"
    return f"{a} says {why['a']}, {b} says {why['b']}"


def _duplicate(a: ClaimRow, b: ClaimRow, sim: float) -> Candidate:
    keep, drop = _order(a, b)
    return Candidate(
        Finding(
            origin="extractive",
            kind="duplicate",
            severity="info",
            subject=drop.id,
            message=(
                f"claim {drop.id} on '{drop.page or 'context'}' repeats claim {keep.id} "
                f"on '{keep.page or 'context'}' ({sim:.0%} of their words in common)"
            ),
            claims=[drop.id, keep.id],
            pages=sorted({drop.page, keep.page} - {""}),
            fix={
                "op": "supersede_claim",
                "claim": drop.id,
                "successor": keep.id,
                "reason": f"duplicate of {keep.id}",
            },
        ),
        _quotes(drop, keep),
    )


def _analysed(claim: ClaimRow) -> Sentence:
    return analyse(claim.text)


def classify(
    a: ClaimRow, b: ClaimRow, limits: Thresholds, read: Callable[[ClaimRow], Sentence] = _analysed
) -> Candidate | None:
    """The finding a pair of claims makes, if any.

    A disagreement (stale or contradiction) needs two claims that rest on different sources
    (one document stating two different numbers is describing two different things: the
    ``*`` and ``+`` of a regex) and, by :func:`affidavit.support.facts.disagreement`, are about the
    same thing and differ in a fact — or, from a newer source, restate the other's sentence in
    other words without changing a number, date or name.
    """
    if _overlap(a, b):
        return None
    sources_a = {e[0] for e in a.evidence}
    sources_b = {e[0] for e in b.evidence}
    if sources_a == sources_b and sources_a:
        return None  # one source: neither a disagreement (below) nor a duplicate
    sa, sb = read(a), read(b)
    comparison = compare_analysed(sa, sb)
    sim = comparison.similarity
    disjoint = not (sources_a & sources_b)
    old, new = _order(a, b)
    if replaces(old, new):  # a later version of the same document: that one is the newer
        old, new = new, old
    newer = replaces(new, old)
    found = (
        disagreement(old.text, new.text, limits.same_subject)
        if disjoint and sim >= limits.same_subject / 2  # far below it: not worth aligning
        else None
    )
    words_a, words_b = sa.facts | sa.context, sb.facts | sb.context
    reworded = (
        found is None
        and disjoint
        and sim >= limits.restatement
        and not comparison.conflicting
        and bool(words_a - words_b)
        and bool(words_b - words_a)
    )
    if found is None and not reworded:
        if sim >= limits.duplicate and sources_a != sources_b and not comparison.conflicting:
            return _duplicate(a, b, sim)
        return None
    why = _why(found)
    what = _said(why)
    about = f" about {why['subject']}" if why["subject"] else ""
    pages = sorted({old.page, new.page} - {""})
    if newer and trust_rank(new.trust) >= trust_rank(old.trust):
        changed = f": a changed {why['fact']}{about}" if found is not None else ""
        return Candidate(
            Finding(
                origin="extractive",
                kind="stale",
                severity="warning",
                subject=old.id,
                message=(
                    f"claim {old.id} may be out of date: a newer source says otherwise "
                    f"({what}{changed}); claim {new.id} states the newer version"
                ),
                claims=[old.id, new.id],
                pages=pages,
                fix={
                    "op": "supersede_claim",
                    "claim": old.id,
                    "successor": new.id,
                    "reason": f"a newer source changed it ({what}{changed})"[:300],
                },
                why=why,
            ),
            _quotes(old, new),
        )
    if found is None:
        return None  # rewording from the same moment, or by a less trusted newcomer
    hint = ""
    if newer:
        hint = (
            f"the newer claim is {new.trust} and the older {old.trust}: a less trusted source "
            "can't supersede by itself; check both sources, then dismiss or retract"
        )
    return Candidate(
        Finding(
            origin="extractive",
            kind="contradiction",
            severity="warning",
            subject=f"{old.id}|{new.id}",
            message=(
                f"claims {old.id} and {new.id} disagree{about}: a different {why['fact']}, "
                f"{_sides(why, old.id, new.id)} — two sources disagree; which is right is for "
                "a person to decide"
            ),
            claims=[old.id, new.id],
            pages=pages,
            fix_hint=hint
            or "decide which is right: `affidavit findings fix ID --keep CLAIM` supersedes the other",
            why=why,
        ),
        _quotes(old, new),
    )


@dataclass
class Search:
    """The pairs of one candidate search over the whole wiki, to share between the passes that
    run back to back on the same claims (an ingest's supersession pass and its automatic lint):
    every pair :func:`candidate_pairs` yields whose classification found something, in order,
    with the ids of its two claims. :meth:`involving` and :meth:`found` keep the first of each
    fingerprint over the same pairs in the same order as :func:`find_candidates` does, so they
    return what it would on the same database."""

    pairs: list[tuple[str, str, Candidate]] = field(default_factory=list)
    version: int = -1
    """The database's ``PRAGMA data_version`` when the search read it."""
    keys: list[tuple[Any, ...]] | None = None
    """Each pair's place in a whole-wiki search's order, when the search read only some claims'
    pairs (:func:`affidavit.lint.nearby.merged` joins two such searches)."""

    def fresh(self, db: sqlite3.Connection) -> bool:
        """No other connection has committed since the search read ``db``: the claims, sources,
        pages and links it read are the same. (This connection's own commits in between — the
        findings and proposals of the passes that share it — never change them.)"""
        return self.version == data_version(db)

    def involving(self, ids: set[str]) -> list[Candidate]:
        """What ``find_candidates(db, limits, involving=ids)`` returns."""
        return _first(c for a, b, c in self.pairs if a in ids or b in ids)

    def found(self) -> list[Candidate]:
        """The pair findings of ``find_candidates(db, limits)`` (without its missing links)."""
        return _first(c for _, _, c in self.pairs)


def data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def _first(candidates: Iterable[Candidate]) -> list[Candidate]:
    out: dict[str, Candidate] = {}
    for candidate in candidates:
        out.setdefault(candidate.finding.fingerprint, candidate)
    return list(out.values())


@dataclass(frozen=True)
class PairWork:
    """What a pair search reads of the database: the active claims, which pages share a subject,
    the thresholds, and the claims whose pairs alone are wanted (None: every pair). Plain values:
    :func:`classify_pairs` is a pure function of them, so a worker process may compute it
    (:mod:`affidavit.lint.runner` does after a large ingest)."""

    claims: list[ClaimRow]
    subjects: Subjects
    limits: Thresholds
    involving: frozenset[str] | None = None


def read_pair_work(
    db: sqlite3.Connection, limits: Thresholds | None = None, involving: set[str] | None = None
) -> tuple[PairWork, int]:
    """What :func:`classify_pairs` needs, and the database's ``PRAGMA data_version`` read before
    it (a commit by another connection while it reads makes the search stale, never fresh)."""
    version = data_version(db)
    return pair_work(db, limits, involving), version


def pair_work(
    db: Sql, limits: Thresholds | None = None, involving: set[str] | None = None
) -> PairWork:
    """What :func:`classify_pairs` needs, read from ``db`` (either backend)."""
    return PairWork(
        claims=load_claims(db),
        subjects=Subjects.load(db),
        limits=limits or Thresholds(),
        involving=None if involving is None else frozenset(involving),
    )


def classify_pairs(
    work: PairWork, progress: Callable[[int, int], None] | None = None
) -> list[tuple[str, str, Candidate]]:
    """Every candidate pair of ``work``'s claims whose classification found something, in order,
    with the ids of its two claims (with ``involving``, only the pairs one of those is part of)."""
    claims = work.claims
    indexes = None
    if work.involving is not None:
        indexes = {n for n, c in enumerate(claims) if c.id in work.involving}
    readings = [read_claim(c.text) for c in claims]
    pairs = related_pairs(claims, work.subjects, indexes, readings)
    position = {c.id: n for n, c in enumerate(claims)}
    sentences: dict[int, Sentence] = {}

    def read(claim: ClaimRow) -> Sentence:  # what analyse(claim.text) gives
        n = position[claim.id]
        known = sentences.get(n)
        if known is None:
            known = sentences[n] = sentence(*readings[n])
        return known

    out: list[tuple[str, str, Candidate]] = []
    for n, (i, j) in enumerate(pairs, 1):
        a, b = claims[i], claims[j]
        found = classify(a, b, work.limits, read)
        if found is not None:
            out.append((a.id, b.id, found))
        if progress is not None and (n % 1000 == 0 or n == len(pairs)):
            progress(n, len(pairs))
    return out


def search_pairs(
    db: sqlite3.Connection,
    limits: Thresholds | None = None,
    progress: Callable[[int, int], None] | None = None,
    involving: set[str] | None = None,
) -> Search:
    """Classify the candidate pairs of the active claims (with ``involving``, only the pairs one
    of those claims is part of)."""
    work, version = read_pair_work(db, limits, involving)
    return Search(pairs=classify_pairs(work, progress), version=version)


def find_candidates(
    db: sqlite3.Connection,
    limits: Thresholds | None = None,
    progress: Callable[[int, int], None] | None = None,
    involving: set[str] | None = None,
    search: Search | None = None,
) -> list[Candidate]:
    """Every contradiction, stale and duplicate candidate among the active claims, and every
    missing link; with ``involving``, only the pairs one of those claims is part of (no links).
    ``search``: the pairs already classified on this same database (:func:`search_pairs`)."""
    if search is None or not search.fresh(db):
        if involving is not None:
            from .nearby import search_involving

            search = search_involving(db, involving, limits, progress)
        else:
            search = search_pairs(db, limits, progress)
    if involving is not None:
        return search.involving(involving)
    return _first([*search.found(), *missing_links(db)])


MAX_LINKERS = 20
"""A title mentioned on more pages than this is too common to ask for links to it."""
_PHRASE = re.compile(r"[^\W_]+")


Mentions = Callable[[Any, str, "re.Pattern[str]", str], "dict[str, tuple[str, str, str]] | None"]
"""Where a title is mentioned (:func:`_first_mentions`'s contract): the database, the title's
words as a full-text phrase, its pattern, the title's page."""


def missing_links(
    db: sqlite3.Connection, titles: set[str] | None = None, mentions: Mentions | None = None
) -> list[Candidate]:
    """Claims that name another page's title, on pages that don't link to it (the titles of the
    pages of ``titles`` only, when given: :func:`titles_named`).

    The title must be found in the claim's own evidence quote (so the finding quotes the source
    saying it) and hold a word other than a stopword; titles found on more than
    :data:`MAX_LINKERS` pages are too generic to act on. ``mentions`` finds the claims that
    mention a title (default: SQLite's full text, :func:`_first_mentions`; PostgreSQL's is
    :func:`affidavit.jobs.pg_checks.pg_first_mentions`).
    """
    mentions = mentions or _first_mentions
    links = {(row[0], row[1]) for row in db.execute("SELECT src, dst FROM links")}
    out: list[Candidate] = []
    pages = db.execute("SELECT slug, title FROM pages ORDER BY slug").fetchall()
    if titles is not None:
        pages = [row for row in pages if row[0] in titles]
    for slug, title in pages:
        words = _PHRASE.findall(title.casefold())
        if not stems(title) or slug == CONTEXT_ARCHIVE:
            continue
        phrase = '"' + " ".join(words) + '"'
        pattern = re.compile(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b", re.IGNORECASE)
        by_page = mentions(db, phrase, pattern, slug)
        if by_page is None:
            continue
        for page, (claim_id, source, quote) in sorted(by_page.items()):
            if (page, slug) in links:
                continue
            out.append(
                Candidate(
                    Finding(
                        origin="extractive",
                        kind="missing_link",
                        severity="info",
                        subject=f"{page}->{slug}",
                        message=f"'{page}' mentions {title!r} (claim {claim_id}) but doesn't link to it",
                        claims=[claim_id],
                        pages=[page, slug],
                        fix={"op": "link_pages", "page": page, "to": slug},
                    ),
                    [ProposedQuote(quote, claim_id=claim_id, source_id=source)],
                )
            )
    return out


def _first_mentions(
    db: sqlite3.Connection, phrase: str, pattern: re.Pattern[str], slug: str
) -> dict[str, tuple[str, str, str]] | None:
    """For each page but ``slug`` (and context.md and its archive), its first active claim (by
    position, id, then evidence) whose claim text holds ``phrase`` and one of whose quotes
    ``pattern`` finds, as ``(claim, source, quote)``; None as soon as more than
    :data:`MAX_LINKERS` pages have one (a title too common to act on: the rows past that point,
    and their quotes, are not read). The full-text match leads the joins (``CROSS JOIN``): without
    an ``ORDER BY`` to sort, the planner would otherwise walk the claims and match each."""
    cursor = db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT c.page_slug, c.position, c.id, e.idx, e.source_id, e.quote FROM claims_fts f "
        "CROSS JOIN claims c ON c.rowid = f.rowid CROSS JOIN evidence e ON e.claim_id = c.id "
        "WHERE claims_fts MATCH ? AND c.status = 'active' AND c.page_slug NOT IN (?, '', ?)",
        (phrase, slug, CONTEXT_ARCHIVE),
    )
    try:
        return first_by_page(rows, pattern)
    finally:
        cursor.close()


def first_by_page(
    rows: Iterable[Sequence[Any]], pattern: re.Pattern[str]
) -> dict[str, tuple[str, str, str]] | None:
    """Of ``rows`` (page, position, claim, evidence idx, source, quote: the claims a full-text
    match found), each page's first whose quote ``pattern`` finds; None past
    :data:`MAX_LINKERS` pages (:func:`_first_mentions`)."""
    first: dict[str, tuple[tuple[int, str, int], tuple[str, str, str]]] = {}
    for page, position, claim_id, idx, source, quote in rows:
        key = (int(position), str(claim_id), int(idx))
        known = first.get(page)
        if (known is None or key < known[0]) and pattern.search(quote):
            first[page] = (key, (str(claim_id), str(source), str(quote)))
            if len(first) > MAX_LINKERS:
                return None
    return {page: found for page, (_, found) in first.items()}


def titles_named(db: sqlite3.Connection, claims: set[str], pages: set[str]) -> set[str]:
    """The pages whose :func:`missing_links` findings the claims of ``claims`` (their quotes,
    whatever their status now) and the pages of ``pages`` (new, changed, newly linked) can
    change: those pages, and every page whose title's words follow one another in one of those
    quotes (a superset of what :func:`missing_links`' pattern finds there)."""
    starts: dict[str, list[tuple[str, list[str]]]] = {}
    for slug, title in db.execute("SELECT slug, title FROM pages"):
        words = _PHRASE.findall(str(title).casefold())
        if words:
            starts.setdefault(words[0], []).append((str(slug), words))
    found = set(pages)
    quotes = db.execute(
        "SELECT quote FROM evidence WHERE claim_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(claims)),),
    )
    for (quote,) in quotes:
        tokens = _PHRASE.findall(str(quote).casefold())
        for i, token in enumerate(tokens):
            for slug, words in starts.get(token, ()):
                if slug not in found and tokens[i : i + len(words)] == words:
                    found.add(slug)
    return found
