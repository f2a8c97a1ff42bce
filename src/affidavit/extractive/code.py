"""Code blocks as quotable evidence: a command synopsis, an example, a statement to type.

The segmenter skips fenced code (its lines are no sentences). A reader relies on it all the
same ("For example: ``sqlite> PRAGMA foreign_keys = ON;``"), so each fenced block of the chunk
that fits in a claim becomes one, never split into sentences: its text the code in backticks
(whitespace collapsed), its evidence the code itself, cut at line ends into quotes of at most
:data:`.segment.MAX_QUOTE` characters. When the sentence right above the block introduces it
(ends with a colon, nothing between them), the two are one claim, "Assuming ..., using the
PRAGMA foreign_keys command. For example: `sqlite> PRAGMA foreign_keys = ON;`", quoting both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .segment import (
    MAX_CLAIM,
    MAX_QUOTE,
    MIN_QUOTE,
    Segmented,
    Sentence,
    collapse,
    fence_closes,
    fence_opening,
)
from .units import WORD, Unit, comma_pieces

_LINE = re.compile(r"[^\n]*\n?")


def fences(chunk: str, open_fence: str = "") -> list[tuple[int, int, int]]:
    """The top-level code fences the chunk opens and closes (CommonMark's rules, as the
    segmenter reads them): ``(fence start, content start, content end)`` each. A fence an
    earlier chunk opened (``open_fence``), one left open at the chunk's end, and fences inside
    list items or block quotes are not among them."""
    out: list[tuple[int, int, int]] = []
    marker = open_fence
    opened: tuple[int, int] | None = None  # the open fence's start and content start
    for match in _LINE.finditer(chunk):
        if not match.group():
            break
        line = match.group().rstrip("\n")
        if marker:
            if fence_closes(line, marker):
                if opened is not None:
                    out.append((opened[0], opened[1], match.start()))
                marker, opened = "", None
            continue
        marker = fence_opening(line)
        if marker:
            opened = (match.start(), match.end())
    return out


MAX_QUOTES = 5
CODE_SCORE = 0.8
"""A code block's score: below a typical sentence's, so pages lead with prose."""


def _pieces(chunk: str, start: int, end: int) -> list[tuple[int, int]] | None:
    """``chunk[start:end]`` cut at line ends into quotes of at most MAX_QUOTE characters (a
    longer line at spaces), each at least MIN_QUOTE; None when more than MAX_QUOTES."""
    out: list[tuple[int, int]] = []
    at = start
    while at < end:
        while at < end and chunk[at].isspace():
            at += 1
        if at >= end:
            break
        stop = min(end, at + MAX_QUOTE)
        if stop < end:
            newline = chunk.rfind("\n", at, stop)
            if newline > at:
                stop = newline
        piece_end = stop
        while piece_end > at and chunk[piece_end - 1].isspace():
            piece_end -= 1
        if piece_end - at > MAX_QUOTE or (stop < end and chunk.rfind("\n", at, stop) <= at):
            cut = comma_pieces(chunk, at, piece_end)
            if cut is None:
                return None
            out += cut
        elif piece_end - at >= MIN_QUOTE:
            out.append((at, piece_end))
        elif out:
            out[-1] = (out[-1][0], piece_end)  # a short last line joins the piece before
        else:
            return None
        at = stop
    return out if 0 < len(out) <= MAX_QUOTES else None


def code_units(
    chunk: str,
    seg: Segmented,
    units: list[Unit],
    excluded: Sequence[tuple[int, int]] = (),
    open_fence: str = "",
    nested: Sequence[tuple[int, int]] = (),
) -> list[Unit]:
    """``units`` with the chunk's fenced code blocks added in document order (the module
    docstring); a unit that introduces a block is replaced by the joined claim. ``nested``: code
    a renderer shows inside list items and quotes (:func:`.markdown.code_spans`), left out."""
    if "```" not in chunk and "~~~" not in chunk:
        return units
    out = list(units)
    extra = 0
    for fence_start, start, end in fences(chunk, open_fence):
        while end > start and chunk[end - 1].isspace():
            end -= 1
        code = collapse(chunk[start:end])
        if not code or not any(c.isalnum() for c in code) or "`" in code:
            continue
        if any(a < end and start < b for a, b in [*excluded, *nested]) or any(
            a < end and start < b for u in out for a, b in u.quotes
        ):
            continue  # hidden, or quoted already (a signature over its description)
        quotes = _pieces(chunk, start, end)
        if quotes is None or len(code) + 2 > MAX_CLAIM:
            continue
        text = f"`{code}`"
        lead = _introducing(chunk, out, fence_start)
        if lead is not None:
            unit = out[lead]
            joined = f"{unit.text} {text}"
            if len(joined) <= MAX_CLAIM and len(unit.quotes) + len(quotes) <= MAX_QUOTES:
                out[lead] = Unit(
                    unit.sentence,
                    unit.start,
                    end,
                    unit.quotes + tuple(quotes),
                    joined,
                    unit.tokens + tuple(WORD.findall(code)),
                    unit.score,
                )
                continue
        section = _section_at(seg, fence_start)
        extra += 1
        sentence = Sentence(len(seg.sentences) + extra, start, end, section, -1, True)
        unit = Unit(
            sentence, start, end, tuple(quotes), text, tuple(WORD.findall(code)), CODE_SCORE
        )
        at = next((i for i, u in enumerate(out) if u.start > start), len(out))
        out.insert(at, unit)
    return out


_LEAD_IN = re.compile(r"[^\n.!?]{0,40}:")


def _introducing(chunk: str, units: list[Unit], fence_start: int) -> int | None:
    """The position of the unit right above the fence that introduces it: it ends with a colon,
    or a short lead-in does ("For example:"), with nothing else between them."""
    for i in range(len(units) - 1, -1, -1):
        unit = units[i]
        if unit.end <= fence_start:
            gap = chunk[unit.end : fence_start].strip()
            if (unit.text.endswith(":") and not gap) or (gap and _LEAD_IN.fullmatch(gap)):
                return i
            return None
    return None


def _section_at(seg: Segmented, offset: int) -> str:
    """The section ``offset`` is under: the last heading before it, else the section the chunk
    begins under."""
    section = ""
    for heading in seg.headings:
        if heading.start < offset:
            section = heading.text
    if not section and seg.sentences and seg.sentences[0].start < offset:
        section = seg.sentences[0].section
    return section


__all__ = ["code_units", "fences"]
