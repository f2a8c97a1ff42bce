"""What a text claims beyond its quotes' scope (W11): a universal word where the quotes state
only a partial one, and a description the quote only reports ("has been *called* the first …")
stated as fact. Read by :mod:`.structure` alongside :mod:`.scope`'s quantifier and hedge rules.
"""

from __future__ import annotations

from .align import Alignment
from .tree import Change, Tree

__all__ = ["CALLED", "called", "called_change", "universal_changes"]

UNIVERSAL = frozenset(
    [
        "all", "always", "entire", "entirely", "whole", "wholly", "complete", "completely",
        "full", "fully", "total", "totally", "invariably", "universally", "exclusively",
    ]
)  # fmt: skip
PARTIAL = frozenset(
    [
        "most", "mostly", "mainly", "largely", "primarily", "predominantly", "chiefly",
        "majority", "usually", "generally", "typically", "often", "many", "some", "several",
        "partly", "partially", "part", "few", "sometimes", "occasionally", "rarely", "seldom",
    ]
)  # fmt: skip
"""A text's universal word against a quote that states only a partial one anywhere ("all of
them from World War II" / "mainly from World War II", "survived in full" / "in whole or in
part"): the structure rules tie quantifiers to their predicates; this catches one the parse
hangs elsewhere, as likely (uncertain) only."""


def universal_changes(text: Tree, quotes: list[Tree]) -> list[Change]:
    mine = [t for t in text if t.lower in UNIVERSAL and not _idiom(text, t.i)]
    if not mine:
        return []
    universal = partial = None
    for quote in quotes:
        for t in quote:
            if t.lower in UNIVERSAL and not _idiom(quote, t.i) and not _or_partial(quote, t.i):
                universal = t
            elif t.lower in PARTIAL and partial is None:
                partial = t
    if universal is not None or partial is None:
        return []
    word = mine[0].text
    return [Change("quantifier", False, (word,), f"'{word}' — the quote says '{partial.text}'")]


def _idiom(tree: Tree, i: int) -> bool:
    """ "at all", "all but", "above all", "after all", "in all": no quantity."""
    before = tree[i - 1].lower if i > 0 else ""
    after = tree[i + 1].lower if i + 1 < len(tree) else ""
    return tree[i].lower == "all" and (before in ("at", "above", "after", "in") or after == "but")


def _or_partial(tree: Tree, i: int) -> bool:
    """A universal word offered with a partial one: "in whole or in part", "fully or partly"."""
    near = [tree[n].lower for n in range(max(0, i - 4), min(len(tree), i + 5))]
    return "or" in near and any(w in PARTIAL for w in near)


CALLED = frozenset(
    ["call", "describe", "consider", "regard", "term", "dub", "deem", "label", "hail", "view",
     "tout", "bill", "acclaim", "characterize", "characterise", "portray", "brand", "style"]
)  # fmt: skip
"""Verbs that report a description rather than state it ("has been *called* the first truly
American event", "is *regarded as* the finest"): dropping one makes the description a fact."""


def called(tree: Tree, i: int) -> bool:
    """``i`` is a passive verb of calling with a description after it (an object predicate or
    an "as" phrase): "has been called the first …", "is regarded as …"."""
    if not tree.passive(i):
        return False
    if _as_phrases(tree, i):
        return True
    for c in tree.children[i]:
        if tree[c].dep in ("oprd", "attr", "xcomp"):
            # a name given ("an area dubbed the Nevada Triangle", "called 'Oxenaforda'") is no
            # description: only a common noun phrase or an adjective is one
            return tree[c].pos in ("NOUN", "ADJ") and not _in_quotation_marks(tree, c)
    return False


def _as_phrases(tree: Tree, i: int) -> list[int]:
    """The "as" phrases of verb ``i``, also one the parser hangs on its *by* phrase ("is touted
    by some as the most sweeping …")."""
    out = [c for c in tree.children[i] if tree[c].dep == "prep" and tree[c].lower == "as"]
    for c in tree.children[i]:
        if tree[c].dep == "agent":
            for o in tree.children[c]:
                out += [
                    x for x in tree.children[o] if tree[x].dep == "prep" and tree[x].lower == "as"
                ]
    return out


def _in_quotation_marks(tree: Tree, i: int) -> bool:
    before = tree.subtree(i)[0] - 1
    return before >= 0 and tree[before].text in ('"', "'", "“", "‘")


def called_change(a: Alignment, text: Tree, quote: Tree, q: int, v: int) -> list[Change]:
    """The text restates the description a quote's verb of calling reports, without the verb."""
    if any(m.quote == q and m.index == v for m in a.matches.values()):
        return []
    described = {
        n
        for c in quote.children[v]
        if quote[c].dep in ("oprd", "attr", "xcomp", "prep")
        for n in quote.subtree(c)
    }
    heads = {o for c in _as_phrases(quote, v) for o in quote.children[c]}
    if any(m.quote == q and m.index in heads for m in a.matches.values()):
        # an "as" hung on the "by" phrase: only a text that restates its head states it
        described |= {n for c in _as_phrases(quote, v) for n in quote.subtree(c)}
    mine = [i for i, m in a.matches.items() if m.quote == q and m.index in described]
    if not mine or any(t.lemma in CALLED for t in text):
        return []
    reason = f"the quote only reports it ('{quote[v].text}'); the text states it as fact"
    return [Change("hedge", True, (text[mine[0]].text,), reason)]
