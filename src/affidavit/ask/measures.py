"""The measure a question asks for and the number that gives it (issue 24 item 4): "How large
...?" asks for a size ("281 terabytes"), "How long ...?" for a length or a duration ("two
minutes"), "At what temperature ...?" for degrees; the number's answer keeps its unit and the
bound or approximation the source puts before it ("about 25 seconds")."""

from __future__ import annotations

import re

from ..support.facts import MONTHS

_DIMENSIONS = {
    "large": "size",
    "big": "size",
    "small": "size",
    "long": "length",
    "short": "length",
    "tall": "height",
    "high": "height",
    "old": "age",
    "far": "distance",
    "heavy": "weight",
    "fast": "speed",
    "hot": "temperature",
    "cold": "temperature",
    "warm": "temperature",
}
_HOW_ADJECTIVE = re.compile(r"\bhow\s+(" + "|".join(_DIMENSIONS) + r")\b", re.IGNORECASE)
_HOW_MANY_CAN = re.compile(r"\bhow\s+(many|much)\s+(?:\w+\s+){1,3}?(?:can|could|may)\b", re.I)
""""How many columns can a table have?" asks for a limit: a manual states "the maximum number
of ...", not how many."""


_WHAT_MEASURE = re.compile(r"\b(?:what|which)\s+(temperature|speed|weight)\b", re.IGNORECASE)
""""At what temperature ...?" names the measure it asks for."""


def dimension(question: str) -> tuple[str, str]:
    """The adjective of a "how large/long/tall ...?" question and the measure it asks for
    ("large", "size"): a manual states the size ("databases up to 281 terabytes in size"), not
    how large; ``("", "")`` for any other question."""
    match = _HOW_ADJECTIVE.search(question)
    named = _WHAT_MEASURE.search(question)
    if match is None and named is not None:  # "At what temperature ...?"
        word = named.group(1).lower()
        return word, word
    if match is None:
        limit = _HOW_MANY_CAN.search(question)
        return (limit.group(1).lower(), "maximum") if limit and LIMITS else ("", "")
    adjective = match.group(1).lower()
    return adjective, _DIMENSIONS[adjective]


_BYTES = r"(?:[kmgtpe]i?b|bytes?|(?:kilo|mega|giga|tera|peta|exa|kibi|mebi|gibi|tebi|pebi)bytes?)"
_LENGTHS = r"(?:mm|cm|m|km|metres?|meters?|kilometres?|kilometers?|miles?|feet|foot|ft|inch(?:es)?)"
_DURATIONS = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|decades?|centuries)"
)
_UNITS = {
    "size": _BYTES + r"|(?:square\s+)?(?:km|kilometres?|kilometers?|miles?)|acres?|hectares?",
    "length": _LENGTHS + r"|characters?|bytes?|" + _DURATIONS,
    "height": _LENGTHS,
    "distance": _LENGTHS,
    "age": r"years?(?:\s+old)?",
    "weight": r"(?:mg|g|kg|grams?|kilograms?|tonnes?|tons?|pounds?|lbs?)",
    "speed": r"(?:km/h|mph|kph|knots?|(?:kilo)?met(?:re|er)s?\s+per\s+second)",
    "temperature": r"(?:degrees?(?:\s+(?:celsius|fahrenheit|centigrade|kelvin|c|f))?|°\s?[cf]?|kelvin)",
}
_HEDGE_BEFORE = re.compile(
    r"\b(?:about|around|approximately|roughly|nearly|almost|some|over|under|more than|"
    r"less than|fewer than|up to|at least|at most|an estimated|estimated|circa|c\.)\s+$",
    re.IGNORECASE,
)
"""Words before a number that bound or approximate it: the answer keeps them ("about 25
seconds"), or the support check drops it against its own quote's "about"."""


_UPPER_BOUND = re.compile(r"^(?:up to|at most|no more than)\s", re.IGNORECASE)
MODAL = re.compile(r"\b(?:can|could|may|might)\b", re.IGNORECASE)


def with_unit(
    text: str, start: int, end: int, measure: str, limit: bool = False
) -> tuple[int, int]:
    """The span ``text[start:end]`` (a number) with the unit of ``measure`` that follows it
    ("two" → "two minutes" for a how-long question) and a bound or approximation before it
    ("about 25 seconds"); for a question that asks for a limit (``limit``: "How large can ...
    get?") an upper bound is what it asks, so "up to" is left out."""
    units = _UNITS.get(measure)
    if units:
        unit = re.compile(rf"\s*(?:{units})(?!\w)", re.IGNORECASE).match(text, end)
        if unit:
            end = unit.end()
    hedge = _HEDGE_BEFORE.search(text[max(0, start - 24) : start])
    if hedge and not (limit and _UPPER_BOUND.match(hedge.group())):
        start -= len(hedge.group())
    return start, end


LIMITS = True
"""Read "how many ... can" as asking for a maximum."""
UNITS_KEPT = True
"""A number's answer keeps the unit asked for after it and a bound before it (:func:`with_unit`)."""
MEASURED = 0.1
"""What a number in the measure's unit adds ("281 terabytes" for "how large")."""


_COUNT_WORDS = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|sixty|hundred|thousand|a few|several)"
)


def measured(measure: str, text: str) -> bool:
    """``text`` gives a number in a unit of ``measure`` ("281 terabytes" for size)."""
    units = _UNITS.get(measure)
    if not units:
        return False
    pattern = rf"(?:\d[\d,.]*|\b{_COUNT_WORDS})(?:\s*\([^)]{{0,40}}\))?\s*(?:{units})(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


_YEAR = re.compile(r"(?:1[0-9]{3}|20[0-9]{2})s?")
_MONTH = "(?:" + "|".join(m.capitalize() for m in sorted(MONTHS, key=len, reverse=True)) + r")\.?"
"""A month's name or abbreviation as a date writes it (:data:`~affidavit.support.facts.MONTHS`)."""
_DATED = re.compile(
    rf"(?:\b{_MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?,?|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?"
    r"|\b(?:[Ii]n|[Ss]ince|[Uu]ntil|[Tt]ill|[Dd]uring|[Yy]ear|[Ee]arly|[Ll]ate|[Cc]irca|mid-?))\s*$"
)
_MONTH_DAY = re.compile(
    rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}"
)
_AFTER_DATE = re.compile(
    r"\s*(?:$|[,.;:!?)\]—–-]|\b(?:and|or|but|the|a|an|when|while|as|he|she|it|they|we|i|you|"
    r"in|on|at|by|for|was|were|is|are|had|has|have|will|would)\b)",
    re.IGNORECASE,
)


def dated_year(text: str, start: int, span: str) -> bool:
    """``span``, at ``start`` of ``text``, is a year standing as a date ("On January 1st, 1825",
    "in 1798, the"), no amount: "How large was the public debt?" is not answered "1825". A
    number after "in" that counts something ("in 1500 cases") is no date: the word after it must
    end the phrase."""
    for found in _MONTH_DAY.finditer(text[max(0, start - 16) : start + len(span) + 8]):
        if found.start() <= min(start, 16) < found.end():
            return True  # "January 1st": a day, no amount
    if _YEAR.fullmatch(span) is None:
        return False
    before = text[max(0, start - 32) : start]
    after = text[start + len(span) : start + len(span) + 12]
    return _DATED.search(before) is not None and _AFTER_DATE.match(after) is not None


_NAMED_YEAR = re.compile(r"\b(?!" + _MONTH + r"\s)[A-Z][a-z]+\s+of\s+$")


def named_year(text: str, start: int, question: str) -> bool:
    """The year at ``start`` of ``text`` is part of a name ("the War of 1812", "the Act of
    1933", "the Panic of 1837"), not the time of what the sentence tells: "When was the
    Louisiana purchase?" is not answered "1812" from "the War of 1812". A month's "July of 1812"
    is a date. A name the question asks about is its subject ("In which year did the Pueblo
    revolt occur?" of "the Pueblo Revolt of 1680")."""
    found = _NAMED_YEAR.search(text[max(0, start - 24) : start])
    if found is None:
        return False
    head = found.group().split()[0]
    return re.search(rf"\b{re.escape(head)}\b", question, re.IGNORECASE) is None
