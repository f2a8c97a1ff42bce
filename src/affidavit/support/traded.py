"""Words that trade places (W11 structure rule): a text that is its quote's own words with two
stretches exchanged.

"Both flags were documented by the October government in Dutch 1779" against "… by the Dutch
government in October 1779", "saw election of Dwight presidents Republican D." against "of
Republican presidents Dwight D.": every word is the quote's, so coverage, names and numbers all
pass, and when neither stretch is a name in a slot of its own the exchange rule
(:mod:`.exchange`) doesn't see it either. :func:`traded_changes` compares the text's words, in
order, with each stretch of a quote holding exactly the same words: when they differ by one
exchange of two stretches (``…A…B…`` against ``…B…A…``), each headed by a name (a proper noun,
or a capitalised word inside a sentence), that is a clear change — unless the two are members of
one list ("such as Dublin, Oxford, Cambridge" for "Oxford, Dublin, Cambridge"),
whose order says nothing. Only the whole text is compared (a text that also drops or adds words
is left to the other rules).
"""

from __future__ import annotations

from itertools import pairwise

from .exchange import _fact
from .tree import Change, Tree

__all__ = ["traded_changes"]

_LIMIT = 80
"""Words compared at most (a longer text is left to the other rules)."""


def _words(tree: Tree) -> list[int]:
    return [t.i for t in tree if t.pos not in ("PUNCT", "SPACE")]


def _word(tree: Tree, i: int) -> str:
    """A word as compared: lower case, an abbreviation's full stop left out ("D." / "D")."""
    return tree[i].lower.rstrip(".") or tree[i].lower


def _exchange(t: list[str], w: list[str]) -> tuple[int, int, int, int] | None:
    """``(a, a_end, b, b_end)``: the stretches of ``w`` that, exchanged, give ``t`` (same
    length, same words), or None."""
    n = len(t)
    lo = 0
    while lo < n and t[lo] == w[lo]:
        lo += 1
    hi = n
    while hi > lo and t[hi - 1] == w[hi - 1]:
        hi -= 1
    if lo >= hi:
        return None
    mid_t, mid_w = t[lo:hi], w[lo:hi]
    size = hi - lo
    for la in range(1, size):
        for lb in range(1, size - la + 1):
            a, b = mid_w[:la], mid_w[size - lb :]
            x = mid_w[la : size - lb]
            if a != b and mid_t == b + x + a:
                return lo, lo + la, hi - lb, hi
    return None


def _name(tree: Tree, i: int) -> bool:
    """A name: a proper noun or a capitalised word inside a sentence ("Dutch"), not a number."""
    return tree[i].pos != "NUM" and _fact(tree, i)


def _root(tree: Tree, span: list[int]) -> int:
    """The word of ``span`` whose head is outside it."""
    inside = set(span)
    return next((i for i in span if tree[i].head not in inside or tree[i].head == i), span[0])


def _list_of(tree: Tree, i: int) -> int:
    """The first member of the list ``i`` is in (``i`` itself when it is in none)."""
    seen = 0
    while tree[i].dep == "conj" and tree[i].head != i and seen < 60:
        i, seen = tree[i].head, seen + 1
    return i


def _one_list(tree: Tree, first: list[int], second: list[int]) -> bool:
    """The two stretches are whole members of one list whose order says nothing ("Oxford,
    Dublin, Cambridge") — not parts of names ("David Osborne and Ted Gaebler"), a list inside
    a name ("the Department of Housing and Urban Development", "the Occupational Safety and
    Health Administration"), the ends of a span of months ("between June and August") or a
    list a later word counts off ("Atacama and Uyuni, the first one …", "respectively")."""
    a, b = _root(tree, first), _root(tree, second)
    if a == b or _list_of(tree, a) != _list_of(tree, b):
        return False
    if _outside(tree, a, first) != _outside(tree, b, second):
        return False  # a name cut in two ("David Ted Gaebler and Osborne")
    head = _list_of(tree, a)
    above = tree[tree[head].head]
    if tree[head].dep in _MODIFIER and above.pos == "PROPN":
        return False  # a list inside a name
    if tree[head].dep == "pobj" and above.head != above.i:
        named = tree[above.head]
        if above.lower == "of" and named.pos == "PROPN" and named.text[:1].isupper():
            return False  # "Department of Housing and Urban Development"
        if above.lower in _SPAN and all(tree[i].lower in _MONTHS for i in (a, b)):
            return False  # "between June and August"
    words = [t.lower for t in tree]
    return not any(w in _COUNTED_OFF for w in words) and not any(
        w in ("first", "second") and after == "one" for w, after in pairwise(words)
    )


_MODIFIER = frozenset(["compound", "nmod", "amod"])
_SPAN = frozenset(["between", "from"])
_COUNTED_OFF = frozenset(["respectively", "former", "latter"])
_MONTHS = frozenset(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"]
)  # fmt: skip
_NAME_PARTS = frozenset(["compound", "flat", "nmod"])


def _outside(tree: Tree, root: int, span: list[int]) -> frozenset[str]:
    """The words of the name ``root`` heads that the stretch leaves outside: none for a whole
    member; the same ones on both sides for members that share a word ("Istanbul Province and
    Istanbul Metropolitan Municipality")."""
    inside = set(span)
    out: set[str] = set()
    todo = [root]
    while todo:
        for c in tree.children[todo.pop()]:
            if tree[c].dep in _NAME_PARTS:
                todo.append(c)
                if c not in inside:
                    out.add(tree[c].lower)
    return frozenset(out)


def traded_changes(text: Tree, quotes: list[Tree]) -> list[Change]:
    mine = _words(text)
    if not 2 <= len(mine) <= _LIMIT:
        return []
    t = [_word(text, i) for i in mine]
    bag = sorted(t)
    for quote in quotes:
        theirs = _words(quote)
        w_all = [_word(quote, i) for i in theirs]
        for start in range(len(theirs) - len(t) + 1):
            w = w_all[start : start + len(t)]
            if w == t:
                return []  # the quote says it in this order
            if sorted(w) != bag:
                continue
            found = _exchange(t, w)
            if found is None:
                continue
            a0, a1, b0, b1 = found
            first = theirs[start + a0 : start + a1]
            second = theirs[start + b0 : start + b1]
            if _one_list(quote, first, second) or not all(
                _name(quote, _root(quote, span)) for span in (first, second)
            ):
                continue  # a list's order, or words that move freely ("in 1961", a heading's)
            said_a = " ".join(quote[i].text for i in first)
            said_b = " ".join(quote[i].text for i in second)
            return [
                Change(
                    "order",
                    True,
                    (said_a, said_b),
                    f"'{said_a}' and '{said_b}' traded places: the quote has "
                    f"'{' '.join(quote[i].text for i in theirs[start + a0 : start + b1])}'",
                )
            ]
    return []
