"""A name the quote gives in brackets after another name (W11 structure rule).

"her controlling mother, Emily (Kelly Bishop)": Kelly Bishop is who plays Emily, or another name
of hers — not what the quote calls the mother. A text that takes the bracketed name for the
first one ("Lorelai's mother was named Kelly Bishop") reads the brackets away; the bag of words
finds every word. :func:`bracket_changes`: a text name restated only by a name of two or more
words standing alone in brackets right after another name, while the text restates no word of
that other name, is uncertain — the reason names both.
"""

from __future__ import annotations

from .align import Alignment
from .tree import Change, Tree

__all__ = ["bracket_changes"]

_OPEN = frozenset(["(", "-lrb-", "["])
_CLOSE = frozenset([")", "-rrb-", "]"])


def _word(quote: Tree, n: int) -> bool:
    """A capitalised word of a name: letters only, more than one of them."""
    text = quote[n].text
    return len(text) > 1 and text.isalpha() and text[:1].isupper()


def _bracketed(quote: Tree) -> list[tuple[list[int], list[int]]]:
    """(the name before the bracket, the name inside) for each "Name (Other Name)"."""
    out = []
    for t in quote:
        if t.lower not in _OPEN or t.i == 0:
            continue
        inside: list[int] = []
        k = t.i + 1
        while k < len(quote) and quote[k].lower not in _CLOSE and len(inside) < 6:
            inside.append(k)
            k += 1
        if k >= len(quote) or quote[k].lower not in _CLOSE or len(inside) < 2:
            continue
        if not all(_word(quote, n) for n in inside):
            continue  # a name, not a unit or a figure ("1–4 °C (34–39 °F)")
        before: list[int] = []
        k = t.i - 1
        while k >= 0 and _word(quote, k):
            before.insert(0, k)
            k -= 1
        if before:
            out.append((before, inside))
    return out


def bracket_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    for q, quote in enumerate(quotes):
        for before, inside in _bracketed(quote):
            used = {m.index for m in a.matches.values() if m.quote == q}  # rare: brackets
            if used & set(before) or not used & set(inside):
                continue
            mine = {quote[n].lower for n in before}
            if any(t.lower in mine for t in text):
                continue
            name = " ".join(quote[n].text for n in inside)
            other = " ".join(quote[n].text for n in before)
            out.append(
                Change(
                    "role",
                    False,
                    tuple(t.text for t in text if t.lower in {quote[n].lower for n in inside}),
                    f"'{name}' stands in brackets after '{other}' in the quote: another name "
                    f"for '{other}', or who plays them — not said of what the text says",
                )
            )
    return out
