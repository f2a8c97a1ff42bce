"""The support check (SPEC §3 W11): does a text say only what the quotes it rests on say?

A quote is verified by the evidence check; this check asks whether the *sentence* built on it — a
claim's text, a page's title, summary or heading, a context entry, a sentence of an answer — is
supported by those exact source words. The deterministic layer reads both with the lexicon of
:mod:`affidavit.support.facts` and :mod:`affidavit.words` and applies these rules, in order:

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
(:mod:`affidavit.support.model`): when a model is configured it is asked about *uncertain*
texts only, and may settle them either way; rule failures stay unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from ..evidence.normalize import normalize_quote
from ..words import STOPWORDS, stem
from . import structure
from .dates import MONTH_NUMBER, Date, date_found
from .lexicon import (
    _ALIASES,
    _DEMONYM,
    _DEMONYM_AFTER_VOWEL,
    _GENERIC_STEMS,
    _MONTH_NAME,
    _SCALES,
    _UNITS,
)
from .mark import mark
from .numbers import APPROXIMATE, BOUNDS, number_found
from .reading import _fold, _quote_reading, _read, _Reading
from .restate import every_nth, one_as_single

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
    changes: tuple[str, ...] = ()
    """The kinds of change a rule found the text making against its quotes (a fact, number,
    role, quantifier, hedge, comparative, negation, link, merge, opposite or unit; see
    :data:`~affidavit.support.tree.KINDS`). Empty when the text is uncertain only because the
    rules could not confirm a paraphrase: only then may the model layer settle it."""

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED

    @property
    def model_may_settle(self) -> bool:
        """Uncertain, and only because the rules could not confirm a paraphrase: no rule found
        a changed fact, role or scope (the model layer may turn it either way)."""
        return self.verdict == UNCERTAIN and not self.changes


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
            shorter[-1] in "aeys"
            and longer.startswith(base)
            and longer[len(base) :] in _DEMONYM_AFTER_VOWEL
        ):
            return True  # Canada / Canadian, Hungary / Hungarian, Chile / Chilean
    return False


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
    verdict, missing, reason, changes = _check(
        text, tuple(quotes), share, tuple(sorted(set(allowed))), tuple(context)
    )
    if verdict == SUPPORTED and not missing and not reason:
        return _SUPPORTED
    return Support(verdict, missing, reason, changes=changes)


_SUPPORTED = Support(SUPPORTED)


_NOT_LETTERS = re.compile(r"[\W_]+")


@lru_cache(maxsize=65536)
def _letters(text: str) -> str:
    """``text``'s letters and digits alone, normalised: a text that is its quotes joined, in
    order, differs from them only in punctuation and spacing."""
    return _NOT_LETTERS.sub("", normalize_quote(text))


@lru_cache(maxsize=65536)
def _bare(text: str) -> str:
    """``text`` as a text is compared with its quotes: a text is its quote when the two are equal
    after the verifier's normalisation, final punctuation aside (a claim's text and its quote are
    compared in the gate, again in lint's audit: normalised once)."""
    return normalize_quote(text).rstrip(" .!?;:")


def _plural_of(lower: str, theirs: _Reading) -> bool:
    """``lower`` is the singular or plural of a name the quotes state ("Protestant" /
    "Protestants"): likely the same name, but "Edward" is not "Edwards" (uncertain)."""
    if len(lower) < 4:
        return False
    if lower.endswith("ss"):
        forms = {lower + "es"}  # "Douglass" is not "Douglas"
    elif lower.endswith("s"):
        forms = {lower + "es", lower[:-1]}
    else:
        forms = {lower + "s"}
    return any(f in theirs.words and len(f) >= 4 for f in forms)


def _fuller(lower: str, mine: _Reading, theirs: _Reading) -> bool:
    """``lower`` is part of a longer form of a name the quotes state: the text's run of
    capitalised words holding it contains one of the quotes' runs whole ("Gaius Julius Caesar"
    for "Caesar"; not "James Smeaton" for "James Douglass")."""
    runs = [g for g in mine.groups if lower in g]
    return any(q <= g and lower not in q for g in runs for q in theirs.groups)


CHECK_CACHE = 1 << 17
"""Verdicts kept in memory: lint's audit after an ingest re-checks every active claim the gate
has just checked (69k claims after all 233 State of the Union addresses), so it finds them here
instead of reading every text again. Keys and verdicts are plain tuples of strings (``allowed``
sorted): the garbage collector stops looking at them once it has seen them, where a frozenset or
a dataclass per entry would be traversed again by every full collection."""


@lru_cache(maxsize=CHECK_CACHE)
def _check(
    text: str,
    quotes: tuple[str, ...],
    share: float,
    allowed: tuple[str, ...],
    context: tuple[str, ...],
) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
    """:func:`_verdict` as (verdict, missing, reason, changes), cached."""
    found = _verdict(text, quotes, share, frozenset(allowed), context)
    return found.verdict, found.missing, found.reason, found.changes


def _verdict(
    text: str,
    quotes: tuple[str, ...],
    share: float,
    allowed: frozenset[str],
    context: tuple[str, ...],
) -> Support:
    if _bare(text) in map(_bare, quotes):
        return Support(SUPPORTED)  # the extractive engine's claims: its text is its quote
    if len(quotes) > 1 and _letters(text) == "".join(map(_letters, quotes)):
        return Support(SUPPORTED)  # its quotes in order: a long sentence cut into quotes
    text = one_as_single(every_nth(text), quotes)  # "every second year", "one unit" restated
    mine = _read(text)
    theirs = _quote_reading(quotes)
    around = _quote_reading(context)
    # a claim; a title that says something, or a noun phrase that joins words of several
    # quotes, carries a number or stands near a negation ("Rain and Snow on Mars" / "rather than
    # rain or snow"), which the parse reads
    parse = share <= CLAIM_SHARE or _says_something(text) or _joins(mine, quotes, theirs)
    relevant = _relevant(mine, quotes, allowed) if parse else ()
    hard: list[str] = []
    hard_numbers: list[str] = []
    soft: list[str] = []
    framed: list[str] = []  # found only in the context (the source's title, the heading)
    why: list[str] = []

    stated = 0  # facts and words the text shares with its quotes
    kinds: list[str] = []  # the kinds of change found
    for shown, value, kind, before in mine.numbers:
        if kind == "alt":
            continue
        found, reason = number_found(value, kind, before, theirs.numbers, shown)
        if found == "found" or _fold(shown) in allowed:
            stated += 1
            bound = _bound_dropped(value, kind, before, theirs.numbers)
            or_bound = _or_bound(shown, text, quotes)
            if or_bound:
                soft.append(shown)
                kinds.append("number")
                why.append(f"'{shown}' — the quote says '{shown} … {or_bound}'")
            elif bound:
                soft.append(shown)
                kinds.append("number")
                why.append(f"'{shown}' — the quote says '{bound} {shown}'")
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
        elif _arithmetic(value, theirs.numbers):
            soft.append(shown)
            why.append(f"'{shown}' is only arithmetic on numbers the quotes state")
        elif share <= CLAIM_SHARE and not _rival_number(shown, value, kind, theirs.numbers):
            soft.append(shown)
            why.append(
                f"the quotes state no {_number_kind(shown, value, kind)} to compare '{shown}' with"
            )
        else:
            hard.append(shown)
            hard_numbers.append(shown)
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
        elif share <= CLAIM_SHARE and not quoted_months and not _quoted_years(theirs):
            soft.append(shown)
            why.append(f"the quotes state no date to compare '{shown}' with")
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
        elif share <= CLAIM_SHARE and not quoted_dates and not _quoted_years(theirs):
            soft += date.shown.split()
            why.append(f"the quotes state no date to compare '{date.shown}' with")
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
        elif _fuller(lower, mine, theirs) or _plural_of(lower, theirs):
            fuller.append(shown)
        else:
            unnamed.append(shown)
    if unnamed and any(
        not _name_found(lower, mine) and not _plural_of(lower, mine) for _, lower in theirs.names
    ):
        hard += unnamed  # the quotes name someone else: a swapped name, refused
    elif unnamed:
        # A name the quotes leave out but contradict with no other name: often the subject the
        # source's context supplies (its title, an earlier sentence). A person decides.
        soft += unnamed
        why.append(f"the quotes don't name {_list(unnamed)}")
    if fuller:
        soft += fuller
        why.append(f"{_list(fuller)} only lengthen a name the quotes state, or change its number")
    # the structure layer (a parse) only when it can change the verdict: not for a text a
    # changed name or date already refuses, unless a number may be restated in another unit
    shape = None
    restating = bool(hard) and hard == hard_numbers and bool(_UNIT_WORD.search(text))
    if restating and parse:  # a number in another unit: the quotes that state a quantity too
        relevant = tuple(dict.fromkeys([*relevant, *(q for q in quotes if _read(q).numbers)]))
        relevant = relevant[:STRUCTURE_QUOTES]
    if relevant and (not hard or restating):
        shape = structure.read(text, relevant, context)
        converted = [h for h in hard if h in shape.converted]
        stated += len(converted)
        hard = [h for h in hard if h not in shape.converted]
    if hard:
        why.insert(0, "the quotes don't state " + _list(hard))

    negation = _negation_problem(mine, theirs, shape)
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
    restated = shape.restated if shape else frozenset()
    for shown, s in content:
        if s in covered_stems or shown.casefold() in restated:
            continue
        if s in around.stems:
            framed.append(shown)
            continue
        uncovered += 1
        lacking.append(shown)
    lacking = list(dict.fromkeys(lacking))
    if shape is not None and share <= CLAIM_SHARE:
        # a preposition or conjunction the quotes word otherwise ("across" for "that cross",
        # "among them" for "including"): the alignment found every fact, role and scope kept
        lacking = [w for w in lacking if w.casefold() not in shape.light]
        uncovered = len(lacking)
    enough = uncovered <= 1 or len(content) - uncovered >= share * len(content)
    unsaid = _unsaid_clause(text, theirs, around, allowed, restated) if lacking else None
    if unsaid is not None:
        enough = False
        why.append(f"the clause '{unsaid}' says nothing its quotes state")
    if lacking:
        why.append(f"the quotes don't say {_list(lacking)}")
    framed = list(dict.fromkeys(framed))
    if shape and shape.framed:
        # the heading's subject standing where the quote says "it", "the city" or nothing
        stated += sum(1 for w in framed if w.casefold() in shape.framed)
        framed = [w for w in framed if w.casefold() not in shape.framed]
    if framed:
        why.append(f"only the source's title or heading states {_list(framed)}")

    stated += sum(1 for shown, s in content if s in covered_stems or shown.casefold() in restated)
    if hard:
        kinds.append("fact")
    if negation and negation[2]:
        kinds.append("negation")
    clear = uncertain = False
    for change in shape.changes if shape else ():
        kinds.append(change.kind)
        clear = clear or change.clear
        uncertain = uncertain or not change.clear
        (hard if change.clear else soft).extend(w for w in change.words if w not in hard)
        why.append(change.reason)
    if shape and shape.unstated:
        why.append("no quote states " + _list(list(shape.unstated)))
        soft.extend(w for u in shape.unstated for w in u.strip("'").split("' ")[:1])
    changes = tuple(dict.fromkeys(kinds))
    missing = tuple(dict.fromkeys([*hard, *soft, *lacking, *framed]))
    apart = not stated and bool(missing)  # it states things, none of them in its quotes
    if hard or clear or not enough or apart:
        if apart and not hard and not clear and enough:
            why.append("the text says nothing its quotes state")
        return Support(UNSUPPORTED, missing, "; ".join(why), changes=changes)
    if soft or lacking or framed or uncertain:
        return Support(UNCERTAIN, missing, "; ".join(why), changes=changes)
    return Support(SUPPORTED)


_CLAUSE = re.compile(
    r"(?<!\d),|,(?!\d)|[;:()\[\]—–]|\s-\s|\b(?:who|whom|whose|which|and|but|whereas|while)\b",
    re.I,
)
"""Where a text's clauses part: commas (not a number's: "1,315"), semicolons, colons, brackets,
dashes, relative pronouns and conjunctions."""
_CLAUSE_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _unsaid_clause(
    text: str,
    theirs: _Reading,
    around: _Reading,
    allowed: frozenset[str],
    restated: frozenset[str] = frozenset(),
) -> str | None:
    """A clause of ``text`` (cut at commas, brackets, dashes, relative pronouns) with two or
    more content words of which the quotes, the context and ``allowed`` state none: a statement
    of its own, not a rewording ("…, who was convicted of fraud")."""
    for clause in _CLAUSE.split(text):
        words = [
            w
            for w in _CLAUSE_WORD.findall(clause)
            if len(w) >= 3 and _fold(w) not in STOPWORDS and _fold(w) not in BOUNDS
        ]  # a bound is a number's ("with less than 56 fatalities": one word of its own)
        if len(words) < 2:
            continue
        if not any(
            _fold(w) in theirs.words
            or stem(_fold(w)) in theirs.stems
            or stem(_fold(w)) in around.stems
            or stem(_fold(w)) in allowed
            or _fold(w) in restated
            for w in words
        ):
            return clause.strip(" .!?")
    return None


_SCOPE_WORDS = frozenset(
    [
        "all",
        "every",
        "each",
        "always",
        "most",
        "mostly",
        "many",
        "much",
        "few",
        "some",
        "several",
        "only",
        "never",
        "no",
        "not",
        "none",
        "nor",
        "neither",
        "without",
        "unlike",
        "instead",
        "rather",
        "except",
        "may",
        "might",
        "could",
        "can",
        "must",
        "should",
        "would",
        "will",
        "shall",
        "perhaps",
        "possibly",
        "probably",
        "likely",
        "about",
        "around",
        "nearly",
        "almost",
        "approximately",
        "roughly",
        "than",
        "more",
        "less",
        "fewer",
        "before",
        "after",
        "since",
        "until",
        "because",
        "due",
        "so",
        "thus",
        "hence",
        "therefore",
        "caused",
        "led",
        "first",
        "last",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "seems",
        "appears",
        "unless",
        "if",
    ]
)
"""Words that make a text more than a name or a bare noun phrase: the structure layer reads a
text with one of them (or a verb-like ending, or more than eight words)."""
_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


@lru_cache(maxsize=65536)
def _says_something(text: str) -> bool:
    """``text`` is more than a name or a bare noun phrase ("Overview", "Great Britain", "State
    of the Union, 1790: George Washington"), which has no roles, scope or links to change; a
    page's title or heading often is one, and is then not parsed."""
    words = [w.split("'")[0].split("’")[0] for w in _WORDS.findall(text)]
    if len(words) > 8 or "n't" in text or "n’t" in text:
        return True
    return any(
        w.casefold() in _SCOPE_WORDS
        or (len(w) > 4 and w.casefold().endswith(("est", "ed", "ing")))
        or (len(w) > 3 and w.endswith("s") and w.islower())  # "ranks", "wins": a verb, maybe
        for w in words
    )


def _joins(mine: _Reading, quotes: Sequence[str], theirs: _Reading) -> bool:
    """A noun phrase (a title, a heading) whose relations a quote may not state: it has a
    number, the quotes negate or set something apart, or its words come from two quotes."""
    if mine.numbers or theirs.negations or len(mine.content) < 2:
        return bool(mine.numbers or theirs.negations)
    wanted = {s for _, s in mine.content}
    touched = [q for q in dict.fromkeys(quotes) if wanted & _read(q).stems]
    return len(touched) >= 2


_UNIT_WORD = re.compile(
    r"\d\s*(?:[a-z°%]|square|sq)|\b(?:metres?|meters?|miles?|feet|inch|degrees?)\b", re.I
)
"""A number with a unit after it, which may restate a quoted number in another unit."""

STRUCTURE_QUOTES = 8
"""Quotes the structure layer parses for one text, those sharing the most words with it: a
page's title is checked against every quote of the page, and a quote that shares no word with
the title has nothing to align (so it is not parsed)."""


def _relevant(
    mine: _Reading, quotes: Sequence[str], allowed: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """The quotes sharing a content word, a name or a number with the text, most shared
    first (at most :data:`STRUCTURE_QUOTES`), in their own order; words ``allowed`` anyway (a
    heading's generic words, the cited sources' names) don't count."""
    wanted = ({s for _, s in mine.content} | {stem(n) for _, n in mine.names}) - allowed
    numbers = {v for _, v, _, _ in mine.numbers}
    shared: list[tuple[int, int, str]] = []
    for n, quote in enumerate(dict.fromkeys(quotes)):
        reading = _read(quote)
        overlap = len(wanted & reading.stems) + sum(
            1 for _, v, _, _ in reading.numbers if v in numbers
        )
        if overlap:
            shared.append((overlap, n, quote))
    if len(shared) > STRUCTURE_QUOTES:
        shared = sorted(shared, key=lambda x: (-x[0], x[1]))[:STRUCTURE_QUOTES]
    return tuple(q for _, _, q in sorted(shared, key=lambda x: x[1]))


def _bound_dropped(
    value: Decimal, kind: str, before: str, numbers: Sequence[tuple[str, Decimal, str, str]]
) -> str:
    """The bound or approximation every quoted occurrence of ``value`` carries ("at least 10",
    "about 1.5 million") when the text states the number bare: the fact changed ('' if not)."""
    if before or kind:
        return ""
    same = [b for _, v, k, b in numbers if v == value and k == ""]
    if same and all(b in BOUNDS or b in APPROXIMATE for b in same):
        return "at least" if same[0] == "least" else same[0]
    return ""


_OR_WORD = re.compile(r"\sor\s", re.I)
_OR_BOUND = (
    r"(?:\s+[^\W\d_]+){0,2}?\s+or\s+(less|more|fewer|so|above|below|greater|higher|lower|under|"
    r"over|longer|shorter|earlier|later)\b"
)


def _or_bound(shown: str, text: str, quotes: Sequence[str]) -> str:
    """The open end every quoted occurrence of a number carries ("five percent *or less*",
    "60 years or more") when the text states the number without it: the fact changed."""
    if not any(_OR_WORD.search(q) for q in quotes):  # no quote can bind it: skip the compiles
        return ""
    at = re.compile(rf"(?<![\w.,]){re.escape(shown)}(?![\w])", re.I)
    bounded = re.compile(at.pattern + _OR_BOUND, re.I)
    found = [m for q in quotes for m in bounded.finditer(q)]
    if not found or bounded.search(text):
        return ""
    if sum(len(at.findall(q)) for q in quotes) != len(found):
        return ""
    return f"or {found[0].group(1)}"


def _arithmetic(value: Decimal, numbers: Sequence[tuple[str, Decimal, str, str]]) -> bool:
    """``value`` is the sum or difference of two numbers the quotes state (not years): "$1.75"
    from "$7.25 to $9", "38" from "35 states … three short". A person checks the sum."""
    stated = [v for shown, v, kind, _ in numbers if kind == "" and not _year_like(shown, v)][:12]
    return value > 0 and any(
        value in (a + b, abs(a - b)) for n, a in enumerate(stated) for b in stated[n + 1 :]
    )


def _number_kind(shown: str, value: Decimal, kind: str) -> str:
    """The kind of number a text's number is, for :func:`_rival_number`: a year, an ordinal,
    a count written as a word ("four", "one"), or a figure."""
    if kind in ("ord", "decade"):
        return "ordinal" if kind == "ord" else "year"
    if _year_like(shown, value):
        return "year"
    if not shown[:1].isdigit():
        return "number"  # a count in words: rivalled by any figure but a year
    return "figure"


def _rival_number(
    shown: str, value: Decimal, kind: str, numbers: Sequence[tuple[str, Decimal, str, str]]
) -> bool:
    """The quotes state a number the text's could be a changed form of: one of the same kind
    (a year for a year, an ordinal for an ordinal, any other number for a count or a figure).
    A number with no rival in its quotes adds a fact the quotes don't state (uncertain: "four
    campuses" over a list of four, "in December 2015" over a quote with no date); one with a
    rival changes it (unsupported)."""
    if shown.casefold() == "one":
        return False  # "one unit" for "a single unit": 'one' is as often an article as a count
    mine = _number_kind(shown, value, kind)
    for s, v, k, _ in numbers:
        if k == "alt":
            continue
        theirs = _number_kind(s, v, k)
        if mine == theirs or (mine != "ordinal" and mine != "year" and theirs != "ordinal"):
            return True  # a count or figure: any count, figure or year-like figure ("1500 pounds")
    return False


def _quoted_years(quotes: _Reading) -> bool:
    return any(_number_kind(s, v, k) == "year" for s, v, k, _ in quotes.numbers)


def _year_like(shown: str, value: Decimal) -> bool:
    return shown.isdigit() and len(shown) == 4 and 1000 <= value <= 2200


def _spelled_number(shown: str) -> bool:
    return shown.casefold() in _UNITS or shown.casefold() in _SCALES


def _negation_problem(
    mine: _Reading, theirs: _Reading, shape: structure.Structure | None = None
) -> tuple[list[str], str, bool] | None:
    """(words, reason, refused): a negation on one side only. Refused (unsupported) unless the
    quotes negate the text's words in one place and assert them in another ("90 cases …, and no
    reported cases in Brčko"): then which one the text restates is for a person to say. None
    when the parse shows every negated predicate restated with its polarity ("neither … nor
    defines" / "leave … undefined"), or a word with a negating prefix restating the same word
    ("impressing" for "impressed")."""
    if shape is not None and shape.negations_agree:
        return None
    found = _bag_negation(mine, theirs)
    if (
        found
        and shape is not None
        and len(found[0]) == 1
        and "prefix" in found[1]
        and found[0][0].casefold() in shape.matched
    ):
        return None
    return found


_NEGATIVE_WORDS = frozenset(
    [
        "absent", "absence", "lack", "lacks", "lacked", "lacking", "free", "unknown", "unclear",
        "zero", "yet", "missing", "devoid", "without", "excluded", "ignored", "refused",
        "denied", "failed", "unable", "neither", "nor", "no", "not", "never", "none", "nothing",
        "nobody", "instead", "rather", "unlike",
    ]
)  # fmt: skip
"""Words that state an absence or a refusal without a negation the bag reads as one ("absent
from the plot" for "not in the storyline", "zero deaths" for "no deaths", "warrantless" for
"without warrant"): on the other side of a bag negation they make it a paraphrase a person
judges, not a refused flip."""


def _says_absence(reading: _Reading) -> bool:
    return any(w in _NEGATIVE_WORDS or (len(w) > 6 and w.endswith("less")) for w in reading.words)


def _bag_negation(mine: _Reading, theirs: _Reading) -> tuple[list[str], str, bool] | None:
    found = _bag_negation_found(mine, theirs)
    if found and found[2] and "prefix" not in found[1]:
        other = _says_absence(theirs) if mine.negations else _says_absence(mine)
        if other:
            return found[0], f"{found[1]} (but it states an absence in other words)", False
    return found


def _bag_negation_found(mine: _Reading, theirs: _Reading) -> tuple[list[str], str, bool] | None:
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
    quote_bases = {stem(base) for _, base in theirs.prefixed}  # stems of the words they negate
    for word, s in mine.content:
        if s in quote_bases and s not in theirs.stems:
            return [word], f"the quotes say the opposite of '{word}' (a negating prefix)", True
    for word, base in mine.prefixed:
        if _fold(word) not in theirs.words and stem(base) in theirs.stems:
            return [word], f"the quotes say the opposite of '{word}' (no negating prefix)", True
    return None


def _list(words: Sequence[str]) -> str:
    return ", ".join(f"'{w}'" for w in words[:8]) + ("…" if len(words) > 8 else "")
