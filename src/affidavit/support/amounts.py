"""Which noun an amount counts (W11 structure rule): "100 trillion neurons" against "one hundred
billion neurons and one hundred trillion synapses".

The number rules find "100 trillion" in the quote by value, and the attachment rule follows the
text's digits to the quote word they align with — "hundred", under *neurons* — so the amount
looks kept. :func:`amount_changes` reads each counted noun's whole amount (digits, number words
and scales: "one hundred billion" = 100,000,000,000) on both sides: an amount the quotes give
another noun, on a noun they count otherwise, is a clear change ("'100 trillion' counts
'synapses' in the quotes, not 'neurons' (they say 'one hundred billion neurons')").
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from .lexicon import _SCALES, NUMBER_WORDS
from .roles import governor
from .tree import Change, Tree

__all__ = ["amount_changes"]


_COUNTING = frozenset(["nummod", "compound", "quantmod"])


def _amounts(tree: Tree) -> dict[int, tuple[Decimal, str]]:
    """Counted noun → (its amount, as written), for nouns one contiguous number counts."""
    groups: dict[int, list[int]] = {}
    for t in tree:
        if t.pos != "NUM" or not (t.dep in _COUNTING or tree[t.head].pos == "NUM"):
            continue  # a number that counts its noun, not one in a phrase ("in 1941")
        if len(t.text) == 4 and t.text.isdigit() and 1000 <= int(t.text) <= 2100:
            continue  # a year
        g = governor(tree, t.i)
        if g is not None and tree[g].pos == "NOUN":
            groups.setdefault(g, []).append(t.i)
    out: dict[int, tuple[Decimal, str]] = {}
    for noun, ids in groups.items():
        if ids != list(range(ids[0], ids[-1] + 1)):
            continue  # two numbers on one noun: the other rules'
        value = _value([tree[i].lower for i in ids])
        if value is not None:
            out[noun] = (value, " ".join(tree[i].text for i in ids))
    return out


def _value(words: list[str]) -> Decimal | None:
    total = Decimal(0)
    current: Decimal | None = None
    for w in words:
        digits = number_value_of(w)
        if digits is not None:
            current = digits if current is None else current + digits
        elif w in NUMBER_WORDS:
            current = Decimal(NUMBER_WORDS[w]) + (current or 0)
        elif w in _SCALES:
            scaled = (current if current is not None else Decimal(1)) * _SCALES[w]
            if _SCALES[w] >= 1000:
                total, current = total + scaled, None
            else:
                current = scaled
        else:
            return None
    return (total + (current or 0)).normalize() if (total or current is not None) else None


def number_value_of(word: str) -> Decimal | None:
    plain = word.replace(",", "")
    if not plain[:1].isdigit():
        return None
    try:
        return Decimal(plain)
    except ArithmeticError:
        return None


def amount_changes(text: Tree, quotes: Sequence[Tree]) -> list[Change]:
    mine = _amounts(text)
    if not mine:
        return []
    theirs = [(q, n, v) for q in quotes for n, v in _amounts(q).items()]
    out: list[Change] = []
    for noun, (value, shown) in mine.items():
        lemma = text[noun].lemma
        same_noun = [(q, v) for q, n, v in theirs if q[n].lemma == lemma]
        if not same_noun or any(v[0] == value for _, v in same_noun):
            continue
        other = next(((q, n) for q, n, v in theirs if v[0] == value and q[n].lemma != lemma), None)
        if other is None:
            continue
        q, n = other
        out.append(
            Change(
                "number",
                True,
                (shown,),
                f"'{shown}' counts '{q[n].text}' in the quotes, not '{text[noun].text}' (they "
                f"say '{same_noun[0][1][1]} {text[noun].text}')",
            )
        )
    return out
