"""Words a text gives as one piece, read as one piece (W11 structure rules).

- :func:`title_changes`: a title in quotation marks ("the singles \\"Drunk Love\\"") is a name
  whose words belong together: the quote must give them together. A title the quote gives longer
  or with another word inside ("Drunk in Love", "Holy Shit Batman") is another title — clear when
  the quote puts that title in quotation marks itself, uncertain when it only has the words apart.
- :func:`value_changes`: a value given to a named variable ("at x = 1") against the quote's value
  for the same variable ("for x = 0"): a number moved between slots that the bag of numbers
  finds anyway ("1/x" holds a 1) — clear.
"""

from __future__ import annotations

import re

from .tree import Change

__all__ = ["title_changes", "value_changes"]

_QUOTED = re.compile(r"(?:``|\"|“)\s*([^\"“”`']+?)\s*(?:''|\"|”)")
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text.replace("%", " percent"))]


def _inside(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return any(whole[k : k + n] == part for k in range(len(whole) - n + 1))


def title_changes(text: str, quotes: list[str], context: list[str]) -> list[Change]:
    """A title the text puts in quotation marks that no quote (nor the source's title or
    heading, ``context``) gives as those words together."""
    if '"' not in text and "“" not in text and "``" not in text:
        return []  # most texts quote no title: nothing to read
    out: list[Change] = []
    quoted = [_words(s) for q in quotes for s in _QUOTED.findall(q)]
    bodies = [_words(q) for q in [*quotes, *context]]
    for span in _QUOTED.findall(text):
        mine = _words(span)
        if not mine or any(mine == theirs for theirs in quoted) or mine in bodies:
            continue
        longer = [
            t for t in quoted if _inside(mine, t) or (set(mine) <= set(t) and mine[0] == t[0])
        ]
        if longer:
            shown = " ".join(longer[0])
            out.append(
                Change(
                    "merge",
                    True,
                    tuple(span.split()),
                    f"the title '{span}' — the quote's is '{shown}'",
                )
            )
        elif not any(_inside(mine, body) for body in bodies) and len(
            set(mine) & {w for body in bodies for w in body}
        ) >= min(2, len(mine)):  # words no quote has are the coverage rule's
            out.append(
                Change(
                    "merge",
                    False,
                    tuple(span.split()),
                    f"the title '{span}' — no quote gives these words together",
                )
            )
    return out


_VALUE = re.compile(r"(?<![\w.])([a-zA-Z])\s*=\s*(-?\d+(?:\.\d+)?)(?!\w|\.\d)")


def value_changes(text: str, quotes: list[str]) -> list[Change]:
    """A variable's value ("x = 1") where the quotes give the same variable only other values."""
    if "=" not in text:
        return []
    theirs: dict[str, set[str]] = {}
    for q in quotes:
        for name, value in _VALUE.findall(q):
            theirs.setdefault(name, set()).add(value)
    out: list[Change] = []
    for name, value in _VALUE.findall(text):
        given = theirs.get(name)
        if given and value not in given:
            other = sorted(given)[0]
            out.append(
                Change(
                    "number",
                    True,
                    (value,),
                    f"'{name} = {value}' — the quote gives '{name} = {other}'",
                )
            )
    return out
