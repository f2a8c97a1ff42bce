"""Facts in a sentence: numbers, dates and names — the parts two versions of a claim disagree on.

Used to tell a *changed fact* ("396 were diagnosed in Honolulu" vs "399 were diagnosed...") from a
restatement: two claims about the same subject (most of their other words shared) whose facts
differ on both sides are a contradiction candidate; if only one side has extra facts it refines
the other. No model, no network: regular expressions and the stemmer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .words import STOPWORDS, stem

_TOKEN = re.compile(r"\d[\d,.]*\d|\d|[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*")
NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "dozen",
        "half",
        "twice",
        "thrice",
        "once",
    ]
)
MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
NEGATIONS = frozenset(["not", "no", "never", "none", "neither", "nor", "without", "cannot"])
# Capitalised words that start sentences or are common enough not to name anything.
NOT_NAMES = STOPWORDS | frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "in",
        "on",
        "at",
        "of",
        "for",
        "by",
        "with",
        "as",
        "from",
        "to",
        "and",
        "or",
        "but",
        "if",
        "when",
        "while",
        "after",
        "before",
        "during",
        "since",
        "until",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "lrb",
        "rrb",
    ]
)


@dataclass(frozen=True)
class Sentence:
    """A claim split into its facts and its context (the stems of every other content word)."""

    facts: frozenset[str]
    context: frozenset[str]
    negated: bool


def _number(token: str) -> str:
    """Canonical form of a numeric token: ``1,234`` and ``1234`` are the same fact."""
    plain = token.replace(",", "")
    if plain.count(".") == 1:
        whole, frac = plain.split(".")
        frac = frac.rstrip("0")
        return f"{whole}.{frac}" if frac else whole
    return plain


@lru_cache(maxsize=65536)
def analyse(text: str) -> Sentence:
    """Facts (numbers, number words, months, capitalised names) and context stems of ``text``."""
    norm = unicodedata.normalize("NFKC", text)
    facts: set[str] = set()
    context: set[str] = set()
    negated = False
    tokens = _TOKEN.findall(norm)
    for position, token in enumerate(tokens):
        lower = token.casefold()
        if lower in NEGATIONS or lower.endswith("n't"):
            negated = True
            continue
        if token[0].isdigit():
            facts.add("#" + _number(token))
        elif lower in NUMBER_WORDS or lower in MONTHS:
            facts.add("#" + lower)
        elif token[0].isupper() and lower not in NOT_NAMES and (position > 0 or len(token) > 1):
            if position == 0 and lower in STOPWORDS:
                continue
            facts.add("@" + lower)
        elif len(lower) >= 3 and lower not in STOPWORDS:
            context.add(stem(lower))
    return Sentence(frozenset(facts), frozenset(context), negated)


@dataclass(frozen=True)
class Comparison:
    """How two claims relate: shared subject, and the facts only one of them states."""

    similarity: float
    """Jaccard similarity of everything but the facts (plus the facts they share)."""
    only_a: frozenset[str]
    only_b: frozenset[str]
    negation_differs: bool

    @property
    def conflicting(self) -> bool:
        """Each side states a fact the other lacks (a changed number, date or name),
        or one negates what the other asserts."""
        return bool(self.only_a and self.only_b) or self.negation_differs


def compare(a: str, b: str) -> Comparison:
    """Compare two claims' facts and context."""
    sa, sb = analyse(a), analyse(b)
    shared_facts = sa.facts & sb.facts
    left = sa.context | shared_facts
    right = sb.context | shared_facts
    union = left | right
    similarity = len(left & right) / len(union) if union else 0.0
    return Comparison(
        similarity=similarity,
        only_a=sa.facts - sb.facts,
        only_b=sb.facts - sa.facts,
        negation_differs=sa.negated != sb.negated,
    )


def show_fact(fact: str, text: str = "") -> str:
    """A fact as ``text`` writes it (``#40000`` → ``40,000``, ``@honolulu`` → ``Honolulu``);
    without ``text``, its canonical form."""
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
        lower = token.casefold()
        canonical = "#" + _number(token) if token[0].isdigit() else None
        if fact in (canonical, "#" + lower, "@" + lower):
            return str(token)
    return fact[1:]
