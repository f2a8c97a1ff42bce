"""Units for the support check (W11): the same number in another measure.

- :func:`unit_changes` — the same number in another unit of the same dimension ("55 km/h" for
  "55 mph", "two weeks" for "two days", "1–4 °F" for "1–4 °C"), and a frequency changed
  ("weekly" for "monthly"): clear changes;
- :func:`converted_numbers` — the numbers that restate a quoted quantity in another unit
  ("81 centimetres" = "810 millimetres", "1.5 km" = "1,500 metres"), which the number rule
  then accepts.
"""

from __future__ import annotations

from decimal import Decimal

from .align import number_value
from .lexicon import NUMBER_WORDS
from .tree import Change, Tree

__all__ = ["UNITS", "converted_numbers", "converted_units", "unit_changes"]

UNITS: dict[str, tuple[str, Decimal]] = {}
for _dim, _table in {
    "length": {
        "mm": "0.001", "millimetre": "0.001", "millimeter": "0.001", "cm": "0.01",
        "centimetre": "0.01", "centimeter": "0.01", "m": "1", "metre": "1", "meter": "1",
        "km": "1000", "kilometre": "1000", "kilometer": "1000", "mile": "1609.344",
        "mi": "1609.344", "foot": "0.3048", "feet": "0.3048", "ft": "0.3048", "inch": "0.0254",
        "yard": "0.9144",
    },
    "area": {
        "km2": "1000000", "sq km": "1000000", "square kilometre": "1000000",
        "square kilometer": "1000000", "square mile": "2589988.11", "sq mi": "2589988.11",
        "acre": "4046.86", "hectare": "10000", "ha": "10000", "m2": "1",
    },
    "temperature_c": {"°c": "1", "celsius": "1", "c": "1"},
    "temperature_f": {"°f": "1", "fahrenheit": "1", "f": "1"},
    "speed": {"mph": "0.44704", "km/h": "0.277778", "kph": "0.277778", "kmh": "0.277778", "m/s": "1"},
    "mass": {
        "kg": "1", "kilogram": "1", "g": "0.001", "gram": "0.001", "pound": "0.45359",
        "lb": "0.45359", "tonne": "1000", "ton": "907.185", "ounce": "0.02835", "oz": "0.02835",
    },
    "time": {
        "second": "1", "minute": "60", "hour": "3600", "day": "86400", "week": "604800",
        "fortnight": "1209600", "month": "2629800", "year": "31557600", "decade": "315576000",
        "century": "3155760000", "millennium": "31557600000", "generation": "",
    },
    "frequency": {
        "daily": "", "weekly": "", "monthly": "", "yearly": "", "annually": "", "annual": "",
        "hourly": "", "biweekly": "", "quarterly": "", "biennial": "",
    },
}.items():  # fmt: skip
    for _name, _factor in _table.items():
        UNITS[_name] = (
            "temperature" if _dim.startswith("temperature") else _dim,
            Decimal(_factor) if _factor else Decimal(0),
        )
_TEMPERATURE = {"°c": "c", "celsius": "c", "c": "c", "°f": "f", "fahrenheit": "f", "f": "f"}


def _unit(tree: Tree, i: int) -> tuple[str, str] | None:
    """The unit word after (or heading) number token ``i``, normalised: (dimension, name)."""
    candidates: list[str] = []
    for n in (i + 1, i + 2):
        if n < len(tree):
            w = tree[n]
            if n + 2 < len(tree) and tree[n + 1].text == "/":
                candidates.append(f"{w.lower}/{tree[n + 2].lower}")  # "km/h" as three tokens
            candidates.append(w.lemma)
            candidates.append(w.lower)
            if n + 1 < len(tree):
                candidates.append(f"{w.lower} {tree[n + 1].lemma}")
                candidates.append(f"{w.lower}{tree[n + 1].lower}")
            if w.pos not in ("SYM", "PUNCT", "ADJ") and w.lower not in ("square", "sq"):
                break
    head = tree[i].head
    if head != i:
        candidates.append(tree[head].lemma)
    for c in candidates:
        c = c.rstrip(".")
        if (c in UNITS and c not in ("m", "c", "f", "g", "ha", "mi")) or (
            c in UNITS and len(c) <= 2 and _attached(tree, i, c)
        ):
            name = _TEMPERATURE.get(c, c)
            return UNITS[c][0], name
    return None


def _attached(tree: Tree, i: int, c: str) -> bool:
    return i + 1 < len(tree) and tree[i + 1].lower.rstrip(".") == c


_NUMBER_WORDS = {
    word: {**NUMBER_WORDS, "hundred": 100}[word]
    for word in [
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
        "twelve",
        "twenty",
        "hundred",
    ]
}
"""The number words a quantity may be written in (a subset of the lexicon's, same values)."""


def _value(tree: Tree, i: int) -> Decimal | None:
    value = number_value(tree[i])
    if value is None and tree[i].lower in _NUMBER_WORDS:
        return Decimal(_NUMBER_WORDS[tree[i].lower])
    return value


_RANGE = frozenset(["and", "to", "-", "–", "or"])


def _quantities(tree: Tree) -> list[tuple[int, Decimal, tuple[str, str]]]:
    """The quantities of a text: each number with its unit; the first number of a range takes
    the unit written after the second ("between 75 and 127 cm", "3 to 5 km")."""
    found: dict[int, tuple[Decimal, tuple[str, str] | None]] = {}
    for t in tree:
        if t.pos != "NUM" and not t.text[:1].isdigit():
            continue
        value = _value(tree, t.i)
        if value is not None:
            found[t.i] = (value, _unit(tree, t.i))
    out = []
    for i, (value, unit) in found.items():
        if unit is None and i + 2 in found and tree[i + 1].lower in _RANGE:
            unit = found[i + 2][1]
        if unit is not None:
            out.append((i, value, unit))
    return out


def unit_changes(text: Tree, quotes: list[Tree]) -> list[Change]:
    """The same number in another unit of the same dimension, where no quote gives it in the
    text's unit (or converts to it)."""
    out: list[Change] = []
    theirs = [(q, i, v, u) for q, tree in enumerate(quotes) for i, v, u in _quantities(tree)]
    for i, value, (dim, name) in _quantities(text):
        same_value = [(q, qi, u) for q, qi, v, u in theirs if v == value]
        if not same_value or any(u == (dim, name) for _, _, u in same_value):
            continue
        if _converted(value, dim, name, theirs):
            continue
        other = [(q, qi, u) for q, qi, u in same_value if u[0] == dim and u[1] != name]
        if other:
            q, qi, (_, their_name) = other[0]
            unit_word = _unit_word(text, i)
            out.append(
                Change(
                    "unit",
                    True,
                    (unit_word,),
                    f"'{text[i].text} {unit_word}' — the quote gives {quotes[q][qi].text} in '{their_name}'",
                )
            )
    for t in text:
        if t.lower in UNITS and UNITS[t.lower][0] == "frequency":
            found = [
                u
                for tree in quotes
                for u in tree
                if u.lower in UNITS and UNITS[u.lower][0] == "frequency"
            ]
            if found and not any(u.lemma == t.lemma or u.lower[:4] == t.lower[:4] for u in found):
                out.append(
                    Change(
                        "unit", True, (t.text,), f"'{t.text}' — the quote says '{found[0].text}'"
                    )
                )
    return out


def _unit_word(tree: Tree, i: int) -> str:
    if i + 3 < len(tree) and tree[i + 2].text == "/":
        return tree[i + 1].text + "/" + tree[i + 3].text  # "km/h"
    for n in (i + 1, i + 2):
        if n < len(tree) and tree[n].pos not in ("PUNCT",):
            return tree[n].text
    return tree[i].text


def _converted(
    value: Decimal, dim: str, name: str, theirs: list[tuple[int, int, Decimal, tuple[str, str]]]
) -> bool:
    factor = UNITS.get(name, ("", Decimal(0)))[1]
    if not factor:
        return False
    base = value * factor
    for _, _, v, (d, n) in theirs:
        f = UNITS.get(n, ("", Decimal(0)))[1]
        if d == dim and f and abs(v * f - base) <= abs(base) * Decimal("0.02"):
            return True
    return False


def _converted_at(text: Tree, quotes: list[Tree]) -> list[int]:
    theirs = [(q, i, v, u) for q, tree in enumerate(quotes) for i, v, u in _quantities(tree)]
    return [
        i
        for i, value, (dim, name) in _quantities(text)
        if _converted(value, dim, name, theirs)
        and not any(v == value and u == (dim, name) for _, _, v, u in theirs)
    ]


def converted_numbers(text: Tree, quotes: list[Tree]) -> set[str]:
    """The text's numbers (as written) that restate a quoted quantity in another unit of the
    same dimension ("81 centimetres" for "810 millimeters", "1.5 km" for "1,500 metres")."""
    return {text[i].text for i in _converted_at(text, quotes)}


def converted_units(text: Tree, quotes: list[Tree]) -> set[str]:
    """The unit words (casefolded) of those numbers: "centimetres" in "81 centimetres" for
    "810 millimeters" restates the quote's unit, as its number restates the quote's number."""
    out: set[str] = set()
    for i in _converted_at(text, quotes):
        word = _unit_word(text, i)
        out |= {word.casefold(), *(w.casefold() for w in word.split("/"))}
    return out


MAGNITUDES = {
    "dozen": 12,
    "hundred": 100,
    "thousand": 1000,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
"""Scale words that state a magnitude by themselves ("several thousand", "hundreds of")."""


def magnitude_changes(text: Tree, quotes: list[Tree]) -> list[Change]:
    """A bare scale word ("several *thousand* tremors", "*millions* of") where the quotes give
    another ("several hundred"): the number changed."""
    out: list[Change] = []
    quoted = {_scale(u) for tree in quotes for u in tree} - {""}
    for t in text:
        scale = _scale(t)
        if not scale or (t.i > 0 and text[t.i - 1].pos == "NUM" and _scale(text[t.i - 1]) == ""):
            continue  # "3 million": a number the number rule reads
        if scale in quoted:
            continue
        if quoted:
            other = sorted(quoted, key=lambda s: MAGNITUDES[s])[0]
            out.append(Change("number", True, (t.text,), f"'{t.text}' — the quotes say '{other}'"))
    return out


def _scale(token: object) -> str:
    lemma = getattr(token, "lemma", "")
    lower = getattr(token, "lower", "")
    for word in (lemma, lower, lower.rstrip("s")):
        if word in MAGNITUDES:
            return word
    return ""
