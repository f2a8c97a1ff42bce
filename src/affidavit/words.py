"""Content words: the lexicon shared by retrieval and the grounding checks."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

_WORD = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "and",
        "any",
        "are",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "can",
        "could",
        "did",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "into",
        "its",
        "itself",
        "just",
        "more",
        "most",
        "must",
        "not",
        "now",
        "off",
        "once",
        "only",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "she",
        "should",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "too",
        "under",
        "until",
        "upon",
        "very",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "one",
        "two",
        "may",
        "might",
        "many",
        "much",
        "every",
        "well",
        "even",
        "new",
        "made",
        "make",
        "year",
        "years",
    ]
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning: casefolded, NFKC, 3+ letters or any number,
    stopwords left out."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return {w for w in _WORD.findall(folded) if (len(w) >= 3 or w.isdigit()) and w not in STOPWORDS}


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English Snowball stem of a casefolded word ("freedoms" → "freedom")."""
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> set[str]:
    """The stems of the content words of ``text``."""
    return {stem(w) for w in content_words(text)}


def has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)
