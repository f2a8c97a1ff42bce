"""Paraphrase knowledge the alignment (:mod:`.align`) asks for when a word has no plain match.

Two WordNet 3.0 readings (:mod:`.wordnet`), each of which only says that two *words* restate
each other — numbers, names, roles, quantifiers, hedges and negation are read by the other rules
whatever this module says:

- **Phrasal verbs.** A verb with its particle is one lemma in WordNet: "set up" is a synonym of
  "establish", "took place" of "occurred", "carried out" of "performed". :func:`phrasal` gives a
  parse's verbs with a particle the lemma WordNet lists ("set_up"), so either side's phrasal verb
  can be compared as one word.
- **Anchored senses.** :func:`anchored` compares two nouns over more of their senses
  (:data:`ANCHORED_SENSES`, not :data:`.wordnet.SENSES`) — but the alignment asks only for a
  text word and a quote word that stand in the same place: the word each hangs on, or a word
  hanging on each, is already matched to the other's ("the main *crossing* of the Andes" / "the
  main *crossover* of the Andes"). The neighbours pick the sense that a bare comparison over eight
  senses would guess. Verbs and adjectives are never compared so, nor nouns of a contrast set
  ("king" / "queen").
"""

from __future__ import annotations

from . import wordnet
from .parse import Parse, Token

__all__ = ["ANCHORED_SENSES", "anchored", "phrasal"]

ANCHORED_SENSES = 8
"""Senses of each word compared when the two stand in the same place (twice
:data:`.wordnet.SENSES`: the sixth sense of "cover" is "encompass")."""


def phrasal(parse: Parse) -> dict[int, str]:
    """The parse's verbs that take a particle ("set *up*", "carried *out*"), each with the
    phrasal lemma WordNet lists as a verb ("set_up"); verbs WordNet doesn't list are left out."""
    out: dict[int, str] = {}
    for t in parse:
        if t.dep != "prt" or t.head == t.i:
            continue
        verb = parse[t.head]
        if verb.pos != "VERB":
            continue
        lemma = f"{verb.lemma}_{t.lower}"
        if wordnet.known(lemma, "v"):
            out[verb.i] = lemma
    return out


def phrasal_synonyms(a: str, b: str) -> bool:
    """Two verb lemmas (either may be phrasal, "set_up") share a synset among their first
    senses."""
    return wordnet.synonyms(a, b, "v")


def _lemmas(t: Token, pos: str) -> tuple[str, ...]:
    """``t``'s lemma, and for a noun its own form when WordNet lists that as a noun: the
    lemmatiser takes the "s" off nouns that end in one ("means" → "mean", "species")."""
    if pos == "n" and t.lower != t.lemma and t.lower.endswith("s") and wordnet.known(t.lower, "n"):
        return (t.lemma, t.lower)
    return (t.lemma,)


def anchored(t: Token, u: Token, pos: str) -> bool:
    """``t`` and ``u``, both common nouns (``pos`` "n"), share a synset among their first
    :data:`ANCHORED_SENSES` senses and are not two kinds of one thing: asked only of words whose
    neighbours are already matched.

    Nouns only. A verb's rare sense can reverse its roles ("learn" is listed as "teach") and an
    adjective's can change a degree ("small" / "low", "poor" / "short"); and two nouns whose
    usual senses are sisters under one hypernym ("king" / "queen", both sovereigns, which
    share a rarer sense) are another thing, not the same."""
    if pos != "n" or t.pos != "NOUN" or u.pos != "NOUN":
        return False
    mine = {s for lemma in _lemmas(t, pos) for s in wordnet.senses(lemma, pos, ANCHORED_SENSES)}
    if not mine or not any(
        not mine.isdisjoint(wordnet.senses(lemma, pos, ANCHORED_SENSES))
        for lemma in _lemmas(u, pos)
    ):
        return False
    return not any(
        wordnet.sisters(a, b, pos) or wordnet.antonyms(a, b, pos)
        for a in _lemmas(t, pos)
        for b in _lemmas(u, pos)
    )
