"""The stems a text holds, and whether a question's word is among them: the extractive
answerer's word match (:mod:`.extractive`).

A word (a stem) is held by a set of stems when the set has it, when both are naming verbs
(:data:`EQUIVALENT`: "called" / "named"), when one is a prefix of four letters or more of the
other ("encod" / "encoding"), or when both have six letters or more and share their first five
("vote" and "voting" stem alike; "governor" / "government" share "gover").

Read as written, that is a scan of the set for every word asked: the answerer asks it of every
retrieved claim for every word of the question, and the scan was a third of an answer's CPU.
:class:`Held` indexes a set once (its stems' four- and five-letter heads), so each question
goes through a few set lookups instead, with the same result: a stem of four or five letters
is held when it heads one of the set's (or the set has its four-letter head); a longer one when
its four-letter head is in the set or it shares its first five letters with one of the set's. A
text's index is kept (:func:`held_of`): the daemon meets the same claims question after question.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache

from ..words import content_words, stem
from .manuals import fold

EQUIVALENT = (frozenset({"call", "name", "dub", "term"}),)
"""Stems a question and its answer use for the same thing ("Why is it called X?" answered by
"it is named after..."): naming verbs."""


class Held:
    """A set of stems, indexed for :meth:`has` (see the module). Immutable once built."""

    __slots__ = ("fives", "fours", "stems")

    def __init__(self, stems: Iterable[str]) -> None:
        self.stems = frozenset(stems)
        self.fours = frozenset(s[:4] for s in self.stems if len(s) >= 4)
        self.fives = frozenset(s[:5] for s in self.stems if len(s) >= 5)

    def __or__(self, other: Held) -> Held:
        both = Held.__new__(Held)
        both.stems = self.stems | other.stems
        both.fours = self.fours | other.fours
        both.fives = self.fives | other.fives
        return both

    def has(self, word: str) -> bool:
        """``word`` (a stem) is held: the same answer as :func:`matches` of the stems."""
        if word in self.stems:
            return True
        for same in EQUIVALENT:
            if word in same and not same.isdisjoint(self.stems):
                return True
        size = len(word)
        if size < 4:  # only the same stem: a shorter one is no prefix of four letters
            return False
        if size == 4:  # it heads one of the set's
            return word in self.fours
        if word[:4] in self.stems:  # one of the set's, of four letters, heads it
            return True
        # five letters: it heads one of the set's; six or more: a stem of the set of five
        # letters heads it, or one of six or more shares its first five (as does any longer
        # stem it heads, or that heads it)
        return word[:5] in self.fives


EMPTY = Held(())


def matches(word: str, have: Iterable[str]) -> bool:
    """``word`` (a stem) is among ``have``, or shares a prefix of five letters with one of them
    (both six letters or more), or is a prefix of four letters or more of one or has one as its
    prefix ("encod" / "encoding"), or both are naming verbs: the definition :class:`Held`
    indexes, read as a scan (the tests hold the two to the same answers)."""
    have = set(have)
    if word in have:
        return True
    for same in EQUIVALENT:
        if word in same and same & have:
            return True
    for other in have:
        short, long_ = (word, other) if len(word) <= len(other) else (other, word)
        if len(short) >= 4 and long_.startswith(short):
            return True
        if len(short) >= 6 and long_[:5] == short[:5]:
            return True
    return False


def stems(text: str) -> set[str]:
    """The stems of ``text``'s content words (a new set: the caller may change it)."""
    return set(stems_of(text))


@lru_cache(maxsize=65536)
def stems_of(text: str) -> frozenset[str]:
    """:func:`stems`, remembered: the daemon asks for the same claims' texts, titles and
    quotes question after question (frozen: no caller can change what the next one gets)."""
    return frozenset(stem(w) for w in content_words(fold(text)))


@lru_cache(maxsize=8192)
def held_of(text: str) -> Held:
    """The index of :func:`stems_of` ``text``, remembered likewise (~2 KB each: at most ~20 MB
    a process)."""
    return Held(stems_of(text)) if text else EMPTY


@lru_cache(maxsize=4096)
def held_by(texts: tuple[str, ...]) -> Held:
    """The index of all ``texts``' stems together (a claim's text and its quotes, its page
    title...), remembered: built once per claim, not once per question (a few KB each: at most
    ~20 MB a process)."""
    return Held(frozenset().union(*map(stems_of, texts)))


def weights(asked: Iterable[str], have: list[Held]) -> dict[str, float]:
    """Each asked stem's weight: rarer among the retrieved claims (``have``) weighs more."""
    n = len(have)
    return {
        s: math.log(1.0 + (n + 1.0) / (0.5 + max(1, sum(1 for h in have if h.has(s)))))
        for s in sorted(asked)
    }


def support(weights: dict[str, float], have: Held) -> float:
    """The share of the question's weight ``have`` holds."""
    total = sum(weights.values())
    if not total:
        return 0.0
    return sum(w for s, w in weights.items() if have.has(s)) / total
