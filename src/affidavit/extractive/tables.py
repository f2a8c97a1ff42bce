"""Tables row by row: each row of a pipe table one quotable claim, its header cells as context.

A reference table ("| Pragma | Default |" over "| PRAGMA cache_pages | 2000 |") says one thing
per row, and only with its header: "2000" alone says nothing. The segmenter skips table lines
(they are no sentences), so without this module a markdown table gave no claim at all and an
HTML table one code block of every row run together. Here each row of a pipe table — a
markdown table, or an HTML data table the extraction wrote as pipe rows
(:mod:`affidavit.sources.html_tables`) — becomes one claim:

    "`PRAGMA cache_pages` — Default: 2000; Meaning: How many pages frob keeps in memory."

its first non-empty cell the subject (in backticks when it reads as a name, as a definition
list's term does), each further non-empty cell after its column's header. Its evidence quotes
the row (cut at cell boundaries into quotes of at most :data:`.segment.MAX_QUOTE` characters)
and the header row when a header name is used, so the claim says nothing its quotes don't (W3,
W11). Rows are never merged with each other or split into sentences: a row too long for a
claim keeps its last cell's first sentences only, or is left out. A row or header that touches
hidden text (W12: ``excluded``) is left out whole — a hidden header cell is no column name.
Without a header row (``| --- |`` under the first line), a row reads "`UNLOCKED`: No locks are
held on the database." like a definition.
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
    fence_closes,
    fence_opening,
)
from .units import WORD, Unit, claim_text, comma_pieces

ROW_SCORE = 0.9
"""A row's score: a little below a typical sentence's, above a code block's."""
MAX_QUOTES = 5
MAX_CELLS = 32
"""A row with more cells than this is a matrix, not a record: left out."""

_LINE = re.compile(r"[^\n]*\n?")
_DELIMITER = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_NAME = re.compile(r"[_<>\[\]={}%/]|^-|^\.|\w\.\w|\(\)|^[^a-z]*[A-Z][^a-z]*$")
_SENTENCE_END = re.compile(r"""[.!?]["'”’)\]]*(?=\s)""")


def _cells(chunk: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of the table line ``chunk[start:end]``: spans without their spaces, split at
    pipes outside code spans and not escaped (``\\|``); a leading and a trailing pipe open and
    close the row."""
    spans: list[tuple[int, int]] = []
    at = start
    while at < end and chunk[at] in " \t":
        at += 1
    if at < end and chunk[at] == "|":
        at += 1
    cell, code, i = at, False, at
    while i < end:
        c = chunk[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            code = not code
        elif c == "|" and not code:
            spans.append((cell, i))
            cell = i + 1
        i += 1
    if chunk[cell:end].strip():
        spans.append((cell, end))
    out = []
    for a, b in spans:
        while a < b and chunk[a].isspace():
            a += 1
        while b > a and chunk[b - 1].isspace():
            b -= 1
        out.append((a, b))
    return out


def _blocks(chunk: str, open_fence: str) -> list[list[tuple[int, int]]]:
    """The chunk's pipe tables outside code fences: each a list of its lines' spans."""
    blocks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    marker = open_fence
    lines = [(m.start(), m.start() + len(m.group().rstrip("\n"))) for m in _LINE.finditer(chunk)]
    for n, (start, end) in enumerate(lines):
        line = chunk[start:end]
        if marker:
            marker = "" if fence_closes(line, marker) else marker
            continue
        stripped = line.strip()
        piped = stripped.startswith("|") and len(stripped) > 1
        delimited = (
            "|" in stripped
            and n + 1 < len(lines)
            and bool(_DELIMITER.match(chunk[lines[n + 1][0] : lines[n + 1][1]]))
            and "|" in chunk[lines[n + 1][0] : lines[n + 1][1]]
        )
        if piped or delimited or (current and "|" in stripped):
            current.append((start, end))
            continue
        if current:
            blocks.append(current)
            current = []
        marker = fence_opening(line)
    if current:
        blocks.append(current)
    return blocks


def _is_name(text: str) -> bool:
    return "`" not in text and len(text) <= 80 and bool(_NAME.search(text))


def _quotes(chunk: str, cells: Sequence[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """Cells ``cells`` of one row quoted: runs of whole cells of at most MAX_QUOTE characters
    (a longer cell cut at commas or spaces), each at least MIN_QUOTE; None if that fails."""
    out: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for a, b in cells:
        if b - a > MAX_QUOTE:
            if run is not None:
                out.append(run)
                run = None
            pieces = comma_pieces(chunk, a, b)
            if pieces is None:
                return None
            out += pieces
        elif run is not None and b - run[0] <= MAX_QUOTE:
            run = (run[0], b)
        else:
            if run is not None:
                out.append(run)
            run = (a, b)
    if run is not None:
        out.append(run)
    merged: list[tuple[int, int]] = []
    for a, b in out:  # a short quote joins the one before when the two still fit
        if merged and (b - a < MIN_QUOTE) and b - merged[-1][0] <= MAX_QUOTE:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    if not merged or any(b - a < MIN_QUOTE for a, b in merged):
        return None
    return merged


def _row_text(
    chunk: str, cells: list[tuple[int, int]], names: list[str] | None
) -> tuple[str, list[tuple[int, int]]] | None:
    """The claim text of a row's non-empty ``cells`` (with their header ``names``, or none) and
    the cells it says, the last one cut at a sentence end when the whole is too long."""
    subject = claim_text(chunk[cells[0][0] : cells[0][1]])
    head = f"`{subject}`" if _is_name(subject) else subject

    def text_of(kept: list[tuple[int, int]]) -> str:
        parts = []
        for (a, b), name in zip(kept[1:], (names or [""] * len(kept))[1:], strict=False):
            value = claim_text(chunk[a:b])
            parts.append(f"{name}: {value}" if name else value)
        return f"{head} — {'; '.join(parts)}" if names else f"{head}: {'; '.join(parts)}"

    text = text_of(cells)
    if len(text) <= MAX_CLAIM:
        return text, cells
    a, b = cells[-1]
    for match in reversed(list(_SENTENCE_END.finditer(chunk, a, b))):
        kept = [*cells[:-1], (a, match.end())]
        text = text_of(kept)
        if len(text) <= MAX_CLAIM:
            return text, kept
    return None


def table_units(
    chunk: str,
    seg: Segmented,
    units: list[Unit],
    excluded: Sequence[tuple[int, int]] = (),
    open_fence: str = "",
) -> list[Unit]:
    """``units`` with one unit per row of the chunk's pipe tables (the module docstring), in
    document order."""
    if "|" not in chunk:
        return units
    out = list(units)
    index = max((u.index for u in out), default=len(seg.sentences)) + 1
    index = max(index, len(seg.sentences) + 1)

    def hidden(a: int, b: int) -> bool:
        return any(x < b and a < y for x, y in excluded)

    for block in _blocks(chunk, open_fence):
        header: list[tuple[int, int]] | None = None
        rows = block
        if len(block) > 1 and _DELIMITER.match(chunk[block[1][0] : block[1][1]]):
            header, rows = _cells(chunk, *block[0]), block[2:]
            if hidden(block[0][0], block[0][1]):
                header = None
        for start, end in rows:
            if _DELIMITER.match(chunk[start:end]) or hidden(start, end):
                continue
            cells = _cells(chunk, start, end)
            if len(cells) > MAX_CELLS:
                continue
            filled = [(n, c) for n, c in enumerate(cells) if c[1] > c[0]]
            if len(filled) < 2:
                continue
            names: list[str] | None = None
            if header is not None and len(header) == len(cells):
                names = [claim_text(chunk[a:b]) for a, b in (header[n] for n, _ in filled)]
            said = _row_text(chunk, [c for _, c in filled], names)
            if said is None:
                continue
            text, kept = said
            quotes = _quotes(chunk, kept)
            if quotes is None:
                continue
            if names and any(names[1 : len(kept)]) and header is not None:
                used = [header[n] for n, _ in filled[: len(kept)] if header[n][1] > header[n][0]]
                head_quotes = _quotes(chunk, [(used[0][0], used[-1][1])]) if used else None
                if head_quotes is None or len(head_quotes) + len(quotes) > MAX_QUOTES:
                    continue  # the column names can't be quoted with the row
                quotes = head_quotes + quotes
            elif len(quotes) > MAX_QUOTES:
                continue
            section = _section_at(seg, start)
            sentence = Sentence(index, kept[0][0], kept[-1][1], section, -1, True)
            index += 1
            tokens = tuple(WORD.findall(text))
            unit = Unit(sentence, kept[0][0], kept[-1][1], tuple(quotes), text, tokens, ROW_SCORE)
            at = next((i for i, u in enumerate(out) if u.start > unit.start), len(out))
            out.insert(at, unit)
    return out


def _section_at(seg: Segmented, offset: int) -> str:
    """The section ``offset`` is under: the last heading before it, else the section the chunk
    begins under."""
    section = seg.sentences[0].section if seg.sentences else ""
    for heading in seg.headings:
        if heading.start < offset:
            section = heading.text
    return section


__all__ = ["table_units"]
