"""A pointing phrase for the page's own subject (W11): "the city" for "Rotterdam".

A writer who knows what the page is about writes "the city's port" where its quote says
"Rotterdam's port". The source's heading (the context) names the subject; WordNet says what kind
of thing the name is (Rotterdam is an instance of *city*, within the hypernym steps
:func:`~.wordnet.broader` follows). A bare definite noun of the text ("the city", "the city's")
that no quote word restates is aligned to the quote's name when that name is a word of the
heading and the noun is a kind it is an instance of — and only when exactly one such name
stands in the quotes. Aligned, it is read as that name by every other rule: its role around a
predicate, the number it holds, its comparisons ("Antwerp overtook the city" for "Rotterdam
overtook Antwerp" is still a reversed role). A name the heading does not give, a kind the name
is not ("the country" for Rotterdam) or two candidate names leave the noun unrestated.
"""

from __future__ import annotations

from . import wordnet
from .align import BROADER, Alignment, Match, content
from .tree import Tree

__all__ = ["heading_names"]

POINTING = frozenset(["the"])
"""The determiner a pointing phrase carries (nothing else on the noun but a possessive)."""
POSSESSIVE = frozenset(["'s", "\u2019s", "'"])


def _pointing(text: Tree, i: int) -> bool:
    """``i`` is a bare definite common noun: "the city", "the city's"."""
    t = text[i]
    if t.pos != "NOUN" or t.tag not in ("NN",) or not content(t):
        return False
    words = [text[c].lower for c in text.children[i]]
    return "the" in words and all(w in POINTING or w in POSSESSIVE for w in words)


def _name_keys(quote: Tree, i: int) -> list[str]:
    """The name at ``i`` as WordNet keys: with its compound words ("new_york"), and alone."""
    parts = [c for c in quote.children[i] if c < i and quote[c].dep == "compound"]
    whole = "_".join(quote[n].lower for n in [*parts, i])
    return list(dict.fromkeys([whole, quote[i].lower]))


def heading_names(a: Alignment, text: Tree, quotes: list[Tree], known: frozenset[str]) -> None:
    """Align each bare definite noun of ``text`` to the one quoted name of the heading
    (``known``: its words, casefolded) that is an instance of it (in place)."""
    if not known:
        return
    names = [
        (q, u.i, _name_keys(quote, u.i))
        for q, quote in enumerate(quotes)
        for u in quote
        if u.pos == "PROPN" and u.lower in known and u.dep != "compound"
    ]
    if not names:
        return
    for t in text:
        if t.i in a.matches or not _pointing(text, t.i):
            continue
        kinds = {
            (q, i, keys[0])
            for q, i, keys in names
            if any(wordnet.broader(t.lemma, key, "n") for key in keys)
        }
        if len({key for _, _, key in kinds}) == 1:
            # the occurrence in the quote its head's word is aligned to ("the city's diversity"
            # for the quote where Rotterdam's diversity stands), else the first
            near = a.matches.get(t.head)
            q, i, _ = min(kinds, key=lambda k: (near is None or k[0] != near.quote, k))
            a.matches[t.i] = Match(q, i, BROADER)
