"""Full-text search over a PostgreSQL vault's claims: the fallback engine there, as FTS5 is on
SQLite (issue 26 item 5; the tantivy index kept on each node is the fast path on both).

``pg005_full_text`` gives ``claims`` and ``pages`` a stored generated ``tsv`` column
(``to_tsvector('english', …)``: Snowball's English stemmer, as FTS5's ``porter`` tokenizer stems)
with a GIN index on each; the column is computed in the writing transaction, so, like FTS5's
triggers, the index is always in step with the door. :class:`PgFullText` answers the same calls
as :class:`affidavit.retrieval.search.Fts5` — ``claims`` and ``pages`` as ``(id, score)`` best
first, higher is better — and :meth:`PgFullText.search` returns the same
:class:`~affidavit.retrieval.search.Hit` records as ``Retriever.search``, fused the same way
(:func:`~affidavit.retrieval.search.fuse_lexical`; there are no links on PostgreSQL yet, so no
neighbour list).

The query's terms (:func:`~affidavit.retrieval.search.query_terms`) are OR-ed, as FTS5's are:
each is its own bound parameter of its own ``plainto_tsquery`` — which reads its argument as
plain words, never as tsquery syntax (``&``, ``|``, ``!``, ``:*``, ``<->``, quotes) — and the
parts are joined with tsquery's ``||``; the SQL text depends only on the number of terms. Once
per search each term's tsquery (as ``plainto_tsquery`` writes it) and its inverse document
frequency over the claims are read (a count through the GIN index); a claim's score is then
``Σ idf(term) · ts_rank(tsv, term, 0)`` — PostgreSQL has no BM25, and ``ts_rank`` alone weighs
every word the same, so a word in half the claims counted as much as a rare name (docs/benchmarks.md, pgmirror, for
what this changed and how it was chosen).
"""

from __future__ import annotations

import math
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from ..retrieval.search import (
    CANDIDATES,
    EvidenceRef,
    Hit,
    allowed_tiers,
    fuse_lexical,
    query_terms,
)
from .base import check_text, check_vault_name
from .postgres import Conn, PostgresStorage

NORMALISATION = sql.Literal(0)
"""``ts_rank``'s normalisation: 0, none (1, dividing by 1 + log of the claim's length, ranked
worse on the tuning questions: docs/benchmarks.md, pgmirror)."""
MAX_TERMS = 32
"""Terms of one query (query_terms' limit): the SQL has one placeholder per term."""


def _tsquery(terms: list[str]) -> tuple[sql.Composable, list[str]]:
    """``plainto_tsquery('english', %s) || …`` for the terms, and the terms as its parameters."""
    kept = [check_text("search term", t) for t in terms[:MAX_TERMS]]
    part = sql.SQL("plainto_tsquery('english'::regconfig, %s)")
    return sql.SQL(" || ").join([part] * len(kept)), kept


class _On:
    """The queries, on one connection."""

    def __init__(self, conn: Conn, schema: sql.Identifier) -> None:
        self.conn = conn
        self.schema = schema
        self._prepared_for: dict[tuple[str, ...], tuple[list[float], list[str], str]] = {}

    def _rows(self, query: sql.Composed, params: list[Any]) -> list[tuple[Any, ...]]:
        return self.conn.cursor(row_factory=tuple_row).execute(query, params).fetchall()

    def claims(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        limit: int,
        page: str | None = None,
    ) -> list[tuple[str, float]]:
        """Active claims of ``tiers`` (on ``page`` when given) matching any of ``terms``, best
        first (ties by id)."""
        if not terms:
            return []
        weights, parts, whole = self._prepared(terms)
        if not parts:
            return []
        score = sql.SQL(" + ").join(
            [sql.SQL("%s * ts_rank(c.tsv, %s::tsquery, {n})").format(n=NORMALISATION)] * len(parts)
        )
        on_page = sql.SQL("AND c.page_slug = %s ") if page is not None else sql.SQL("")
        query = sql.SQL(
            "SELECT c.id, {score} AS score FROM {s}.claims c WHERE c.tsv @@ %s::tsquery "
            "{on_page}AND c.status = 'active' AND c.trust = ANY(%s) "
            "ORDER BY score DESC, c.id LIMIT %s"
        ).format(s=self.schema, score=score, on_page=on_page)
        weighted = [value for pair in zip(weights, parts, strict=True) for value in pair]
        extra: list[Any] = [check_text("page", page)] if page is not None else []
        rows = self._rows(query, [*weighted, whole, *extra, list(tiers), int(limit)])
        return [(str(r[0]), float(r[1])) for r in rows]

    def _prepared(self, terms: list[str]) -> tuple[list[float], list[str], str]:
        """Once per search: each term's tsquery as PostgreSQL's ``plainto_tsquery`` writes it
        (terms that are only stopwords left out), its inverse document frequency over the claims
        (BM25's: a rare word weighs more; counted through the GIN index), and the terms' OR. The
        claim queries then bind these tsqueries as constants: parsed once, not once per row."""
        key = tuple(terms)
        if key not in self._prepared_for:
            tsquery, params = _tsquery(terms)
            each = "plainto_tsquery('english'::regconfig, %s)"
            count = f"(SELECT count(*) FROM {{s}}.claims WHERE tsv @@ {each})"
            query = sql.SQL(
                "SELECT (SELECT count(*) FROM {s}.claims), ({tsquery})::text, "
                + ", ".join([f"{each}::text, {count}"] * len(params))
            ).format(s=self.schema, tsquery=tsquery)
            row = self._rows(query, [*params, *[t for t in params for _ in (0, 1)]])[0]
            total, whole, rest = int(row[0]), str(row[1]), row[2:]
            weights, parts = [], []
            for text, n in zip(rest[::2], rest[1::2], strict=True):
                if text:  # a stopword's tsquery is empty: it matches nothing
                    parts.append(str(text))
                    weights.append(math.log(1 + (total - int(n) + 0.5) / (int(n) + 0.5)))
            self._prepared_for[key] = (weights, parts, whole)
        return self._prepared_for[key]

    def pages(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Pages whose title or summary match any of ``terms``, best first (ties by slug)."""
        if not terms:
            return []
        tsquery, params = _tsquery(terms)
        query = sql.SQL(
            "SELECT p.slug, ts_rank(p.tsv, q.q, 1) AS score FROM {s}.pages p, "
            "(SELECT {tsquery} AS q) q WHERE p.tsv @@ q.q ORDER BY score DESC, p.slug LIMIT %s"
        ).format(s=self.schema, tsquery=tsquery)
        return [(str(r[0]), float(r[1])) for r in self._rows(query, [*params, int(limit)])]

    def search(self, terms: list[str], k: int, tiers: tuple[str, ...]) -> list[Hit]:
        by_text = self.claims(terms, tiers, max(CANDIDATES, k))
        pages = [slug for slug, _ in self.pages(terms, 5)]
        on_pages = [hit for p in pages for hit in self.claims(terms, tiers, 5, page=p)]
        ranked = fuse_lexical(by_text, on_pages, [])[: 2 * k]
        scores = {cid: 1.0 / (60 + n + 1) for n, cid in enumerate(ranked)}
        return self.hits(ranked, scores, tiers)[:k]

    def hits(
        self, claim_ids: list[str], scores: dict[str, float], tiers: tuple[str, ...]
    ) -> list[Hit]:
        """The claims as hits, in the given order, only those active and of ``tiers`` (re-checked
        here, whatever ranked them), each with its quotes in order."""
        if not claim_ids:
            return []
        query = sql.SQL(
            "SELECT c.id, c.page_slug, c.text, c.trust, c.status, coalesce(p.title, 'Context'), "
            'c.section, s.id, s.name, e.quote, e.location, e.start, e."end" FROM {s}.claims c '
            "LEFT JOIN {s}.pages p ON p.slug = c.page_slug "
            "LEFT JOIN {s}.evidence e ON e.claim_id = c.id "
            "LEFT JOIN {s}.sources s ON s.id = e.source_id "
            "WHERE c.id = ANY(%s) ORDER BY c.id, e.idx"
        ).format(s=self.schema)
        found: dict[str, tuple[tuple[Any, ...], list[EvidenceRef]]] = {}
        for row in self._rows(query, [list(claim_ids)]):
            known = found.setdefault(str(row[0]), (row[1:7], []))
            if row[7] is not None:
                known[1].append(EvidenceRef(*row[7:]))
        out = []
        for cid in claim_ids:
            if cid not in found:
                continue
            (page, text, trust, status, title, section), evidence = found[cid]
            if status != "active" or trust not in tiers:
                continue
            out.append(
                Hit(
                    claim_id=cid, page=page, page_title=title, text=text, trust=trust,
                    score=round(scores.get(cid, 0.0), 6), evidence=tuple(evidence),
                    section=section or "",
                )
            )  # fmt: skip
        return out


class PgFullText:
    """Full-text search over one PostgreSQL vault's active claims and its pages (thread-safe:
    each call takes its own connection from the pool)."""

    def __init__(self, storage: PostgresStorage, vault: str) -> None:
        self.storage = storage
        self.schema = sql.Identifier(f"v_{check_vault_name(vault)}")

    def claims(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        limit: int,
        page: str | None = None,
        enough: int | None = None,
    ) -> list[tuple[str, float]]:
        """Active claims of ``tiers`` (on ``page`` when given) matching any of ``terms``, best
        first (ties by id). ``enough`` is the Lexical protocol's hint; every match is scored."""
        with self.storage.pool.connection() as conn:
            return _On(conn, self.schema).claims(terms, tiers, limit, page)

    def pages(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Pages whose title or summary match any of ``terms``, best first (ties by slug)."""
        with self.storage.pool.connection() as conn:
            return _On(conn, self.schema).pages(terms, limit)

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        min_trust: str = "untrusted",
        conn: Conn | None = None,
    ) -> list[Hit]:
        """The ``k`` best active claims of tier ``min_trust`` or above for ``query``: the claims
        matching its words, with a bonus for those on the pages whose title or summary match
        (the ranking of ``Retriever.search`` on FTS5, without link neighbours). On ``conn``
        when given (the caller's, outside any transaction), else on a pooled connection."""
        tiers = allowed_tiers(min_trust)
        terms = query_terms(query)
        if not terms:
            return []
        if conn is None:
            with self.storage.pool.connection() as pooled:
                return self._search(pooled, terms, k, tiers)
        return self._search(conn, terms, k, tiers)

    def _search(self, conn: Conn, terms: list[str], k: int, tiers: tuple[str, ...]) -> list[Hit]:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            return _On(conn, self.schema).search(terms, k, tiers)  # one snapshot, one connection

    def hits(
        self, claim_ids: list[str], min_trust: str = "untrusted", conn: Conn | None = None
    ) -> list[Hit]:
        """The claims ``claim_ids`` as hits, in that order (score 0), only those active and of
        tier ``min_trust`` or above (``Retriever.hits`` on SQLite); on ``conn`` when given."""
        tiers = allowed_tiers(min_trust)
        if not claim_ids:
            return []
        if conn is None:
            with self.storage.pool.connection() as pooled:
                return _On(pooled, self.schema).hits(list(claim_ids), {}, tiers)
        return _On(conn, self.schema).hits(list(claim_ids), {}, tiers)
