"""Quote verification (SPEC §3 W3): is each cited quote in the stored text of the source it cites?

A quote is verified only when its normalised form (:func:`normalize_quote`) is non-empty and occurs
in the normalised text of the cited source, never of any other source, **anchored**: both of its
ends fall on word boundaries of the source (:func:`cuts`). ``500 pounds`` is not in ``1500
pounds``, nor ``safe`` in ``unsafe``, nor ``500`` in ``1,500``, ``3.5`` or ``-500``, nor ``toxic`` in
``non-toxic``. The first anchored occurrence wins, and its offsets are reported in the source's
original extracted text; ``span`` is ``text[start:end]``, the passage as stored (original case,
quote marks, emphasis markers inside it, and so on): what every surface shows, never the
proposer's string.

How a quote is looked for never changes what is found: always the first occurrence that cuts no
word. A few quotes against a source are one ``str.find`` each. A large source that many quotes are
checked against gets a suffix array (:class:`~affidavit.evidence.index.SuffixIndex`, when
``pydivsufsort`` is installed), which lists every occurrence of a quote at once (the quotes of one
call against a source in one ``searchsorted``: :meth:`~affidavit.evidence.index.SuffixIndex.runs`);
without it, many quotes against one large source are matched by :func:`find_first`, which anchors
each quote on a rare whole word and walks the words of the text twice instead of scanning it once
per quote.

Normalised texts (and their suffix arrays) are cached per content hash in one bounded cache that
every :class:`Verifier` shares: sources are immutable, so a new verifier for the next plan finds
the text of the source the last plan cited already normalised and indexed.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Protocol

from affidavit.evidence import index as _index
from affidavit.evidence.normalize import Normalized, normalize, normalize_quote

__all__ = [
    "QuoteCheck",
    "SourceTexts",
    "Verifier",
    "anchored_find",
    "cached_text",
    "content_key",
    "cuts",
    "find_first",
    "locate",
]

#: Below this many anchored quotes per source, one ``str.find`` per quote beats the word scans.
#: (Both scale with the text; the two scans cost about as much as 300-400 finds of real quotes,
#: measured on 10 MB of prose, see docs/benchmarks.md.)
_SCAN_MIN_QUOTES = 300
#: A needle whose best anchor occurs more often than this is looked up with ``str.find`` instead.
_MAX_TRIES = 5000
_PLUS_ONE = (1).__add__
#: The word scan splits the text in chunks of about this many characters to bound memory.
_SCAN_CHUNK = 1 << 20
#: A source at least this long gets a suffix array once it is looked up again: from its second
#: call on (the first one normalised it; a build costs about as much again, 160 ns a character),
#: or at once when one call brings _SCAN_MIN_QUOTES quotes for it. Shorter sources are cheap to
#: scan.
_INDEX_MIN_CHARS = 1 << 14
#: A quote that occurs more often than this is found with ``str.find`` from the start (it occurs
#: early) rather than by sorting all its occurrences.
_MAX_CANDIDATES = 1000
#: Bound of the cache every verifier shares, in bytes of normalised text, offset map and suffix
#: array; the source used last stays cached whatever its size, so calls against one huge source
#: never normalise it again.
_SHARED_BYTES = 1 << 30

#: Scripts written without spaces between words: any two of their characters may be cut apart.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f]"
)
#: Hyphens: they join a negating affix to its word (``non-toxic``), digits to digits.
_HYPHENS = frozenset("-\u2010\u2011")
#: Affixes that negate or reverse the word they are hyphenated to: a quote may not cut them off
#: (``toxic`` is not in ``non-toxic`` nor ``sugar`` in ``sugar-free``). Other hyphens may be
#: dashes (``his own way-everywhere``) and are word boundaries.
_NEGATING_PREFIXES = frozenset(
    [
        "a",
        "an",
        "anti",
        "contra",
        "counter",
        "de",
        "dis",
        "ex",
        "former",
        "il",
        "im",
        "in",
        "ir",
        "mis",
        "never",
        "no",
        "non",
        "not",
        "pseudo",
        "quasi",
        "un",
    ]
)
_NEGATING_SUFFIXES = frozenset(["free", "less", "proof", "resistant"])
#: Characters that join the digits on both sides into one number: ``1,500``, ``1'500``, ``3.5``,
#: ``10:30``, ``1/2``, ``1990-1995``, ``1\u202f500`` (see the normaliser on thousands separators).
_NUMBER_JOINERS = frozenset(".,':/\u2012\u2013\u2212\u202f") | _HYPHENS
#: Signs: a digit right after one is part of a signed number (``-5``, ``±2``).
_SIGNS = frozenset("+-\u2212\u00b1")
#: Characters besides letters and digits that continue a word in normalised text: combining marks,
#: invisible characters and emphasis markers the normaliser kept inside a word (``2*3``).
_WORD_CATEGORIES = frozenset(["Mn", "Mc", "Me", "Cf"])


class SourceTexts(Protocol):
    """Where the verifier reads stored sources from (the source store implements it)."""

    def resolve(self, ref: str) -> str | None:
        """Return the full 64-hex id for an id or unique prefix (>= 12 hex), else None."""
        ...

    def text(self, source_id: str) -> str:
        """Return the stored extracted text of the source ``source_id``."""
        ...


class _Source:
    """One normalised source text, with the suffix array built for it once it pays off."""

    def __init__(self, normalized: Normalized) -> None:
        self.normalized = normalized
        self.index: _index.SuffixIndex | None = None
        self.calls = 0  # lookups so far (first_positions calls)
        self.lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes charged to the shared cache: text and offset map, and a suffix array with its
        16-byte keys (counted in advance for a source that may get them)."""
        size = len(self.normalized.text)
        indexed = _index.AVAILABLE and size >= _INDEX_MIN_CHARS
        return size * (26 if indexed else 5)

    def first_positions(self, needles: Sequence[str]) -> list[int]:
        """:func:`_first_positions` for these needles, through the suffix array if it pays."""
        text = self.normalized.text
        index = self._index_for(len(needles))
        if index is None:
            return _first_positions(text, needles)
        patterns = [needle.encode("utf-8", "surrogatepass") for needle in needles]
        starts, stops, firsts = index.runs(patterns)
        data, size, ascii_text = index.data, len(index.data), index.ascii
        out: list[int] = []
        for needle, pattern, start, stop, first in zip(
            needles, patterns, starts, stops, firsts, strict=True
        ):
            if stop - start != 1:
                found = index.run_positions(pattern, start, stop, _MAX_CANDIDATES)
                out.append(_first_clean(text, needle, found))
            elif not data.startswith(pattern, first):
                out.append(-1)  # the one candidate is not the needle: it does not occur
            elif ascii_text:
                # Bytes are characters; cuts() is False next to a space and at the ends: the
                # usual case, decided on the bytes just read, without the call.
                end = first + len(pattern)
                if (first == 0 or data[first - 1] == 32 or not cuts(text, first)) and (
                    end == size or data[end] == 32 or not cuts(text, end)
                ):
                    out.append(first)
                else:
                    out.append(_CUT)
            else:
                out.append(_first_clean(text, needle, [index.char_offset(first)]))
        return out

    def _index_for(self, quotes: int) -> _index.SuffixIndex | None:
        if self.index is not None:
            return self.index
        size = len(self.normalized.text)
        if not _index.AVAILABLE or size < _INDEX_MIN_CHARS:
            return None
        self.calls += 1
        if quotes < _SCAN_MIN_QUOTES and self.calls < 2:
            return None
        with self.lock:
            if self.index is None:
                self.index = _index.SuffixIndex(self.normalized.text)
        return self.index


def _indexed_find(index: _index.SuffixIndex, text: str, needle: str) -> int:
    """:func:`_anchored_find` through the suffix array: every occurrence, tried in order."""
    return _first_clean(text, needle, index.occurrences([needle], _MAX_CANDIDATES)[0])


def _first_clean(text: str, needle: str, positions: list[int] | None) -> int:
    """The first of ``positions`` (every occurrence of ``needle``, sorted) that cuts no word, else
    _CUT, or -1 if there are none; with None (too many to sort), ``str.find`` from the start."""
    if positions is None:
        return _anchored_find(text, needle)
    size = len(needle)
    last = len(text)
    for position in positions:
        # cuts() is False next to a space and at the ends: the usual case, without the call.
        end = position + size
        if (position == 0 or text[position - 1] == " " or not cuts(text, position)) and (
            end == last or text[end] == " " or not cuts(text, end)
        ):
            return position
    return _CUT if positions else -1


_SHARED: OrderedDict[str, _Source] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_shared_bytes = 0


def _shared_get(key: str) -> _Source | None:
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is not None:
            _SHARED.move_to_end(key)
        return found


def _shared_put(key: str, source: _Source) -> _Source:
    """Cache ``source`` under its content hash (or return the one another thread put there)."""
    global _shared_bytes
    with _SHARED_LOCK:
        existing = _SHARED.get(key)
        if existing is not None:
            _SHARED.move_to_end(key)
            return existing
        _SHARED[key] = source
        _shared_bytes += source.nbytes
        while _shared_bytes > _SHARED_BYTES and len(_SHARED) > 1:
            _, evicted = _SHARED.popitem(last=False)
            _shared_bytes -= evicted.nbytes
        return source


def cached_text(key: str | None) -> str | None:
    """The text whose SHA-256 is ``key`` if the shared cache holds it (its digest was checked
    when it was cached), else None: the source store serves a stored text from here rather than
    reading its file again for every plan."""
    source = _shared_get(key) if key else None
    return None if source is None else source.normalized.original


def content_key(text: str) -> str:
    """The key of a text in the shared cache: the SHA-256 of its UTF-8 bytes (what the source
    store records as ``text_sha256``)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class QuoteCheck:
    """The outcome of looking for one quote in the source it cites.

    ``start``/``end`` are offsets into the source's extracted text (original, not normalised),
    set only when ``verified``; ``reason`` is empty when verified and says why otherwise.
    ``quote`` is the proposer's string; ``span`` is the source's own text at ``start:end``, what
    every surface shows ('' when not verified, and in admissions recorded before it existed;
    the door stores ``text[start:end]`` at apply either way).
    """

    source: str
    source_id: str | None
    quote: str
    verified: bool
    start: int | None
    end: int | None
    reason: str
    span: str = ""


def _word_char(char: str) -> bool:
    return char.isalnum() or char in "*_" or unicodedata.category(char) in _WORD_CATEGORIES


def _joined(text: str, at: int) -> bool:
    """True if ``text[at]`` makes one number (``1,500``) or one negated word (``non-toxic``) of the
    characters either side; ``0 < at < len(text) - 1``."""
    before, joiner, after = text[at - 1], text[at], text[at + 1]
    if joiner in _NUMBER_JOINERS and before.isdigit() and after.isdigit():
        return True
    if joiner not in _HYPHENS or not (before.isalnum() and after.isalnum()):
        return False
    start = at - 1
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    if text[start:at] in _NEGATING_PREFIXES:
        return True
    end = at + 2
    while end < len(text) and text[end].isalnum():
        end += 1
    return text[at + 1 : end] in _NEGATING_SUFFIXES


def cuts(text: str, position: int) -> bool:
    """True if a quote starting or ending at ``position`` of normalised ``text`` cuts a word.

    A position cuts when it falls between two word characters (letters, digits, combining marks,
    and what the normaliser keeps inside a word), unless one of them is of a script written
    without spaces (Thai, Lao, Myanmar, Khmer, kana, CJK ideographs); when it falls either side of
    a separator inside a number (``1,500``, ``3.5``, ``10:30``, ``1990-1995``) or of a hyphen
    that attaches a negating affix (``non-toxic``, ``sugar-free``); and right after a sign before
    a digit (``-5``). The ends of the text never cut.
    """
    if position <= 0 or position >= len(text):
        return False
    before, after = text[position - 1], text[position]
    if before == " " or after == " ":
        return False  # the common case: no rule below can apply next to a space
    if _word_char(before) and _word_char(after):
        # Between two letters of which one is of a script without spaces, any cut is a boundary;
        # never next to a combining mark or a character the normaliser kept inside a word.
        unspaced = _UNSPACED.match(before) or _UNSPACED.match(after)
        return not (unspaced and before.isalnum() and after.isalnum())
    if after.isdigit() and before in _SIGNS:
        return True
    if position >= 2 and _joined(text, position - 1):
        return True
    return position + 1 < len(text) and _joined(text, position)


def anchored_find(haystack: str, needle: str, start: int = 0) -> int:
    """Return the first position >= ``start`` where ``needle`` occurs in ``haystack`` without
    cutting a word at either end (:func:`cuts`), or -1."""
    return max(_anchored_find(haystack, needle, start), -1)


#: What the internal finders return for a needle that occurs only where it cuts a word.
_CUT = -2


def _anchored_find(haystack: str, needle: str, start: int = 0) -> int:
    """:func:`anchored_find`, but _CUT when ``needle`` occurs only where it cuts a word."""
    position = haystack.find(needle, start)
    if position < 0:
        return -1
    size = len(needle)
    while cuts(haystack, position) or cuts(haystack, position + size):
        position = haystack.find(needle, position + 1)
        if position < 0:
            return _CUT
    return position


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Return the original ``[start, end)`` of the first match of ``quote`` in ``text``, or None.

    None also when the quote is empty after normalisation.
    """
    needle = normalize_quote(quote)
    if not needle:
        return None
    normalized = normalize(text)
    found = anchored_find(normalized.text, needle)
    if found < 0:
        return None
    return normalized.span(found, found + len(needle))


class Verifier:
    """Checks quotes against stored sources, caching normalised texts.

    The cache is an LRU of :class:`Normalized` per source id, bounded by ``cache_chars`` characters
    of normalised text in total (each character also costs 4 bytes of offset map). A source larger
    than the bound is normalised for each call and not cached. Safe to share between threads.
    """

    def __init__(self, texts: SourceTexts, cache_chars: int = 50_000_000) -> None:
        self._texts = texts
        self._cache_chars = cache_chars
        self._cache: OrderedDict[str, _Source] = OrderedDict()
        self._cached_chars = 0
        self._lock = threading.Lock()

    def check(self, source: str, quote: str) -> QuoteCheck:
        """Check one quote against the source it cites (an id or unique id prefix)."""
        return self.check_many([(source, quote)])[0]

    def check_many(self, items: Iterable[tuple[str, str]]) -> list[QuoteCheck]:
        """Check ``(source, quote)`` pairs; results come back in the same order.

        Quotes are grouped by source, so each source is loaded and normalised once per call and
        many quotes against one large source are matched in a single pass.
        """
        pairs = list(items)
        results: list[QuoteCheck | None] = [None] * len(pairs)
        resolved: dict[str, str | None] = {}
        groups: dict[str, tuple[list[int], list[str]]] = {}
        resolve = self._texts.resolve
        for index, (source, quote) in enumerate(pairs):
            source_id = resolved.get(source, _UNRESOLVED)
            if source_id is _UNRESOLVED:
                source_id = resolved[source] = resolve(source)
            if source_id is None:
                reason = (
                    f"unknown source {_short(source)}: no stored source has this id, or the "
                    "prefix is ambiguous; cite a full id or a unique prefix of 12+ hex digits"
                )
                results[index] = _rejected(source, None, quote, reason)
                continue
            needle = normalize_quote(quote)
            if not needle:
                reason = "quote is empty after normalisation; quote actual words from the source"
                results[index] = _rejected(source, source_id, quote, reason)
                continue
            group = groups.get(source_id)
            if group is None:
                group = groups[source_id] = ([], [])
            group[0].append(index)
            group[1].append(needle)

        for source_id, (indexes, needles) in groups.items():
            cached = self._source(source_id)
            normalized = cached.normalized
            original, span = normalized.original, normalized.span
            found = cached.first_positions(needles)
            # Normalized.span inlined for a text without link syntax (the usual case): the start
            # of the first character's cluster, the end of the last one's.
            plain = not normalized.link_opens and not normalized.link_closes
            origin, ends = normalized.origin, normalized.cluster_ends
            for index, needle, position in zip(indexes, needles, found, strict=True):
                source, quote = pairs[index]
                if position < 0:
                    reason = _not_found(normalized, source_id, needle, position == _CUT)
                    results[index] = _rejected(source, source_id, quote, reason)
                    continue
                if plain:
                    start = origin[position]
                    last = origin[position + len(needle) - 1]
                    end = ends.get(last, last + 1)
                else:
                    start, end = span(position, position + len(needle))
                results[index] = _check(
                    source, source_id, quote, True, start, end, "", original[start:end]
                )

        return [result for result in results if result is not None]

    def normalized(self, source_id: str) -> Normalized:
        """Return the normalised text of a source (full id), from the cache when possible."""
        return self._source(source_id).normalized

    def _source(self, source_id: str) -> _Source:
        """The cached source: this verifier's LRU, else the shared cache by content hash (asked
        of the store when it knows it, else computed from the text), else normalised now."""
        with self._lock:
            cached = self._cache.get(source_id)
            if cached is not None:
                self._cache.move_to_end(source_id)
                return cached
        known = getattr(self._texts, "text_key", None)
        key = known(source_id) if callable(known) else None
        source = _shared_get(key) if isinstance(key, str) else None
        if source is None:
            text = self._texts.text(source_id)
            digest = content_key(text)
            source = _shared_get(digest) or _shared_put(digest, _Source(normalize(text)))
        size = len(source.normalized.text)
        if size > self._cache_chars:
            return source
        with self._lock:
            if source_id not in self._cache:
                self._cache[source_id] = source
                self._cached_chars += size
            while self._cached_chars > self._cache_chars:
                _, evicted = self._cache.popitem(last=False)
                self._cached_chars -= len(evicted.normalized.text)
        return source


def find_first(haystack: str, needles: Sequence[str]) -> list[int]:
    """Return the position of the first occurrence of each needle in ``haystack``, or -1.

    ``haystack`` and the needles are normalised text (single spaces; needles without leading or
    trailing space). With few needles this is one ``str.find`` per needle. With many, each needle
    is anchored on its rarest whole word (a word with a space on both sides inside the needle):
    one pass counts the words of ``haystack``, a second records where the chosen anchors occur,
    and each needle is tried only there, in order, so the first hit is the first occurrence. A
    needle whose anchor never occurs is absent; needles without a usable anchor use ``str.find``.
    Only occurrences that cut no word at either end count (:func:`cuts`).
    """
    return [max(position, -1) for position in _first_positions(haystack, needles)]


def _first_positions(haystack: str, needles: Sequence[str]) -> list[int]:
    """:func:`find_first`, but _CUT for a needle that occurs only where it cuts a word."""
    results = [-1] * len(needles)
    anchored: list[tuple[int, list[str]]] = []
    for index, needle in enumerate(needles):
        words = _whole_words(needle)
        if words:
            anchored.append((index, words))
        else:
            results[index] = _anchored_find(haystack, needle)
    if len(anchored) < _SCAN_MIN_QUOTES:
        for index, _ in anchored:
            results[index] = _anchored_find(haystack, needles[index])
        return results

    counts = _count_words(haystack)
    chosen: list[tuple[int, str, int]] = []
    for index, words in anchored:
        word = min(words, key=counts.__getitem__)
        if counts[word] > _MAX_TRIES:
            results[index] = _anchored_find(haystack, needles[index])
        elif counts[word]:
            offset = needles[index].find(f" {word} ") + 1
            chosen.append((index, word, offset))
    positions: dict[str, list[int]] = {word: [] for _, word, _ in chosen}
    _collect_positions(haystack, positions)
    for index, word, offset in chosen:
        needle = needles[index]
        size = len(needle)
        for position in positions[word]:
            start = position - offset
            if start >= 0 and haystack.startswith(needle, start):
                # Every occurrence has the anchor as a whole word, so it is one of these.
                if not (cuts(haystack, start) or cuts(haystack, start + size)):
                    results[index] = start
                    break
                results[index] = _CUT
    return results


def _whole_words(needle: str) -> list[str]:
    """Return the words of ``needle`` that have a space on both sides inside it."""
    return [word for word in needle.split(" ")[1:-1] if word]


def _chunks(haystack: str) -> Iterator[tuple[int, str]]:
    """Yield ``(offset, chunk)``: ``haystack`` cut at spaces into pieces of about _SCAN_CHUNK.

    Splitting a chunk at a time keeps the word lists small; the cut spaces themselves are left out.
    """
    position = 0
    length = len(haystack)
    while position <= length:
        cut = haystack.find(" ", position + _SCAN_CHUNK)
        if cut < 0:
            cut = length
        yield position, haystack[position:cut]
        position = cut + 1


def _count_words(haystack: str) -> Counter[str]:
    """Count the space-separated words of ``haystack``."""
    counts: Counter[str] = Counter()
    for _, chunk in _chunks(haystack):
        counts.update(chunk.split(" "))
    return counts


def _collect_positions(haystack: str, positions: dict[str, list[int]]) -> None:
    """Append to ``positions[word]`` every offset where ``word`` occurs as a whole word."""
    for offset, chunk in _chunks(haystack):
        words = chunk.split(" ")
        # Word starts and the membership test run in C; Python only sees the hits.
        starts = accumulate(map(_PLUS_ONE, map(len, words)), initial=offset)
        hits = compress(zip(words, starts, strict=False), map(positions.__contains__, words))
        for word, start in hits:
            positions[word].append(start)


def _not_found(normalized: Normalized, source_id: str, needle: str, cut: bool) -> str:
    """Why ``needle`` was not found: absent, or (``cut``) present only where it cuts a word."""
    position = normalized.text.find(needle) if cut else -1
    if position < 0:
        return (
            f"quote not found in source {source_id[:12]}: only case, whitespace, emphasis, link "
            "syntax, NFKC and invisible characters may differ; punctuation and quote marks must "
            "match exactly"
        )
    start, end = normalized.span(position, position + len(needle))
    left = max(0, start - 20)
    context = " ".join(normalized.original[left : end + 20].split())
    return (
        f"quote is in source {source_id[:12]} only where it cuts a word or number (chars "
        f"{start}–{end}, in “{context}”): a quote must start and end on word boundaries of "
        "the source; quote the whole word or number"
    )


def _rejected(source: str, source_id: str | None, quote: str, reason: str) -> QuoteCheck:
    return _check(source, source_id, quote, False, None, None, reason, "")


_NEW = object.__new__
_UNRESOLVED = ""  # resolve() never returns "" (a full id, or None)


def _check(
    source: str,
    source_id: str | None,
    quote: str,
    verified: bool,
    start: int | None,
    end: int | None,
    reason: str,
    span: str,
) -> QuoteCheck:
    """``QuoteCheck(...)`` at half the cost: a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__``; this fills the new instance's ``__dict__`` in one call (the
    same object: equal, hashable, ``asdict``-able; a test holds the fields to the dataclass's)."""
    check: QuoteCheck = _NEW(QuoteCheck)
    check.__dict__.update(
        source=source,
        source_id=source_id,
        quote=quote,
        verified=verified,
        start=start,
        end=end,
        reason=reason,
        span=span,
    )
    return check


def _short(ref: str) -> str:
    """Shorten a source reference for messages: at most 16 characters, then an ellipsis."""
    ref = ref.strip()
    return ref if len(ref) <= 16 else ref[:16] + "…"
