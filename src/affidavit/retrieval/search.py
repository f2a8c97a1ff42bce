"""Question-specific retrieval over active claims at or above a trust tier (SPEC W7, W8).

Three lexical lists, by BM25 (the tantivy index of :mod:`affidavit.retrieval.tantivy_index` when it
reflects the snapshot being read, SQLite FTS5 otherwise):

- claims whose text matches the query's words;
- claims of the pages whose title or summary match;
- link neighbours: matching claims of the pages linked to or from the best claims' pages.

They are fused by score (:func:`fuse_lexical`: a page match never demotes the best BM25 hit);
claims nearest to the query in embedding space, when the ``[embeddings]`` extra is installed and
the vectors' lineage matches (:mod:`affidavit.retrieval.vectors`), are then fused with that ranking
by reciprocal rank fusion.

Never the whole wiki: each list is bounded, and the caller packs the result into a token budget.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from ..config import TRUST_TIERS
from ..db import read_snapshot
from ..evidence.spans import NOT_CACHED, UNREADABLE, cached_span
from ..words import STOPWORDS
from .search_version import SearchVersion, Version

RRF_K = 60
CANDIDATES = 50
_TERM = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class EvidenceRef:
    source_id: str
    source_name: str
    quote: str
    location: str
    start: int
    end: int


@dataclass(frozen=True)
class Hit:
    claim_id: str
    page: str  # slug; "" for an entry of context.md
    page_title: str
    text: str
    trust: str
    score: float
    evidence: tuple[EvidenceRef, ...]
    section: str = ""
    """The heading the claim stands under on its page."""
    same: tuple[str, ...] = ()
    """Other claims with the same text, merged into this one (:func:`merge_identical`)."""
    more_sources: int = 0
    """Sources that state it beyond the evidence shown (past the limit of 5 quotes)."""


class VectorSearch(Protocol):
    """What retrieval needs from the dense index (``None`` when the extra is missing)."""

    def search(self, db: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]: ...


def allowed_tiers(min_trust: str) -> tuple[str, ...]:
    if min_trust not in TRUST_TIERS:
        raise ValueError(f"unknown trust tier {min_trust!r}; use one of {', '.join(TRUST_TIERS)}")
    return TRUST_TIERS[TRUST_TIERS.index(min_trust) :]


def query_terms(text: str, limit: int = 32) -> list[str]:
    """The query's content words, in order, without duplicates or stopwords."""
    if len(text) > 2000:  # remembered for questions only, not for whatever text is passed
        return list(_terms_of(text, limit))
    return list(_query_terms(text, limit))


def _terms_of(text: str, limit: int) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for word in _TERM.findall(unicodedata.normalize("NFKC", text).casefold()):
        if word not in seen and word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen[word] = None
    return tuple(seen)[:limit]


_query_terms = lru_cache(maxsize=1024)(_terms_of)
"""A search asks once per question, the answer and the benchmarks' lists again."""


def fts_query(text: str) -> str | None:
    terms = query_terms(text)
    return _match(terms) if terms else None


def rrf(lists: list[tuple[list[str], float]]) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists, each with a weight."""
    scores: dict[str, float] = defaultdict(float)
    for ids, weight in lists:
        for rank, item in enumerate(ids):
            scores[item] += weight / (RRF_K + rank + 1)
    return scores


RRF_WEIGHTS = (("claims", 1.0), ("pages", 0.5), ("neighbours", 0.3))
"""The earlier fusion's weights (``fusion="rrf"``)."""

PAGE_BONUS = 0.1
"""What being on a page whose title or summary matches the question adds to a claim's BM25
score, as a share of the best claim's score: enough to order near-ties, never enough to put a
claim that matches the question's words much worse above the best match (issue 15)."""

NEIGHBOUR_BONUS = 0.05
"""The same for claims on pages linked to or from the best claims' pages."""


def fuse_lexical(
    by_text: list[tuple[str, float]],
    on_pages: list[tuple[str, float]],
    on_neighbours: list[tuple[str, float]],
) -> list[str]:
    """One lexical ranking from BM25 scores (higher is better; every list is the same query
    over the same corpus statistics, so scores compare): a claim's score, plus a small bonus for
    matching pages and their neighbours. Ties by claim id."""
    score: dict[str, float] = {}
    get = score.get
    for items in (by_text, on_pages, on_neighbours):
        for cid, value in items:
            old = get(cid, 0.0)
            score[cid] = value if value > old else old  # max(old, value), without the call
    if not score:
        return []
    top = max(score.values()) or 1.0
    fused = {cid: value / top for cid, value in score.items()}
    for bonus, items in ((PAGE_BONUS, on_pages), (NEIGHBOUR_BONUS, on_neighbours)):
        for cid in {c for c, _ in items}:
            fused[cid] += bonus
    ranked = sorted(fused)  # ties by claim id: a stable sort by score, descending, keeps them
    ranked.sort(key=fused.__getitem__, reverse=True)
    return ranked


class Lexical(Protocol):
    """A BM25 engine over active claims and pages; scores are higher-is-better."""

    def claims(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        limit: int,
        page: str | None = None,
        enough: int | None = None,
    ) -> list[tuple[str, float]]: ...

    def pages(self, terms: list[str], limit: int) -> list[tuple[str, float]]: ...


class Fts5:
    """SQLite FTS5: always in step with the database (its triggers run in the writing
    transaction), but it scores every matching row before sorting: the fallback engine."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def claims(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        limit: int,
        page: str | None = None,
        enough: int | None = None,
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        marks = ",".join("?" * len(tiers))
        on_page = "AND c.page_slug = ? " if page is not None else ""
        rows = self.db.execute(
            "SELECT c.id, bm25(claims_fts) FROM claims_fts JOIN claims c "
            "ON c.rowid = claims_fts.rowid WHERE claims_fts MATCH ? "
            f"{on_page}AND c.status = 'active' AND c.trust IN ({marks}) "
            "ORDER BY bm25(claims_fts), c.id LIMIT ?",
            [_match(terms), *([page] if page is not None else []), *tiers, limit],
        ).fetchall()
        return [(r[0], -float(r[1])) for r in rows]

    def pages(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        if not terms:
            return []
        rows = self.db.execute(
            "SELECT p.slug, bm25(pages_fts) FROM pages_fts JOIN pages p "
            "ON p.rowid = pages_fts.rowid WHERE pages_fts MATCH ? "
            "ORDER BY bm25(pages_fts), p.slug LIMIT ?",
            (_match(terms), limit),
        ).fetchall()
        return [(r[0], -float(r[1])) for r in rows]


def _match(terms: list[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


ENGINES = ("auto", "fts5")
FUSIONS = ("bm25", "lists", "rrf")


class Retriever:
    """Searches one vault's claims. ``vectors`` adds dense retrieval when available.

    ``engine="auto"`` uses the vault's tantivy index whenever it reflects exactly the snapshot
    being read (:mod:`affidavit.retrieval.tantivy_index`), FTS5 otherwise; ``"fts5"`` always
    FTS5. ``fusion="rrf"`` is the earlier reciprocal rank fusion of the lexical lists, and
    ``fusion="lists"`` the BM25 fusion of the lists with a call per page on tantivy too (what
    ``"bm25"`` did before it took a few calls, :meth:`_fused`), both kept for the benchmarks
    that measure the change.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        vectors: VectorSearch | None = None,
        *,
        engine: str = "auto",
        fusion: str = "bm25",
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
        if fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {fusion!r}; use one of {', '.join(FUSIONS)}")
        self.db = db
        self.vectors = vectors
        self.engine = engine
        self.fusion = fusion
        self.used = ""  # the engine the last search used: "tantivy" or "fts5"
        self._shared_rows = False  # whether this read may use the connection's row cache
        self._keys: dict[str, tuple[object, ...]] = {}  # claim id -> _fact, of the rows read

    def _lexical(self) -> Lexical:
        if self.engine == "auto":
            from .tantivy_index import ready_index

            index = ready_index(self.db)
            if index is not None:
                self.used = "tantivy"
                return index
        self.used = "fts5"
        return Fts5(self.db)

    def _neighbours(self, pages: list[str]) -> list[str]:
        if not pages:
            return []
        marks = ",".join("?" * len(pages))
        rows = self.db.execute(
            f"SELECT dst FROM links WHERE src IN ({marks}) UNION "
            f"SELECT src FROM links WHERE dst IN ({marks}) ORDER BY 1",
            [*pages, *pages],
        ).fetchall()
        return [r[0] for r in rows if r[0] not in pages]

    def search(self, query: str, *, k: int = 10, min_trust: str = "untrusted") -> list[Hit]:
        """The ``k`` best claims for ``query`` among active claims of tier ``min_trust`` or above."""
        tiers = allowed_tiers(min_trust)
        self._shared_rows = not self.db.in_transaction  # see _row_cache: never mid-write
        with read_snapshot(self.db):  # the index position and every row read agree
            return self._search(query, k, tiers)

    def hits(self, claim_ids: list[str], min_trust: str = "untrusted") -> list[Hit]:
        """The claims ``claim_ids`` as hits, in that order (score 0), only those active and of
        tier ``min_trust`` or above."""
        tiers = allowed_tiers(min_trust)
        self._shared_rows = not self.db.in_transaction
        return self._hits(claim_ids, dict.fromkeys(claim_ids, 0.0), tiers)

    def lexical_lists(
        self, query: str, *, k: int = 10, min_trust: str = "untrusted"
    ) -> dict[str, list[tuple[str, float]]]:
        """The lexical lists the ranking fuses, each ``(claim id, BM25 score)`` best first:
        ``claims`` (the question's words over all claims), ``pages`` (claims of the pages whose
        title or summary match) and ``neighbours`` (claims of pages linked to or from the best
        claims' pages). For the benchmarks that measure each list's contribution."""
        tiers = allowed_tiers(min_trust)
        with read_snapshot(self.db):
            return self._lists(query_terms(query), k, tiers)

    def _lists(
        self, terms: list[str], k: int, tiers: tuple[str, ...], engine: Lexical | None = None
    ) -> dict[str, list[tuple[str, float]]]:
        if not terms:
            return {"claims": [], "pages": [], "neighbours": []}
        engine = engine or self._lexical()
        by_text = engine.claims(terms, tiers, max(CANDIDATES, k), enough=k)
        pages = [slug for slug, _ in engine.pages(terms, 5)]
        on_pages = [hit for p in pages for hit in engine.claims(terms, tiers, 5, page=p)]
        best_pages = self._pages_of([cid for cid, _ in by_text[:5]]) or pages[:3]
        on_neighbours = [
            hit
            for p in self._neighbours(best_pages)
            for hit in engine.claims(terms, tiers, 3, page=p)
        ]
        return {"claims": by_text, "pages": on_pages, "neighbours": on_neighbours}

    def _fused(self, terms: list[str], k: int, tiers: tuple[str, ...], limit: int) -> list[str]:
        """The first ``limit`` claims of the lexical ranking of :func:`fuse_lexical`, in three
        or four engine calls when the engine is tantivy: the matching pages (one call); the
        first ``limit`` claims by BM25 alone (one call, two when fewer than ``k`` hold every
        word), which give the best score and the best claims' pages, whose link neighbours one
        SQL query reads; and one call over the claims of those pages with the page and
        neighbour bonuses as constant-score clauses, merged with the first claims
        (:meth:`SearchIndex.fused`, exact). The bonus goes to every matching claim of those
        pages, not only to each page's first five (three for a neighbour) as the lists had it.
        FTS5, ``fusion="lists"`` and ``fusion="rrf"`` use the lists."""
        engine = self._lexical()
        from .tantivy_index import SearchIndex

        if not isinstance(engine, SearchIndex) or self.fusion != "bm25":
            lists = self._lists(terms, k, tiers, engine)
            if self.fusion == "rrf":
                old = rrf([([c for c, _ in lists[n]], w) for n, w in RRF_WEIGHTS])
                return sorted(old, key=lambda cid: (-old[cid], cid))
            return fuse_lexical(lists["claims"], lists["pages"], lists["neighbours"])
        if not terms:
            return []
        pages = [slug for slug, _ in engine.pages(terms, 5)]
        plain = engine.opening(terms, tiers, k, max(limit, 5))
        top = plain[0][1] if plain else 1.0  # nothing matched: no claim of a page matches either
        best_pages = self._pages_of([cid for cid, _ in plain[:5]]) or pages[:3]
        neighbours = self._neighbours(best_pages)
        bonuses = [(pages, PAGE_BONUS * top), (neighbours, NEIGHBOUR_BONUS * top)]
        return [cid for cid, _ in engine.fused(terms, tiers, plain, bonuses, limit)]

    def _search(self, query: str, k: int, tiers: tuple[str, ...]) -> list[Hit]:
        limit = 2 * k if self.vectors is None else max(CANDIDATES, 2 * k)
        lexical = self._fused(query_terms(query), k, tiers, limit)
        if self.vectors is None:
            ranked = lexical
            scores = {cid: 1.0 / (RRF_K + n + 1) for n, cid in enumerate(ranked)}
        else:
            dense = [cid for cid, _ in self.vectors.search(self.db, query, max(CANDIDATES, k))]
            scores = rrf([(lexical, 1.0), (self._keep_allowed(dense, tiers), 1.0)])
            ranked = sorted(scores, key=lambda cid: (-scores[cid], cid))
        return self._best(ranked[: k * 2], scores, tiers, k)

    def _best(
        self, ranked: list[str], scores: dict[str, float], tiers: tuple[str, ...], k: int
    ) -> list[Hit]:
        """``_distinct(self._hits(ranked, …), k)``, reading the rows of the first ``k`` claims
        only whenever that settles it: when they give ``k`` distinct hits, none of them an entry of
        context.md, no later claim can change the answer (a later twin replaces only such an
        entry; anything else lands past ``k``). At a million claims the rows' reads were a third
        of a search; most answers need only half of them."""
        first = self._hits(ranked[:k], scores, tiers)
        kept = _distinct(first, k, self._keys)
        if len(kept) == k and all(hit.page for hit in kept):
            return kept
        return _distinct(first + self._hits(ranked[k:], scores, tiers), k, self._keys)

    def _pages_of(self, claim_ids: list[str]) -> list[str]:
        """The pages of ``claim_ids`` in their order, distinct, at most 3."""
        if not claim_ids:
            return []
        marks = ",".join("?" * len(claim_ids))
        page_of = dict(
            self.db.execute(
                f"SELECT id, page_slug FROM claims WHERE id IN ({marks})", claim_ids
            ).fetchall()
        )
        pages = [page_of[c] for c in claim_ids if page_of.get(c)]
        return list(dict.fromkeys(pages))[:3]

    def _keep_allowed(self, claim_ids: list[str], tiers: tuple[str, ...]) -> list[str]:
        marks = ",".join("?" * len(tiers))
        kept = []
        for cid in claim_ids:
            row = self.db.execute(
                f"SELECT 1 FROM claims c WHERE c.id = ? AND c.status = 'active' "
                f"AND c.trust IN ({marks})",
                [cid, *tiers],
            ).fetchone()
            if row:
                kept.append(cid)
        return kept

    def _hits(
        self, claim_ids: list[str], scores: dict[str, float], tiers: tuple[str, ...]
    ) -> list[Hit]:
        """The claims as hits, in the given order, keeping only those active and of an allowed
        tier (re-checked here: whatever an engine returned, only the database decides what may
        be shown). One query, whatever the number of claims: a claim's row once per quote, in
        the quotes' order (a claim without evidence, or whose evidence names no stored source,
        once, with no quote: the source's id is NULL there).

        The query reads the evidence's offsets (``evidence_rows``), not the ``evidence`` view:
        the view calls ``evidence_span`` from SQLite for every quote, which was most of a
        search's row read. Each quote is the same span, taken here from the texts the process
        already holds (:func:`~affidavit.evidence.spans.cached_span`, its CRC checked); only a
        text not held yet is asked of the connection's ``evidence_span``, which reads and
        verifies it."""
        if not claim_ids:
            return []
        rows = _row_cache(self.db) if self._shared_rows else {}
        missing = [cid for cid in claim_ids if cid not in rows]
        if missing:
            rows.update(self._rows(missing))
        hits = []
        for cid in claim_ids:
            got = rows.get(cid)
            if got is None:
                continue
            (page, text, trust, status, title, section), evidence, key = got
            if status != "active" or trust not in tiers:
                continue
            self._keys[cid] = key
            hits.append(
                Hit(
                    claim_id=cid,
                    page=page,
                    page_title=title,
                    text=text,
                    trust=trust,
                    score=round(scores[cid], 6),
                    evidence=evidence,
                    section=section or "",
                )
            )
        return hits

    def _rows(self, claim_ids: list[str]) -> dict[str, _Row]:
        """The rows of :meth:`_hits` for ``claim_ids`` (those found), in one query."""
        marks = ",".join("?" * len(claim_ids))
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples: a Row object per row was a tenth of the read
        try:
            found = cursor.execute(_HIT_ROWS.format(marks=marks), claim_ids).fetchall()
        except sqlite3.OperationalError as exc:  # a vault served unmigrated (W10): the view
            if "evidence_rows" not in str(exc):
                raise
            found = [
                (*row[:9], row[10], row[11], row[12], None, None, None, row[9])
                for row in cursor.execute(_VIEW_ROWS.format(marks=marks), claim_ids)
            ]
        rows: dict[str, tuple[Any, list[EvidenceRef]]] = {}
        for row in found:
            known = rows.get(row[0])
            if known is None:
                known = rows[row[0]] = (row[1:7], [])
            if row[7] is not None:
                known[1].append(EvidenceRef(row[7], row[8], self._quote(row), *row[9:12]))
        return {
            cid: (head, tuple(evidence), _fact(head[1], evidence))
            for cid, (head, evidence) in rows.items()
        }

    def _quote(self, row: tuple[Any, ...]) -> str:
        """The ``evidence`` view's ``quote`` of one row of :data:`_HIT_ROWS`: the span of the
        source's verified text at the offsets, or :data:`~affidavit.evidence.spans.UNREADABLE`."""
        if row[15] is not None:  # the view's own quote (an unmigrated vault)
            return str(row[15])
        text_file, sha, start, end, crc = row[12], row[13], row[10], row[11], row[14]
        if not isinstance(sha, str) or not isinstance(start, int) or not isinstance(end, int):
            span: object = None
        else:
            span = cached_span(sha, start, end, crc)
            if span is NOT_CACHED:
                span = self.db.execute(
                    "SELECT evidence_span(?, ?, ?, ?, ?)", (text_file, sha, start, end, crc)
                ).fetchone()[0]
        return span if isinstance(span, str) else UNREADABLE


_Row = tuple[tuple[str, str, str, str, str, str], tuple[EvidenceRef, ...], tuple[object, ...]]
"""A claim's row as :meth:`Retriever._hits` reads it: (page, text, trust, status, page title,
section), its evidence, and the fact it states for :func:`_distinct` (:func:`_fact`)."""

ROW_CACHE = 5_000
"""Claims whose rows a connection keeps between searches, at most (then it starts again)."""
ROW_CACHE_CONNECTIONS = 4
"""Connections whose rows are kept, the most recently searched: with :data:`ROW_CACHE`, at most
20,000 claims' rows in a process (a few tens of MB at worst), whatever the wiki's size."""

_ROW_CACHES: OrderedDict[
    int, tuple[sqlite3.Connection, SearchVersion, Version, dict[str, _Row]]
] = OrderedDict()
_ROW_LOCK = threading.Lock()


def _row_cache(db: sqlite3.Connection) -> dict[str, _Row]:
    """The claims' rows ``db`` has read, valid while what a search reads is unchanged: kept
    under :class:`~.search_version.SearchVersion` (a token every write to claims, pages,
    evidence or sources moves, and no other write: the daemon's answer log leaves the rows
    kept; every commit, where the database lacks that token), read in the caller's snapshot;
    any change starts afresh. The same claims come back search after search (a daemon's, an
    answer's several): their rows and quotes are read once per version, not once per search.
    Kept for the last few connections searched.

    Only a read outside any transaction of the caller's uses it (:meth:`Retriever.search`
    opens its own snapshot): inside a transaction that wrote, the rows are not yet the
    database's."""
    with _ROW_LOCK:
        known = _ROW_CACHES.get(id(db))
    reader = known[1] if known is not None and known[0] is db else SearchVersion()
    version = reader(db)  # outside the lock: SQL on this connection only
    with _ROW_LOCK:
        known = _ROW_CACHES.get(id(db))
        if known is not None and known[0] is db and known[2] == version:
            rows = known[3]
            if len(rows) <= ROW_CACHE:
                _ROW_CACHES.move_to_end(id(db))
                return rows
        rows = {}
        _ROW_CACHES[id(db)] = (db, reader, version, rows)
        _ROW_CACHES.move_to_end(id(db))
        while len(_ROW_CACHES) > ROW_CACHE_CONNECTIONS:
            _ROW_CACHES.popitem(last=False)
        return rows


_HIT_ROWS = (
    "SELECT c.id, c.page_slug, c.text, c.trust, c.status, coalesce(p.title, 'Context'), "
    'c.section, s.id, s.name, r.location, r.start, r."end", s.text_file, '
    "s.text_sha256, r.crc, NULL FROM claims c LEFT JOIN pages p ON p.slug = c.page_slug "
    "LEFT JOIN evidence_rows r ON r.claim_id = c.id "
    "LEFT JOIN source_keys k ON k.key = r.source_key LEFT JOIN sources s ON s.id = k.source_id "
    "WHERE c.id IN ({marks}) ORDER BY c.id, r.idx"
)
"""A hit's rows: the claim, its page's title, and per quote its source and offsets (the
``evidence`` view's columns, its quote left to :meth:`Retriever._quote`). A source key whose
source is gone gives a NULL source id, as the view's join did."""

_VIEW_ROWS = (
    "SELECT c.id, c.page_slug, c.text, c.trust, c.status, coalesce(p.title, 'Context'), "
    'c.section, s.id, s.name, e.quote, e.location, e.start, e."end" FROM claims c '
    "LEFT JOIN pages p ON p.slug = c.page_slug "
    "LEFT JOIN evidence e ON e.claim_id = c.id LEFT JOIN sources s ON s.id = e.source_id "
    "WHERE c.id IN ({marks}) ORDER BY c.id, e.idx"
)
"""The same through the ``evidence`` view (a database before migration ``m021``)."""


MAX_QUOTES = 5
"""A claim's evidence limit (SPEC §2): a merged claim shows this many quotes, the rest counted."""


@lru_cache(maxsize=16384)
def same_text(text: str) -> str:
    """The key under which two claims say the same sentence: case and spacing folded
    (remembered: an answer asks it of every hit and follower, question after question)."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def merge_identical(hits: list[Hit]) -> list[Hit]:
    """One hit per sentence: claims with the same text (a sentence several sources state, such
    as a manual's boilerplate on every page) become the best-ranked one, with the quotes of each
    source (up to :data:`MAX_QUOTES`, one per source first) and the others counted. The answer
    then cites one claim, not twenty (issue 24: one answer sentence cited 16 claims, over the
    limit of 8, and the CLI crashed)."""
    merged: list[Hit] = []
    where: dict[str, int] = {}
    for hit in hits:
        key = same_text(hit.text)
        if key not in where:
            where[key] = len(merged)
            merged.append(hit)
            continue
        index = where[key]
        first = merged[index]
        if not first.page and hit.page:  # show it as the page claim, which says where it is
            first, hit = replace(hit, same=first.same, more_sources=first.more_sources), first
        merged[index] = _absorb(first, hit)
    return merged


def _absorb(keep: Hit, other: Hit) -> Hit:
    """``keep`` with ``other``'s quotes from sources it doesn't quote yet, within the limit."""
    quoted = {e.source_id for e in keep.evidence}
    spans = {(e.source_id, e.start, e.end) for e in keep.evidence}
    new = [e for e in other.evidence if e.source_id not in quoted]
    room = MAX_QUOTES - len(keep.evidence)
    shown = new[: max(0, room)]
    extra = len({e.source_id for e in new[len(shown) :]} - {e.source_id for e in shown})
    if not new and all((e.source_id, e.start, e.end) in spans for e in other.evidence):
        extra = 0  # the same quotes: a page claim and its context.md entry
    return replace(
        keep,
        evidence=keep.evidence + tuple(shown),
        same=(*keep.same, other.claim_id, *other.same),
        more_sources=keep.more_sources + extra + other.more_sources,
    )


def _fact(text: str, evidence: Iterable[EvidenceRef]) -> tuple[object, ...]:
    """What :func:`_distinct` compares: the text, spacing and case folded, and the quoted spans."""
    spans = tuple(sorted((e.source_id, e.start, e.end) for e in evidence))
    return (" ".join(text.split()).casefold(), spans)


def _distinct(
    hits: list[Hit], k: int, facts: Mapping[str, tuple[object, ...]] | None = None
) -> list[Hit]:
    """The first ``k`` hits that say something different: a claim with the same text and the
    same quoted spans as a better-ranked one (a page claim and its context.md entry) is the same
    fact, shown once — as the page claim, which says where it belongs. ``facts`` holds the
    claims' :func:`_fact` already worked out (with their rows), by claim id."""
    kept: list[Hit] = []
    where: dict[tuple[object, ...], int] = {}
    known = facts or {}
    for hit in hits:
        key = known.get(hit.claim_id) or _fact(hit.text, hit.evidence)
        if key in where:
            index = where[key]
            if not kept[index].page and hit.page:
                kept[index] = hit  # keep the twin's rank, show it as the page claim
            continue
        where[key] = len(kept)
        kept.append(hit)
    return kept[:k]
