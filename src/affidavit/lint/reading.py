"""A claim's facts, context words and negation as :func:`affidavit.support.facts.analyse` reads them, for
a whole wiki's claims at a time.

The extractive finder reads every active claim to find the rare words claims share, then compares
the claims of related pages in pairs. ``analyse`` reads a claim token by token (some 45 µs a
claim, 2.8 s at 61k claims); here each piece of text between whitespace is read once per process
and looked up for every claim that has it. No token holds whitespace, so a text's tokens are its
pieces' tokens in turn; only a text's first token reads differently (a lone capital there is no
name). tests/test_lint_pairs.py compares both readings on real and odd text.
"""

from __future__ import annotations

import unicodedata
from itertools import chain

from ..support.facts import (
    _TOKEN,
    MONTHS,
    NEGATIONS,
    NOT_NAMES,
    NUMBER_WORDS,
    Sentence,
    _number,
)
from ..words import STOPWORDS, stem

NEGATED = "!"
"""What a negation reads as (no fact or stem starts with it)."""
_MAX_PIECES = 1 << 18


class _Pieces(dict[str, tuple[str, ...]]):
    """The words of a piece of text (not the first of its text), as :func:`_token_word` reads
    its tokens, each piece read the first time it is looked up: a wiki's claims share most
    pieces ("Congress," "the" "1,200")."""

    def __missing__(self, piece: str) -> tuple[str, ...]:
        words = tuple(w for t in _TOKEN.findall(piece) if (w := _token_word(t, False)))
        if len(self) >= _MAX_PIECES:
            self.clear()
        self[piece] = words
        return words


_PIECES = _Pieces()


def _token_word(token: str, first: bool) -> str:
    """What ``analyse`` makes of ``token`` (``first``: its text's first token): a fact (``#``
    number, month or number word, ``@`` name), a context stem, :data:`NEGATED`, or '' for
    nothing. The body of its loop."""
    lower = token.casefold()
    if lower in NEGATIONS or lower.endswith("n't"):
        return NEGATED
    if token[0].isdigit():
        return "#" + _number(token)
    if lower in NUMBER_WORDS or lower in MONTHS:
        return "#" + lower
    if token[0].isupper() and lower not in NOT_NAMES and (not first or len(token) > 1):
        if first and lower in STOPWORDS:
            return ""
        return "@" + lower
    if len(lower) >= 3 and lower not in STOPWORDS:
        return stem(lower)
    return ""


def read_claim(text: str) -> tuple[set[str], bool]:
    """``(analyse(text).facts | analyse(text).context, analyse(text).negated)``."""
    pieces = unicodedata.normalize("NFKC", text).split()
    for n, piece in enumerate(pieces):
        tokens = _TOKEN.findall(piece)
        if tokens:
            words = set(chain.from_iterable(map(_PIECES.__getitem__, pieces[n + 1 :])))
            words.add(_token_word(tokens[0], True))
            words.update(w for t in tokens[1:] if (w := _token_word(t, False)))
            break
    else:
        return set(), False
    words.discard("")
    negated = NEGATED in words
    words.discard(NEGATED)
    return words, negated


def sentence(words: set[str], negated: bool) -> Sentence:
    """``analyse(text)`` from what :func:`read_claim` read of ``text``: its facts are the words
    that start with ``#`` or ``@``, the rest context stems."""
    facts = frozenset(w for w in words if w[0] in "#@")
    return Sentence(facts, frozenset(words) - facts, negated)
