"""Readings made ahead of the gate (gate/hints.py): a reading computed in the worker process — a
process with another hash seed, through the real worker — gives the gate the very verdicts it
gives without it (verdict, missing words, reason), and what the checks did not take is dropped."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from affidavit.gate import admission
from affidavit.gate.hints import (
    SEEDED_COMPARABLES,
    Hints,
    comparable,
    read_texts,
    seeded,
)
from affidavit.ingest.ahead import Ahead
from affidavit.support import CLAIM_SHARE, check
from affidavit.support import reading as support_reading
from affidavit.support import rules as support

from .conftest import SAMPLES

TRICKY = [
    "The treaty was not signed in 1823, but on April 11, 1824.",
    "Unemployment fell to 4.5 percent, the lowest since the 1960s.",
    "President Monroe did not oppose the Holy Alliance.",
    "It was never unimportant that the loan of 2,000,000 guilders was completed in Holland.",
    "Ægir and Σωκράτης met Gaius Julius Caesar at the Forum on 15 March.",
    "The third of four bills passed; fewer than half of the states agreed.",
    "No nation is safe; every nation is unsafe.",
    "",
    "A",
    "The cost rose from $5 million to $7.2 million in fiscal year 2021.",
]


def _sentences() -> list[str]:
    text = " ".join(p.read_text(encoding="utf-8") for p in sorted((SAMPLES / "sotu").iterdir()))
    found = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if 20 < len(s.strip()) < 300]
    return found[:300] + TRICKY


def _cases(texts: list[str]) -> list[tuple[str, tuple[str, ...], float]]:
    rnd = random.Random(7)
    cases: list[tuple[str, tuple[str, ...], float]] = []
    for _ in range(400):
        quotes = tuple(rnd.sample(texts, rnd.randint(1, 3)))
        claim = rnd.choice([quotes[0], " ".join(quotes), rnd.choice(texts), quotes[0][::-1]])
        words = claim.split()
        if words and rnd.random() < 0.4:  # a word changed: a number, a negation, a name
            words[rnd.randrange(len(words))] = rnd.choice(["not", "1999", "Jefferson", "never"])
        cases.append((" ".join(words), quotes, rnd.choice([CLAIM_SHARE, 0.5, 0.8])))
    return cases


def _forget() -> None:
    support._check.cache_clear()
    support_reading._read.cache_clear()
    support_reading._merged.cache_clear()
    admission._comparable.cache_clear()


def _verdicts(cases: list[tuple[str, tuple[str, ...], float]]) -> list[object]:
    return [check(text, quotes, share=share) for text, quotes, share in cases]


@pytest.fixture
def clean() -> Iterator[None]:
    _forget()
    yield
    _forget()


def test_readings_from_a_worker_with_another_hash_seed_give_the_same_verdicts(
    clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _sentences()
    cases = _cases(texts)
    alone = _verdicts(cases)
    everything = sorted({t for text, quotes, _ in cases for t in (text, *quotes)})
    monkeypatch.setenv("PYTHONHASHSEED", "4242")  # the worker hashes strings differently
    with Ahead("affidavit.gate.hints:read_texts") as worker:
        worker.extend([(0, everything)])
        ready, hints = worker.take(0)
    assert ready and isinstance(hints, Hints)
    assert set(hints.readings) == set(everything)
    _forget()
    with seeded(hints):
        helped = _verdicts(cases)
        taken = len(everything) - len(support_reading.SEEDED_READINGS)
    assert helped == alone
    assert taken > len(everything) // 2  # the checks did read the worker's readings
    assert not support_reading.SEEDED_READINGS and not SEEDED_COMPARABLES  # dropped after


def test_a_comparable_form_computed_ahead_is_the_one_computed_here(clean: None) -> None:
    texts = _sentences()
    hints = read_texts(texts)
    assert hints.comparables == {t: comparable(t) for t in texts}
    with seeded(hints):
        assert [admission._comparable(t) for t in texts] == [comparable(t) for t in texts]
        assert not SEEDED_COMPARABLES  # each taken when its text was compared


def test_hints_are_dropped_when_the_block_ends_even_by_an_error(clean: None) -> None:
    hints = read_texts(["The loan was completed in Holland."])
    with pytest.raises(RuntimeError), seeded(hints):
        assert support_reading.SEEDED_READINGS
        raise RuntimeError("boom")
    assert not support_reading.SEEDED_READINGS and not SEEDED_COMPARABLES
    with seeded(None):  # nothing read ahead: nothing offered
        assert not support_reading.SEEDED_READINGS


def test_a_reading_is_taken_for_its_own_text_only(clean: None) -> None:
    lie = read_texts(["The loan was not completed in Holland."]).readings
    text = "The loan was completed in Holland."
    # a reading offered under another text is never used for this one
    with seeded(Hints(readings={"unrelated text": next(iter(lie.values()))})):
        verdict = check(text, [text + " It was."])
    _forget()
    assert verdict == check(text, [text + " It was."])
