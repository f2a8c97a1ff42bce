"""Number restatements the support check reads before anything else (W11, issue 22 item 2).

"Every second year" is "every two years": an ordinal after *every* (or *every other*) counts the
intervals of the time unit after it, so :func:`every_nth` rewrites the text's phrase as the
cardinal with the plural unit, and the number rules compare "two" with the quote's number as
they would "every two years" — "every third year" against "every two years" is still a changed
number.

"One unit of length" is "a single unit of length": :func:`one_as_single` writes the text's *one*
as the quote's *a single* before the same word, so no number is left to compare with a quote
that states none ("two units" against "a single unit" is still a number the quote lacks).
"""

from __future__ import annotations

import re

__all__ = ["every_nth", "one_as_single"]

_ORDINAL = {
    "other": "two", "second": "two", "third": "three", "fourth": "four", "fifth": "five",
    "sixth": "six", "seventh": "seven", "eighth": "eight", "ninth": "nine", "tenth": "ten",
}  # fmt: skip
_UNIT = {
    "second": "seconds", "minute": "minutes", "hour": "hours", "day": "days", "week": "weeks",
    "month": "months", "year": "years", "decade": "decades", "century": "centuries",
}  # fmt: skip
_EVERY_NTH = re.compile(
    r"\b(every)\s+(" + "|".join(_ORDINAL) + r")\s+(" + "|".join(_UNIT) + r")\b", re.IGNORECASE
)


def every_nth(text: str) -> str:
    """``text`` with "every second year" (any ordinal up to tenth, or "other") written as "every
    two years"; unchanged when it has no such phrase."""
    if "every" not in text.casefold():
        return text

    def cardinal(m: re.Match[str]) -> str:
        return f"{m.group(1)} {_ORDINAL[m.group(2).casefold()]} {_UNIT[m.group(3).casefold()]}"

    return _EVERY_NTH.sub(cardinal, text)


_ONE = re.compile(r"\b(one)\s+([^\W\d_]+)", re.IGNORECASE)


def one_as_single(text: str, quotes: tuple[str, ...]) -> str:
    """``text`` with "one X" written "a single X" where a quote says "a single X" (the same word
    X); unchanged otherwise."""
    if "one" not in text.casefold() or "single" not in " ".join(quotes).casefold():
        return text
    said = {
        m.group(1).casefold()
        for q in quotes
        for m in re.finditer(r"\b(?:a|one)\s+single\s+([^\W\d_]+)", q, re.IGNORECASE)
    }

    def single(m: re.Match[str]) -> str:
        if m.group(2).casefold() not in said:
            return m.group(0)
        return f"{'A' if m.group(1)[0] == 'O' else 'a'} single {m.group(2)}"

    return _ONE.sub(single, text)
