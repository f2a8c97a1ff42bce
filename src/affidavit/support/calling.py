"""What the quote says a thing is (W11 structure rule): the text's description against the quote's.

"The Monster is a song by Eminem" against "'The Monster' is an album by Eminem, featuring guest
vocals …": every word is restated somewhere — "song" by "vocals" (WordNet's *song, vocal*) —
but the quote calls The Monster an *album*. :func:`description_changes` reads the text's copula
("X is a N") and the quote's statement of what the same X is — its copula's noun ("is an
album"), a verb of calling's *as* ("is known as a designer"), "one of" a group ("was one of
Freddy Mercury's cats"), with the members of a list and their modifiers — and, when the text's
noun is restated only by a quote word outside that description, names the change as likely
(uncertain: "the quote calls 'Monster' an 'album'"). A text noun restated by the description
itself — the same word, a synonym, a broader word ("a person" for "an actor") — is kept, and
so is one restated by a quote word that describes something itself ("making it the
seventh-highest grossing novel") or a subject whose name the quote states twice (which one
the text means is unclear); a noun no quote word restates is left to the coverage rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import wordnet
from .align import BROADER, SYNONYM, Alignment
from .tree import Change, Tree

__all__ = ["description_changes"]

_CALLING = frozenset(["know", "regard", "describe", "consider", "call", "list", "see"])
"""Verbs whose *as* gives what the subject is ("is known as a designer")."""
_SUBJECT = frozenset(["nsubj", "nsubjpass"])
_DESCRIBING = frozenset(["attr", "oprd", "appos", "acomp"])
"""A quote word in one of these slots describes something itself (maybe the subject, through a
pronoun or another clause): the text restating it is not restating a stray word."""
_PARTS = frozenset(["compound", "amod", "nmod", "appos", "conj", "flat"])


def _noun_head(tree: Tree, i: int) -> int:
    """The head noun of the name ``i`` is part of ("Jiang" → "Wen")."""
    seen = 0
    while tree[i].dep in ("compound", "flat") and tree[i].head != i and seen < 8:
        i, seen = tree[i].head, seen + 1
    return i


def _phrase(tree: Tree, i: int, into: set[int]) -> None:
    """``i`` with the list members and modifiers it heads ("a film special effects designer")."""
    if i in into:
        return
    into.add(i)
    for c in tree.children[i]:
        if tree[c].dep in _PARTS:
            _phrase(tree, c, into)
        elif tree[c].dep == "prep" and tree[i].lower == "one" and tree[c].lower == "of":
            for o in tree.children[c]:
                if tree[o].dep == "pobj":
                    _phrase(tree, o, into)  # "one of Freddy Mercury's cats"


def _described(quote: Tree, subject: int) -> tuple[set[int], int] | None:
    """The quote's words that say what ``subject`` is, and the head noun among them."""
    s = _noun_head(quote, subject)
    if quote[s].dep not in _SUBJECT or quote[s].head == s:
        return None
    verb = quote[quote[s].head]
    heads: list[int] = []
    if verb.lemma == "be":
        heads = [c for c in quote.children[verb.i] if quote[c].dep == "attr"]
    elif verb.lemma in _CALLING:
        for c in quote.children[verb.i]:
            if quote[c].dep == "prep" and quote[c].lower == "as":
                heads += [o for o in quote.children[c] if quote[o].dep == "pobj"]
    heads = [h for h in heads if quote[h].pos in ("NOUN", "PROPN", "NUM", "PRON")]
    if len(heads) != 1:
        return None
    described: set[int] = set()
    _phrase(quote, heads[0], described)
    return described, heads[0]


def description_changes(a: Alignment, text: Tree, quotes: Sequence[Tree]) -> list[Change]:
    out: list[Change] = []
    for t in text:
        if t.dep != "attr" or t.pos != "NOUN" or t.head == t.i:
            continue
        if any(text[c].dep == "nummod" for c in text.children[t.i]):
            continue  # a label with its number ("category 5"): the number rules'
        verb = text[t.head]
        if verb.lemma != "be":
            continue
        said = a.matches.get(t.i)
        subjects = [c for c in text.children[verb.i] if text[c].dep == "nsubj"]
        if said is None or len(subjects) != 1:
            continue
        who = a.matches.get(subjects[0])
        if who is None or who.quote != said.quote:
            continue
        quote = quotes[who.quote]
        if quote[said.index].dep in _DESCRIBING or quote.kids(said.index, "nsubj"):
            continue  # the quote describes something as it ("making it the … novel")
        if sum(1 for q in quote if q.lemma == quote[who.index].lemma) > 1:
            continue  # the subject's name stands twice: which one the text means is unclear
        found = _described(quote, who.index)
        if found is None:
            continue
        calls = quote[found[1]].text
        if said.index in found[0]:
            word = quote[said.index]
            if said.how not in (BROADER, SYNONYM) or word.pos != "NOUN":
                continue
            if wordnet.first_kind_of(t.lemma, word.lemma):
                continue  # "a person" for "an actor"
            out.append(
                Change(
                    "role",
                    False,
                    (t.text,),
                    f"the quote calls '{text[subjects[0]].text}' '{word.text}': a '{t.text}' "
                    f"only in a rare sense of '{word.text}'",
                )
            )
            continue
        out.append(
            Change(
                "role",
                False,
                (t.text,),
                f"the quote calls '{text[subjects[0]].text}' '{calls}', not '{t.text}'",
            )
        )
    return out
