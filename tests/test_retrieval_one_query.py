"""The search's lexical ranking in a few tantivy calls (issue 25 item 4): BM25 plus the page and
neighbour bonuses, computed exactly as a brute force over every candidate claim computes it,
and no call per page or neighbour."""

from __future__ import annotations

import random
from typing import Any

import pytest

from affidavit.db import read_snapshot
from affidavit.inbox import approve, propose
from affidavit.retrieval import tantivy_index
from affidavit.retrieval.search import (
    NEIGHBOUR_BONUS,
    PAGE_BONUS,
    Retriever,
    allowed_tiers,
    query_terms,
)
from affidavit.retrieval.tantivy_index import SearchIndex, ready_index, wait_for_refresh
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

WORDS = ["harbour", "lights", "keeper", "storm", "granite", "tower", "lamp", "fog", "bell"]
PAGES = ["harbour", "lights", "keeper", "storm", "granite", "tower"]
QUESTIONS = [
    "harbour lights",
    "Who kept the lamp in the fog?",
    "storm granite tower bell",
    "lights",
    "keeper of the harbour lamp",
    "fog bell storm",
]


def build(vault: Vault) -> None:
    """Six pages of twelve claims each over a small vocabulary (so pages hold many matching
    claims, more than the five a page list used to take), linked in a ring and across."""
    rng = random.Random(7)
    sentences = []
    for n in range(72):
        a, b, c, d = rng.sample(WORDS, 4)
        sentences.append(f"The {a} {b} and the {c} stood near the {d} in year {1800 + n}")
    source = add_text(vault, "harbour.md", "".join(s + ".\n" for s in sentences), "trusted")
    ops: list[dict[str, Any]] = []
    for i, slug in enumerate(PAGES):
        ops.append(
            {
                "op": "create_page",
                "slug": slug,
                "title": f"The {slug}",
                "summary": f"About the {slug} and the {PAGES[(i + 1) % len(PAGES)]}",
                "claims": [claim(s + ".", source, s) for s in sentences[12 * i : 12 * i + 12]],
            }
        )
    for i, slug in enumerate(PAGES):
        ops.append({"op": "link_pages", "page": slug, "to": PAGES[(i + 1) % len(PAGES)]})
    ops.append({"op": "link_pages", "page": "harbour", "to": "granite"})
    result = approve(vault, propose(vault, make_plan(vault, *ops), "t", "t").plan_id, None, "t")
    assert len(result.claims) == 72
    assert wait_for_refresh(60)


def brute_force(
    vault: Vault, index: SearchIndex, question: str, k: int, limit: int
) -> list[tuple[str, float]]:
    """The ranking over every candidate claim, scored one by one: BM25 from a search that
    returns every matching claim, the bonuses by the claim's page."""
    retriever = Retriever(vault.db)
    tiers = allowed_tiers("untrusted")
    terms = query_terms(question)
    pages = [slug for slug, _ in index.pages(terms, 5)]
    plain = index.opening(terms, tiers, k, limit)
    top = plain[0][1] if plain else 1.0
    neighbours = retriever._neighbours(retriever._pages_of([c for c, _ in plain[:5]]) or pages[:3])
    tokens = tantivy_index._terms(terms)
    anyof = dict(index._search(index._text_query(("text",), tokens), 10_000))
    every = dict(index._search(index._text_query(("text",), tokens, all_terms=True), 10_000))
    conjunction = len(tokens) > 1 and len(every) >= k
    page_of = dict(vault.db.execute("SELECT id, page_slug FROM claims").fetchall())
    scored = []
    for cid, score in anyof.items():
        page = page_of[cid]
        on_bonus_page = page in pages or page in neighbours
        if conjunction and cid not in every and not on_bonus_page:
            continue
        bonus = PAGE_BONUS * top * (page in pages) + NEIGHBOUR_BONUS * top * (page in neighbours)
        scored.append((cid, score + bonus))
    return sorted(scored, key=lambda item: (-round(item[1], 3), item[0]))[:limit]


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_the_one_call_ranking_is_the_brute_force_ranking(vault: Vault, k: int) -> None:
    build(vault)
    retriever = Retriever(vault.db)
    tiers = allowed_tiers("untrusted")
    for question in QUESTIONS:
        with read_snapshot(vault.db):
            index = ready_index(vault.db)
            assert index is not None
            got = index.fused(
                query_terms(question),
                tiers,
                index.opening(query_terms(question), tiers, k, 2 * k),
                _bonuses(retriever, index, question, k),
                2 * k,
            )
            want = brute_force(vault, index, question, k, 2 * k)
        got = sorted(got, key=lambda item: (-round(item[1], 3), item[0]))
        assert [round(s, 3) for _, s in got] == [round(s, 3) for _, s in want], (question, k)
        # the same claims, in the same order; among claims tied at the cutoff tantivy keeps
        # those first in the index (as every top-k of it does), the brute force the first ids
        cutoff = round(want[-1][1], 3) if want else 0.0
        above = [c for c, s in want if round(s, 3) > cutoff]
        assert [c for c, s in got if round(s, 3) > cutoff] == above, (question, k)


def _bonuses(
    retriever: Retriever, index: SearchIndex, question: str, k: int
) -> list[tuple[list[str], float]]:
    terms = query_terms(question)
    pages = [slug for slug, _ in index.pages(terms, 5)]
    plain = index.opening(terms, allowed_tiers("untrusted"), k, 2 * k)
    top = plain[0][1] if plain else 1.0
    neighbours = retriever._neighbours(retriever._pages_of([c for c, _ in plain[:5]]) or pages[:3])
    return [(pages, PAGE_BONUS * top), (neighbours, NEIGHBOUR_BONUS * top)]


def test_a_search_makes_a_few_engine_calls_not_one_per_page(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages and neighbours used to cost one tantivy call each (~30 a question on a real
    wiki); now: the pages, the first claims (twice when too few hold every word), the bonus
    pages' claims — and the hits' rows in one SQL query."""
    build(vault)
    calls: list[int] = []
    real = SearchIndex._search

    def counted(self: SearchIndex, query: Any, limit: int) -> list[tuple[str, float]]:
        calls.append(limit)
        return real(self, query, limit)

    monkeypatch.setattr(SearchIndex, "_search", counted)
    retriever = Retriever(vault.db)
    statements: list[str] = []
    vault.db.set_trace_callback(statements.append)
    for question in QUESTIONS:
        calls.clear()
        statements.clear()
        hits = retriever.search(question, k=5)
        assert retriever.used == "tantivy" and hits
        assert len(calls) <= 4, (question, calls)
        rows = [s for s in statements if "FROM claims c" in s and "evidence" in s]
        assert len(rows) <= 2  # the first k hits' rows, and the next k only when needed
    vault.db.set_trace_callback(None)


def test_every_matching_claim_of_a_matching_page_gets_the_page_bonus(vault: Vault) -> None:
    """The documented change of ranking: the lists gave the bonus to a page's first five
    matching claims only; the one query gives it to every matching claim of the page."""
    build(vault)
    retriever = Retriever(vault.db)
    with read_snapshot(vault.db):
        index = ready_index(vault.db)
        assert index is not None
        terms = query_terms("harbour")
        assert "harbour" in [slug for slug, _ in index.pages(terms, 5)]
        on_page = vault.db.execute(
            "SELECT count(*) FROM claims WHERE page_slug = 'harbour' AND text LIKE '%harbour%'"
        ).fetchone()[0]
        assert on_page > 5
        old = retriever._lists(terms, 10, allowed_tiers("untrusted"))
        page_of = dict(vault.db.execute("SELECT id, page_slug FROM claims").fetchall())
        assert [page_of[c] for c, _ in old["pages"]].count("harbour") == 5
        tiers = allowed_tiers("untrusted")
        plain = index.opening(terms, tiers, 10, 100)
        bm25 = dict(plain)
        fused = index.fused(terms, tiers, plain, _bonuses(retriever, index, "harbour", 10), 100)
        top = plain[0][1]
    with_bonus = [
        c
        for c, score in fused
        if page_of[c] == "harbour" and score - bm25[c] >= PAGE_BONUS * top - 1e-4
    ]
    assert len(with_bonus) == on_page  # all nine, where the page list had five
