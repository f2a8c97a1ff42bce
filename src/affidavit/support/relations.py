"""Whose relation a name is (W11 structure rule): "the brother of Sophie Rose Cohen" against "the
adoptive brother of Ryan Atwood and the grandson of Sophie Rose Cohen".

The bag of words finds "brother" and "Sophie Rose Cohen"; the quote makes her the *grandson's*
relation, and gives the brother's as another name. :func:`of_changes`: a text noun with an *of*
name whose quote word has an *of* name of its own, while the quote hangs the text's name from
another noun by *of* — a noun the text does not restate — is a clear change of role.

:func:`possessor_changes`: "E. F. Schumacher's Design for the Other 90 Percent" joins a name one
quote gives as a doer of something else ("described as 'intermediate technology' *by* economist
E. F. Schumacher") to a thing another quote names with no owner ("a related concept is 'design
for the other 90 percent'"): likely a wrong merge (uncertain). A name a quote gives standing
alone, as a label ("State of the Union, 1941: Franklin D Roosevelt"), may own what the others say.
"""

from __future__ import annotations

from .align import Alignment
from .tree import Change, Tree

__all__ = ["of_changes", "possessor_changes"]


def _of_objects(tree: Tree, i: int) -> list[int]:
    return [o for p in tree.kids(i, "prep") if tree[p].lower == "of" for o in tree.kids(p, "pobj")]


def _of_owner(tree: Tree, i: int) -> int | None:
    """The noun whose *of* phrase ``i`` is the object of ("the grandson *of* Sophie")."""
    while tree[i].dep in ("compound", "flat") and tree[i].head != i:
        i = tree[i].head
    if tree[i].dep != "pobj":
        return None
    of = tree[i].head
    if tree[of].lower != "of" or tree[of].head == of:
        return None
    owner = tree[of].head
    return owner if tree[owner].pos == "NOUN" else None


def of_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    used: dict[int, set[int]] = {}
    for m in a.matches.values():
        used.setdefault(m.quote, set()).add(m.index)
    for t in text:
        nm = a.matches.get(t.i)
        if t.pos != "NOUN" or nm is None:
            continue
        quote = quotes[nm.quote]
        for y in _of_objects(text, t.i):
            ym = a.matches.get(y)
            if text[y].pos != "PROPN" or ym is None or ym.quote != nm.quote:
                continue
            owner = _of_owner(quote, ym.index)
            if owner is None or owner == nm.index or owner in used[nm.quote]:
                continue
            if quote[owner].lemma == quote[nm.index].lemma:
                continue
            theirs = [o for o in _of_objects(quote, nm.index) if quote[o].pos == "PROPN"]
            if not theirs or ym.index in theirs:
                continue
            out.append(
                Change(
                    "role",
                    True,
                    (t.text, text[y].text),
                    f"'{t.text} of {text[y].text}' — the quote has '{quote[ym.index].text}' as "
                    f"the {quote[owner].text}'s, and the {quote[nm.index].text}'s as "
                    f"'{quote.phrase(theirs[0])}'",
                )
            )
    return out


_DOING = frozenset(["nsubj", "nsubjpass", "dobj"])


def possessor_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    for t in text:
        if t.dep != "poss" or t.pos != "PROPN" or t.head == t.i:
            continue
        pm, nm = a.matches.get(t.i), a.matches.get(t.head)
        if pm is None or nm is None or pm.quote == nm.quote:
            continue
        quote = quotes[pm.quote]
        name = pm.index
        while quote[name].dep in ("compound", "flat", "appos") and quote[name].head != name:
            name = quote[name].head
        role = quote[name].dep
        by = role == "pobj" and quote[quote[name].head].lower == "by"
        if role not in _DOING and not by:
            continue
        there = quotes[nm.quote]
        if there.kids(nm.index, "poss"):
            continue  # the other quote gives it an owner ("his design"): the pointing rules'
        out.append(
            Change(
                "merge",
                False,
                (t.text, text[t.head].text),
                f"'{t.text}'s {text[t.head].text}' — one quote names '{quote[pm.index].text}' in a "
                f"statement of its own, another the '{there[nm.index].text}' with no owner",
            )
        )
    return out
