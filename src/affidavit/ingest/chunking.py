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
are read as one chunk (:func:`changed_chunks`)."""


def changed_chunks(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[Chunk]:
    """Chunks covering only the changed stretches ``spans`` of a new version's text (issue 27:
    a re-ingest reads what changed, not every chunk an edit falls in): each stretch (a sentence,
    or a line between sentences) widened to the fence, table or list item it lies in, stretches
    closer than
    :data:`MERGE_GAP` read together, none longer than ``max_chars`` (a longer one is cut as
    :func:`chunk_text` cuts)."""
    blocks = _Blocks(text)
    headings = _Headings(text, blocks)
    wide: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        inside = blocks.around(lo)
        lo = min(lo, inside.start) if inside is not None else lo
        inside = blocks.around(hi)
        hi = max(hi, inside.end) if inside is not None else hi
        if wide and lo <= wide[-1][1] + MERGE_GAP and hi - wide[-1][0] <= max_chars:
            wide[-1] = (wide[-1][0], max(hi, wide[-1][1]))
        elif wide and lo < wide[-1][1]:  # overlapping but too long together: no overlap
            wide.append((wide[-1][1], hi))
        else:
            wide.append((lo, hi))
    chunks: list[Chunk] = []
    for lo, hi in wide:
        if hi <= lo:
            continue
        for part in chunk_text(text[lo:hi], max_chars) if hi - lo > max_chars else [None]:
            start, end = (lo, hi) if part is None else (lo + part.start, lo + part.end)
            inside = blocks.around(start)
            fence = inside.fence if inside else ""
            chunks.append(Chunk(len(chunks), start, end, fence, headings.before(start)))
    return chunks


_ATX_LINE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+([^\n]*?)[ \t#]*$", re.M)


class _Headings:
    """The text's markdown ATX headings outside code fences, found in one pass: where each
    starts and its text (no "#" marks, no emphasis stars)."""

    def __init__(self, text: str, spans: _Blocks) -> None:
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

    def before(self, start: int) -> str:
        """The last heading that starts before ``start``; "" when there is none."""
        i = bisect.bisect_left(self.starts, start) - 1
        return self.texts[i] if i >= 0 else ""


def heading_before(text: str, start: int) -> str:
    """The text of the last markdown ATX heading before ``start``, none inside a code fence; ""
    when there is none: the section a chunk's first sentences are under when its heading is in
    the chunk before (:attr:`Chunk.section`)."""
    return _Headings(text, _Blocks(text)).before(start)
