"""The two versions' texts as units, aligned (issue 27 item 1; :mod:`.lineage`): sentences and
the lines between them, paired where a replaced or moved unit restates an old one. Pure text
work, shared by SQLite's and PostgreSQL's lineage (:mod:`affidavit.jobs.pg_lineage`)."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ..sources.sentences import number_sentences
from ..sources.stretches import piece_opcodes
from ..words import stems

_SPACE = re.compile(r"\s+")

PAIRING = 0.5
"""Similarity (word stems in common, Jaccard) from which a replaced unit is the same statement
changed (a supersession) rather than a different one (the old one retracted)."""


# -- units and their alignment -------------------------------------------------------------


def units(text: str) -> list[tuple[int, int]]:
    """The text as units to align: its numbered sentences, and each non-blank line of the text
    between them (headings, table rows, list items, code), by offsets."""
    out: list[tuple[int, int]] = []
    at = 0
    for sentence in number_sentences(text):
        out += _lines(text, at, sentence.start)
        out.append((sentence.start, sentence.end))
        at = sentence.end
    out += _lines(text, at, len(text))
    return out


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    for match in re.finditer(r"[^\n]+", text[start:end]):
        line = match.group()
        if line.strip():
            lead = len(line) - len(line.lstrip())
            out.append((start + match.start() + lead, start + match.start() + len(line.rstrip())))
    return out


def _key(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _similarity(a: str, b: str) -> float:
    sa, sb = set(stems(a)), set(stems(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


@dataclass
class _Alignment:
    old_units: list[tuple[int, int]]
    new_units: list[tuple[int, int]]
    block_of: dict[int, tuple[str, int, int, int, int]]
    """Old unit index -> its opcode (tag, i1, i2, j1, j2)."""
    added: list[int]
    """New units inserted or replacing others."""
    inserted: list[int] = field(default_factory=list)
    """New units inserted (replacing none)."""


CONTEXT_PIECES = 2
"""Unchanged pieces aligned with each changed stretch on either side: a sentence cut into
pieces at an abbreviation is numbered whole, and the cut at a window's edge is the same on both
sides, so what it leaves aligns equal."""


def _align(old: str, new: str) -> _Alignment:
    """Align the two texts unit by unit where they differ: their cheap pieces (lines, or parts of
    lines up to a sentence's end: :mod:`affidavit.sources.stretches`) are aligned first, and only
    the stretches that differ, with :data:`CONTEXT_PIECES` on either side, are cut into units and
    aligned — an edit of a few sentences costs those sentences, not the whole text twice. The
    units of what both texts share are left out: no claim left behind quotes them, and they hold
    nothing new."""
    old_at, new_at, codes = piece_opcodes(old, new)
    last_old, last_new = len(old_at) - 1, len(new_at) - 1
    windows: list[list[int]] = []  # [old first piece, old end piece, new first, new end]
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal":
            continue
        before = min(CONTEXT_PIECES, i1, j1)
        if windows and i1 - before <= windows[-1][1] + CONTEXT_PIECES:  # their context touches
            windows[-1][1], windows[-1][3] = i2, j2
        else:
            windows.append([i1 - before, i2, j1 - before, j2])
    aligned = _Alignment([], [], {}, [], [])
    for i1, i2, j1, j2 in windows:
        after = min(CONTEXT_PIECES, last_old - i2, last_new - j2)
        _align_stretch(
            aligned, old, new, (old_at[i1], old_at[i2 + after]), (new_at[j1], new_at[j2 + after])
        )
    return aligned


def _align_stretch(
    aligned: _Alignment,
    old: str,
    new: str,
    old_span: tuple[int, int],
    new_span: tuple[int, int],
) -> None:
    """Add the units of one differing stretch of each text to ``aligned``, aligned."""
    old_units = _units_in(old, old_span)
    new_units = _units_in(new, new_span)
    base_old, base_new = len(aligned.old_units), len(aligned.new_units)
    aligned.old_units += old_units
    aligned.new_units += new_units
    matcher = SequenceMatcher(
        None,
        [_key(old[s:e]) for s, e in old_units],
        [_key(new[s:e]) for s, e in new_units],
        autojunk=False,
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        code = (tag, base_old + i1, base_old + i2, base_new + j1, base_new + j2)
        for i in range(i1, i2):
            aligned.block_of[base_old + i] = code
        if tag in ("insert", "replace"):
            aligned.added += range(base_new + j1, base_new + j2)
        if tag == "insert":
            aligned.inserted += range(base_new + j1, base_new + j2)


def _units_in(text: str, span: tuple[int, int]) -> list[tuple[int, int]]:
    lo, hi = span
    return [(lo + s, lo + e) for s, e in units(text[lo:hi])]


def _pair(
    alignment: _Alignment, starts: list[int], start: int, old: str, new: str
) -> tuple[int | None, tuple[int, int] | None]:
    """The new unit that restates the old unit(s) under ``[start, end)``, if any, and the span
    of the new units that replaced them (None when they were deleted)."""
    i = bisect_right(starts, start) - 1
    if i < 0 or not alignment.old_units[i][0] <= start < alignment.old_units[i][1]:
        return None, None  # not in a unit of a changed paragraph
    tag, _, _, j1, j2 = alignment.block_of.get(i, ("equal", 0, 0, 0, 0))
    if tag != "replace":
        return None, None
    replaced = (alignment.new_units[j1][0], alignment.new_units[j2 - 1][1])
    s, e = alignment.old_units[i]
    old_words = old[s:e]
    best, best_sim = None, PAIRING
    for j in range(j1, j2):
        ns, ne = alignment.new_units[j]
        sim = _similarity(old_words, new[ns:ne])
        if sim >= best_sim:
            best, best_sim = j, sim
    return best, replaced


def _moved(
    alignment: _Alignment,
    starts: list[int],
    start: int,
    old: str,
    new: str,
    stems_of: dict[int, set[str]],
) -> int | None:
    """The inserted unit of the new text (anywhere) that restates the deleted old unit under
    ``start``: a sentence moved and changed is a supersession, and what the model writes from
    it waits for it, as for one changed in place. ``stems_of`` caches the inserted units'
    stems."""
    i = bisect_right(starts, start) - 1
    if not alignment.inserted or i < 0:
        return None
    s, e = alignment.old_units[i]
    if not s <= start < e or alignment.block_of.get(i, ("equal",))[0] not in ("delete", "replace"):
        return None
    if not stems_of:
        for j in alignment.inserted:
            ns, ne = alignment.new_units[j]
            stems_of[j] = set(stems(new[ns:ne]))
    words = set(stems(old[s:e]))
    best, best_sim = None, PAIRING
    for j, other in stems_of.items():
        union = words | other
        sim = len(words & other) / len(union) if union else 0.0
        if sim >= best_sim:
            best, best_sim = j, sim
    return best
