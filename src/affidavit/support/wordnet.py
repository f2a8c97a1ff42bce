"""WordNet 3.0 for the support check (W11): which words restate which.

The lexicon is a compact file derived from the WordNet 3.0 database
(``data/wordnet.gz``, built by ``scripts/build_wordnet_lexicon.py``; licence in
``data/WORDNET-LICENSE``), read once, on the first question, into flat arrays. Lemmas are lower
case with spaces as ``_``; parts of speech are WordNet's: ``n`` noun, ``v`` verb, ``a``
adjective, ``r`` adverb.

The questions the support check asks (:mod:`affidavit.support.paraphrase`):

- :func:`synonyms` — two lemmas share a synset among their first senses;
- :func:`broader` — one is a hypernym of the other (a more general word: "animal" for "llama");
- :func:`antonyms` — WordNet lists them as opposites (directly, or through a synonym of one);
- :func:`derived` — one is a derivation of the other ("establish" / "establishment").

A synonym restates a word; it never restates a number, a name, a role or a scope — the check's
other rules read those.
"""

from __future__ import annotations

import gzip
import json
import sys
import threading
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache
from importlib.resources import files

__all__ = [
    "POS",
    "antonyms",
    "broader",
    "derived",
    "derived_synonym",
    "kind_of",
    "senses",
    "sisters",
    "synonyms",
]

POS = ("n", "v", "a", "r")
SENSES = 4
"""How many of a lemma's senses (most frequent first) count for synonymy: WordNet lists 41 for
the verb *run*, and its rare ones would make almost any two verbs synonyms."""
BROADER_SENSES = 3
"""Senses of the narrower word whose hypernyms are followed."""
DEPTH = 3
"""Hypernym steps followed: "llama" → "camelid" → "even-toed ungulate" → "ungulate"; beyond a
few steps WordNet's hierarchy says little ("entity", "object")."""


class _Lexicon:
    """The lexicon in memory: its sections as flat arrays (see the build script), and a dict
    from each "lemma\tpos" key to its number."""

    def __init__(self, blob: bytes) -> None:
        header_end = 0
        places: dict[str, list[int | str]] = {}
        while not places:
            line_end = blob.index(b"\n", header_end)
            line = blob[header_end:line_end]
            header_end = line_end + 1
            if line.startswith(b"{"):
                places = json.loads(line)
        payload = memoryview(blob)[header_end:]

        def section(name: str) -> array[int]:
            start, length, _ = places[name]
            data = array("i")
            data.frombytes(payload[int(start) : int(start) + int(length)])
            if sys.byteorder != "little":
                data.byteswap()
            return data

        start, length, _ = places["lemmas"]
        keys = bytes(payload[int(start) : int(start) + int(length)]).decode("utf-8").split("\n")
        self.keys = keys
        self.index = {key: n for n, key in enumerate(keys)}
        self.sense_at, self.senses = section("sense_at"), section("senses")
        self.hyper_at, self.hyper = section("hyper_at"), section("hyper")
        self.similar_at, self.similar = section("similar_at"), section("similar")
        self.pairs = {k: section(k) for k in ("antonym", "derived", "pertains")}
        self.firsts = {k: v[::2] for k, v in self.pairs.items()}

    def synsets(self, key: str, limit: int) -> tuple[int, ...]:
        n = self.index.get(key)
        if n is None:
            return ()
        start = self.sense_at[n]
        return tuple(self.senses[start : min(self.sense_at[n + 1], start + limit)])

    def hypernyms(self, synset: int) -> Iterable[int]:
        return self.hyper[self.hyper_at[synset] : self.hyper_at[synset + 1]]

    def similar_to(self, synset: int) -> Iterable[int]:
        return self.similar[self.similar_at[synset] : self.similar_at[synset + 1]]

    def linked(self, kind: str, key: str) -> list[str]:
        """The keys ``kind`` links ``key`` to (pairs sorted by their first lemma)."""
        n = self.index.get(key)
        if n is None:
            return []
        firsts, pairs = self.firsts[kind], self.pairs[kind]
        at = bisect_left(firsts, n)
        out: list[int] = []
        while at < len(firsts) and firsts[at] == n:
            out.append(pairs[2 * at + 1])
            at += 1
        return [self.keys[m] for m in out]


_LOCK = threading.Lock()
_LOADED: list[_Lexicon] = []


def _lexicon() -> _Lexicon:
    if not _LOADED:
        with _LOCK:
            if not _LOADED:
                data = files("affidavit.support").joinpath("data", "wordnet.gz")
                _LOADED.append(_Lexicon(gzip.decompress(data.read_bytes())))
    return _LOADED[0]


def _key(lemma: str) -> str:
    return lemma.casefold().replace(" ", "_")


@lru_cache(maxsize=65536)
def senses(lemma: str, pos: str, limit: int = SENSES) -> tuple[int, ...]:
    """The synsets of ``lemma`` as ``pos``, most frequent first (at most ``limit``; cached: a
    word is compared with every word of its quotes)."""
    return _lexicon().synsets(f"{_key(lemma)}\t{pos}", limit)


def known(lemma: str, pos: str) -> bool:
    """WordNet has ``lemma`` as ``pos``."""
    return bool(senses(lemma, pos, 1))


@lru_cache(maxsize=65536)
def synonyms(a: str, b: str, pos: str) -> bool:
    """``a`` and ``b`` share a synset among their first :data:`SENSES` senses (adjectives: or
    one's synset is "similar to" the other's: a satellite and its head)."""
    mine, theirs = set(senses(a, pos)), set(senses(b, pos))
    if mine & theirs:
        return True
    if pos != "a":
        return False
    lexicon = _lexicon()
    return any(s in theirs for m in mine for s in lexicon.similar_to(m)) or any(
        s in mine for t in theirs for s in lexicon.similar_to(t)
    )


@lru_cache(maxsize=65536)
def broader(general: str, specific: str, pos: str) -> bool:
    """``general`` is a hypernym of ``specific`` (within :data:`DEPTH` steps of one of its first
    :data:`BROADER_SENSES` senses): what is true of a llama is true of an animal."""
    goal = set(senses(general, pos))
    if not goal:
        return False
    lexicon = _lexicon()
    frontier = set(senses(specific, pos, BROADER_SENSES))
    for _ in range(DEPTH):
        frontier = {h for s in frontier for h in lexicon.hypernyms(s)}
        if frontier & goal:
            return True
        if not frontier:
            return False
    return False


@lru_cache(maxsize=65536)
def antonyms(a: str, b: str, pos: str) -> bool:
    """WordNet lists ``a`` and ``b`` as opposites: directly, or one is the antonym of a
    synonym of the other ("increase" / "reduce" through "decrease")."""
    lexicon = _lexicon()
    for x, y in ((a, b), (b, a)):
        for opposite in lexicon.linked("antonym", f"{_key(x)}\t{pos}"):
            if opposite == f"{_key(y)}\t{pos}" or synonyms(opposite.split("\t")[0], y, pos):
                return True
    return False


@lru_cache(maxsize=65536)
def derived(a: str, pos_a: str, b: str, pos_b: str) -> bool:
    """One is a derivationally related form (or a pertainym) of the other: "establish" (v) /
    "establishment" (n), "global" (a) / "globe" (n)."""
    lexicon = _lexicon()
    ka, kb = f"{_key(a)}\t{pos_a}", f"{_key(b)}\t{pos_b}"
    return kb in lexicon.linked("derived", ka) or kb in lexicon.linked("pertains", ka)


@lru_cache(maxsize=65536)
def derived_synonym(a: str, pos_a: str, b: str, pos_b: str) -> bool:
    """A derivation of one is a synonym of the other ("employed" / "job" through
    "employment"): one step of each, never more (two would relate almost anything)."""
    lexicon = _lexicon()
    for x, px, y, py in ((a, pos_a, b, pos_b), (b, pos_b, a, pos_a)):
        for key in lexicon.linked("derived", f"{_key(x)}\t{px}"):
            lemma, pos = key.split("\t")
            if pos == py and lemma != y and synonyms(lemma, y, pos):
                return True
    return False


KIND_DEPTH = 8
"""Hypernym steps :func:`kind_of` follows (a saxophone is a musical instrument six steps up)."""


@lru_cache(maxsize=65536)
def kind_of(general: str, specific: str) -> bool:
    """The noun ``specific`` is a ``general`` (one of its first three senses, or a hypernym
    within :data:`KIND_DEPTH` steps, is among ``general``'s first eight senses): "the
    instrument" may point to a saxophone, "the clarinet" may not."""
    goal = set(senses(general, "n", 8))
    frontier = set(senses(specific, "n", BROADER_SENSES))
    if not goal or not frontier:
        return False
    return _reaches(frontier, goal)


def _reaches(frontier: set[int], goal: set[int]) -> bool:
    """Some synset of ``frontier``, or a hypernym within :data:`KIND_DEPTH` steps, is in ``goal``."""
    lexicon = _lexicon()
    for _ in range(KIND_DEPTH + 1):
        if frontier & goal:
            return True
        frontier = {h for s in frontier for h in lexicon.hypernyms(s)}
        if not frontier:
            return False
    return False


@lru_cache(maxsize=65536)
def first_kind_of(general: str, specific: str) -> bool:
    """The noun ``specific`` in its first (most frequent) sense is a ``general`` (the same
    synset or a hypernym within :data:`KIND_DEPTH` steps): a cat is an animal, though one of
    its rarer senses ("a guy") is a person."""
    return _reaches(set(senses(specific, "n", 1)), set(senses(general, "n", 8)))


@lru_cache(maxsize=65536)
def sisters(a: str, b: str, pos: str) -> bool:
    """``a`` and ``b`` are two kinds of one thing: a hypernym of one of ``a``'s first
    :data:`SENSES` senses is a hypernym of one of ``b``'s ("king" / "queen": sovereigns),
    and they share none of those senses."""
    mine, theirs = set(senses(a, pos)), set(senses(b, pos))
    if mine & theirs:
        return False
    lexicon = _lexicon()
    above = {h for s in mine for h in lexicon.hypernyms(s)}
    return any(h in above for s in theirs for h in lexicon.hypernyms(s))
