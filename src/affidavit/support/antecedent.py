"""A quote's pointing phrase and the other quote it points back to (W11 structure rules).

A writer who quotes two sentences of a source and joins them restates what the second one says
of "that instability", "these studies" or "the names in this category" with the words the first
gives: "the weight counteracts instability at the neck connection" for "Instability at the neck
connection moves frequencies off series" and "the weight … counteracts that instability". The
cross-quote rule (:func:`.roles.cross_quote`) asks of each word the text hangs on a predicate
that one quote state the two together; this module answers when the second quote points back to
the first: the word the text hangs on is, in one quote, a noun with a demonstrative ("that
instability") or a noun that carries one ("name in this category"), and the text's dependent
comes from the one other quote that names the same noun ("instability", "names").

Kept narrow, so that it never joins what the source keeps apart: only *this*, *that*, *these*,
*those* and *such* point (a bare "the" is a definite description the heading rules read); the
antecedent must be unique — two other quotes naming the noun leave the relation uncertain —
and it must be the quote the text's dependent is stated in. A noun without a demonstrative is
not pointing back ("counteracts instability in the bell" says nothing of the neck).

:func:`renamed` reads one quote that names a thing twice: "vulcanized rubber (sometimes called
hard rubber)" — a text's "vulcanized (hard) rubber" takes words of both names, which is one
thing (the new name right after the first, by a verb of calling no word on it denies).
"""

from __future__ import annotations

from .align import Alignment, Match
from .tree import Tree

__all__ = ["points_back", "renamed"]

DEMONSTRATIVES = frozenset(["this", "that", "these", "those", "such"])


def _demonstrative(tree: Tree, i: int) -> bool:
    """The noun at ``i`` is determined by a demonstrative ("that instability")."""
    return tree[i].pos == "NOUN" and any(
        tree[c].lower in DEMONSTRATIVES and tree[c].dep in ("det", "amod", "predet")
        for c in tree.children[i]
    )


def _pointing(tree: Tree, i: int) -> bool:
    """The noun at ``i`` points back: it has a demonstrative, or a prepositional phrase whose
    noun has one ("name in this category")."""
    if _demonstrative(tree, i):
        return True
    for c in tree.children[i]:
        if tree[c].dep != "prep":
            continue
        if any(_demonstrative(tree, o) for o in tree.kids(c, "pobj")):
            return True
    return False


NEAR = 2
"""Dependency steps between the antecedent noun and the quote word the text takes from its
quote: "instability at the … connection", "the meanings of some names" (two each)."""


def _ancestors(tree: Tree, i: int) -> dict[int, int]:
    """``i`` and its heads up to :data:`NEAR` steps, each with its distance."""
    out = {i: 0}
    node = i
    for step in range(1, NEAR + 1):
        if tree[node].head == node:
            break
        node = tree[node].head
        out[node] = step
    return out


def _near(tree: Tree, i: int, j: int) -> bool:
    """``i`` and ``j`` are at most :data:`NEAR` dependency steps apart."""
    up_i, up_j = _ancestors(tree, i), _ancestors(tree, j)
    return any(d + up_j[n] <= NEAR for n, d in up_i.items() if n in up_j)


def points_back(a: Alignment, quotes: list[Tree], text: Tree, t: int, o: Match) -> bool:
    """The text's word ``t``, hung on a word the quotes state at ``o``, comes from the one other
    quote the pointing phrase at ``o`` points back to: that quote names the same noun, no third
    quote does, and ``t`` is stated there next to it (every quote word ``t`` was matched to is
    within :data:`NEAR` steps of that noun)."""
    quote = quotes[o.quote]
    if text[t].pos == "PROPN" or not _pointing(quote, o.index):
        return False
    lemma = quote[o.index].lemma
    naming = [
        (q, [w.i for w in other if w.lemma == lemma and w.pos == "NOUN"])
        for q, other in enumerate(quotes)
        if q != o.quote
    ]
    naming = [(q, nouns) for q, nouns in naming if nouns]
    if len(naming) != 1:
        return False  # no antecedent, or more than one: which one is meant is not said
    q, nouns = naming[0]
    places = [a.matches[t], *a.options.get(t, ())]
    return all(m.quote == q and any(_near(quotes[q], m.index, n) for n in nouns) for m in places)


CALLING = frozenset(["call", "name", "know", "term", "dub"])
"""Verbs whose *oprd* (or *as* phrase) renames the noun just before them."""
DOUBTED = frozenset(
    ["wrongly", "mistakenly", "falsely", "erroneously", "incorrectly", "misleadingly", "never"]
)
"""Words on the verb of calling that deny the new name ("(wrongly called …)")."""


def _renaming(quote: Tree, j: int) -> int | None:
    """The verb of calling whose new name ``j`` is ("(sometimes called hard rubber)", "also
    known as …"), or None."""
    head = quote[j].head
    if quote[j].dep == "pobj" and quote[head].lower == "as":
        head = quote[head].head
    elif quote[j].dep != "oprd":
        return None
    if quote[head].lemma not in CALLING or quote[head].tag != "VBN":
        return None
    kids = quote.children[head]
    if any(quote[c].dep == "neg" or quote[c].lower in DOUBTED for c in kids):
        return None
    return head


def renamed(a: Alignment, quotes: list[Tree], t: int, o: Match) -> bool:
    """The text's word ``t``, hung on the noun at ``o``, is stated on the same noun where the quote
    renames it right after ("vulcanized rubber (sometimes called hard rubber)": the text's
    "vulcanized (hard) rubber"): one thing under two names, so its words are one phrase's.
    The new name must follow within three words (a parenthesis or a comma, an adverb)."""
    quote = quotes[o.quote]
    lemma = quote[o.index].lemma
    for j, w in enumerate(quote.tokens):
        if j <= o.index or w.lemma != lemma or w.pos != "NOUN":
            continue
        verb = _renaming(quote, j)
        if verb is None or not 0 < verb - o.index <= 3:
            continue
        places = [a.matches[t], *a.options.get(t, ())]
        if all(m.quote == o.quote and m.index in quote.subtree(j) for m in places):
            return True
    return False
