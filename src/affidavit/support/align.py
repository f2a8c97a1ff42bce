"""Aligning a text's words to its quotes' words, for the support check's structure rules (W11).

A text and its quotes are parsed (:mod:`.parse`); each content word of the text is matched to
the quote word that restates it — the same word or lemma, the same stem, the same number, a
name's demonym or alias, or, from WordNet (:mod:`.wordnet`), a synonym, a derivation ("the
establishment of" / "established") or a broader word ("animal" for "llama"). A word that
occurs several times in the quotes is matched to the occurrence whose neighbours (its head and
dependents) are matched too ("Mainstream support ended" to the quote where *mainstream support*
ended, not the one where *extended support* did). An antonym is never a match: it is recorded as
an opposite ("lower" against "higher"), which the rules name.

The alignment is what the structure rules compare: which noun a number belongs to, who does what
to whom, what a negation, quantifier or hedge scopes over (:mod:`.structure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from ..words import stem
from . import wordnet
from .paraphrase import anchored, phrasal
from .parse import Parse, Token

__all__ = ["Alignment", "Match", "align", "content", "wn_pos"]

CONTENT_POS = frozenset(["NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"])
LIGHT = frozenset(
    [
        "be", "have", "do", "also", "very", "so", "too", "then", "there", "here", "just",
        "even", "still", "such", "other", "same", "own", "well", "much", "as", "not", "n't",
        "that", "this", "which", "who", "e.g.", "i.e.", "etc", "thus", "however",
    ]
)  # fmt: skip
"""Lemmas that are never content words (auxiliaries, particles, discourse words)."""
_WN = {"NOUN": "n", "PROPN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}

SAME, STEM, NUMBER, NAME, SYNONYM, DERIVED, BROADER = (
    "same", "stem", "number", "name", "synonym", "derived", "broader",
)  # fmt: skip
STRENGTH = {SAME: 6, NUMBER: 6, NAME: 5, STEM: 5, SYNONYM: 4, DERIVED: 3, BROADER: 3}
EQUIVALENT = {
    frozenset(p)
    for p in [
        ("people", "person"), ("people", "individual"), ("person", "individual"),
        ("often", "frequently"), ("usually", "generally"), ("usually", "normally"),
        ("generally", "commonly"), ("usually", "typically"), ("mainly", "primarily"),
        ("mainly", "mostly"), ("largely", "mostly"), ("chiefly", "mainly"),
        ("single", "one"), ("sole", "only"), ("widely", "largely"), ("widely", "generally"), ("solely", "only"), ("labour", "labor"),
        ("colour", "color"), ("centre", "center"), ("centred", "centered"),
        ("metre", "meter"), ("litre", "liter"), ("behaviour", "behavior"),
        ("owing", "due"), ("neighbouring", "neighboring"), ("neighbour", "neighbor"),
    ]
}  # fmt: skip
"""Word pairs that restate each other which WordNet does not list as synonyms (spelling
variants, a few frequency and focus adverbs)."""


def wn_pos(token: Token) -> str:
    return _WN.get(token.pos, "")


def content(token: Token) -> bool:
    """A word that carries content: a noun, name, verb, adjective, adverb or number that is not
    an auxiliary or a light word."""
    if token.pos not in CONTENT_POS or token.dep in ("aux", "auxpass"):
        return False
    if token.lemma in ("be", "have", "do") or token.lower in LIGHT:
        return False
    return any(c.isalnum() for c in token.text)


@dataclass(frozen=True)
class Match:
    """A text token restated by quote ``quote``'s token ``index``, and how."""

    quote: int
    index: int
    how: str


@dataclass
class Alignment:
    """The text's tokens matched to the quotes' tokens."""

    text: Parse
    quotes: tuple[Parse, ...]
    matches: dict[int, Match] = field(default_factory=dict)
    opposites: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Text token → (quote, token) it is the antonym of."""
    options: dict[int, list[Match]] = field(default_factory=dict)
    """Text token → every quote token that restates it equally well (when there are several)."""

    def quote_token(self, match: Match) -> Token:
        return self.quotes[match.quote][match.index]

    def of(self, i: int) -> Match | None:
        return self.matches.get(i)

    def reverse(self) -> dict[tuple[int, int], list[int]]:
        """(quote, token) → the text tokens matched to it."""
        out: dict[tuple[int, int], list[int]] = {}
        for i, m in self.matches.items():
            out.setdefault((m.quote, m.index), []).append(i)
        return out


def number_value(token: Token) -> Decimal | None:
    """The value of a number token written in digits ("1,500", "3.61"), else None."""
    plain = token.text.replace(",", "")
    if not plain or not (plain[0].isdigit() or (plain[0] == "." and plain[1:2].isdigit())):
        return None
    try:
        return Decimal(plain).normalize()
    except ArithmeticError:
        return None


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return stem(word)


def semantic(t: Token, u: Token) -> str:
    """How ``u`` restates ``t`` by WordNet ('' if it doesn't)."""
    a, b = wn_pos(t), wn_pos(u)
    if not a or not b or t.pos == "PROPN" or u.pos == "PROPN":
        return ""
    mixed = a != b and ({a, b} <= {"v", "a"} or {a, b} <= {"a", "r"})
    poses = {a, b} if mixed else {a} if a == b else set()
    for pos in poses:  # a participle is tagged a verb on one side, an adjective on the other;
        # an adverb is often an adjective the tagger misread ("hard to forecast")
        if wordnet.synonyms(t.lemma, u.lemma, pos):
            return SYNONYM
    if (
        wordnet.derived(t.lemma, a, u.lemma, b) or wordnet.derived_synonym(t.lemma, a, u.lemma, b)
    ) and not _doer_of(t, u):
        return DERIVED
    for pos in poses:
        if wordnet.broader(t.lemma, u.lemma, pos):
            return BROADER
    return ""


def _doer_of(t: Token, u: Token) -> bool:
    """The text's noun ``t`` and the quote's ``u``: one names the person who does what the
    other names ("saxophonist" / "saxophone", "scientist" / "science"): derived, but not the
    same thing — unless the quote's thing names the kind of a person it stands on ("saxophone
    players" for the text's "saxophonists")."""
    if wn_pos(t) != "n" or wn_pos(u) != "n":
        return False
    person = wordnet.kind_of("person", t.lemma)
    if person == wordnet.kind_of("person", u.lemma):
        return False
    return not (person and u.dep == "compound")


NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")


class _Word(NamedTuple):
    """A quote's content word with the stems :func:`_restates` and :func:`_opposed` compare."""

    quote: int
    token: Token
    stem: str  # of its form
    lemma_stem: str


_EQUIVALENT_WORDS = frozenset(w for pair in EQUIVALENT for w in pair)


def _restates(t: Token, t_stem: str | None, u: _Word) -> str:
    """How ``u`` restates ``t`` by their words alone ('' if it doesn't): the same word or lemma,
    the same stem (``t_stem``: ``t``'s, None for a word under four letters), an equivalent
    spelling or adverb."""
    v = u.token
    if t.lower == v.lower or (t.lemma == v.lemma and t.lemma):
        return SAME
    if t_stem is not None and t_stem == u.stem:
        return STEM
    if (t.lemma in _EQUIVALENT_WORDS or t.lower in _EQUIVALENT_WORDS) and (
        frozenset((t.lemma, v.lemma)) in EQUIVALENT or frozenset((t.lower, v.lower)) in EQUIVALENT
    ):
        return SYNONYM
    return ""


def _negated_stems(t: Token) -> tuple[str, ...]:
    """The stems of ``t`` without a negating prefix it starts with (:func:`_opposed`)."""
    out = []
    for prefix in NEGATING_PREFIXES:
        base = t.lower[len(prefix) :].lstrip("-")
        if t.lower.startswith(prefix) and len(base) >= 4:
            out.append(_stem(base))
    return tuple(out)


def _opposed(t: Token, negated: tuple[str, ...], u: _Word) -> bool:
    """``t`` is the antonym of ``u`` (WordNet), or ``u`` with a negating prefix ("undefined" /
    "defined", "defines"; ``negated``: :func:`_negated_stems` of ``t``)."""
    if any(s in (u.stem, u.lemma_stem) for s in negated):
        return True
    a, b = wn_pos(t), wn_pos(u.token)
    if not a or a != b or t.pos == "PROPN":
        return False
    return wordnet.antonyms(t.lemma, u.token.lemma, a)


def align(text: Parse, quotes: Sequence[Parse]) -> Alignment:
    """Match each content token of ``text`` to the quote token that restates it best."""
    result = Alignment(text, tuple(quotes))
    quote_words = [
        _Word(q, u, _stem(u.lower), _stem(u.lemma))
        for q, parse in enumerate(quotes)
        for u in parse
        if content(u)
    ]
    values = [number_value(w.token) for w in quote_words]
    text_phrasal = phrasal(text)
    quote_phrasal = [phrasal(q) for q in quotes]
    candidates: dict[int, list[tuple[int, Match]]] = {}
    for t in text:
        if not content(t):
            continue
        found: list[tuple[int, Match]] = []
        value = number_value(t) if t.pos == "NUM" else None
        if value is not None:
            found = [
                (STRENGTH[NUMBER], Match(w.quote, w.token.i, NUMBER))
                for w, v in zip(quote_words, values, strict=True)
                if v == value
            ]
        else:
            t_stem = _stem(t.lower) if len(t.lower) >= 4 else None
            for w in quote_words:
                how = _restates(t, t_stem, w)
                if how:
                    found.append((STRENGTH[how], Match(w.quote, w.token.i, how)))
        if not found and value is None:
            negated = _negated_stems(t)
            verb = text_phrasal.get(t.i, t.lemma) if t.pos == "VERB" else ""
            for w in quote_words:
                how = semantic(t, w.token)
                if not how and verb and w.token.pos == "VERB":
                    theirs = quote_phrasal[w.quote].get(w.token.i, w.token.lemma)
                    if verb != t.lemma or theirs != w.token.lemma:
                        how = SYNONYM if wordnet.synonyms(verb, theirs, "v") else ""
                if how:
                    found.append((STRENGTH[how], Match(w.quote, w.token.i, how)))
                elif t.i not in result.opposites and _opposed(t, negated, w):
                    result.opposites[t.i] = (w.quote, w.token.i)
        if found:
            best = max(s for s, _ in found)
            candidates[t.i] = [(s, m) for s, m in found if s == best]
    _anchor(result, candidates)
    # single candidates first, then the ambiguous ones by how many neighbours agree
    for i, options in candidates.items():
        if len(options) == 1:
            result.matches[i] = options[0][1]
    for i, options in candidates.items():
        if len(options) > 1:
            result.options[i] = [m for _, m in options]
    if any(len(options) > 1 for options in candidates.values()):
        near = _Near(result)
        for _ in range(2):
            for i, options in candidates.items():
                if len(options) == 1:
                    continue
                result.matches[i] = max(
                    (m for _, m in options), key=lambda m: _agreement(result, i, m, near)
                )
    return result


def _anchor(result: Alignment, candidates: dict[int, list[tuple[int, Match]]]) -> None:
    """Match a text word left unmatched to a quote word in the same place — the word it hangs
    on, or one hanging on it, matched to the quote word's — when the two share a sense among
    more of their senses (:func:`.paraphrase.anchored`)."""
    text, quotes = result.text, result.quotes
    near_text = _all_neighbours(text)
    near_quotes: dict[int, list[list[int]]] = {}
    for t in text:
        if t.i in candidates or t.i in result.opposites or not content(t) or t.pos == "NUM":
            continue
        a = wn_pos(t)
        if not a:
            continue
        found: list[tuple[int, Match]] = []
        for n in near_text[t.i]:
            for _, m in candidates.get(n, ()):
                if m.quote not in near_quotes:
                    near_quotes[m.quote] = _all_neighbours(quotes[m.quote])
                for k in near_quotes[m.quote][m.index]:
                    u = quotes[m.quote][k]
                    b = wn_pos(u)
                    if (
                        content(u)
                        and (a == b or {a, b} <= {"v", "a"})
                        and any(anchored(t, u, pos) for pos in {a, b})
                    ):
                        found.append((STRENGTH[SYNONYM], Match(m.quote, k, SYNONYM)))
        if found:
            candidates[t.i] = list(dict.fromkeys(found))


class _Near:
    """The neighbours of every token of an alignment's text and quotes, found once."""

    def __init__(self, result: Alignment) -> None:
        self.text = _all_neighbours(result.text)
        self.quotes = [_all_neighbours(q) for q in result.quotes]
        self._within: dict[tuple[int, int], set[int]] = {}

    def within_two(self, quote: int, index: int) -> set[int]:
        """The tokens of quote ``quote`` within two steps of token ``index``, itself excluded."""
        key = (quote, index)
        found = self._within.get(key)
        if found is None:
            around = self.quotes[quote]
            found = set(around[index])
            found |= {n2 for n in list(found) for n2 in around[n]}
            found.discard(index)
            self._within[key] = found
        return found


def _all_neighbours(parse: Parse) -> list[list[int]]:
    """Every token's neighbours in ``parse``: its head (unless a root), then its dependents."""
    children: list[list[int]] = [[] for _ in parse]
    for t in parse:
        if t.head != t.i:
            children[t.head].append(t.i)
    return [([t.head] if t.head != t.i else []) + children[t.i] for t in parse]


def _agreement(result: Alignment, i: int, match: Match, near: _Near) -> tuple[int, int, int]:
    """How many of text token ``i``'s neighbours are matched into the neighbourhood of
    ``match`` (within two steps, itself excluded), then whether no other text token is matched
    to it, then a preference for the earlier quote."""
    close = near.within_two(match.quote, match.index)
    agree = 0
    for n in near.text[i]:
        other = result.matches.get(n)
        if other is not None and other.quote == match.quote and other.index in close:
            agree += 1
    taken = any(m == match for j, m in result.matches.items() if j != i)
    return agree, 0 if taken else 1, -match.quote
