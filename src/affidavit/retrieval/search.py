"""Question-specific retrieval over active claims at or above a trust tier (SPEC W7, W8).

Ranked lists are fused with reciprocal rank fusion (RRF):

- claims whose text matches the query's words (SQLite FTS5, BM25);
- claims of the pages whose title or summary match (FTS5 over pages);
- claims nearest to the query in embedding space, when the ``[embeddings]`` extra is installed
  and the vectors' lineage matches (:mod:`affidavit.retrieval.vectors`);
- link neighbours: matching claims of pages linked to or from the best pages.

Never the whole wiki: each list is bounded, and the caller packs the result into a token budget.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Protocol

from ..config import TRUST_TIERS
from ..words import STOPWORDS

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


class VectorSearch(Protocol):
    """What retrieval needs from the dense index (``None`` when the extra is missing)."""

    def search(self, db: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]: ...


def allowed_tiers(min_trust: str) -> tuple[str, ...]:
    if min_trust not in TRUST_TIERS:
        raise ValueError(f"unknown trust tier {min_trust!r}; use one of {', '.join(TRUST_TIERS)}")
    return TRUST_TIERS[TRUST_TIERS.index(min_trust) :]


def query_terms(text: str, limit: int = 32) -> list[str]:
    """The query's content words, in order, without duplicates or stopwords."""
    seen: list[str] = []
    for word in _TERM.findall(unicodedata.normalize("NFKC", text).casefold()):
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()) and word not in seen:
            seen.append(word)
    return seen[:limit]


def fts_query(text: str) -> str | None:
    terms = query_terms(text)
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def rrf(lists: list[tuple[list[str], float]]) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists, each with a weight."""
    scores: dict[str, float] = defaultdict(float)
    for ids, weight in lists:
        for rank, item in enumerate(ids):
            scores[item] += weight / (RRF_K + rank + 1)
    return scores


class Retriever:
    """Searches one vault's claims. ``vectors`` adds dense retrieval when available."""

    def __init__(self, db: sqlite3.Connection, vectors: VectorSearch | None = None) -> None:
        self.db = db
        self.vectors = vectors

    def _filter(self, tiers: tuple[str, ...]) -> tuple[str, list[Any]]:
        marks = ",".join("?" * len(tiers))
        return f"c.status = 'active' AND c.trust IN ({marks})", list(tiers)

    def _claims_by_text(self, match: str, tiers: tuple[str, ...], limit: int) -> list[str]:
        where, args = self._filter(tiers)
        rows = self.db.execute(
            "SELECT c.id FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid "
            f"WHERE claims_fts MATCH ? AND {where} ORDER BY bm25(claims_fts), c.id LIMIT ?",
            [match, *args, limit],
        ).fetchall()
        return [r[0] for r in rows]

    def _pages(self, match: str) -> list[str]:
        rows = self.db.execute(
            "SELECT p.slug FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid "
            "WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts), p.slug LIMIT 5",
            (match,),
        ).fetchall()
        return [r[0] for r in rows]

    def _claims_on(
        self, pages: list[str], match: str, tiers: tuple[str, ...], per_page: int
    ) -> list[str]:
        where, args = self._filter(tiers)
        out: list[str] = []
        for page in pages:
            rows = self.db.execute(
                "SELECT c.id FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid "
                f"WHERE claims_fts MATCH ? AND c.page_slug = ? AND {where} "
                "ORDER BY bm25(claims_fts), c.id LIMIT ?",
                [match, page, *args, per_page],
            ).fetchall()
            out += [r[0] for r in rows]
        return out

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
        match = fts_query(query)
        lists: list[tuple[list[str], float]] = []
        if match:
            by_text = self._claims_by_text(match, tiers, max(CANDIDATES, k))
            lists.append((by_text, 1.0))
            pages = self._pages(match)
            lists.append((self._claims_on(pages, match, tiers, 5), 0.5))
            best_pages = self._pages_of(by_text[:5]) or pages[:3]
            lists.append((self._claims_on(self._neighbours(best_pages), match, tiers, 3), 0.3))
        if self.vectors is not None:
            dense = [cid for cid, _ in self.vectors.search(self.db, query, max(CANDIDATES, k))]
            lists.append((self._keep_allowed(dense, tiers), 1.0))
        scores = rrf(lists)
        ranked = sorted(scores, key=lambda cid: (-scores[cid], cid))
        return _distinct([self._hit(cid, scores[cid]) for cid in ranked[: k * 2]], k)

    def _pages_of(self, claim_ids: list[str]) -> list[str]:
        pages: list[str] = []
        for cid in claim_ids:
            row = self.db.execute("SELECT page_slug FROM claims WHERE id = ?", (cid,)).fetchone()
            if row and row[0] and row[0] not in pages:
                pages.append(row[0])
        return pages[:3]

    def _keep_allowed(self, claim_ids: list[str], tiers: tuple[str, ...]) -> list[str]:
        where, args = self._filter(tiers)
        kept = []
        for cid in claim_ids:
            row = self.db.execute(
                f"SELECT 1 FROM claims c WHERE c.id = ? AND {where}", [cid, *args]
            ).fetchone()
            if row:
                kept.append(cid)
        return kept

    def _hit(self, claim_id: str, score: float) -> Hit:
        row = self.db.execute(
            "SELECT c.id, c.page_slug, c.text, c.trust, coalesce(p.title, 'Context') AS title "
            "FROM claims c LEFT JOIN pages p ON p.slug = c.page_slug WHERE c.id = ?",
            (claim_id,),
        ).fetchone()
        evidence = self.db.execute(
            'SELECT e.source_id, s.name, e.quote, e.location, e.start, e."end" '
            "FROM evidence e JOIN sources s ON s.id = e.source_id "
            "WHERE e.claim_id = ? ORDER BY e.idx",
            (claim_id,),
        ).fetchall()
        return Hit(
            claim_id=row["id"],
            page=row["page_slug"],
            page_title=row["title"],
            text=row["text"],
            trust=row["trust"],
            score=round(score, 6),
            evidence=tuple(EvidenceRef(*e) for e in evidence),
        )


def _distinct(hits: list[Hit], k: int) -> list[Hit]:
    """The first ``k`` hits that say something different: a claim with the same text and the
    same quoted spans as a better-ranked one (a page claim and its context.md entry) is the same
    fact, shown once — as the page claim, which says where it belongs."""
    kept: list[Hit] = []
    where: dict[tuple[object, ...], int] = {}
    for hit in hits:
        key = (
            " ".join(hit.text.split()).casefold(),
            tuple(sorted((e.source_id, e.start, e.end) for e in hit.evidence)),
        )
        if key in where:
            index = where[key]
            if not kept[index].page and hit.page:
                kept[index] = hit  # keep the twin's rank, show it as the page claim
            continue
        where[key] = len(kept)
        kept.append(hit)
    return kept[:k]
