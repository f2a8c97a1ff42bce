"""Content words: the lexicon shared by retrieval and the grounding checks."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

_WORD = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "even",
        "every",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "made",
        "make",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "new",
        "no",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
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
        "so",
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
        "to",
        "too",
        "two",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "was",
        "we",
        "well",
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
        "year",
        "years",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
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
    return set(map(stem, content_words(text)))


def has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)
