"""Is a rendered character readable? The judgement both renderers share (W12).

A renderer (:mod:`.render_pdf`, :mod:`.render_html`) lays out a document's characters and
measures, for each, its box and how much ink the text left in it (the pixels that change when
the text is drawn). :func:`judge` turns that into a verdict code per character:

    v  seen
    o  off     no part of its box is on the page (or, for fixed HTML, on the screen)
    s  small   the box is less than ``min_size`` tall and wide: too small to read
    n  narrow  the box is less than ``MIN_ASPECT`` of its height wide: squeezed past reading
    i  no ink  the text changed less than ``INK_SHARE`` of the box's area (and ``MIN_INK``
               pixels; ``FAINT_INK`` beside a character on its line that has enough), no
               pixel by ``STRONG`` or more, or (a letter or digit) only a sliver of the box's
               height: transparent, faint, blurred, the colour of what is under it, covered,
               clipped (also most of the way), masked
    x  overlap drawn over other text: its box is mostly covered by the boxes of inked
               characters other than its neighbours (a line printed over another), or it is
               one of a run stacked on one spot (negative letter spacing)

Boxes are ``(left, bottom, right, top)`` in any unit where ``min_size`` is given (points for a
PDF, CSS pixels for HTML); only their proportions matter otherwise; :class:`Ink` measures the
pixels (numpy, vectorised over all the boxes). This module imports nothing of Affidavit's: the
PDF renderer's child process runs it as a plain module.
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from dataclasses import dataclass
from typing import Any

Box = tuple[float, float, float, float]

INK_SHARE = 0.015
"""A character shows ink when the text changed its box's pixels by at least this share of the
box's area in full pixels (a black glyph on white fills 10-40 % of its box; one drawn at 10 %
opacity changes it by a tenth of that)."""
MIN_INK = 1.5
"""And by at least this many full pixels (a full stop at 5pt)."""
FAINT_INK = 0.4
"""Less ink than that is enough for a character beside one with enough ink of its own: a full
stop or a thin underscore in small type (never handed on: a faint word stays unseen)."""
STRONG = 32
"""A character needs at least one pixel its text changed this much (of 255): text at 10 %
opacity, or blurred past reading (``filter: blur(12px)``), has none; light grey ``#ddd`` on
white has (a slight blur of a few pixels still counts as seen)."""
BANDS = 4
NOISE = 8
"""A pixel's change (the largest of its colour channels', of 255) below this is no ink."""
MIN_ASPECT = 0.08
"""A character box narrower than this share of its height is squeezed past reading (``l`` and
``.`` are about 0.2 of their box's height in ordinary fonts)."""
OVERLAP = 0.7
"""A character whose box (the middle of its height) is covered this much by the boxes of inked
characters other than its neighbours is unreadable: text printed over text."""
CROWDED = 0.12
"""Consecutive characters whose origins are closer than this share of their box's height are
stacked on one spot (``-7 Tc``, ``letter-spacing: -1em``): the narrowest letters advance about
0.2 of it."""
CROWDED_RUN = 3
"""How many stacked steps in a row make the characters unreadable (one is a kerning pair)."""

SEEN, OFF, SMALL, NARROW, NO_INK, OVERLAPPED = "v", "o", "s", "n", "i", "x"
INHERITS = frozenset({"Mn", "Me", "Cf", "Sk", "Lm"})
"""Combining marks, format characters and spacing accents: their box is an accent's, not a
letter's, so they are never squeezed, and never overlap a letter."""


@dataclass
class Ink:
    """What a renderer measured in its characters' boxes (arrays, one item per character):
    ``mass``, the text's change to the box's pixels in full pixels; ``strong``, how many of its
    pixels changed by ``STRONG`` or more; ``bands``, the mass in each quarter of the box's
    height (top to bottom); ``area``, the box's pixels on the page; ``placed``, whether any
    part of the box is on the page."""

    mass: Any
    strong: Any
    bands: Any
    area: Any
    placed: Any

    @classmethod
    def empty(cls, count: int) -> Ink:
        import numpy as np

        return cls(
            np.zeros(count),
            np.zeros(count),
            np.zeros((count, BANDS)),
            np.zeros(count),
            np.zeros(count, dtype=bool),
        )

    def add(self, change: Any, top: int, x0: Any, y0: Any, x1: Any, y1: Any) -> None:
        """Add what the ``change`` image (0-255 per pixel; its first row is row ``top`` of the
        page) holds of each box ``[x0, x1) x [y0, y1)`` (page pixel coordinates)."""
        import numpy as np

        rows, cols = change.shape
        mass = np.where(change >= NOISE, change, 0).astype(np.int64)
        summed = np.zeros((rows + 1, cols + 1), dtype=np.int64)
        summed[1:, 1:] = mass.cumsum(0).cumsum(1)
        strong = np.zeros((rows + 1, cols + 1), dtype=np.int64)
        strong[1:, 1:] = (change >= STRONG).astype(np.int64).cumsum(0).cumsum(1)
        cx0, cx1 = np.clip(x0, 0, cols), np.clip(x1, 0, cols)

        def box(table: Any, top_y: Any, bottom_y: Any) -> Any:
            ty0, ty1 = np.clip(top_y - top, 0, rows), np.clip(bottom_y - top, 0, rows)
            here = (ty1 > ty0) & (cx1 > cx0)
            total = table[ty1, cx1] - table[ty0, cx1] - table[ty1, cx0] + table[ty0, cx0]
            return np.where(here, total, 0), np.where(here, (cx1 - cx0) * (ty1 - ty0), 0)

        total, area = box(summed, y0, y1)
        self.mass += total / 255.0
        self.area += area
        self.placed |= area > 0
        self.strong += box(strong, y0, y1)[0]
        height = y1 - y0
        for band in range(BANDS):
            start = y0 + (height * band) // BANDS
            stop = y0 + (height * (band + 1)) // BANDS
            self.bands[:, band] += box(summed, start, stop)[0] / 255.0


def judge(chars: list[str], boxes: list[Box], ink: Ink, min_size: float) -> list[str]:
    """A verdict code per character (see the module docstring) from its box and the ``ink``
    measured in it."""
    mass, strong, area = ink.mass.tolist(), ink.strong.tolist(), ink.area.tolist()
    placed, bands = ink.placed.tolist(), ink.bands.tolist()
    own = [
        placed[k]
        and strong[k] >= 1
        and mass[k] >= max(MIN_INK, INK_SHARE * area[k])
        and _tall_enough(chars[k], bands[k], mass[k])
        for k in range(len(chars))
    ]
    verdicts: list[str] = []
    for k, (char, box) in enumerate(zip(chars, boxes, strict=True)):
        w, h = abs(box[2] - box[0]), abs(box[3] - box[1])
        big, small = max(w, h), min(w, h)
        if not placed[k]:
            verdicts.append(OFF)
        elif big < min_size:
            verdicts.append(SMALL)
        elif unicodedata.category(char) not in INHERITS and small < MIN_ASPECT * big:
            verdicts.append(NARROW)
        elif own[k]:
            verdicts.append(SEEN)
        else:
            beside = any(
                0 <= n < len(own) and own[n] and _touching(boxes[n], box) for n in (k - 1, k + 1)
            )
            faint = strong[k] >= 1 and mass[k] >= FAINT_INK
            verdicts.append(SEEN if faint and beside else NO_INK)
    _overprinted(chars, boxes, verdicts)
    _stacked(chars, boxes, verdicts)
    return verdicts


def _tall_enough(char: str, bands: list[float], mass: float) -> bool:
    """A letter or digit shows ink over at least two quarters of its box's height (its
    x-height spans nearly half of it): the top sliver of a line an overflow clips is no
    letter. Punctuation and symbols (a full stop, a dash, an underscore) may be flat."""
    if unicodedata.category(char)[0] not in "LN" or unicodedata.category(char) == "No":
        return True
    return sum(band >= 0.1 * mass for band in bands) >= 2


def _touching(a: Box, b: Box) -> bool:
    """Two characters side by side on one line (a neighbour in reading order on another line
    lends no ink)."""
    a, b = _normal(a), _normal(b)
    height = max(a[3] - a[1], b[3] - b[1], 1e-9)
    gap = max(a[0] - b[2], b[0] - a[2], 0.0)
    return abs(a[1] - b[1]) < 0.5 * height and gap < 0.5 * height


def _inked(chars: list[str], verdicts: list[str]) -> list[int]:
    return [
        i
        for i, v in enumerate(verdicts)
        if v == SEEN and unicodedata.category(chars[i]) not in INHERITS
    ]


def _overprinted(chars: list[str], boxes: list[Box], verdicts: list[str]) -> None:
    """Mark inked characters whose box other inked characters' boxes mostly cover (sampled
    over the box's advance and the middle of its height, where letters of one line meet and
    lines never do). A character's own neighbours in reading order don't count (an italic
    letter overhangs them), nor do the same letter printed again on the same spot (a fake
    bold) and the parts of a ligature."""
    bands = {i: _band(boxes[i]) for i in _inked(chars, verdicts)}
    if not bands:
        return
    cell = max(4.0, 2 * _median([b[3] - b[1] for b in bands.values()]))
    grid: dict[tuple[int, int], list[int]] = {}
    for i, (left, bottom, right, top) in bands.items():
        for gx in range(int(left // cell), int(right // cell) + 1):
            for gy in range(int(bottom // cell), int(top // cell) + 1):
                grid.setdefault((gx, gy), []).append(i)
    marked = []
    for i, (left, bottom, right, top) in bands.items():
        if right - left > 64 * cell or top - bottom > 64 * cell:
            continue  # a giant box: judged by its ink alone
        others = {
            j
            for gx in range(int(left // cell), int(right // cell) + 1)
            for gy in range(int(bottom // cell), int(top // cell) + 1)
            for j in grid.get((gx, gy), ())
            if abs(j - i) > 1 and not _same_spot(i, j, chars, bands)
        }
        if not others:
            continue
        area = (right - left) * (top - bottom)
        shared = sum(_shared(bands[i], bands[j]) for j in others)
        if area <= 0 or shared < OVERLAP * area:
            continue  # the others can't cover enough of it: no need to sample
        points = [
            (left + (right - left) * (x + 0.5) / 8, bottom + (top - bottom) * (y + 0.5) / 3)
            for x in range(8)
            for y in range(3)
        ]
        covered = sum(
            any(bands[j][0] < px < bands[j][2] and bands[j][1] < py < bands[j][3] for j in others)
            for px, py in points
        )
        if covered >= OVERLAP * len(points):
            marked.append(i)
    for i in marked:
        verdicts[i] = OVERLAPPED


def _stacked(chars: list[str], boxes: list[Box], verdicts: list[str]) -> None:
    """Mark runs of inked characters on one line each drawn where the one before it was, or
    behind it: a line's letters stacked on one spot. Text moves forward along its line (the
    way most of the document's lines go: right, or left in a right-to-left script) by about a
    letter's width; only a new line goes back, and it moves across the line too."""
    inked = [  # every letter laid out: those pushed off the page still stack with the rest
        i
        for i, v in enumerate(verdicts)
        if v in (SEEN, OFF, NO_INK) and unicodedata.category(chars[i]) not in INHERITS
    ]
    steps: list[tuple[int, int, float, bool]] = []  # previous, current, along, on one line
    for previous, current in itertools.pairwise(inked):
        pb, cb = _normal(boxes[previous]), _normal(boxes[current])
        height = cb[3] - cb[1]
        along, across = cb[0] - pb[0], cb[1] - pb[1]
        twice = chars[previous] == chars[current] and abs(along) + abs(across) < 0.01 * height
        steps.append(
            (
                previous,
                current,
                along / height if height > 0 else 1.0,
                not twice and abs(across) < 0.5 * height,
            )
        )
    forward = 1.0 if _median([a for _, _, a, line in steps if line] or [1.0]) >= 0 else -1.0
    run: list[int] = []
    for previous, current, along, line in steps:
        if line and along * forward < CROWDED:
            run = run or [previous]
            run.append(current)
            continue
        _mark_run(run, verdicts)
        run = []
    _mark_run(run, verdicts)


def _mark_run(run: list[int], verdicts: list[str]) -> None:
    if len(run) > CROWDED_RUN:
        for i in run:
            if verdicts[i] == SEEN:
                verdicts[i] = OVERLAPPED


def _same_spot(i: int, j: int, chars: list[str], bands: dict[int, Box]) -> bool:
    """Two characters that are one glyph or one letter twice: the parts of a ligature (``fi``:
    neighbours sharing one box) or the same letter printed again on the spot (a fake bold)."""
    a, b = bands[i], bands[j]
    if abs(i - j) <= 3 and all(abs(x - y) < 0.01 for x, y in zip(a, b, strict=True)):
        return True
    return chars[i] == chars[j] and abs(a[0] - b[0]) < 0.3 * (a[2] - a[0])


def _shared(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _band(box: Box) -> Box:
    """The part of a character's box where the letters of one line meet: its advance, and the
    middle of its height (30 % to 70 %: lines set tight still don't meet there)."""
    left, bottom, right, top = _normal(box)
    height = top - bottom
    return left, bottom + 0.3 * height, right, bottom + 0.7 * height


def _normal(box: Box) -> Box:
    left, bottom, right, top = box
    return min(left, right), min(bottom, top), max(left, right), max(bottom, top)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered and not math.isnan(ordered[0]) else 0.0


__all__ = [
    "INK_SHARE",
    "MIN_INK",
    "NARROW",
    "NOISE",
    "NO_INK",
    "OFF",
    "OVERLAPPED",
    "SEEN",
    "SMALL",
    "judge",
]
