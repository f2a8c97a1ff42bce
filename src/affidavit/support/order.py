"""Orders the text reverses (W11): two words on either side of an ordering word — "than",
"from … to", "then", "versus" — that trade sides against the quote ("more among men than women"
for "more among women than men"). Read by :mod:`.structure` with :mod:`.roles`' slot rules."""

from __future__ import annotations

from .align import Alignment, content
from .tree import Change, Tree

__all__ = ["PIVOTS", "order_changes"]


PIVOTS = {
    "than": "than", "to": "to", "towards": "to", "toward": "to", "into": "to", "then": "then",
    "versus": "versus", "vs": "versus", "vs.": "versus",
}  # fmt: skip
"""Words whose two sides are ordered: "more among women *than* men", "from the negative half
*towards* the positive half", "father *then* mother", "contract *over* status"."""
WINDOW = 6


def order_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """Two words on either side of an ordering word ("than", "from … to", "then") that trade
    sides in the quote: a reversed comparison or order, clear."""
    out: list[Change] = []
    for p in text:
        kind = PIVOTS.get(p.lower)
        if kind is None or not _pivot(text, p.i, kind):
            continue
        left = _side(text, p.i, -1, kind)
        right = _side(text, p.i, 1, kind)
        for q, quote in enumerate(quotes):
            for pq in quote:
                if PIVOTS.get(pq.lower) != kind or not _pivot(quote, pq.i, kind):
                    continue
                q_left = set(_side(quote, pq.i, -1, kind))
                q_right = set(_side(quote, pq.i, 1, kind))
                crossed_l = [
                    x for x in left if _lands(a, x, q, q_right) and not _lands(a, x, q, q_left)
                ]
                crossed_r = [
                    y for y in right if _lands(a, y, q, q_left) and not _lands(a, y, q, q_right)
                ]
                pairs = [
                    (x, y) for x in crossed_l for y in crossed_r if text[x].lemma != text[y].lemma
                ]
                if pairs:
                    x, y = pairs[0]
                    out.append(
                        Change(
                            "role",
                            True,
                            (text[x].text, text[y].text),
                            f"order reversed around '{p.text}': the quote has "
                            f"'{text[y].text}' before it and '{text[x].text}' after it",
                        )
                    )
                    return out
    return out


def _pivot(tree: Tree, i: int, kind: str) -> bool:
    """``tree[i]`` orders two things: "to" after a "from" (not an infinitive), "then" between
    two nouns, "than" not before a number (a bound: the number rule reads it)."""
    nxt = tree[i + 1] if i + 1 < len(tree) else None
    if kind == "to":
        not_infinitive = nxt is not None and nxt.pos not in ("VERB", "AUX")
        return (tree[i].pos == "ADP" or not_infinitive) and any(
            tree[n].lower == "from" for n in range(max(0, i - WINDOW), i)
        )
    if kind == "then":
        return (
            i > 0
            and tree[i - 1].pos in ("NOUN", "PROPN")
            and nxt is not None
            and nxt.pos in ("NOUN", "PROPN")
        )
    if kind == "than":
        return (
            nxt is not None
            and nxt.pos != "NUM"
            and not (nxt.pos == "ADV" and i + 2 < len(tree) and tree[i + 2].pos == "NUM")
        )
    return True


def _side(tree: Tree, i: int, step: int, kind: str) -> list[int]:
    """Content words within :data:`WINDOW` tokens of ``i`` on one side, stopping at a sentence
    or clause break."""
    out: list[int] = []
    n = i + step
    while 0 <= n < len(tree) and abs(n - i) <= WINDOW:
        t = tree[n]
        if t.text in (";", ".", ":") or (t.text == "," and step > 0) or t.sent != tree[i].sent:
            break
        if content(t) and (t.pos in ("NOUN", "PROPN", "ADJ") or (kind == "to" and t.pos == "NUM")):
            out.append(n)
        n += step
    return out


def _lands(a: Alignment, x: int, q: int, side: set[int]) -> bool:
    m = a.matches.get(x)
    options = [m] if m is not None else []
    options += a.options.get(x, [])
    return any(o.quote == q and o.index in side for o in options)
