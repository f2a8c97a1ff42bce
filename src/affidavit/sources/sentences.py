"""Host-numbered sentences of a source (SPEC §3 W3: "a model may cite host-numbered sentences").

A source's sentences are numbered 1, 2, 3, … over its whole stored extracted text, not per chunk,
with the project's one sentence splitter (:func:`affidavit.extractive.segment.segment`), so a
number means the same sentence in every chunk's prompt, in ``read_source`` pages and at the gate.
The numbering is a pure function of the text: the same text always gives the same numbers, and a
source's stored text never changes (its id is the hash of its bytes), so numbers are cached per
source id.

Headings, table rows and code blocks are not sentences: they get no number and can only be cited
by a free quote. :meth:`SourceSentences.render` shows them unnumbered between the numbered lines.

Citing by number is resolved by :func:`resolve_citation`: the host, not the proposer, supplies the
verbatim text and its offsets; a sub-span ``quote`` is looked for inside the cited sentences only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ..evidence.verify import QuoteCheck, SourceTexts, Verifier, locate
from ..extractive.segment import collapse, segment
from ..plan.schema import MAX_CITED_SENTENCES, Evidence

__all__ = [
    "MAX_CITED_CHARS",
    "MAX_CITED_SENTENCES",
    "MIN_CITED_CHARS",
    "NUMBERING_VERSION",
    "Numbered",
    "SourceSentences",
    "check_evidence",
    "number_sentences",
    "resolve_citation",
    "sentences_of",
]

MAX_CITED_CHARS = 300
"""Longest text a sentence citation may resolve to, the longest quote (SPEC §2: evidence is 8-300
characters, and stored evidence is re-quoted as such, e.g. by a saved answer); a longer sentence
must be narrowed with a quote inside it."""
MIN_CITED_CHARS = 8
"""Shortest, like a quote: a one-word "sentence" (a title line) is no evidence on its own."""


@dataclass(frozen=True)
class Numbered:
    """Sentence number ``n`` (1-based) is ``text[start:end]`` of the source's stored text."""

    n: int
    start: int
    end: int


NUMBERING_VERSION = 1
"""The segmenter rules source sentences are numbered with, pinned: a plan cites "s17" of a
source, pending plans are approved later and applied plans are replayed by ``doctor``, so the
same stored text must give the same numbers forever. Improving the segmenter
(:data:`affidavit.extractive.segment.SEGMENTER_VERSION`) changes what the extractive engine
quotes, never these numbers; numbering with newer rules would need the version recorded per
source first."""


def number_sentences(text: str) -> tuple[Numbered, ...]:
    """The sentences of ``text``, numbered from 1 in order, with offsets into ``text``."""
    sentences = segment(text, NUMBERING_VERSION).sentences
    return tuple(Numbered(i + 1, s.start, s.end) for i, s in enumerate(sentences))


class SourceSentences:
    """The numbered sentences of one stored text, and the lookups built on them."""

    def __init__(self, text: str, sentences: tuple[Numbered, ...] | None = None) -> None:
        self.text = text
        self.sentences = number_sentences(text) if sentences is None else sentences
        self._starts = [s.start for s in self.sentences]

    def __len__(self) -> int:
        return len(self.sentences)

    def span(self, first: int, last: int | None = None) -> tuple[int, int]:
        """``(start, end)`` of sentences ``first`` to ``last`` (inclusive; default ``first``).

        Raises :class:`IndexError` naming the count when a number is not a sentence here.
        """
        last = first if last is None else last
        count = len(self.sentences)
        for n in (first, last):
            if not 1 <= n <= count:
                raise IndexError(
                    f"sentence {n} does not exist: the source has {count} sentence"
                    f"{'' if count == 1 else 's'} (s1-s{count})"
                    if count
                    else f"sentence {n} does not exist: the source has no sentences; cite a quote"
                )
        if last < first:
            raise IndexError(f"sentence range {first}-{last} is reversed")
        return self.sentences[first - 1].start, self.sentences[last - 1].end

    def sentence_text(self, first: int, last: int | None = None) -> str:
        """The stored text of sentences ``first`` to ``last``, exactly as stored."""
        start, end = self.span(first, last)
        return self.text[start:end]

    def numbers_at(self, start: int, end: int) -> list[int]:
        """Numbers of the sentences that overlap ``text[start:end]`` (an empty span: the one
        containing ``start``)."""
        from bisect import bisect_right

        out: list[int] = []
        i = max(0, bisect_right(self._starts, start) - 1)
        while i < len(self.sentences):
            s = self.sentences[i]
            if s.start >= max(end, start + 1):
                break
            if s.end > start:
                out.append(s.n)
            i += 1
        return out

    def starting_in(self, start: int, end: int) -> list[Numbered]:
        """The sentences that start inside ``text[start:end]`` (each sentence belongs to the one
        chunk it starts in, so consecutive ranges show every sentence exactly once)."""
        from bisect import bisect_left

        i = bisect_left(self._starts, start)
        j = bisect_left(self._starts, end)
        return list(self.sentences[i:j])

    def numbered_lines(self, first: int, last: int) -> list[str]:
        """Sentences ``first`` to ``last`` (clipped to the source) as ``[s17] text`` lines, for
        paging a source by sentence number."""
        first, last = max(1, first), min(len(self.sentences), last)
        return [
            f"[s{s.n}] {collapse(self.text[s.start : s.end])}"
            for s in self.sentences[first - 1 : last]
        ]

    def render(self, start: int = 0, end: int | None = None) -> str:
        """``text[start:end]`` as numbered lines: ``[s17] sentence`` (whitespace collapsed),
        with the unnumbered text between sentences (headings, table rows) on lines of its own.

        A sentence that starts in the range is shown whole even if it ends after it; text before
        the first sentence that belongs to a sentence begun earlier is left out.
        """
        end = len(self.text) if end is None else end
        lines: list[str] = []
        shown = self.starting_in(start, end)
        cursor = start
        if shown:
            earlier = self.numbers_at(start, start)
            if earlier and earlier[0] < shown[0].n:
                cursor = self.sentences[earlier[0] - 1].end
        for s in shown:
            lines += _plain_lines(self.text[cursor : s.start])
            lines.append(f"[s{s.n}] {collapse(self.text[s.start : s.end])}")
            cursor = max(cursor, s.end)
        if cursor < end:
            lines += _plain_lines(self.text[cursor:end])
        return "\n".join(lines)


def _plain_lines(text: str) -> list[str]:
    return [collapse(line) for line in text.splitlines() if line.strip()]


_CACHE: OrderedDict[str, tuple[int, int, SourceSentences]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_CHARS = 50_000_000
_cached_chars = 0


def sentences_of(source_id: str, text: str | Callable[[], str]) -> SourceSentences:
    """The numbered sentences of source ``source_id`` whose stored text is ``text``.

    Cached per source id (an LRU over at most 50 M characters of text); the entry is checked
    against the text's length and hash, so a different text under the same id is never served
    from the cache.
    """
    global _cached_chars
    body = text() if callable(text) else text
    key = (len(body), hash(body))
    with _CACHE_LOCK:
        hit = _CACHE.get(source_id)
        if hit is not None and hit[:2] == key and hit[2].text == body:
            _CACHE.move_to_end(source_id)
            return hit[2]
    numbered = SourceSentences(body)
    if len(body) <= _CACHE_CHARS:
        with _CACHE_LOCK:
            old = _CACHE.pop(source_id, None)
            if old is not None:
                _cached_chars -= old[0]
            _CACHE[source_id] = (*key, numbered)
            _cached_chars += len(body)
            while _cached_chars > _CACHE_CHARS and _CACHE:
                _, evicted = _CACHE.popitem(last=False)
                _cached_chars -= evicted[0]
    return numbered


def resolve_citation(
    texts: SourceTexts,
    source: str,
    first: int,
    last: int,
    quote: str | None,
) -> QuoteCheck:
    """Resolve a citation of sentences ``first``-``last`` of ``source`` to a verified quote.

    Without ``quote`` the evidence is the sentences' own stored text at their offsets. With one,
    the quote must occur inside those sentences (same normalisation as any quote) and the
    evidence is the stored span it matches there. The check's ``quote`` is always the stored
    text, never the proposer's string, so approval and apply treat it like any verified quote.
    """
    shown = f"s{first}" if first == last else f"s{first}-s{last}"
    source_id = texts.resolve(source)
    if source_id is None:
        reason = (
            f"unknown source {source[:16]}: no stored source has this id, or the prefix is "
            "ambiguous; cite a full id or a unique prefix of 12+ hex digits"
        )
        return QuoteCheck(source, None, quote or f"[{shown}]", False, None, None, reason)
    numbered = sentences_of(source_id, lambda: texts.text(source_id))
    try:
        start, end = numbered.span(first, last)
    except IndexError as exc:
        reason = f"{exc}; cite a sentence number shown in the prompt"
        return QuoteCheck(source, source_id, quote or f"[{shown}]", False, None, None, reason)
    if quote is not None:
        found = _find_inside(numbered.text, start, end, quote)
        if found is None:
            reason = (
                f"quote not found inside sentence {shown} of source {source_id[:12]}: a quote "
                "given with a sentence number must lie within that sentence; drop the quote to "
                "cite the whole sentence"
            )
            return QuoteCheck(source, source_id, quote, False, None, None, reason)
        start, end = found
    elif end - start < MIN_CITED_CHARS:
        reason = (
            f"sentence {shown} of source {source_id[:12]} is {end - start} characters, too short "
            f"to be evidence (at least {MIN_CITED_CHARS}): cite the sentences around it"
        )
        return QuoteCheck(source, source_id, f"[{shown}]", False, None, None, reason)
    elif end - start > MAX_CITED_CHARS:
        reason = (
            f"sentence {shown} of source {source_id[:12]} is {end - start} characters; the "
            f"limit is {MAX_CITED_CHARS}: add a 'quote' (8-300 characters) inside it"
        )
        return QuoteCheck(source, source_id, f"[{shown}]", False, None, None, reason)
    return QuoteCheck(source, source_id, numbered.text[start:end], True, start, end, "")


def _find_inside(text: str, start: int, end: int, quote: str) -> tuple[int, int] | None:
    """The stored span of ``quote`` inside ``text[start:end]``, offsets into ``text``: the same
    matching rules as every other quote (:func:`affidavit.evidence.verify.locate`)."""
    found = locate(text[start:end], quote)
    if found is None:
        return None
    return start + found[0], start + found[1]


def check_evidence(verifier: Verifier, texts: SourceTexts, item: Evidence) -> QuoteCheck:
    """The gate's evidence check for one evidence item of a plan, in either form.

    A free quote goes to the verifier; a sentence citation is resolved by
    :func:`resolve_citation`. Either way the result is a :class:`QuoteCheck` whose offsets (and,
    for a citation, whose text) are the host's.
    """
    cited = item.cited
    if cited is None:
        assert item.quote is not None  # the schema requires one form
        return verifier.check(item.source, item.quote)
    return resolve_citation(texts, item.source, cited[0], cited[1], item.quote)
