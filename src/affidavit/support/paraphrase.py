"""Paraphrase knowledge the alignment (:mod:`.align`) asks for when a word has no plain match.

Two WordNet 3.0 readings (:mod:`.wordnet`), each of which only says that two *words* restate
each other — numbers, names, roles, quantifiers, hedges and negation are read by the other rules
whatever this module says:

- **Phrasal verbs.** A verb with its particle is one lemma in WordNet: "set up" is a synonym of
  "establish", "took place" of "occurred", "carried out" of "performed". :func:`phrasal` gives a
  parse's verbs with a particle the lemma WordNet lists ("set_up"), so either side's phrasal verb
  can be compared as one word.
- **Anchored senses.** :func:`anchored` compares two words over more of their senses
  (:data:`ANCHORED_SENSES`, not :data:`.wordnet.SENSES`) — but the alignment asks only for a
  text word and a quote word that stand in the same place: the word each hangs on, or a word
  hanging on each, is already matched to the other's ("the main *crossing* of the Andes" / "the
  main *crossover* of the Andes"). The neighbours pick the sense that a bare comparison over eight
  senses would guess ("cover" / "encompass": both "include within its scope").
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
    """``t`` and ``u`` (of part of speech ``pos``) share a synset among their first
    :data:`ANCHORED_SENSES` senses: asked only of words whose neighbours are already matched."""
    if t.pos == "PROPN" or u.pos == "PROPN":
        return False
    mine = {s for lemma in _lemmas(t, pos) for s in wordnet.senses(lemma, pos, ANCHORED_SENSES)}
    return bool(mine) and any(
        not mine.isdisjoint(wordnet.senses(lemma, pos, ANCHORED_SENSES))
        for lemma in _lemmas(u, pos)
    )
