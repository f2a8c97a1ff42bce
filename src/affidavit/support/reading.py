"""Reading a text for the support check (W11): its numbers, dates, names, negations and content
words, as :func:`affidavit.support.rules.check` compares them (pure functions of the text, cached)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

from ..words import STOPWORDS, stem
from .dates import MONTH_NUMBER, Date, find_dates
from .facts import MONTHS, NOT_NAMES
from .lexicon import (
    _ALWAYS_MONTHS,
    _BOUNDED,
    _COMPARATIVES,
    _DOTTED_THOUSANDS,
    _DURATIONS,
    _LINKS,
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

_TOKEN = re.compile(
    r"(?P<initials>(?<![^\W_])(?:[A-Z]\.)+[A-Z](?![^\W_])\.?)"
    r"|(?P<code>(?<![^\W_])(?:[A-Z][^\W\d_]*(?:-?\d+[^\W_]*)+|\d+[A-Z][a-z]{2,}[^\W_]*)(?![^\W_]))"
    r"|(?P<num>\d+(?:[.,]\d+)*)(?P<suffix>[^\W\d_]*)"
    r"|(?P<word>[^\W\d_]+(?:['’-][^\W\d_]+)*)"
    r"|(?P<stop>[.!?]+(?=\s|$)|[\"“”(\[:;])"
)


class _Reading(NamedTuple):
    """A text read for the check: its facts, negations and content words. (A named tuple: the
    ingest's worker sends readings over a pipe, and a tuple unpickles several times faster
    than a dataclass.)"""

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


_YEAR_BOUNDS = frozenset(["before", "after", "since", "until"]) & _COMPARATIVES


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


Token = tuple[str, str, str, bool, bool, str, bool]
"""One token of a text: (kind, text, suffix, start, apart, lower, capital). ``kind`` is num |
word | stop; ``suffix`` the letters right after a number (st, th, s, km...); ``start`` a word
that opens a sentence (or a quotation, a parenthesis); ``apart`` a comma (or other dropped
punctuation) stands before it; ``lower`` its folded text; ``capital`` a word that begins with a
capital letter. A plain tuple: a text of 40 words makes 40 of them, read once."""
_END: Token = ("stop", "", "", False, False, "", False)


def _month(text: str, lower: str) -> int:
    """The month a word token names (1-12; "may" and "march" only capitalised), else 0."""
    if lower in _ALWAYS_MONTHS or (lower in MONTHS and text[:1].isupper()):
        return MONTH_NUMBER[lower[:3]]
    return 0


@lru_cache(maxsize=65536)
def _word_parts(word: str) -> tuple[tuple[str, str, bool, int, bool], ...]:
    """A word match as (text, folded, capitalised, month, long) tokens: a possessive 's dropped;
    a hyphenated compound of weak parts ("well-off") whole, any other split at its hyphens.
    ``month`` is :func:`_month`'s; ``long`` a part of more than 3 letters (see :func:`_titled`)."""
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    parts = [p for p in word.split("-") if p]
    if len(parts) > 1 and all(_weak(p) for p in parts):
        parts = [word]
    return tuple(
        (p, lower, p[:1].isupper(), _month(p, lower), len(p) > 3)
        for p, lower in ((p, _fold(p)) for p in parts)
    )


_SCAN = re.compile(r"(.*?)(?:" + _TOKEN.pattern + ")", re.DOTALL)
""":data:`_TOKEN` with what stands before each token (``gap``): one ``findall`` gives every
token's groups as strings, as ``finditer`` from the end of the previous token would find them."""


_SLASH_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")


def _slash_date(match: re.Match[str]) -> str:
    """A numeric date whose order is plain ("29/08/2012": the day is over 12) written out as
    "29 August 2012"; an ambiguous one ("03/04/2012") stays as it is."""
    first, second, year = (int(g) for g in match.groups())
    day, month = (first, second) if first > 12 else (second, first) if second > 12 else (0, 0)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group(0)
    return f"{day} {_MONTH_NAMES[month - 1]} {year}"


_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def _tokens(text: str) -> tuple[list[Token], dict[int, int], bool]:
    """The tokens of ``text``: numbers, words (a hyphenated compound of weak parts, "well-off",
    stays whole; others are split) and sentence boundaries; a possessive 's is dropped. With
    them, the months among them (token index → month) and whether the text is
    :func:`_titled`, found on the way."""
    norm = _SLASH_DATE.sub(
        _slash_date, _PERCENT.sub(" percent ", unicodedata.normalize("NFKC", text))
    )
    out: list[Token] = []
    append = out.append
    months: dict[int, int] = {}
    start = True
    longs = capitals = 0  # words of more than 3 letters, and those of them capitalised
    for gap, initials, code, num, suffix, word, stop in _SCAN.findall(norm):
        apart = bool(gap) and bool(out) and not gap.isspace()
        if word:
            for part, lower, capital, month, long in _word_parts(word):
                if month:
                    months[len(out)] = month
                if long:
                    longs += 1
                    capitals += capital
                append(("word", part, "", start, apart, lower, capital))
                start = apart = False
        elif num:  # its suffix group always takes part, maybe empty
            append(("num", num, suffix.casefold(), False, apart, num, False))
            start = False
        elif stop:
            append(("stop", stop, "", False, apart, stop, False))
            start = True
        else:
            # "U.S." is the word US; "COVID-19", "A330" are one word, not a name and a number
            word = initials.replace(".", "") or code
            lower, capital = _fold(word), word[:1].isupper()
            month = _month(word, lower)
            if month:
                months[len(out)] = month
            if len(word) > 3:
                longs += 1
                capitals += capital
            append(("word", word, "", start, apart, lower, capital))
            start = False
    return out, months, _titled(longs, capitals)


def _titled(longs: int, capitals: int) -> bool:
    """Title Case or capitals throughout (of the ``longs`` words of more than 3 letters,
    ``capitals`` begin with a capital): capitals then say nothing about names."""
    return longs >= 2 and capitals >= 0.8 * longs


def _pronoun_one(tokens: Sequence[Token], position: int, previous: str) -> bool:
    """``one`` as a pronoun ("one of the", "the one", "no one"), not the number 1."""
    kind, text = (tokens[position + 1] if position + 1 < len(tokens) else _END)[:2]
    if kind == "word" and _fold(text) in _SCALES:
        return False  # "one hundred billion": a number
    return kind != "word" or _fold(text) in _ONE_AFTER or previous in _ONE_BEFORE


class _Reader:
    """Reads one text into a :class:`_Reading`."""

    def __init__(self, text: str) -> None:
        self.tokens, self.month_at, self.titled = _tokens(text)
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
        self.spelled_at = -1
        self.at = 0  # the token being read
        self.where: list[int] = []  # each number's first token
        self.groups: list[frozenset[str]] = []
        self.run: list[str] = []  # the capitalised words just read

    def close_run(self) -> None:
        if self.run:
            self.groups.append(frozenset(self.run))
            self.run.clear()

    def reading(self) -> _Reading:
        tokens, months = self.tokens, self.month_at
        dates = find_dates([t[:3] for t in tokens], months) if months else {}
        skip = 0
        add_word, add_stem, content = self.words.add, self.stems.add, self.content
        assert_stem, negations, run = self.asserted.add, self.negations, self.run
        for position, (kind, text, suffix, start, apart, lower, capital) in enumerate(tokens):
            self.at = position
            if position < skip:
                continue
            if dates and position in dates:
                skip = self.date(position, *dates[position])
                continue
            if apart:
                self.close_run()  # "Caesar, Brutus": two names, not one
            if capital and lower not in NOT_NAMES:
                run.append(lower)
            elif run:
                self.close_run()
            if kind == "word" and not capital:
                stemmed, plain, base = _plain(lower)
                if plain and not (lower in ("a", "an") and self.scale_next(position)):
                    # Most words: no number, month, negation or name; what :meth:`word`
                    # does with them reduces to this.
                    add_word(lower)
                    add_stem(stemmed)
                    if self.spelled:
                        self.close_spelled()
                    if plain == _CONTENT:
                        content.append((text, stemmed))
                        if negations:
                            self.scope(stemmed)
                        else:
                            assert_stem(stemmed)
                        if base:
                            self.prefixed.append((text, base))
                    if not (lower in ("a", "an") and self.previous in _COMPARATIVES):
                        self.previous = lower  # "at least a 10 percent": the bound stays
                    continue
            if kind == "stop":
                self.close_spelled()
                self.previous = ""
            elif kind == "num":
                self.close_spelled()
                self.number(position, text, suffix)
            else:
                self.word(position, text, lower, start)
        self.at = len(tokens)
        self.close_spelled()
        self.close_run()
        if len(self.numbers) > 1:
            self.ratios()
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
        shown = " ".join(t[1] + t[2] for t in self.tokens[at:end])
        before = self.comparative()
        if before and self.content and _fold(self.content[-1][0]) == before:
            self.content.pop()
        self.dates.append(Date(shown, month, day, year, before))
        for t in self.tokens[at:end]:
            self.words.add(t[5])
        if year is not None:
            self.numbers.append((str(year), Decimal(year), "", ""))
            self.where.append(at)
        self.previous = ""
        return end

    def fact(
        self,
        shown: str,
        value: Decimal,
        kind: str,
        before: str,
        where: int = -1,
        upcoming: int = -1,
    ) -> None:
        """Record a number; ``where`` is its first token, ``upcoming`` the token after it."""
        if (
            before == "over"
            and 0 <= upcoming < len(self.tokens)
            and self.tokens[upcoming][5] in _DURATIONS
        ):
            before = ""  # "over eight years": a duration, not a bound
        self.numbers.append((shown, value, kind, before))
        self.where.append(where if where >= 0 else self.at)
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
        self.fact(
            shown, Decimal(total + current), "", self.spelled_before, self.spelled_at, self.at
        )
        self.spelled.clear()

    def ratios(self) -> None:
        """ "three in ten", "1 in 8": one fact, a percentage (30, 12.5) a quote may state."""
        tokens = self.tokens
        k = 0
        while k + 1 < len(self.numbers):
            (a_shown, a, a_kind, a_before), (b_shown, b, b_kind, _) = self.numbers[k : k + 2]
            at = self.where[k]
            if (
                not a_kind
                and not b_kind
                and self.where[k + 1] == at + 2
                and tokens[at + 1][5] == "in"
                and a == a.to_integral_value()
                and b == b.to_integral_value()
                and 0 < a < b <= 1000
                and " " not in a_shown + b_shown
            ):
                value = (100 * a / b).quantize(Decimal("0.1")).normalize()
                self.numbers[k : k + 2] = [
                    (f"{a_shown} in {b_shown}", value, "", a_before or "about")
                ]
                self.where[k : k + 2] = [at]
            k += 1

    def comparative(self) -> str:
        return self.previous if self.previous in _COMPARATIVES else ""

    def year_bound(self, position: int) -> str:
        """The bound of time before "the year" that precedes ``position`` ("before the year
        2009": a year before 2009, not in it)."""
        words = [t[5] for t in self.tokens[max(0, position - 3) : position]]
        if len(words) == 3 and words[1:] == ["the", "year"] and words[0] in _YEAR_BOUNDS:
            return words[0]
        return ""

    def number(self, position: int, text: str, suffix: str) -> None:
        value = _decimal(text)
        if value is None:
            return
        before = self.comparative() or self.year_bound(position)
        if suffix in _ORDINAL_SUFFIXES:
            self.fact(text + suffix, value, "ord", before)
        elif suffix == "s" and len(text) == 4:
            self.fact(text + suffix, value, "decade", before)
        else:
            nxt = self.tokens[position + 1] if position + 1 < len(self.tokens) else _END
            scale = _SCALES.get(suffix) or (_SCALES.get(nxt[5]) if nxt[0] == "word" else None)
            if scale is not None:
                value = (value * scale).normalize()
            self.fact(
                text,
                value,
                "",
                before,
                position,
                position + (2 if scale and not _SCALES.get(suffix) else 1),
            )
            if _DOTTED_THOUSANDS.fullmatch(text) and scale is None:
                # "30.000" is 30 or, written the European way, 30,000: a quote states either
                self.numbers.append((text, Decimal(text.replace(".", "")), "alt", ""))
                self.where.append(position)
            if suffix and suffix not in _SCALES:
                self.words.add(suffix)
                self.stems.add(stem(suffix))
        self.words.add(text)
        self.previous = ""

    def word(self, position: int, text: str, lower: str, start: bool) -> None:
        stemmed = _plain(lower)[0]
        self.words.add(lower)
        self.stems.add(stemmed)
        if lower in ("a", "an") and not self.spelled and self.scale_next(position):
            # "a billion" is one billion; the word before "a" stays the number's bound
            # ("more than a million")
            self.spelled_before = self.comparative()
            self.spelled_at = position
            self.spelled.append((text, 1))
            return
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
                self.spelled_at = position
            self.spelled.append((text, _UNITS[lower] if lower in _UNITS else _SCALES[lower]))
            return
        if lower in _ORDINALS and self.spelled and _ORDINALS[lower] < 10:
            # "twenty-first": the number words before an ordinal are part of it
            shown = " ".join(t for t, _ in self.spelled) + " " + text
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
        capital = text[:1].isupper()
        if lower in _ORDINALS:
            self.fact(text, Decimal(_ORDINALS[lower]), "ord", self.comparative())
        elif lower in _ALWAYS_MONTHS or (lower in MONTHS and capital):
            self.months.append((text, lower[:3], self.comparative()))
        elif (lower in _NEGATIONS or lower.endswith("n't")) and not self.not_negating(
            position, capital
        ):
            self.negations.append((text, []))
        elif capital and not start and not self.titled and lower not in NOT_NAMES:
            self.names.append((text, lower))
            self.scope(stemmed)
        elif len(lower) >= 3 and lower not in STOPWORDS:
            self.content.append((text, stemmed))
            self.scope(stemmed)
            base = _negated_base(lower)
            if base:
                self.prefixed.append((text, base))
        self.previous = lower

    def scale_next(self, position: int) -> bool:
        """A scale word ("hundred", "million") follows ``position``."""
        nxt = self.tokens[position + 1] if position + 1 < len(self.tokens) else _END
        return nxt[0] == "word" and nxt[5] in _SCALES

    def not_negating(self, position: int, capital: bool) -> bool:
        """A negation word that negates nothing: "No" opening a title ("No Strings Attached" —
        a capitalised word follows), or "except for" (an exception to a limit)."""
        nxt = self.tokens[position + 1] if position + 1 < len(self.tokens) else _END
        if capital and self.tokens[position][5] == "no" and nxt[0] == "word" and nxt[6]:
            return True
        return self.tokens[position][5] == "except" and nxt[5] == "for"

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


READ_CACHE = 4096
"""Readings kept: a quote is read by its claim's check and again by its page's title, summary
and heading checks in the same admission; a verdict, once made, is kept by the check's own
cache. Few are needed, and each holds a dozen objects every full garbage collection visits."""


SEEDED_READINGS: dict[str, _Reading] = {}
"""Readings computed ahead of the check (:mod:`.hints`), taken when their text is read."""


@lru_cache(maxsize=READ_CACHE)
def _read(text: str) -> _Reading:
    seeded = SEEDED_READINGS.pop(text, None)
    return seeded if seeded is not None else _Reader(text).reading()


@lru_cache(maxsize=65536)
def _negated_base(lower: str) -> str:
    """``unsafe`` → ``safe``: the word a negating prefix turns around ('' if none)."""
    for prefix in _NEGATING_PREFIXES:
        if lower.startswith(prefix) and len(lower) - len(prefix) >= 3:
            return lower[len(prefix) :].lstrip("-")
    return ""


def _quote_reading(quotes: Sequence[str]) -> _Reading:
    """The quotes read one by one (each reading cached: a page's title, summary and headings
    and its claims share them) and merged (the merge cached too: a new page's title, summary
    and heading rest on the same quotes)."""
    distinct = tuple(dict.fromkeys(quotes))
    if len(distinct) == 1:
        return _read(distinct[0])
    return _merged(distinct)


@lru_cache(maxsize=64)
def _merged(quotes: tuple[str, ...]) -> _Reading:
    readings = [_read(q) for q in quotes]
    joined = chain.from_iterable
    return _Reading(
        numbers=tuple(joined([r.numbers for r in readings])),
        months=tuple(joined([r.months for r in readings])),
        dates=tuple(joined([r.dates for r in readings])),
        names=tuple(joined([r.names for r in readings])),
        negations=tuple(joined([r.negations for r in readings])),
        prefixed=tuple(joined([r.prefixed for r in readings])),
        content=tuple(joined([r.content for r in readings])),
        groups=tuple(joined([r.groups for r in readings])),
        asserted=frozenset().union(*[r.asserted for r in readings]),
        words=frozenset().union(*[r.words for r in readings]),
        stems=frozenset().union(*[r.stems for r in readings]),
    )
