"""The extractive finder's pair search gives what the pair-by-pair search gave.

:func:`related_pairs` pairs only the claims of related pages in each bucket, and
:func:`~affidavit.lint.reading.read_claim` reads each piece of text once: both are compared with
the code they replace (every pair of every bucket, filtered by :meth:`Subjects.related`;
:func:`affidavit.support.facts.analyse` and :func:`~affidavit.support.facts.compare`) over random wikis and real
sentences.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations

import pytest

from affidavit.lint.candidates import (
    MAX_BUCKET,
    RARE_WORDS,
    ClaimRow,
    Subjects,
    candidate_pairs,
    related_pairs,
)
from affidavit.lint.reading import read_claim, sentence
from affidavit.support.facts import analyse, compare, compare_analysed
from affidavit.words import stems

from .conftest import SHARED_DATA, needs_shared_data

WORDS = [
    "bridge", "river", "tax", "tariff", "army", "navy", "treaty", "Congress", "Spain", "France",
    "Indian", "not", "never", "don't", "1812", "1,200", "3.50", "two", "May", "first", "the",
    "of", "and", "A", "X", "Mr", "peace", "war", "trade", "canal", "bank", "gold", "silver",
    "St", "ship", "mail", "court", "land", "Ohio", "Texas", "coal", "wheat", "debt", "loan",
]  # fmt: skip
TITLE_WORDS = ["State", "Union", "1790", "1791", "George", "Washington", "Adams", "war", "bank",
               "Texas", "annexation", "of", "the", "Spain", "treaty", "gold"]  # fmt: skip


def _old_pairs(claims: list[ClaimRow]) -> Iterator[tuple[ClaimRow, ClaimRow]]:
    """candidate_pairs as it was: analyse's words, every pair of every bucket, each once."""
    words = {c.id: analyse(c.text).facts | analyse(c.text).context for c in claims}
    df: dict[str, int] = defaultdict(int)
    for ws in words.values():
        for w in ws:
            df[w] += 1
    buckets: dict[str, list[int]] = defaultdict(list)
    for index, claim in enumerate(claims):
        shared = [w for w in words[claim.id] if 1 < df[w] <= MAX_BUCKET]
        shared.sort(key=lambda w: (df[w], w))
        for w in shared[:RARE_WORDS]:
            buckets[w].append(index)
    seen: set[tuple[int, int]] = set()
    for members in buckets.values():
        for i, j in combinations(members, 2):
            if (i, j) not in seen:
                seen.add((i, j))
                yield claims[i], claims[j]


def _wiki(rnd: random.Random) -> tuple[list[ClaimRow], Subjects]:
    pages = [f"p{n}" for n in range(rnd.randint(1, 25))] + ["", "archive"]
    titles = {}
    for slug in pages[:-2]:
        if rnd.random() < 0.9:  # some claims' pages have no row in pages
            title = " ".join(rnd.choice(TITLE_WORDS) for _ in range(rnd.randint(0, 6)))
            titles[slug] = (frozenset(stems(title)), title)
    links = frozenset(
        (rnd.choice(pages), rnd.choice(pages)) for _ in range(rnd.randint(0, len(pages)))
    )
    claims = []
    for n in range(rnd.randint(0, 300)):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 12)))
        page = rnd.choice(pages) if rnd.random() < 0.7 else pages[n % len(pages)]
        claims.append(ClaimRow(f"c-{n:04d}", page, text, "trusted", ""))
    return claims, Subjects(titles, links)


@pytest.mark.parametrize("seed", range(40))
def test_related_pairs_are_the_related_candidate_pairs_in_order(seed: int) -> None:
    rnd = random.Random(seed)
    claims, subjects = _wiki(rnd)
    index = {c.id: n for n, c in enumerate(claims)}
    old = [
        (index[a.id], index[b.id])
        for a, b in _old_pairs(claims)
        if subjects.related(a.page, b.page)
    ]
    assert [(index[a.id], index[b.id]) for a, b in candidate_pairs(claims)] == [
        (index[a.id], index[b.id]) for a, b in _old_pairs(claims)
    ]
    fresh = Subjects(subjects.titles, subjects.links)
    assert related_pairs(claims, fresh) == old
    involving = {n for n in range(len(claims)) if rnd.random() < 0.1}
    assert related_pairs(claims, fresh, involving) == [
        (i, j) for i, j in old if i in involving or j in involving
    ]


@pytest.mark.parametrize("seed", range(40))
def test_a_page_relation_is_related_over_every_two_pages(seed: int) -> None:
    claims, subjects = _wiki(random.Random(seed))
    pages = {c.page for c in claims} | set(subjects.titles)
    relation = subjects.among(pages)
    for page in pages:
        near = relation.of(page)
        expected = {q for q in pages if subjects.related(page, q)}
        assert (set(pages) if near is None else near) == expected
        assert near is not None or not page


def _sentences() -> Iterator[str]:
    with (SHARED_DATA / "corpus" / "sotu.jsonl").open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n % 12 == 0:  # 20 speeches from every age
                yield from re.split(r"(?<=[.!?])\s+", json.loads(line)["text"])


def _same_reading(text: str) -> None:
    found = analyse(text)
    words, negated = read_claim(text)
    assert (words, negated) == (found.facts | found.context, found.negated), text
    assert sentence(words, negated) == found, text


@needs_shared_data
def test_a_claim_reads_as_analyse_reads_it_on_real_sentences() -> None:
    texts = list(_sentences())
    for text in texts:
        _same_reading(text)
    rnd = random.Random(3)
    for _ in range(3000):
        a, b = rnd.choice(texts), rnd.choice(texts)
        assert compare_analysed(analyse(a), analyse(b)) == compare(a, b)


ODD = [*WORDS, "ﬁve", "Ⅻ", "²", "½", "n't", "O'Brien", "’s", "-", "—", ",", ".", " ", "\u200b",
       "\t", "\n", "\u00a0", "\u2003", "\x1c", "\u3000", "e\u0301", "İstanbul", "ß", "ǅ", "١٢",
       "_", "a-b", "NASA", "Q3", "3rd", "Never", "none", "won't", "Isn’t"]  # fmt: skip


@pytest.mark.parametrize("seed", range(20))
def test_a_claim_reads_as_analyse_reads_it_on_odd_text(seed: int) -> None:
    rnd = random.Random(seed)
    texts = [
        "".join(rnd.choice(ODD) + rnd.choice(["", " "]) for _ in range(rnd.randint(0, 15)))
        for _ in range(300)
    ]
    for text in texts:
        _same_reading(text)
    for a, b in zip(texts, reversed(texts), strict=True):
        assert compare_analysed(analyse(a), analyse(b)) == compare(a, b)
