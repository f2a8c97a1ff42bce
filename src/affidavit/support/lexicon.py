"""The support check's word lists: number words, comparatives, negations, aliases (data only;
the rules that read them are in :mod:`affidavit.support.rules`)."""

from __future__ import annotations

import re

from ..words import stem
from .dates import MONTH_NUMBER
from .facts import MONTHS, NEGATIONS
from .numbers import APPROXIMATE, BOUNDS, TEMPORAL

_DOTTED_THOUSANDS = re.compile(r"\d{1,3}\.\d{3}")
_PERCENT = re.compile(r"%|\bper\s+cent\b", re.IGNORECASE)

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
}  # fmt: skip
NUMBER_WORDS = _UNITS
"""Number words and their values (one word each; scales apart)."""
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20,
    "thirtieth": 30, "hundredth": 100,
}  # fmt: skip
_ORDINAL_SUFFIXES = frozenset(["st", "nd", "rd", "th"])
_MONTH_NAME = {n: name for name, n in MONTH_NUMBER.items()}
_ALWAYS_MONTHS = MONTHS - {"may", "march", "mar"}
"""Month names that are months in any case ("may" and "march" only when capitalised)."""
_ABOVE = frozenset(w for w, (d, _) in BOUNDS.items() if d == ">") - {"after", "since"}
_BELOW = frozenset(w for w, (d, _) in BOUNDS.items() if d == "<") - {"before", "prior", "until"}
_BOUNDED = _ABOVE | _BELOW
_LINKS = frozenset(["than", "to"])
"""Words between a comparative and its number ("more than 398", "up to 40")."""
_COMPARATIVES = APPROXIMATE | _ABOVE | _BELOW | TEMPORAL
_ONE_AFTER = frozenset(["of", "another", "who", "that", "which", "or", "and", "is", "was"])
_ONE_BEFORE = frozenset(["the", "no", "any", "every", "each", "this", "that", "which", "a"])
_NEGATIONS = NEGATIONS | frozenset(
    [
        "nobody", "nothing", "nowhere", "refused", "refuses", "refuse", "rejected", "rejects",
        "declined", "declines", "denied", "denies", "unable", "excluded", "except", "instead",
        "lacks", "lacked", "lacking", "failed", "fails", "failing", "refusing", "declining",
        "denying", "rejecting", "refrained", "refrains", "abstained", "abstains", "neither",
        "nor", "forbid", "forbids", "forbade", "forbidden", "forbidding", "prohibit",
        "prohibits", "prohibited", "prohibiting", "preclude", "precludes", "precluded",
        "precluding",
    ]
)  # fmt: skip
"""Words that negate what follows them (facts.NEGATIONS and verbs of refusal, exclusion or
prohibition: "forbids damaging" is "not to be damaged", as :data:`.negation.NEGATING_VERBS`
reads them in the parse)."""
_DURATIONS = frozenset(
    [
        "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week",
        "weeks", "month", "months", "year", "years", "decade", "decades", "century",
        "centuries", "generation", "generations",
    ]
)  # fmt: skip
"""Time units: "over eight years" is a duration, not a bound."""
_NEGATION_SCOPE = 2
"""How many content words after a negation it is taken to negate."""
_NEGATING_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis")
_DEMONYM = ("n", "an", "ian", "ese", "ish", "i", "ern")
_DEMONYM_AFTER_VOWEL = ("ian", "ean", "an", "ese")
_ALIAS_PAIRS = [
    ("us", "united states"), ("usa", "united states"), ("america", "united states"),
    ("uk", "united kingdom"), ("covid-19", "coronavirus"), ("covid", "coronavirus"),
    ("tv", "television"), ("un", "united nations"), ("eu", "european union"),
]  # fmt: skip
_ALIASES: dict[str, list[tuple[str, ...]]] = {}
for _short, _long in _ALIAS_PAIRS:
    _ALIASES.setdefault(_short, []).append(tuple(_long.split()))
    for _part in _long.split():
        _ALIASES.setdefault(_part, []).append((_short,))
"""Names written two ways (an initialism, a common alias): either stands for the other."""
_GENERIC = frozenset(["percent", "also", "known", "called", "named", "including"])
"""Content words that restate, rather than add, what a sentence says; never required."""
_GENERIC_STEMS = frozenset(stem(w) for w in _GENERIC)
