"""The support check (SPEC §3 W11): does a text say only what the quotes it rests on say?

A quote is verified by the evidence check; this check asks whether the *sentence* built on it — a
claim's text, a page's title, summary or heading, a context entry, a sentence of an answer — is
supported by those exact source words. The deterministic layer reads both with the lexicon of
:mod:`affidavit.facts` and :mod:`affidavit.words` and applies these rules, in order:

1. **Facts.** Every number, date and name in the text must be in the quotes or follow from them
   by a stated rule (:mod:`.support_numbers`, :mod:`.support_dates`): numbers by value (``1,500``
   = ``fifteen hundred``, ``40%`` = ``40 per cent``, ``21st`` = ``twenty-first``); a bound
   ("more than 398", "under 150", "before April 11") against the quote's closest number or date;
   an approximation ("about 1.5 million") that rounds a quoted number. A name matches the same
   word, its demonym (``Latvia`` / ``Latvian``) or a fixed alias (``U.S.`` / ``United States``).
   A fact the quotes contradict is *unsupported*; one they only make likely (a bare rounding, a
   name they leave out, a longer form of a name they state) is *uncertain*.
2. **Negation.** A negation in the text (``not``, ``never``, ``no``, ``n't``, ``without``, …) needs
   one in the quotes; a negation in a quote whose negated word the text repeats needs one in the
   text (unless the quotes assert that word elsewhere too: uncertain); and a word with a negating
   prefix (``unsafe``, ``illegal``) must not stand for its opposite (``safe``). Any other mismatch
   is *unsupported*.
3. **Coverage.** The text's other content words are compared by stem with the quotes' words.
   All covered: *supported*. Otherwise at least ``share`` of them must be covered (none for a
   claim: a paraphrase is for a person to judge) and no clause of two or more content words may
   share nothing with the quotes (an added statement, "…, who was convicted of fraud"), and the
   text must share something with them at all; else *unsupported*. The words that lack support
   are named.
4. **Context.** ``context`` is host-known text — the headings a quote stands under in its stored
   source (:mod:`.support_context`). What only the context states is not refused, but the text is
   at most *uncertain*.

The check is pure (no I/O, no model, no network) and cached by text; one claim costs well under a
millisecond (docs/benchmarks.md). :class:`SupportChecker` adds the optional model layer
(:mod:`affidavit.gate.support_model`): when a model is configured it is asked about *uncertain*
texts only, and may settle them either way; rule failures stay unsupported.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from ..evidence.normalize import normalize_quote
from ..facts import MONTHS, NOT_NAMES
from ..words import STOPWORDS, stem
from .support_dates import MONTH_NUMBER, Date, date_found, find_dates
from .support_lexicon import (
    _ALIASES,
    _ALWAYS_MONTHS,
    _BOUNDED,
    _COMPARATIVES,
    _DEMONYM,
    _DEMONYM_AFTER_VOWEL,
    _DOTTED_THOUSANDS,
    _GENERIC_STEMS,
    _LINKS,
    _MONTH_NAME,
    _NEGATING_PREFIXES,
    _NEGATION_SCOPE,
    _NEGATIONS,
    _ONE_AFTER,
    _ONE_BEFORE,
    _ORDINAL_SUFFIXES,
    _ORDINALS,
    _PERCENT,
    _SCALES,
    _UNITS,
)
from .support_mark import mark
from .support_numbers import BOUNDS, number_found

__all__ = [
    "CLAIM_SHARE",
    "SUPPORTED",
    "UNCERTAIN",
    "UNSUPPORTED",
    "Support",
    "check",
    "mark",
]

SUPPORTED = "supported"
UNCERTAIN = "uncertain"
UNSUPPORTED = "unsupported"
VERDICTS = (SUPPORTED, UNCERTAIN, UNSUPPORTED)

CLAIM_SHARE = 0.0
"""Part of a claim's (or answer sentence's) content words the quotes must cover for the claim
to be uncertain rather than unsupported; all of them for it to be supported. None for a claim:
words the quotes don't state are something the check can't judge (a paraphrase, an inference),
so a person decides — unless no fact is contradicted *and* the text shares something with the
quotes in every clause (see :func:`_unsaid_clause` and the "nothing in common" rule)."""
ENTAILED = 0.9
"""Entailment probability at or above which the model layer settles an uncertain text as supported."""
REFUTED = 0.1
"""Entailment probability at or below which the model layer settles it as unsupported."""

_TOKEN = re.compile(
    r"(?P<initials>(?<![^\W_])(?:[A-Z]\.)+[A-Z](?![^\W_])\.?)"
    r"|(?P<code>(?<![^\W_])[A-Z][^\W\d_]*(?:-?\d+[^\W_]*)+(?![^\W_]))"
    r"|(?P<num>\d+(?:[.,]\d+)*)(?P<suffix>[^\W\d_]*)"
    r"|(?P<word>[^\W\d_]+(?:['’-][^\W\d_]+)*)"
    r"|(?P<stop>[.!?]+(?=\s|$)|[\"“”(\[:;])"
)


@dataclass(frozen=True)
class Support:
    """The support check's verdict on one text.

    ``missing`` names the words of the text that lack support, as the text writes them;
    ``reason`` says why in a sentence; ``score`` is the model layer's entailment probability when
    it was consulted.
    """

    verdict: str
    missing: tuple[str, ...] = ()
    reason: str = ""
    score: float | None = None

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED


@dataclass(frozen=True)
class _Reading:
    """A text read for the check: its facts, negations and content words."""

    numbers: tuple[tuple[str, Decimal, str, str], ...]
    """(shown, value, kind: '' | 'ord' | 'decade', the comparative before it or '')."""
    months: tuple[tuple[str, str, str], ...]  # (shown, canonical, comparative), outside dates
    dates: tuple[Date, ...]  # "April 11, 2020", "11 April", "September 2013"
    names: tuple[tuple[str, str], ...]  # (shown, folded)
    negations: tuple[tuple[str, frozenset[str]], ...]  # (shown, stems of the words it negates)
    prefixed: tuple[tuple[str, str], ...]  # (shown, base word without its negating prefix)
    content: tuple[tuple[str, str], ...]  # (shown, stem)
    groups: tuple[frozenset[str], ...]  # runs of capitalised words, folded ("Gaius Julius Caesar")
    asserted: frozenset[str]  # stems of the content words and names outside any negation's scope
    words: frozenset[str]  # every folded word
    stems: frozenset[str]


def _decimal(token: str) -> Decimal | None:
    plain = token.replace(",", "")
    if plain.count(".") > 1:
        plain = plain.replace(".", "")  # 1.500.000: thousands separators
    try:
        return Decimal(plain).normalize()
    except InvalidOperation:
        return None


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """Casefolded, without accents: ``Pavón`` and ``Pavon`` are one name."""
    folded = word.casefold()
    if folded.isascii():
        return folded
    bare = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


def _weak(part: str) -> bool:
    return len(part) < 3 or _fold(part) in STOPWORDS


class _Token:
    """One token of a text: ``kind`` num | word | stop; ``lower`` its folded text; ``capital``
    a word that begins with a capital letter."""

    __slots__ = ("apart", "capital", "kind", "lower", "start", "suffix", "text")

    def __init__(
        self,
        kind: str,
        text: str,
        suffix: str = "",
        start: bool = False,
        lower: str | None = None,
        capital: bool = False,
    ) -> None:
        self.kind = kind
        self.text = text
        self.suffix = suffix  # letters right after a number (st, th, s, km...)
        self.start = start  # a word that opens a sentence (or a quotation, a parenthesis)
        self.apart = False  # a comma (or other dropped punctuation) stands before it
        self.lower = text if lower is None else lower
        self.capital = capital


@lru_cache(maxsize=65536)
def _word_parts(word: str) -> tuple[tuple[str, str, bool], ...]:
    """A word match as (text, folded, capitalised) tokens: a possessive 's dropped; a hyphenated
    compound of weak parts ("well-off") whole, any other split at its hyphens."""
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    parts = [p for p in word.split("-") if p]
    if len(parts) > 1 and all(_weak(p) for p in parts):
        parts = [word]
    return tuple((p, _fold(p), p[:1].isupper()) for p in parts)


def _tokens(text: str) -> list[_Token]:
    """The tokens of ``text``: numbers, words (a hyphenated compound of weak parts, "well-off",
    stays whole; others are split) and sentence boundaries; a possessive 's is dropped."""
    norm = _PERCENT.sub(" percent ", unicodedata.normalize("NFKC", text))
    out: list[_Token] = []
    append = out.append
    start = True
    last = 0
    for m in _TOKEN.finditer(norm):
        begin, end = m.span()
        start_apart = begin > last and bool(out) and not norm[last:begin].isspace()
        last = end
        first = len(out)
        group = m.lastgroup
        if group == "word":
            for part, lower, capital in _word_parts(m.group("word")):
                append(_Token("word", part, "", start, lower, capital))
                start = False
        elif group == "suffix":  # a number (its suffix group always takes part, maybe empty)
            append(_Token("num", m.group("num"), m.group("suffix").casefold()))
            start = False
        elif group == "stop":
            append(_Token("stop", m.group("stop")))
            start = True
        else:
            # "U.S." is the word US; "COVID-19", "A330" are one word, not a name and a number
            word = (m.group("initials") or "").replace(".", "") or m.group("code")
            append(_Token("word", word, "", start, _fold(word), word[:1].isupper()))
            start = False
        if start_apart and first < len(out):
            out[first].apart = True
    return out


def _titled(tokens: Sequence[_Token]) -> bool:
    """Title Case or capitals throughout: capitals then say nothing about names."""
    real = [t for t in tokens if t.kind == "word" and len(t.text) > 3]
    return len(real) >= 2 and sum(t.text[:1].isupper() for t in real) >= 0.8 * len(real)


def _pronoun_one(tokens: Sequence[_Token], position: int, previous: str) -> bool:
    """``one`` as a pronoun ("one of the", "the one", "no one"), not the number 1."""
    nxt = tokens[position + 1] if position + 1 < len(tokens) else _Token("stop", "")
    return (
        nxt.kind != "word"
        or _fold(nxt.text) in _ONE_AFTER
        or previous in _ONE_BEFORE
        or _fold(nxt.text) in _SCALES
    )


class _Reader:
    """Reads one text into a :class:`_Reading`."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.titled = _titled(self.tokens)
        self.numbers: list[tuple[str, Decimal, str, str]] = []
        self.months: list[tuple[str, str, str]] = []
        self.dates: list[Date] = []
        self.asserted: set[str] = set()
        self.names: list[tuple[str, str]] = []
        self.negations: list[tuple[str, list[str]]] = []
        self.prefixed: list[tuple[str, str]] = []
        self.content: list[tuple[str, str]] = []
        self.words: set[str] = set()
        self.stems: set[str] = set()
        self.previous = ""  # the word before the current one (a comparative, for "more than")
        self.spelled: list[tuple[str, int]] = []  # a run of number words: (shown, value)
        self.spelled_before = ""
        self.groups: list[frozenset[str]] = []
        self.run: list[str] = []  # the capitalised words just read

    def close_run(self) -> None:
        if self.run:
            self.groups.append(frozenset(self.run))
            self.run = []

    def reading(self) -> _Reading:
        months = {
            i: MONTH_NUMBER[t.lower[:3]]
            for i, t in enumerate(self.tokens)
            if t.kind == "word"
            and (t.lower in _ALWAYS_MONTHS or (t.lower in MONTHS and t.text[:1].isupper()))
        }
        dates = (
            find_dates([(t.kind, t.text, t.suffix) for t in self.tokens], months) if months else {}
        )
        skip = 0
        add_word, add_stem, content = self.words.add, self.stems.add, self.content
        for position, token in enumerate(self.tokens):
            if position < skip:
                continue
            if dates and position in dates:
                skip = self.date(position, *dates[position])
                continue
            if token.apart:
                self.close_run()  # "Caesar, Brutus": two names, not one
            if token.capital and token.lower not in NOT_NAMES:
                self.run.append(token.lower)
            elif self.run:
                self.close_run()
            if token.kind == "word" and not token.capital:
                lower = token.lower
                stemmed, plain, base = _plain(lower)
                if plain:
                    # Most words: no number, month, negation or name; what :meth:`word`
                    # does with them reduces to this.
                    add_word(lower)
                    add_stem(stemmed)
                    if self.spelled:
                        self.close_spelled()
                    if plain == _CONTENT:
                        content.append((token.text, stemmed))
                        self.scope(stemmed)
                        if base:
                            self.prefixed.append((token.text, base))
                    self.previous = lower
                    continue
            if token.kind == "stop":
                self.close_spelled()
                self.previous = ""
            elif token.kind == "num":
                self.close_spelled()
                self.number(position, token)
            else:
                self.word(position, token)
        self.close_spelled()
        self.close_run()
        return _Reading(
            numbers=tuple(self.numbers),
            months=tuple(self.months),
            dates=tuple(self.dates),
            names=tuple(self.names),
            negations=tuple((shown, frozenset(scope)) for shown, scope in self.negations),
            prefixed=tuple(self.prefixed),
            content=tuple(self.content),
            groups=tuple(self.groups),
            asserted=frozenset(self.asserted),
            words=frozenset(self.words),
            stems=frozenset(self.stems),
        )

    def date(self, at: int, end: int, month: int, day: int | None, year: int | None) -> int:
        """Read the date ``tokens[at:end]`` as one fact (its year also as a number); return
        ``end``."""
        self.close_spelled()
        self.close_run()
        shown = " ".join(t.text + t.suffix for t in self.tokens[at:end])
        before = self.comparative()
        if before and self.content and _fold(self.content[-1][0]) == before:
            self.content.pop()
        self.dates.append(Date(shown, month, day, year, before))
        for t in self.tokens[at:end]:
            self.words.add(t.lower)
        if year is not None:
            self.numbers.append((str(year), Decimal(year), "", ""))
        self.previous = ""
        return end

    def fact(self, shown: str, value: Decimal, kind: str, before: str) -> None:
        self.numbers.append((shown, value, kind, before))
        if before and self.content and _fold(self.content[-1][0]) == before:
            self.content.pop()  # "more than 398": the comparative belongs to the number's rule

    def close_spelled(self) -> None:
        if not self.spelled:
            return
        total, current = 0, 0
        for _, value in self.spelled:
            if value >= 100 and value in _SCALES.values():
                current = max(current, 1) * value
                if value >= 1000:
                    total, current = total + current, 0
            else:
                current += value
        shown = " ".join(s for s, _ in self.spelled)
        self.fact(shown, Decimal(total + current), "", self.spelled_before)
        self.spelled.clear()

    def comparative(self) -> str:
        return self.previous if self.previous in _COMPARATIVES else ""

    def number(self, position: int, token: _Token) -> None:
        value = _decimal(token.text)
        if value is None:
            return
        before = self.comparative()
        if token.suffix in _ORDINAL_SUFFIXES:
            self.fact(token.text + token.suffix, value, "ord", before)
        elif token.suffix == "s" and len(token.text) == 4:
            self.fact(token.text + token.suffix, value, "decade", before)
        else:
            nxt = self.tokens[position + 1] if position + 1 < len(self.tokens) else None
            scale = _SCALES.get(token.suffix) or (
                _SCALES.get(nxt.lower) if nxt is not None and nxt.kind == "word" else None
            )
            if scale is not None:
                value = (value * scale).normalize()
            self.fact(token.text, value, "", before)
            if _DOTTED_THOUSANDS.fullmatch(token.text) and scale is None:
                # "30.000" is 30 or, written the European way, 30,000: a quote states either
                self.numbers.append((token.text, Decimal(token.text.replace(".", "")), "alt", ""))
            if token.suffix and token.suffix not in _SCALES:
                self.words.add(token.suffix)
                self.stems.add(stem(token.suffix))
        self.words.add(token.text)
        self.previous = ""

    def word(self, position: int, token: _Token) -> None:
        lower = token.lower
        stemmed = _plain(lower)[0]
        self.words.add(lower)
        self.stems.add(stemmed)
        if lower in _UNITS or (lower in _SCALES and self.spelled):
            if (
                lower == "one"
                and not self.spelled
                and _pronoun_one(self.tokens, position, self.previous)
            ):
                self.previous = lower
                return
            if not self.spelled:
                self.spelled_before = self.comparative()
            self.spelled.append((token.text, _UNITS[lower] if lower in _UNITS else _SCALES[lower]))
            return
        if lower in _ORDINALS and self.spelled and _ORDINALS[lower] < 10:
            # "twenty-first": the number words before an ordinal are part of it
            shown = " ".join(t for t, _ in self.spelled) + " " + token.text
            value = sum(v for _, v in self.spelled) + _ORDINALS[lower]
            self.spelled.clear()
            self.fact(shown, Decimal(value), "ord", self.spelled_before)
            self.previous = lower
            return
        self.close_spelled()
        if lower in _LINKS and self.previous in _BOUNDED:
            return  # "more than": keep "more" as the word before the number
        if lower in _SCALES:
            self.previous = lower
            return  # "million" after a digit is part of that number
        capital = token.text[:1].isupper()
        if lower in _ORDINALS:
            self.fact(token.text, Decimal(_ORDINALS[lower]), "ord", self.comparative())
        elif lower in _ALWAYS_MONTHS or (lower in MONTHS and capital):
            self.months.append((token.text, lower[:3], self.comparative()))
        elif lower in _NEGATIONS or lower.endswith("n't"):
            self.negations.append((token.text, []))
        elif capital and not token.start and not self.titled and lower not in NOT_NAMES:
            self.names.append((token.text, lower))
            self.scope(stemmed)
        elif len(lower) >= 3 and lower not in STOPWORDS:
            self.content.append((token.text, stemmed))
            self.scope(stemmed)
            base = _negated_base(lower)
            if base:
                self.prefixed.append((token.text, base))
        self.previous = lower

    def scope(self, stemmed: str) -> None:
        """Count a content word (its stem) into the scope of the negations just before it (or,
        outside any, among the words the text asserts)."""
        if not self.negations:
            self.asserted.add(stemmed)
            return
        scoped = False
        for _, scope in self.negations[-2:]:
            if len(scope) < _NEGATION_SCOPE:
                scope.append(stemmed)
                scoped = True
        if not scoped:
            self.asserted.add(stemmed)


_SPECIAL = frozenset().union(_UNITS, _SCALES, _ORDINALS, _LINKS, MONTHS, _NEGATIONS)
"""Words :meth:`_Reader.word` reads as more than a plain word (numbers, months, negations...)."""
_STOP, _CONTENT = 1, 2


@lru_cache(maxsize=65536)
def _plain(lower: str) -> tuple[str, int, str]:
    """(stem, kind, base) of a folded word: kind 0 when it may be a number word, a month, a
    negation or a link ("than"), else ``_CONTENT`` for a content word (3+ letters, not a
    stopword) and ``_STOP`` for any other; ``base`` what a negating prefix turns around."""
    if lower in _SPECIAL or lower.endswith("n't"):
        return stem(lower), 0, ""
    if len(lower) >= 3 and lower not in STOPWORDS:
        return stem(lower), _CONTENT, _negated_base(lower)
    return stem(lower), _STOP, ""


@lru_cache(maxsize=65536)
def _read(text: str) -> _Reading:
    return _Reader(text).reading()


@lru_cache(maxsize=65536)
def _negated_base(lower: str) -> str:
    """``unsafe`` → ``safe``: the word a negating prefix turns around ('' if none)."""
    for prefix in _NEGATING_PREFIXES:
        if lower.startswith(prefix) and len(lower) - len(prefix) >= 3:
            return lower[len(prefix) :].lstrip("-")
    return ""


def _name_found(name: str, quotes: _Reading) -> bool:
    """The same name, its plural or possessive, or its demonym (``Latvia`` / ``Latvian``);
    never merely the same stem (``France`` is not ``franc``)."""
    if name in quotes.words:
        return True
    if any(all(w in quotes.words for w in alias) for alias in _ALIASES.get(name, ())):
        return True
    for word in quotes.words:
        longer, shorter = (word, name) if len(word) > len(name) else (name, word)
        if len(shorter) < 4:
            continue
        if longer.startswith(shorter) and longer[len(shorter) :] in _DEMONYM:
            return True
        base = shorter[:-1]
        if (
            shorter[-1] in "aey"
            and longer.startswith(base)
            and longer[len(base) :] in _DEMONYM_AFTER_VOWEL
        ):
            return True  # Canada / Canadian, Hungary / Hungarian, Chile / Chilean
    return False


def _quote_reading(quotes: Sequence[str]) -> _Reading:
    """The quotes read one by one (each reading cached: a page's title, summary and headings
    and its claims share them) and merged."""
    readings = [_read(q) for q in dict.fromkeys(quotes)]
    if len(readings) == 1:
        return readings[0]
    return _Reading(
        numbers=tuple(n for r in readings for n in r.numbers),
        months=tuple(m for r in readings for m in r.months),
        dates=tuple(d for r in readings for d in r.dates),
        names=tuple(n for r in readings for n in r.names),
        negations=tuple(n for r in readings for n in r.negations),
        prefixed=tuple(p for r in readings for p in r.prefixed),
        content=tuple(c for r in readings for c in r.content),
        groups=tuple(g for r in readings for g in r.groups),
        asserted=frozenset().union(*(r.asserted for r in readings)),
        words=frozenset().union(*(r.words for r in readings)),
        stems=frozenset().union(*(r.stems for r in readings)),
    )


def check(
    text: str,
    quotes: Sequence[str],
    *,
    share: float = CLAIM_SHARE,
    allowed: Iterable[str] = (),
    context: Sequence[str] = (),
) -> Support:
    """The deterministic verdict on ``text`` resting on ``quotes`` (their own words).

    ``allowed`` are extra stems that count as covered (a heading's generic words, the cited
    sources' names); ``share`` the part of the content words that must be covered for the text
    to be uncertain rather than unsupported. ``context`` is host-known text around the quotes —
    the cited source's own title, the heading a quoted sentence stands under — never text the
    proposer wrote: a name, number, date or word found only there is not refused, but the text
    is at most *uncertain* (the context says what the source is about, not that the quoted
    sentence says it).
    """
    return _check(text, tuple(quotes), share, frozenset(allowed), tuple(context))


def _same(text: str, quote: str) -> bool:
    """The text is the quote (after the verifier's normalisation, final punctuation aside)."""
    return _bare(text) == _bare(quote)


@lru_cache(maxsize=65536)
def _bare(text: str) -> str:
    """``text`` as :func:`_same` compares it (a claim's text and its quote are read in the gate,
    again in lint's audit: normalised once)."""
    return normalize_quote(text).rstrip(" .!?;:")


def _fuller(lower: str, mine: _Reading, theirs: _Reading) -> bool:
    """``lower`` is part of a longer form of a name the quotes state: the text's run of
    capitalised words holding it contains one of the quotes' runs whole ("Gaius Julius Caesar"
    for "Caesar"; not "James Smeaton" for "James Douglass")."""
    runs = [g for g in mine.groups if lower in g]
    return any(q <= g and lower not in q for g in runs for q in theirs.groups)


CHECK_CACHE = 1 << 17
"""Verdicts kept in memory: lint's audit after an ingest re-checks every active claim the gate
has just checked (69k claims after all 233 State of the Union addresses), so it finds them here
instead of reading every text again."""


@lru_cache(maxsize=CHECK_CACHE)
def _check(
    text: str,
    quotes: tuple[str, ...],
    share: float,
    allowed: frozenset[str],
    context: tuple[str, ...],
) -> Support:
    if any(_same(text, quote) for quote in quotes):
        return Support(SUPPORTED)  # the extractive engine's claims: its text is its quote
    mine = _read(text)
    theirs = _quote_reading(quotes)
    around = _quote_reading(context)
    hard: list[str] = []
    soft: list[str] = []
    framed: list[str] = []  # found only in the context (the source's title, the heading)
    why: list[str] = []

    stated = 0  # facts and words the text shares with its quotes
    for shown, value, kind, before in mine.numbers:
        if kind == "alt":
            continue
        found, reason = number_found(value, kind, before, theirs.numbers)
        if found == "found" or _fold(shown) in allowed:
            stated += 1
            continue
        if (
            found == "hard"
            and context
            and number_found(value, kind, before, around.numbers)[0] == "found"
        ):
            framed.append(shown)
        elif found == "soft":
            soft.append(shown)
            why.append(f"'{shown}' is only {reason}")
        else:
            hard.append(shown)
    quoted_months = [(c, b) for _, c, b in theirs.months]
    quoted_months += [(_MONTH_NAME[d.month], "") for d in theirs.dates]
    for shown, canonical, before in mine.months:
        if any(c == canonical and b == before for c, b in quoted_months):
            stated += 1
            continue
        if before and any(c == canonical for c, _ in quoted_months):
            soft.append(shown)
            why.append(f"'{before} {shown}' is only close to a date the quotes state")
        elif any(c == canonical and b == before for _, c, b in around.months):
            framed.append(shown)
        else:
            hard.append(shown)
    quoted_dates = [
        *theirs.dates,
        *(Date(s, MONTH_NUMBER[c], None, None) for s, c, _ in theirs.months),
    ]
    for date in mine.dates:
        found, reason = date_found(date, quoted_dates, BOUNDS)
        if found == "found":
            stated += 1
        elif found == "soft":
            soft += date.shown.split()
            why.append(f"'{date.shown}' is only {reason}")
        elif context and date_found(date, around.dates, BOUNDS)[0] == "found":
            framed += date.shown.split()
        else:
            hard += date.shown.split()
    unnamed: list[str] = []
    fuller: list[str] = []
    for shown, lower in mine.names:
        if _name_found(lower, theirs) or stem(lower) in allowed:
            stated += 1
            continue
        if _name_found(lower, around):
            framed.append(shown)
        elif _fuller(lower, mine, theirs):
            fuller.append(shown)
        else:
            unnamed.append(shown)
    if unnamed and any(not _name_found(lower, mine) for _, lower in theirs.names):
        hard += unnamed  # the quotes name someone else: a swapped name, refused
    elif unnamed:
        # A name the quotes leave out but contradict with no other name: often the subject the
        # source's context supplies (its title, an earlier sentence). A person decides.
        soft += unnamed
        why.append(f"the quotes don't name {_list(unnamed)}")
    if fuller:
        soft += fuller
        why.append(f"{_list(fuller)} only lengthen a name the quotes state")
    if hard:
        why.insert(0, "the quotes don't state " + _list(hard))

    negation = _negation_problem(mine, theirs)
    if negation:
        (hard if negation[2] else soft).extend(w for w in negation[0] if w not in hard)
        why.append(negation[1])

    covered_stems = theirs.stems | allowed
    content = [
        (shown, s)
        for shown, s in mine.content
        if s not in _GENERIC_STEMS and not _spelled_number(shown)
    ]
    lacking: list[str] = []
    uncovered = 0
    for shown, s in content:
        if s in covered_stems:
            continue
        if s in around.stems:
            framed.append(shown)
            continue
        uncovered += 1
        lacking.append(shown)
    lacking = list(dict.fromkeys(lacking))
    enough = uncovered <= 1 or len(content) - uncovered >= share * len(content)
    unsaid = _unsaid_clause(text, theirs, around, allowed) if lacking else None
    if unsaid is not None:
        enough = False
        why.append(f"the clause '{unsaid}' says nothing its quotes state")
    if lacking:
        why.append(f"the quotes don't say {_list(lacking)}")
    framed = list(dict.fromkeys(framed))
    if framed:
        why.append(f"only the source's title or heading states {_list(framed)}")

    stated += sum(1 for _, s in content if s in covered_stems)
    missing = tuple(dict.fromkeys([*hard, *soft, *lacking, *framed]))
    apart = not stated and bool(missing)  # it states things, none of them in its quotes
    if hard or not enough or apart:
        if apart and not hard and enough:
            why.append("the text says nothing its quotes state")
        return Support(UNSUPPORTED, missing, "; ".join(why))
    if soft or lacking or framed:
        return Support(UNCERTAIN, missing, "; ".join(why))
    return Support(SUPPORTED)


_CLAUSE = re.compile(
    r"[,;:()\[\]—–]|\s-\s|\b(?:who|whom|whose|which|and|but|whereas|while)\b", re.I
)
_CLAUSE_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _unsaid_clause(
    text: str, theirs: _Reading, around: _Reading, allowed: frozenset[str]
) -> str | None:
    """A clause of ``text`` (cut at commas, brackets, dashes, relative pronouns) with two or
    more content words of which the quotes, the context and ``allowed`` state none: a statement
    of its own, not a rewording ("…, who was convicted of fraud")."""
    for clause in _CLAUSE.split(text):
        words = [
            w for w in _CLAUSE_WORD.findall(clause) if len(w) >= 3 and _fold(w) not in STOPWORDS
        ]
        if len(words) < 2:
            continue
        if not any(
            _fold(w) in theirs.words
            or stem(_fold(w)) in theirs.stems
            or stem(_fold(w)) in around.stems
            or stem(_fold(w)) in allowed
            for w in words
        ):
            return clause.strip(" .!?")
    return None


def _spelled_number(shown: str) -> bool:
    return shown.casefold() in _UNITS or shown.casefold() in _SCALES


def _negation_problem(mine: _Reading, theirs: _Reading) -> tuple[list[str], str, bool] | None:
    """(words, reason, refused): a negation on one side only. Refused (unsupported) unless the
    quotes negate the text's words in one place and assert them in another ("90 cases …, and no
    reported cases in Brčko"): then which one the text restates is for a person to say."""
    if mine.negations and not theirs.negations:
        shown = [w for w, _ in mine.negations]
        return shown, f"the text negates ({_list(shown)}) and the quotes don't", True
    text_stems = {s for _, s in mine.content} | {stem(n) for _, n in mine.names}
    if not mine.negations:
        hits = [(w, scope & text_stems) for w, scope in theirs.negations if scope & text_stems]
        if hits:
            negated: set[str] = set().union(*(hit for _, hit in hits))
            said = [w for w, s in mine.content if s in negated]
            said += [w for w, n in mine.names if stem(n) in negated]
            words = [w for w, _ in hits]
            if negated <= theirs.asserted:
                return (
                    said[:2],
                    f"the quotes negate it ({_list(words)}) in one place and assert it in another",
                    False,
                )
            return said[:2], f"the quotes negate it ({_list(words)}) and the text doesn't", True
    quote_bases = {base for _, base in theirs.prefixed}
    for word, s in mine.content:
        if any(stem(base) == s for base in quote_bases) and s not in theirs.stems:
            return [word], f"the quotes say the opposite of '{word}' (a negating prefix)", True
    for word, base in mine.prefixed:
        if _fold(word) not in theirs.words and stem(base) in theirs.stems:
            return [word], f"the quotes say the opposite of '{word}' (no negating prefix)", True
    return None


def _list(words: Sequence[str]) -> str:
    return ", ".join(f"'{w}'" for w in words[:8]) + ("…" if len(words) > 8 else "")
