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
from .roles import PRONOUNS, _deictic, _shared_subject
from .tree import Tree

__all__ = ["heading_names", "heading_subjects"]

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


def heading_subjects(a: Alignment, text: Tree, quotes: list[Tree], known: frozenset[str]) -> None:
    """Unalign a subject of ``text`` that is the heading's name ("*The Sunday Times* publishes
    the Rich List") when its words are aligned only to the quote's longer name that contains
    them ("The paper publishes *The Sunday Times* Rich List"): there they name another thing,
    not the doer. Unaligned, the name is read as the heading's subject standing where the quote
    says "it", "the paper" or nothing (:func:`~.heading.heading_fills`), or else as a word only
    the heading states: a person decides (in place). Aligned to the name itself ("It overtook
    The Sunday Times"), it stays, and the role rules read it."""
    if not known:
        return
    for t in text:
        if t.dep not in ("nsubj", "nsubjpass") or t.lower not in known or t.i not in a.matches:
            continue
        words = [c for c in text.children[t.i] if c < t.i and text[c].dep in ("compound", "flat")]
        words.append(t.i)
        if any(text[n].lower not in known for n in words):
            continue
        inside = True
        for n in words:
            m = a.matches.get(n)
            if m is None:
                continue
            quote, head = quotes[m.quote], m.index
            while quote[head].dep == "compound" and quote[head].head != head:
                head = quote[head].head
            inside = inside and head != m.index and quote[head].lower not in known
        # the quote states the text's predicate with "it", "the paper" or no subject
        verb = a.matches.get(t.head)
        if verb is None or t.head == t.i:
            continue
        quote = quotes[verb.quote]
        subjects = quote.kids(verb.index, "nsubj", "nsubjpass") or _shared_subject(
            quote, verb.index
        )
        if any(quote[s].lower not in PRONOUNS and not _deictic(quote, s) for s in subjects):
            continue
        if inside:
            for n in words:
                a.matches.pop(n, None)
                a.options.pop(n, None)
