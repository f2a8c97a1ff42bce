"""Two facts that trade places (W11): names or numbers exchanged between their slots.

A sentence can keep every word, name and number of its quote and still say something else by
exchanging two of them: "the 1998 loss to Leeds and the 2001 win over Hull" against "the 1998
loss to Hull and the 2001 win over Leeds", "Anna Holm and Peter Berg" against "Peter Holm and
Anna Berg". :func:`exchange_changes` gives each name and number of the text its *slot* — the
content word it hangs from (its governor, past prepositions and determiners) and how (the
preposition on the way, else its dependency) — and finds two of them, restating two facts of
one quote, each standing in the slot the quote gives the other. Members of one list share the
slot of its first member (their order is free); a slot whose governor the text does not restate
is not compared, and neither is a name the quote states twice. Only a strict exchange counts, so
a change of voice ("Holm wrote it" / "it was written by Holm") is left to the role rules.
"""

from __future__ import annotations

from .align import NAME, NUMBER, SAME, STEM, Alignment, content
from .tree import Change, Tree

__all__ = ["exchange_changes"]

_SKIP = frozenset(["ADP", "DET", "PUNCT", "CCONJ", "PART", "SYM", "NUM"])
_FACT_MATCH = frozenset([SAME, NUMBER, NAME, STEM])


def _fact(tree: Tree, i: int) -> bool:
    """A name (a proper noun, or a capitalised adjective or noun inside a sentence: "Dutch",
    "Asian") or a number written in figures."""
    t = tree[i]
    if t.pos == "PROPN":
        return any(c.isalpha() for c in t.text)
    if t.pos in ("ADJ", "NOUN") and t.text[:1].isupper() and i > t.sent:
        return tree[i - 1].text not in ('"', "'", "(", ":")
    return t.pos == "NUM" and t.text[:1].isdigit()


def _slot(tree: Tree, i: int) -> tuple[int, str] | None:
    """(governor, relation) of token ``i``: the content word it hangs from and the preposition
    on the way (else the dependency of the step under the governor); a list's later members
    take its first member's slot."""
    node = i
    while tree[node].dep == "conj" and tree[node].head != node:
        node = tree[node].head  # "Bradford, Greensburg and Johnstown": one slot
    relation = ""
    for _ in range(6):
        head = tree[node].head
        if head == node:
            return None
        h = tree[head]
        if h.pos == "ADP" and not relation:
            relation = h.lemma
        if h.pos not in _SKIP and (content(h) or h.pos in ("AUX", "VERB")):
            return head, relation or tree[node].dep
        node = head
    return None


def exchange_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """Two names or numbers of the text, each in the slot its quote gives the other; the words
    of a name reordered."""
    out = _reordered_names(text, quotes)
    facts = [
        t.i
        for t in text
        if _fact(text, t.i) and t.i in a.matches and a.matches[t.i].how in _FACT_MATCH
    ]
    if len(facts) < 2:
        return out
    mine: dict[int, tuple[int, tuple[int, str]]] = {}  # fact -> (quote, its slot there)
    for i in facts:
        m = a.matches[i]
        slot = _slot(text, i)
        if slot is None:
            continue
        gm = a.matches.get(slot[0])
        if gm is None or gm.quote != m.quote:
            continue
        mine[i] = (m.quote, (gm.index, slot[1]))
    done: set[int] = set()
    items = sorted(mine.items())
    for n, (x, (qx, sx)) in enumerate(items):
        for y, (qy, sy) in items[n + 1 :]:
            if qx != qy or x in done or y in done or text[x].lower == text[y].lower:
                continue
            quote = quotes[qx]
            at_x, at_y = _slots_of(quote, text[x].lower), _slots_of(quote, text[y].lower)
            if at_x & at_y:
                continue  # one slot in the quote (a list): their order is free
            if sx in at_y and sx not in at_x and sy in at_x and sy not in at_y:
                done |= {x, y}
                out.append(
                    Change(
                        "role",
                        True,
                        (text[x].text, text[y].text),
                        f"'{text[x].text}' and '{text[y].text}' trade places: the quote has "
                        f"'{text[x].text}' with '{quote[min(at_x)[0]].text}' and "
                        f"'{text[y].text}' with '{quote[min(at_y)[0]].text}'",
                    )
                )
    return out


def _slots_of(tree: Tree, lower: str) -> set[tuple[int, str]]:
    """The slots of every occurrence of the word ``lower`` in a quote."""
    found = (_slot(tree, t.i) for t in tree if t.lower == lower)
    return {s for s in found if s is not None}


_JOINS = frozenset(["-", "/", "'s", "of", "–"])


def _name_runs(tree: Tree) -> list[tuple[int, ...]]:
    """Runs of capitalised words joined directly or by a hyphen, slash, "of" or "'s" ("Carr-
    Harris Cup", "People's Republic of China"), as the indices of their capitalised words."""
    runs: list[tuple[int, ...]] = []
    run: list[int] = []
    pending = False
    for t in tree:
        capital = t.text[:1].isupper() and t.pos not in ("DET", "PRON") and t.i > t.sent
        if capital and any(c.isalpha() for c in t.text):
            run.append(t.i)
            pending = False
        elif run and t.lower in _JOINS and not pending:
            pending = True
        else:
            if len(run) >= 2:
                runs.append(tuple(run))
            run, pending = [], False
    if len(run) >= 2:
        runs.append(tuple(run))
    return runs


def _reordered_names(text: Tree, quotes: list[Tree]) -> list[Change]:
    """A name of the text whose words a quote's name has in another order ("Cup-Harris Carr"
    for "Carr-Harris Cup", "Coalition/National Liberal" for "Liberal/National Coalition")."""
    theirs = [tuple(q[n].lower for n in run) for q in quotes for run in _name_runs(q)]
    out: list[Change] = []
    for run in _name_runs(text):
        words = tuple(text[n].lower for n in run)
        if any(_inside(words, r) for r in theirs):
            continue
        for r in theirs:
            if len(r) == len(words) and sorted(r) == sorted(words):
                shown = " ".join(text[n].text for n in run)
                out.append(
                    Change(
                        "role",
                        True,
                        tuple(text[n].text for n in run[:2]),
                        f"the words of '{shown}' are in another order in the quote's name",
                    )
                )
                break
    return out


def _inside(run: tuple[str, ...], longer: tuple[str, ...]) -> bool:
    n = len(run)
    return any(longer[k : k + n] == run for k in range(len(longer) - n + 1))
