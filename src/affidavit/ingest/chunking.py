"""Split long texts into consecutive chunks at natural boundaries; never truncate.

The chunks cover the text exactly: ``text[c.start:c.end]`` for consecutive chunks concatenate to
the whole text. A boundary is the last paragraph break or block start in the window's final
40 %, else the last sentence end, else the last whitespace, else a hard cut at the limit.

A boundary never falls inside a **block**: a code fence (CommonMark rules: the closing fence is
the opening's character, at least as long, with nothing after it; a fence never closed runs to
the end of the text, as a renderer shows it), a table (a run of lines starting with ``|`` or
``+``) or a list item (its marker line and the lines that continue it). When no boundary of the
window is outside a block, the chunk ends where the block begins. Only a block longer than a
whole chunk is cut inside, at a line end; a chunk that then begins inside a fence says so
(:attr:`Chunk.fence`, the opening marker), so the engine reads its first lines as code, not
prose.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ..extractive.segment import fence_closes, fence_opening

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"[.!?][\"')\]]*\s+")
_SPACE = re.compile(r"\s+")
_LINE = re.compile(r"[^\n]*\n?")
_TABLE = re.compile(r"^\s{0,3}[|+]")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,9}[.)])\s+\S")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int
    fence: str = ""
    """The opening marker (```` ``` ````, ``~~~~``...) of the code fence this chunk begins
    inside, when an earlier chunk opened it (only a fence longer than a chunk is cut); ""."""
    section: str = ""
    """The last heading before the chunk (its text, no "#" marks): the section its first lines
    are under, when an earlier chunk opened it; ""."""
    parts: tuple[tuple[int, int], ...] = ()
    """A *sparse* chunk (a new version's changed stretches, :func:`changed_chunks`): the spans
    of ``[start, end)`` to read, in order; the text between them was read in an earlier version
    and is not read again. ``()``: the whole chunk is read."""
    cite: tuple[tuple[int, int], ...] = ()
    """A new version's chunk (:func:`changed_chunks`): the changed stretches inside it, the
    only text its plan may cite (:mod:`.citing`); the unchanged text a part takes in around
    them was read and carried before. ``()``: a first version's chunk, all of it citable."""


@dataclass(frozen=True)
class Block:
    """A span no boundary may cut: ``text[start:end]`` (whole lines); ``fence`` is a code
    fence's opening marker, "" for a table or a list item."""

    start: int
    end: int
    fence: str = ""


def blocks(text: str) -> list[Block]:
    """The fences, tables and list items of ``text``, in order, not overlapping."""
    out: list[Block] = []
    opened: tuple[int, str] | None = None  # an open fence: its start and marker
    table: list[int] = []  # [start, end] of an open table
    item: list[int] = []  # [start, end] of an open list item

    def close(span: list[int]) -> None:
        if span:
            out.append(Block(span[0], span[1]))
            span.clear()

    for match in _LINE.finditer(text):
        if not match.group():
            break
        line = match.group().rstrip("\n")
        start, end = match.start(), match.end()
        if opened is not None:
            if fence_closes(line, opened[1]):
                out.append(Block(opened[0], end, opened[1]))
                opened = None
            continue
        marker = fence_opening(line)
        if marker:
            close(table)
            close(item)
            opened = (start, marker)
            continue
        if not line.strip() or _HEADING.match(line):
            close(table)
            close(item)
            continue
        if _TABLE.match(line):
            close(item)
            if table:
                table[1] = end
            else:
                table[:] = [start, end]
            continue
        close(table)
        if _ITEM.match(line):
            close(item)
            item[:] = [start, end]
        elif item:
            item[1] = end
    if opened is not None:
        out.append(Block(opened[0], len(text), opened[1]))
    close(table)
    close(item)
    out.sort(key=lambda b: b.start)
    return out


class _Blocks:
    def __init__(self, text: str) -> None:
        self.blocks = blocks(text)
        self.starts = [b.start for b in self.blocks]

    def around(self, at: int) -> Block | None:
        """The block ``at`` lies strictly inside (a boundary there would cut it), or None."""
        i = bisect.bisect_right(self.starts, at) - 1
        if i >= 0 and self.blocks[i].start < at < self.blocks[i].end:
            return self.blocks[i]
        return None

    def starts_in(self, lo: int, hi: int) -> list[int]:
        """Starts of blocks in ``[lo, hi]``."""
        return self.starts[
            bisect.bisect_left(self.starts, lo) : bisect.bisect_right(self.starts, hi)
        ]


def _last_legal(
    pattern: re.Pattern[str], text: str, lo: int, hi: int, spans: _Blocks, start: int
) -> int | None:
    last = None
    for match in pattern.finditer(text, lo, hi):
        at = match.end()
        if at > start and spans.around(at) is None:
            last = at
    return last


def _boundary(text: str, start: int, max_chars: int, spans: _Blocks) -> int:
    hard = start + max_chars
    floor = start + int(max_chars * 0.6)
    paragraph = _last_legal(_PARAGRAPH, text, floor, hard, spans, start)
    block = [s for s in spans.starts_in(floor, hard) if s > start and spans.around(s) is None]
    candidates = [c for c in (paragraph, block[-1] if block else None) if c is not None]
    if candidates:
        return max(candidates)
    for pattern in (_SENTENCE, _SPACE):
        found = _last_legal(pattern, text, floor, hard, spans, start)
        if found is not None:
            return found
    inside = spans.around(hard)
    if inside is None:
        return hard
    if inside.start > start:
        return inside.start  # end before the block: it starts the next chunk
    newline = text.rfind("\n", start, hard)  # a block longer than a chunk: cut at a line end
    return newline + 1 if newline >= start else hard


def chunk_text(text: str, max_chars: int) -> list[Chunk]:
    """Consecutive chunks of at most ``max_chars`` characters covering all of ``text``, none
    cutting a fence, table or list item that fits in a chunk (see the module docstring)."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    spans = _Blocks(text)
    headings = _Headings(text, spans)
    chunks: list[Chunk] = []
    start = 0
    n = len(text)
    while start < n:
        end = n if start + max_chars >= n else _boundary(text, start, max_chars, spans)
        inside = spans.around(start)
        fence = inside.fence if inside is not None else ""
        chunks.append(Chunk(len(chunks), start, end, fence, headings.before(start)))
        start = end
    return chunks


MERGE_GAP = 400
"""Characters of unchanged text between two changed stretches of a new version below which they
are read as one stretch, the text between them included (:func:`changed_chunks`)."""


def changed_chunks(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[Chunk]:
    """Sparse chunks reading only the changed stretches ``spans`` of a new version's text (issue
    27: a re-ingest costs what changed). Each stretch (a sentence, or a line between sentences)
    is widened to the fence, table or list item it lies in; stretches closer than
    :data:`MERGE_GAP` become one; then consecutive stretches are grouped into one chunk while
    their own text fits in ``max_chars`` (:attr:`Chunk.parts`), however far apart they are, so
    an edit here and there across a document is one model call, not one call each. A stretch
    longer than ``max_chars`` is cut as :func:`chunk_text` cuts, each piece a chunk of its own.
    Each chunk's :attr:`Chunk.cite` is the changed stretches in it: a part may take in unchanged
    text around them (a block, a short gap), which is read but never cited as new."""
    spans_of = _Blocks(text)
    headings = _Headings(text, spans_of)
    wide: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        inside = spans_of.around(lo)
        lo = min(lo, inside.start) if inside is not None else lo
        inside = spans_of.around(hi)
        hi = max(hi, inside.end) if inside is not None else hi
        if wide and lo <= wide[-1][1] + MERGE_GAP and hi - wide[-1][0] <= max_chars:
            wide[-1] = (wide[-1][0], max(hi, wide[-1][1]))
        elif wide and lo < wide[-1][1]:  # overlapping but too long together: no overlap
            wide.append((wide[-1][1], hi))
        else:
            wide.append((lo, hi))
    pieces: list[tuple[int, int]] = []
    for lo, hi in wide:
        if hi <= lo:
            continue
        if hi - lo <= max_chars:
            pieces.append((lo, hi))
        else:
            pieces += [(lo + p.start, lo + p.end) for p in chunk_text(text[lo:hi], max_chars)]
    groups: list[list[tuple[int, int]]] = []
    size = 0
    for lo, hi in pieces:
        if groups and size + (hi - lo) <= max_chars:
            groups[-1].append((lo, hi))
            size += hi - lo
        else:
            groups.append([(lo, hi)])
            size = hi - lo
    changed = _merged(text, sorted(spans))
    chunks: list[Chunk] = []
    for group in groups:
        start, end = group[0][0], group[-1][1]
        inside = spans_of.around(start)
        parts = tuple(group) if len(group) > 1 else ()
        cite = tuple(
            _merged(
                text,
                [
                    (max(lo, p_lo), min(hi, p_hi))
                    for p_lo, p_hi in group
                    for lo, hi in changed
                    if lo < p_hi and p_lo < hi
                ],
            )
        )
        chunks.append(
            Chunk(
                len(chunks),
                start,
                end,
                inside.fence if inside else "",
                headings.before(start),
                parts,
                cite,
            )
        )
    return chunks


def _merged(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (sorted) with those only whitespace apart joined: consecutive changed sentences
    are one stretch, so a citation of both is inside it."""
    out: list[tuple[int, int]] = []
    for lo, hi in spans:
        if hi <= lo:
            continue
        if out and (lo <= out[-1][1] or not text[out[-1][1] : lo].strip()):
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


PART_BREAK = "\n[…]\n"
"""Between two parts of a sparse chunk as a reader is shown them."""


def sparse_text(text: str, chunk: Chunk) -> str:
    """``text[chunk.start:chunk.end]`` with what a sparse chunk does not read blanked (every
    character but a line break made a space, so offsets hold), except the last heading line
    before each part (the section it is under); the whole chunk's text when it is not sparse."""
    if not chunk.parts:
        return text[chunk.start : chunk.end]
    heads = _Headings(text, _Blocks(text))
    out: list[str] = []
    at = chunk.start
    for lo, hi in chunk.parts:
        gap = text[at:lo]
        kept = heads.line_before(lo, at)
        if kept is None:
            out.append(_blank(gap))
        else:
            a, b = kept[0] - at, kept[1] - at
            out.append(_blank(gap[:a]) + gap[a:b] + _blank(gap[b:]))
        out.append(text[lo:hi])
        at = hi
    return "".join(out)


def part_headings(text: str, chunk: Chunk) -> list[str]:
    """For each part of a sparse chunk, the heading line before it when that lies between it and
    the part before (the section it is under, shown with it), else ""."""
    heads = _Headings(text, _Blocks(text))
    out: list[str] = []
    at = chunk.start
    for lo, hi in chunk.parts:
        kept = heads.line_before(lo, at)
        out.append(" ".join(text[kept[0] : kept[1]].split()) if kept is not None else "")
        at = hi
    return out


def shown_parts(text: str, chunk: Chunk) -> str:
    """A sparse chunk's parts as a reader is shown them: each under the heading line before it
    (:func:`part_headings`), "[…]" where unchanged text is left out; the chunk's text when it
    is not sparse."""
    if not chunk.parts:
        return text[chunk.start : chunk.end]
    return PART_BREAK.join(
        "\n".join(x for x in (head, text[lo:hi].strip()) if x)
        for head, (lo, hi) in zip(part_headings(text, chunk), chunk.parts, strict=True)
    )


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


_ATX_LINE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+([^\n]*?)[ \t#]*$", re.M)


class _Headings:
    """The text's markdown ATX headings outside code fences, found in one pass: where each
    starts and its text (no "#" marks, no emphasis stars)."""

    def __init__(self, text: str, spans: _Blocks) -> None:
        self.text = text
        self.starts: list[int] = []
        self.texts: list[str] = []
        if "#" not in text:
            return
        for match in _ATX_LINE.finditer(text):
            words = " ".join(match.group(1).replace("*", "").split())
            block = spans.around(match.start())
            if words and not (block and block.fence):
                self.starts.append(match.start())
                self.texts.append(words)

    def line_before(self, start: int, floor: int) -> tuple[int, int] | None:
        """The span of the last heading line that starts in ``[floor, start)``; None."""
        i = bisect.bisect_left(self.starts, start) - 1
        if i < 0 or self.starts[i] < floor:
            return None
        end = self.text.find("\n", self.starts[i], start)
        return self.starts[i], end if end != -1 else start

    def before(self, start: int) -> str:
        """The last heading that starts before ``start``; "" when there is none."""
        i = bisect.bisect_left(self.starts, start) - 1
        return self.texts[i] if i >= 0 else ""


def heading_before(text: str, start: int) -> str:
    """The text of the last markdown ATX heading before ``start``, none inside a code fence; ""
    when there is none: the section a chunk's first sentences are under when its heading is in
    the chunk before (:attr:`Chunk.section`)."""
    return _Headings(text, _Blocks(text)).before(start)
