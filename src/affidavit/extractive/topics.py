"""Topics of a chunk: names (capitalised phrases) and key phrases, with the units that mention them.

Names are runs of capitalised words, joined by "of", "de", "von" and the like ("Bank of England",
"Armenian Apostolic Church"), without the function words and titles at their edges ("The",
"Mr."). A name that only ever opens a sentence is not trusted to be one. Key phrases are runs of
two or three lower-case content words ("public credit", "wrought iron") that recur in the chunk.

Variants are folded together: case, a leading "the", possessives, plural endings of key phrases;
a phrase contained in another ("Prize Court" in "International Prize Court") counts the longer
one's mentions, and only one of them becomes a topic. Generic names that would gather a page of
everything ("Congress", "United States", "Government") are skipped (:mod:`.lexicon`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress

from ..support import wordnet
from .lexicon import (
    CONNECTORS,
    DATE_WORDS,
    GENERIC_NAMES,
    GENERIC_PHRASES,
    GENERIC_WORDS,
    HONORIFICS,
    INTERFACE_WORDS,
    MENU_VERBS,
    MODIFIERS,
    NUMBER_WORDS,
    PLACEHOLDER_NAMES,
    STEP_VERBS,
    STOPWORDS,
    VERBS,
    words,
)
from .terms import description
from .units import Unit

_TOKEN = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?|\d+")
_ASCII_TOKEN = re.compile(r"[A-Za-z](?:[A-Za-z0-9_'-]*[A-Za-z0-9])?|[0-9]+")
r""":data:`_TOKEN` for ASCII text, where its classes are these ranges: twice as fast as Unicode
classes (``\w`` is ``[A-Za-z0-9_]`` there and ``\d`` is ``[0-9]``)."""


def _tokens(text: str) -> re.Pattern[str]:
    """The word pattern for ``text``: the same words either way."""
    return _ASCII_TOKEN if text.isascii() else _TOKEN


_COMPOUND = re.compile(r"^[^\W\d_]+-[a-z]")  # "Istanbul-based", "French-speaking": adjectives
_POSSESSIVE = re.compile(r"['’]s?$")
_KEY_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_ROMAN = re.compile(r"^[IVXLC]+$")
MAX_NAME_TOKENS = 6
_SECTION_REFERENCE = re.compile(r"\s+(?:below|above|section)\b")
"""After a name in capitals, what makes it a reference to a section of the manual ("See
INCOMPATIBLE OPTIONS below", "See BACKEND SPECIFIC HINTS section"), where SQL's "ALTER TABLE"
and "CREATE INDEX", named in capitals too, are subjects."""
_DEMONYM = ("ian", "ese", "ish")
_TRAILING_GENERIC = frozenset({"government", "governments"})
_IDENT_DIGITS = re.compile(r"^[a-z]+\d+$")
_CODE_WORD = re.compile(r"^(?:True|False|None|\w*_\w*|\w+\.\w+)$")
NEW_TOPIC_MENTIONS = 3
"""Sentences of the chunk that must name a subject before it gets a new page of its own."""
NOUN_PHRASE_OPENERS = words(
    "a an the this that these those each every any some no its their his her our your my "
    "of in for with on by from into about as at between"
)
"""Words before a key phrase that show it is a noun phrase ("the base class", "of floating
point"); a phrase never seen after one ("Instead print", "grep stops") is not a topic."""


@dataclass
class Candidate:
    """One name or key phrase and the units (by position in the unit list) that mention it."""

    key: str
    kind: str  # "name" | "phrase"
    surfaces: Counter[str] = field(default_factory=Counter)
    units: set[int] = field(default_factory=set)
    inner: bool = False  # a name seen somewhere other than at the start of a sentence
    contexts: set[tuple[str, str]] = field(default_factory=set)  # (word before, word after)

    @property
    def size(self) -> int:
        return self.key.count(" ") + 1

    def title(self) -> str:
        """The most frequent way the text writes it (the first seen wins a tie)."""
        best = max(self.surfaces.items(), key=lambda item: item[1])[0]
        return best[:1].upper() + best[1:] if self.kind == "phrase" else best


@dataclass(frozen=True)
class Topic:
    """A chosen topic: key, title, kind, the units that mention it (positions, sorted), score."""

    key: str
    title: str
    kind: str
    units: tuple[int, ...]
    score: float
    slug: str | None = None  # the known page it continues, if any


def name_key(text: str) -> str:
    """The comparison key of a name or title: lower case, words only, no leading "the", no
    possessive, the last word singular ("The Democrats'" and "democrat" compare equal)."""
    return _short_name_key(text) if len(text) <= 120 else _name_key(text)


@lru_cache(maxsize=65536)
def _short_name_key(text: str) -> str:
    """:func:`_name_key`, remembered: names and titles recur from chunk to chunk."""
    return _name_key(text)


def _name_key(text: str) -> str:
    return _key_of(list(_words_of(text)))


def _words_of(text: str) -> list[str]:
    """The words of ``text`` as :func:`name_key` reads them (lower case, no possessive)."""
    words = [_POSSESSIVE.sub("", w) for w in _KEY_WORD.findall(text.lower().replace("’", "'"))]
    return [w for w in words if w]


@lru_cache(maxsize=16384)
def _remembered_words(text: str) -> tuple[str, ...]:
    return tuple(_words_of(text))


def _key_of(words: list[str]) -> str:
    start = 0
    while start < len(words) and (words[start] in ("the", "a", "an") or words[start] in HONORIFICS):
        start += 1
    words = words[start:]
    if words and len(words[-1]) > 3:
        words[-1] = _singular(words[-1])
    return " ".join(words)


def joined_name_key(parts: Sequence[str]) -> str:
    """``name_key(" . ".join(parts))``, from the remembered words of each part: the titles and
    summaries of the pages shown with a chunk recur from chunk to chunk. (The words of a text
    are those of its parts in order: no word crosses " . ", and lower-casing maps each
    character alone but Greek capital sigma, which gives no word character either way.)"""
    words: list[str] = []
    for part in parts:
        words += _remembered_words(part) if len(part) <= 1000 else _words_of(part)
    return _key_of(words)


@lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    """The singular of an English plural, by rule ("classes" → "class", "entries" → "entry")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _joins(gap: str, word: str) -> bool:
    """True if two tokens, ``gap`` apart, the first ``word``, may belong to one name: one space
    apart, an initial between them ("George W. Bush") or a plural possessive ("the
    Commissioners' Plan")."""
    if gap == " ":
        return True
    if gap in ("' ", "’ "):
        return word.endswith("s")  # a plural possessive: "the Commissioners' Plan"
    return gap == ". " and len(word) == 1 and word.isupper()


@lru_cache(maxsize=65536)
def _is_cap(token: str) -> bool:
    return token[0].isupper() and token != "I"


def _generic_name(words: list[str]) -> bool:
    key = " ".join(words)
    if key in GENERIC_PHRASES or key in GENERIC_NAMES or key in NUMBER_WORDS:
        return True
    if len(words) == 1 and (
        words[0].endswith(_DEMONYM)
        or words[0] in PLACEHOLDER_NAMES  # "Alice", "Bob" of an example
        or words[0] in GENERIC_WORDS  # "Purpose", "Order": a table's or a list's label
    ):
        return True
    if any(w in DATE_WORDS for w in words) or _interface(words):
        return True  # "Fri", "Nov" of an e-mail header; "Edit", "See Also" of an interface
    return all(
        w in GENERIC_NAMES or _singular(w) in GENERIC_NAMES or w in STOPWORDS or w in CONNECTORS
        for w in words
    )


def _interface(words: Sequence[str]) -> bool:
    """True if every word is an interface or manual word (:data:`.lexicon.INTERFACE_WORDS`) or
    a function word: "Edit", "Empty list", "Boolean value" name no subject."""
    return all(w in _INTERFACE or _singular(w) in _INTERFACE or w in STOPWORDS for w in words)


_INTERFACE = INTERFACE_WORDS | frozenset(_singular(w) for w in INTERFACE_WORDS)
"""Interface words and their singulars: a name's key has its last word singular ("Contents"
is "content")."""


def _names(unit_pos: int, unit: Unit, found: dict[str, Candidate]) -> None:
    text = description(unit.text)  # a definition's term makes no word of it inner
    words = _unit_words(text)
    shown, gaps, starts, ends = words.shown, words.gaps, words.starts, words.ends
    n = len(shown)
    resume = 0  # capitals before it are inside the run before
    for i in words.caps:
        if i < resume:
            continue
        run = [i]
        j = i
        while j + 1 < n and _joins(gaps[j + 1], shown[j]):
            nxt = shown[j + 1]
            if _is_cap(nxt):
                run.append(j + 1)
                j += 1
                continue
            lower = nxt.lower()
            joined = lower in CONNECTORS or (lower == "the" and shown[j].lower() == "of")
            if joined and j + 2 < n and len(run) < MAX_NAME_TOKENS:
                run.append(j + 1)
                j += 1
                continue
            break
        resume = j + 1
        while run:
            head = shown[run[0]]
            inner_the = head == "The" and run[0] > 0 and len(run) > 1
            if inner_the or not (
                head.lower() in STOPWORDS or head.lower() in HONORIFICS or head in CONNECTORS
            ):
                break
            run = run[1:]
        while run and (
            not _is_cap(shown[run[-1]])
            or (len(run) > 1 and shown[run[-1]].lower() in _TRAILING_GENERIC)
        ):
            run = run[:-1]
        if not run or len(run) > MAX_NAME_TOKENS:
            continue
        if text.startswith(":", ends[run[-1]]) and not text.startswith("::", ends[run[-1]]):
            continue  # "Resulting Affinity: TEXT", "Default: 2000": a label, not a mention
        surface = text[starts[run[0]] : ends[run[-1]]]
        if len(run) > 1 and surface.isupper() and _SECTION_REFERENCE.match(text, ends[run[-1]]):
            continue  # "See INCOMPATIBLE OPTIONS below": a section's name, not a subject
        _add_name(surface, run[0] > 0 or len(run) > 1, unit_pos, found)


def _add_name(surface: str, inner: bool, unit_pos: int, found: dict[str, Candidate]) -> None:
    """Count the capitalised run ``surface`` as a mention of its name, unless it is not one."""
    surface = _POSSESSIVE.sub("", surface) if surface.endswith(("'s", "’s")) else surface
    key = _name_of(surface)
    if key is None:
        return
    candidate = found.setdefault(key, Candidate(key, "name"))
    candidate.surfaces[surface] += 1
    candidate.units.add(unit_pos)
    if inner:
        candidate.inner = True


@lru_cache(maxsize=65536)
def _name_of(surface: str) -> str | None:
    """The key of the name ``surface`` writes, or None when it is not a subject's name."""
    words = name_key(surface).split()
    if not words or _generic_name(words) or all(len(w) == 1 for w in words):
        return None  # "B C", "D D D": letters of a diagram, not a name
    if len(words) == 1 and len(surface) <= 3 and not surface.istitle():
        return None  # "MiB", "KiB": a unit's symbol, not a subject
    if len(words) == 1 and (
        len(words[0]) < 3
        or _ROMAN.match(surface)
        or _COMPOUND.match(surface)
        or surface.isupper()  # "END", "NUM": a constant or an acronym, not a subject
    ):
        return None
    if any(_CODE_WORD.match(w) for w in surface.split()):
        return None  # "TIME_STYLE", "True", "os.path": names from code, not subjects
    if len(words) == 1 and (
        words[0] in VERBS or words[0] in STEP_VERBS or _IDENT_DIGITS.match(words[0])
    ):
        return None  # "Create", "Return" open a step; "Idx1" names an example's index
    if words[0] in MENU_VERBS or any(w in PLACEHOLDER_NAMES for w in words):
        return None  # "Use Vim": a menu item; "Git foo": an example's placeholder
    return " ".join(words)


@lru_cache(maxsize=65536)
def _phrase_word(word: str) -> bool:
    """A word a key phrase may hold: lower case, letters only, 3+ letters, not a stopword or a
    generic word."""
    return (
        word.islower()
        and word.isalpha()
        and len(word) >= 3
        and word not in STOPWORDS
        and word not in GENERIC_WORDS
        and word not in GENERIC_NAMES
    )


@lru_cache(maxsize=65536)
def _phrase_edge(first: str, last: str) -> bool:
    """True if a run of words starting with ``first`` and ending with ``last`` (lower case)
    can't be a key phrase: an adverb or participle at its edge, a verb, a number word first."""
    return (
        first.endswith("ly")
        or last.endswith(("ly", "ed", "ing"))
        or first in VERBS
        or last in VERBS
        or first in NUMBER_WORDS
        or _verb_form(first)
    )


@lru_cache(maxsize=16384)
def _verb_form(word: str) -> bool:
    """True if ``word`` is a verb's third person and nothing else WordNet knows: "reduces"
    ("Reduces index load" opens a definition's sentence, it names nothing), not "commits",
    "files" or "changes", which are nouns' plurals too."""
    if not word.endswith("s") or word.endswith("ss"):
        return False
    bases = {word[:-1], word[:-2]} if word.endswith("es") else {word[:-1]}
    verb = any(wordnet.known(b, "v") for b in bases)
    return verb and not any(wordnet.known(b, pos) for b in bases | {word} for pos in "nar")


def _phrases(unit_pos: int, unit: Unit, found: dict[str, Candidate]) -> None:
    text = description(unit.text)  # a definition's term makes no word of it inner
    words = _unit_words(text)
    run: list[int] = []  # indices into the words
    for index, ok in enumerate(words.phrase_ok):
        if not ok or (index and words.gaps[index] != " "):
            if len(run) > 1:
                _add_phrases(run, words, text, unit_pos, found)
            run = []
        if ok:
            run.append(index)
    if len(run) > 1:
        _add_phrases(run, words, text, unit_pos, found)


def _add_phrases(
    run: list[int], words: _Words, text: str, unit_pos: int, found: dict[str, Candidate]
) -> None:
    """Count the key phrases of three and two words of ``run`` (consecutive phrase words)."""
    lower, starts, ends = words.lower, words.starts, words.ends
    for size in (3, 2):
        for a in range(len(run) - size + 1):
            i, j = run[a], run[a + size - 1]
            if _phrase_edge(lower[i], lower[j]):
                continue
            key = " ".join([_singular(w) for w in lower[i : j + 1]])
            surface = text[starts[i] : ends[j]]
            candidate = found.setdefault(key, Candidate(key, "phrase"))
            candidate.surfaces[surface] += 1
            candidate.units.add(unit_pos)
            before = lower[i - 1] if i > 0 else ""
            after = lower[j + 1] if j + 1 < len(lower) else ""
            candidate.contexts.add((before, after))


@dataclass(frozen=True)
class _Words:
    """The word tokens of a unit's text, for both the name and the phrase pass (read only):
    each as written and in lower case, the text between it and the one before ("" for the
    first), offsets, which start with a capital, which may be in a key phrase."""

    shown: tuple[str, ...]
    lower: tuple[str, ...]
    gaps: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    caps: tuple[int, ...]
    phrase_ok: tuple[bool, ...]


@lru_cache(maxsize=1024)
def _unit_words(text: str) -> _Words:
    matches = list(_tokens(text).finditer(text))
    shown = tuple(map(re.Match.group, matches))
    starts = tuple(map(re.Match.start, matches))
    ends = tuple(map(re.Match.end, matches))
    gaps = ("", *map(text.__getitem__, map(slice, ends[:-1], starts[1:])))
    lower, cap, ok = zip(*map(_word_kind, shown), strict=True) if shown else ((), (), ())
    if shown and shown[0][:1].isupper() and shown[0][1:].islower():
        # a sentence's first word: "Base classes are listed..."
        ok = (_phrase_word(shown[0].lower()), *ok[1:])
    caps = tuple(compress(range(len(shown)), cap))
    return _Words(shown, lower, gaps, starts, ends, caps, ok)


@lru_cache(maxsize=65536)
def _word_kind(word: str) -> tuple[str, bool, bool]:
    """A word in lower case, whether it is capitalised (:func:`_is_cap`), and whether a key
    phrase may hold it as written (:func:`_phrase_word`)."""
    return word.lower(), _is_cap(word), _phrase_word(word)


def _credit_containers(found: dict[str, Candidate]) -> None:
    """A key contained in a longer key of the same kind also counts the longer one's units."""
    by_word: dict[str, list[Candidate]] = {}
    for candidate in found.values():
        for word in dict.fromkeys(candidate.key.split()):
            by_word.setdefault(word, []).append(candidate)
    for candidate in found.values():
        padded = f" {candidate.key} "
        first = candidate.key.split()[0]
        for other in by_word.get(first, []):
            if (
                other is not candidate
                and other.kind == candidate.kind
                and padded in f" {other.key} "
            ):
                candidate.units |= other.units
                candidate.inner = candidate.inner or other.inner


def _fold_single_names(found: dict[str, Candidate], lower_words: Counter[str]) -> None:
    """Fold one-word names into the most frequent name that contains them when it holds at least
    half of their mentions ("Church" into "Armenian Church", but not "Manhattan" into "Lower
    Manhattan"), and drop one-word names the text also writes in lower case
    ("Travel", "Home": section labels and common nouns, not names)."""
    multi = [c for c in found.values() if c.kind == "name" and c.size > 1 and len(c.units) >= 2]
    for key in list(found):
        candidate = found[key]
        if candidate.kind != "name" or candidate.size != 1:
            continue
        hosts = [
            c
            for c in multi
            if f" {key} " in f" {c.key} " and 2 * len(c.units) >= len(candidate.units)
        ]
        if hosts:
            host = max(hosts, key=lambda c: (len(c.units), -c.size, c.key))
            host.units |= candidate.units
            del found[key]
            continue
        capitalised = sum(candidate.surfaces.values())
        if lower_words[key] and capitalised < 3 * lower_words[key]:
            del found[key]


def known_slug(key: str, known: dict[str, str]) -> str | None:
    """The slug of the known page ``key`` continues: the same key; else, for names of two words or
    more, the longest known key of two words or more inside it ("New York City" continues "New
    York"), or the only known key one word longer around it ("New York" continues "New York
    City" unless "New York Harbor" is known too)."""
    if key in known or " " not in key:
        return known.get(key)
    padded = f" {key} "
    inside = [k for k in known if " " in k and f" {k} " in padded]
    if inside:
        return known[max(inside, key=lambda k: (len(k), k))]
    around = [k for k in known if f" {key} " in f" {k} " and k.count(" ") == key.count(" ") + 1]
    return known[around[0]] if len(around) == 1 else None


def _same_subject(key: str, title_key: str) -> bool:
    """True if ``key`` names the subject of a page titled ``title_key``: one contains the other,
    or all of its words are among the title's ("Armenian Church" on "Armenian Apostolic
    Church")."""
    return _contains(key, title_key) or set(key.split()) <= set(title_key.split())


def _contains(a: str, b: str) -> bool:
    return f" {b} " in f" {a} " or f" {a} " in f" {b} "


@dataclass(frozen=True)
class TopicCandidate:
    """A name or key phrase of the chunk that may become a topic, whatever pages are known:
    its key, title, kind, size (words), the units that mention it (positions, sorted) and its
    score before a known page doubles it. ``needs_support``: mentioned in fewer than
    :data:`NEW_TOPIC_MENTIONS` units, it becomes a topic only when a known page or the pages the
    host showed name it."""

    key: str
    title: str
    kind: str
    size: int
    units: tuple[int, ...]
    score: float
    needs_support: bool


def topic_candidates(
    units: list[Unit], exclude: tuple[str, ...] = (), text: str = ""
) -> list[TopicCandidate]:
    """The names and key phrases of ``units`` that may become topics (see :func:`find_topics`):
    everything about them that does not depend on the wiki's pages. Keys in ``exclude`` are
    left out; ``text`` is the whole chunk."""
    found: dict[str, Candidate] = {}
    for pos, unit in enumerate(units):
        _names(pos, unit, found)
    phrases: dict[str, Candidate] = {}
    for pos, unit in enumerate(units):
        _phrases(pos, unit, phrases)
    for key, candidate in phrases.items():
        if key not in found:
            found[key] = candidate
    _credit_containers(found)
    lower_words = Counter(filter(str.islower, _tokens(text).findall(text)))
    _fold_single_names(found, lower_words)
    out: list[TopicCandidate] = []
    for candidate in found.values():
        df = len(candidate.units)
        if candidate.kind == "name":
            if df < 2 or (candidate.size == 1 and not candidate.inner):
                continue
            score = df * (1.0 + 0.25 * min(candidate.size - 1, 2))
        else:
            words = candidate.key.split()
            if df < 2 or len(candidate.contexts) == 1 or len(set(words)) < len(words):
                continue  # a refrain ("by an impressive expression...") or "level level"
            if not any(before in NOUN_PHRASE_OPENERS for before, _ in candidate.contexts):
                continue  # never after "a", "the", "of"...: not a noun phrase ("grep stops")
            if _interface(words):
                continue  # "empty list", "boolean value": any manual's words, no subject
            if any(w in PLACEHOLDER_NAMES for w in words):
                continue  # "pattern foo": an example's placeholder
            if candidate.size == 2 and words[0] in MODIFIERS:
                continue  # "single row", "returned text": a row, a text, no kind of its own
            afters = {_singular(after) for _, after in candidate.contexts}
            if len(afters) == 1 and _phrase_word(next(iter(afters))):
                continue  # always "common table [expression]": cut from a longer phrase
            score = df * 0.6 * (1.0 + 0.2 * (candidate.size - 2))
        if any(_same_subject(candidate.key, key) for key in exclude if key):
            continue
        out.append(
            TopicCandidate(
                candidate.key,
                candidate.title(),
                candidate.kind,
                candidate.size,
                tuple(sorted(candidate.units)),
                score,
                df < NEW_TOPIC_MENTIONS,
            )
        )
    return out


def choose_topics(
    candidates: list[TopicCandidate],
    known: Callable[[str], str | None],
    limit: int,
    named_elsewhere: str = "",
) -> list[Topic]:
    """Up to ``limit`` topics among ``candidates``. ``known(key)``: the slug of the known page
    ``key`` continues (:func:`known_slug`), or None; ``named_elsewhere``: the name key of
    ``elsewhere`` (see :func:`find_topics`) padded with spaces, "" when there is none."""
    scored: list[tuple[float, TopicCandidate, str | None]] = []
    for candidate in candidates:
        slug = known(candidate.key)
        score = candidate.score
        # A new page only for a subject named repeatedly: three mentions in the chunk, or two
        # and a mention on a page of another source the host showed; known pages continue.
        if slug is None:
            if candidate.needs_support and not (
                named_elsewhere and f" {candidate.key} " in named_elsewhere
            ):
                continue
        else:
            score *= 2.0
        scored.append((score, candidate, slug))
    scored.sort(key=lambda item: (-item[0], -item[1].size, item[1].key))
    chosen: list[Topic] = []
    for score, candidate, slug in scored:
        if len(chosen) >= limit:
            break
        if any(_contains(candidate.key, t.key) for t in chosen):
            continue
        chosen.append(
            Topic(candidate.key, candidate.title, candidate.kind, candidate.units, score, slug)
        )
    return chosen


def find_topics(
    units: list[Unit],
    known: dict[str, str],
    limit: int,
    exclude: tuple[str, ...] = (),
    text: str = "",
    elsewhere: str = "",
) -> list[Topic]:
    """Choose up to ``limit`` topics among the names and key phrases of ``units``.

    ``known`` maps the keys of existing or pending pages to their slugs: a topic that is already
    a page ranks higher, so that chunks after the first keep feeding the same pages. Keys in
    ``exclude`` (the source's own title) never become topics. ``text`` is the whole chunk: a
    one-word name it also writes in lower case is a common noun, not a name. ``elsewhere`` is
    the titles and summaries of the other pages the host showed: a subject named there too needs
    two mentions in the chunk to become a page, any other needs three.

    The engine runs the two halves apart (:func:`topic_candidates` ahead of time, then
    :func:`choose_topics` with an index of the known keys, :mod:`.known`); this is the two
    over a plain dictionary.
    """
    candidates = topic_candidates(units, exclude, text)
    named = f" {name_key(elsewhere)} " if elsewhere else ""
    return choose_topics(candidates, lambda key: known_slug(key, known), limit, named)
