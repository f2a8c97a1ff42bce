"""Dates for the support check (W11): ``April 11, 2020``, ``11 April 2020``, ``June 12th``,
``September 2013`` read as one fact, and compared by value — with a bound ("before April 11",
"after 16 April 2020") read against the quote's closest date.

Pure functions over the support check's tokens, given as ``(kind, text, suffix)``; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Date", "date_found", "find_dates"]

MONTH_NUMBER = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_DAY_SUFFIXES = frozenset(["", "st", "nd", "rd", "th"])


@dataclass(frozen=True)
class Date:
    """A calendar date as a text writes it; ``day`` and ``year`` None when it leaves them out."""

    shown: str
    month: int
    day: int | None
    year: int | None
    before: str = ""  # the bound word before it ("before", "after", "since") or ''


def _day(token: tuple[str, str, str]) -> int | None:
    kind, text, suffix = token
    if kind != "num" or suffix not in _DAY_SUFFIXES or not text.isdigit() or len(text) > 2:
        return None
    value = int(text)
    return value if 1 <= value <= 31 else None


def _year(token: tuple[str, str, str]) -> int | None:
    kind, text, suffix = token
    if kind != "num" or suffix or not text.isdigit() or len(text) != 4:
        return None
    return int(text)


def find_dates(
    tokens: Sequence[tuple[str, str, str]], months: dict[int, int]
) -> dict[int, tuple[int, int, int | None, int | None]]:
    """The dates among ``tokens``: first token's index → (index after the last, month, day,
    year). ``months`` maps the index of each token read as a month to its number. A range of
    days ("24–25 July 1945", "October 29 and 30, 2012") is two dates. Forms:
    month day [year], day month [year], month year."""
    found: dict[int, tuple[int, int, int | None, int | None]] = {}
    at = 0
    while at < len(tokens):
        month = months.get(at)
        nxt = tokens[at + 1] if at + 1 < len(tokens) else ("", "", "")
        after = tokens[at + 2] if at + 2 < len(tokens) else ("", "", "")
        if month is not None:
            day = _day(nxt)
            if day is not None:
                # "October 29 and 30, 2012": two dates of one month and year
                link = tokens[at + 2] if at + 2 < len(tokens) else ("", "", "")
                second = tokens[at + 3] if at + 3 < len(tokens) else ("", "", "")
                last = tokens[at + 4] if at + 4 < len(tokens) else ("", "", "")
                year = _year(last)
                if (
                    link[1].casefold() in ("and", "to", "through")
                    and _day(second) is not None
                    and year is not None
                ):
                    end = at + 5 if year is not None else at + 4
                    found[at] = (at + 2, month, day, year)
                    found[at + 3] = (end, month, _day(second), year)
                    at = end
                    continue
                year = _year(after)
                end = at + 3 if year is not None else at + 2
                found[at] = (end, month, day, year)
                at = end
                continue
            year = _year(nxt)
            if year is not None:
                found[at] = (at + 2, month, None, year)
                at += 2
                continue
        elif _day(tokens[at]) is not None and _day(nxt) is not None and (at + 2) in months:
            # "24–25 July 1945": two dates of one month and year
            last = tokens[at + 3] if at + 3 < len(tokens) else ("", "", "")
            year = _year(last)
            end = at + 4 if year is not None else at + 3
            found[at] = (at + 1, months[at + 2], _day(tokens[at]), year)
            found[at + 1] = (end, months[at + 2], _day(nxt), year)
            at = end
            continue
        elif _day(tokens[at]) is not None and (at + 1) in months:
            year = _year(after)
            end = at + 3 if year is not None else at + 2
            found[at] = (end, months[at + 1], _day(tokens[at]), year)
            at = end
            continue
        at += 1
    return found


def _key(date: Date, other: Date) -> tuple[tuple[int, ...], bool]:
    """``date`` as a comparable key at the granularity both dates have (a missing year taken
    from the other), and whether that granularity is the full date."""
    year = date.year if date.year is not None else other.year
    other_year = other.year if other.year is not None else date.year
    has_years = year is not None and other_year is not None
    days = date.day is not None and other.day is not None
    key: tuple[int, ...] = (year or 0,) if has_years else ()
    key += (date.month,) + ((date.day or 0,) if days else ())
    return key, days


def _distance(a: Date, b: Date) -> int:
    ka, _ = _key(a, b)
    kb, _ = _key(b, a)
    weights = (372, 31, 1)[-len(ka) :]
    return abs(
        sum(w * x for w, x in zip(weights, ka, strict=True))
        - sum(w * x for w, x in zip(weights, kb, strict=True))
    )


def date_found(
    date: Date, quotes: Sequence[Date], bounds: dict[str, tuple[str, bool]]
) -> tuple[str, str]:
    """(``found`` | ``soft`` | ``hard``, reason) for a date of the text against the quotes'.

    Without a bound the same month and day must be stated (the year is checked as a number;
    a day the quotes leave out is soft). With one, the quotes' closest date decides: inside the
    bound it follows (``before April 11`` from ``10 April``), outside it conflicts; the same date
    under a strict bound conflicts, under an inclusive one ("since") or when one side gives no
    day it is soft."""
    bound = bounds.get(date.before)
    if bound is None:
        same = [q for q in quotes if q.month == date.month]
        if any(q.day == date.day or date.day is None for q in same):
            return "found", ""
        if date.day is not None and same and all(q.day is None for q in same):
            return "soft", "a month the quotes state without the day"
        return "hard", ""
    if any(
        bounds.get(q.before) == bound
        and (q.month, q.day, q.year) == (date.month, date.day, date.year)
        for q in quotes
    ):
        return "found", ""  # the same bound on the same date: "since March 4th, 1817" twice
    if not quotes:
        return "hard", ""
    direction, inclusive = bound

    def side(q: Date) -> str:
        mine, full = _key(date, q)
        theirs, _ = _key(q, date)
        if theirs == mine:
            # "before April 10" against "10 April" is outside; "since April 10" is only close
            return "outside" if full and not inclusive else "same"
        inside = theirs > mine if direction == ">" else theirs < mine
        return "inside" if inside else "outside"

    closest = min(quotes, key=lambda q: _distance(date, q))
    verdict = side(closest)
    if verdict == "inside":
        return "found", ""
    if verdict == "same":
        return "soft", f"'{date.before}' a date the quotes state, or its month"
    return "hard", ""
