"""Numbers for the support check (W11): is a number of the text in its quotes, does it follow
from one of them by a stated rule (a bound, an approximation, a rounding), or does it conflict?

Pure functions over the numbers a reading found, as ``(shown, value, kind, bound word)``; kind
is ``''``, ``'ord'`` (an ordinal), ``'decade'`` (``1990s``) or ``'alt'`` (the European reading
of ``30.000``, which a quote may mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

__all__ = ["APPROXIMATE", "BOUNDS", "TEMPORAL", "Numbers", "bound_found", "number_found"]

Numbers = Sequence[tuple[str, Decimal, str, str]]

APPROXIMATE = frozenset(
    ["about", "around", "approximately", "roughly", "nearly", "almost", "some", "circa", "ca"]
)
BOUNDS = {
    "more": (">", False), "over": (">", False), "above": (">", False), "exceeding": (">", False),
    "exceeds": (">", False), "greater": (">", False), "higher": (">", False),
    "beyond": (">", False), "least": (">", True),
    "less": ("<", False), "fewer": ("<", False), "under": ("<", False), "below": ("<", False),
    "lower": ("<", False), "within": ("<", True), "most": ("<", True), "up": ("<", True),
    "after": (">", False), "since": (">", True), "before": ("<", False), "prior": ("<", False),
    "until": ("<", True),
}  # fmt: skip
"""Words that make a bound of the number after them: its direction, and whether the number
itself is inside it ("at least 40", "up to 40", "since 1947") or not ("more than 40")."""
TEMPORAL = frozenset(["before", "after", "since", "until", "prior"])


def number_found(
    value: Decimal, kind: str, before: str, numbers: Numbers, shown: str = ""
) -> tuple[str, str]:
    """(verdict, reason): is the number in the quotes, does it follow from one of them, or does
    it conflict with them? ``found`` / ``soft`` (a person decides) / ``hard`` (refused).

    Ordinals match plain numbers (``14th March`` = ``14 March``); a decade (``1990s``) matches
    only a decade, or softly a year in it. A *bound* ("more than 398", "over", "at least",
    "under 150", "before 2012") is read against the quote's number *closest* to it, the one the
    text most likely rounds: it follows when that number lies inside the bound (``more than
    398`` from ``399``, ``less than 150`` from ``88``), and conflicts when it lies outside
    (``more than 100`` against ``90``, ``more than 688`` against ``688``). The same bound on the
    same number in a quote is found; the same number under another kind of bound (``since
    1947`` / ``in 1947``, ``under 2.5`` / ``over 2.4``) is only soft. An approximation ("about",
    "around", "nearly" …) follows from a number it rounds (``about 1.5 million`` from
    ``1,523,000``) and is soft within a tenth of one; a bare rounding is soft.
    """
    values = [(v, k, b) for _, v, k, b in numbers]
    if kind == "decade":
        if any(v == value and k == "decade" for v, k, _ in values):
            return "found", ""
        if any(value <= v < value + 10 and k == "" for v, k, _ in values):
            return "soft", "a year of that decade"
        return "hard", ""
    plain = [(v, b) for v, k, b in values if k != "decade"]
    bound = BOUNDS.get(before)
    if bound is not None:
        return bound_found(value, before, bound, values)
    if any(v == value and k != "decade" for v, k, _ in values):
        return "found", ""
    stated = [v for v, _ in plain]
    if shown and not _year(shown):
        # "about 2,000 homes" never rounds the year in "200 homes in 1998"
        years = {v for s, v, k, _ in numbers if k == "" and _year(s)}
        stated = [v for v in stated if v not in years]
    if before in APPROXIMATE:
        if any(_rounds_to(v, value) for v in stated):
            return "found", ""
        if any(abs(v - value) <= abs(value) / 10 for v in stated):
            return "soft", f"'{before}' a number the quotes state"
    if any(_rounds_to(v, value) for v in stated if v != value):
        return "soft", "a rounding of a number the quotes state"
    return "hard", ""


def bound_found(
    value: Decimal,
    before: str,
    bound: tuple[str, bool],
    values: Sequence[tuple[Decimal, str, str]],
) -> tuple[str, str]:
    """A bound on ``value`` against the quotes' numbers (a decade is the span of its years)."""
    if any(v == value and BOUNDS.get(b) == bound for v, _, b in values):
        return "found", ""
    spans = [
        (v, v + 9 if k == "decade" else v, b)
        for v, k, b in values
        if k in ("", "ord", "alt", "decade")
    ]
    if not spans:
        return "hard", ""
    direction, inclusive = bound

    def side(low: Decimal, high: Decimal) -> str:
        if low == high == value:
            if before in TEMPORAL:
                return "same"  # "since 1947" for "in 1947": whether it lasted is not said
            return "inside" if inclusive else "outside"
        if direction == ">":
            return "inside" if low > value else "outside" if high < value else "same"
        return "inside" if high < value else "outside" if low > value else "same"

    near = [s for s in spans if min(_ratio(s[0], value), _ratio(s[1], value)) < 3]
    low, high, theirs = min(near or spans, key=lambda s: min(abs(s[0] - value), abs(s[1] - value)))
    verdict = side(low, high)
    if theirs in BOUNDS or theirs in APPROXIMATE:
        return "soft", f"'{before}' a number the quotes only bound or approximate"
    if verdict == "inside":
        return "found", ""
    if verdict == "same":
        return "soft", f"'{before}' a number the quotes state"
    return "hard", ""  # the number the text most likely restates lies outside its bound


def _ratio(theirs: Decimal, value: Decimal) -> Decimal:
    """Orders of magnitude between a quoted number and the text's (0 for the same scale; a
    large number for one not positive). A bound is read against numbers of its own scale when
    the quote has some: "under $100 million" against the quote's "$800 million", not its
    "ten-year" (by difference alone 10 is nearer to 100,000,000 than 800,000,000 is)."""
    if theirs > 0 and value > 0:
        return abs((theirs / value).log10())
    return Decimal(99)


def _rounds_to(exact: Decimal, rounded: Decimal) -> bool:
    """``1,234,567`` → ``1.2 million`` (1200000): ``rounded`` has fewer significant digits."""
    significant = len(rounded.as_tuple().digits)
    exp = exact.adjusted() - significant + 1
    if exact.adjusted() != rounded.adjusted() or exp <= 0:
        return False
    return exact.scaleb(-exp).quantize(Decimal(1)).scaleb(exp) == rounded


def _year(shown: str) -> bool:
    """Written as a year: four plain digits, 1000-2200."""
    return shown.isdigit() and len(shown) == 4 and 1000 <= int(shown) <= 2200
