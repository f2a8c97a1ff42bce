"""The answerer's word match through its index (:class:`affidavit.ask.stems.Held`) gives the
same answer as the match read as a scan of the stems (:func:`affidavit.ask.stems.matches`), on
generated stems built to hit every boundary (four, five, six letters; shared heads) and on the
stems of real text; and the weights and support built on it are the same numbers."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.ask.stems import EQUIVALENT, Held, held_by, held_of, matches, stems_of, support
from affidavit.ask.stems import weights as held_weights

# few letters, so stems share heads of four and five letters often
STEM = st.text(alphabet="abcn", min_size=1, max_size=9)
NAMING = sorted(EQUIVALENT[0])


@st.composite
def kin(draw: st.DrawFn, word: str) -> str:
    """A stem near ``word``: a head of it, with or without letters of its own after."""
    head = word[: draw(st.integers(0, len(word)))]
    return head + draw(STEM | st.just(""))


@st.composite
def word_and_stems(draw: st.DrawFn) -> tuple[str, set[str]]:
    word = draw(STEM | st.sampled_from(NAMING))
    near = draw(st.sets(kin(word), max_size=4))
    return word, near | draw(st.sets(STEM | st.sampled_from(NAMING), max_size=4))


@settings(max_examples=800, deadline=None)
@given(case=word_and_stems())
def test_the_index_answers_as_the_scan_on_generated_stems(case: tuple[str, set[str]]) -> None:
    word, have = case
    assert Held(have).has(word) == matches(word, have)


@settings(max_examples=300, deadline=None)
@given(word=STEM, one=st.sets(STEM), other=st.sets(STEM))
def test_the_union_of_two_indexes_is_the_index_of_the_union(
    word: str, one: set[str], other: set[str]
) -> None:
    assert (Held(one) | Held(other)).has(word) == matches(word, one | other)


@pytest.mark.parametrize(
    ("word", "have", "held"),
    [
        ("encod", {"encoding"}, True),  # a prefix of four letters or more
        ("encoding", {"encod"}, True),
        ("vote", {"voting"}, False),  # "vote" heads nothing: "voti"
        ("govern", {"governor"}, True),
        ("governor", {"government"}, True),  # six or more, the same five: "gover"
        ("gover", {"governor"}, True),
        ("goven", {"governor"}, False),
        ("cat", {"catalog"}, False),  # three letters: only the same stem
        ("call", {"name"}, True),  # naming verbs
        ("call", {"cat"}, False),
    ],
)
def test_the_match_keeps_its_definition(word: str, have: set[str], held: bool) -> None:
    assert matches(word, have) is held
    assert Held(have).has(word) is held


def _texts() -> list[str]:
    data = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", "/nonexistent")) / "qa"
    found = data / "squadshifts_new_wiki_v1.0.json"
    if found.is_file():
        articles = json.loads(found.read_text(encoding="utf-8"))["data"][:3]
        return [
            text
            for a in articles
            for p in a["paragraphs"]
            for text in (p["context"], *(q["question"] for q in p["qas"]))
        ]
    fixture = Path(__file__).parent / "data" / "support_verdicts.jsonl"
    rows = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines()]
    return [r["text"] for r in rows[:400]]


def test_the_index_answers_as_the_scan_on_real_text() -> None:
    texts = _texts()
    sets = [stems_of(t) for t in texts]
    words = sorted(set().union(*sets))[::7]
    differ = [
        (w, t)
        for w, (t, have) in itertools.product(words[:300], zip(texts, sets, strict=True))
        if held_of(t).has(w) != matches(w, have)
    ]
    assert not differ, differ[:5]
    assert held_by((texts[0], texts[1])).stems == stems_of(texts[0]) | stems_of(texts[1])


def test_weights_and_support_are_the_scan_s_numbers() -> None:
    texts = _texts()[:60]
    asked = set(stems_of(texts[-1]))
    have = [held_of(t) for t in texts]
    weights = held_weights(asked, have)
    n = len(texts)
    import math

    expected = {
        s: math.log(1.0 + (n + 1.0) / (0.5 + max(1, sum(matches(s, stems_of(t)) for t in texts))))
        for s in sorted(asked)
    }
    assert weights == expected
    total = sum(expected.values())
    for text, held in zip(texts, have, strict=True):
        shared = sum(w for s, w in expected.items() if matches(s, stems_of(text)))
        assert support(weights, held) == shared / total
