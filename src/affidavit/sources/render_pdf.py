"""Which characters of a PDF a reader sees, decided by rasterising its pages with PDFium (W12).

Each page is rendered twice by PDFium (the rasteriser Chrome uses; the ``pypdfium2`` wheel):
once as it is, once with every text object switched off (``FPDFPageObj_SetIsActive``, inside
Form XObjects too). Where the two bitmaps differ, the page's text left ink. Each character of
PDFium's text page is then judged by its box (the font's ascent to descent, the glyph's advance
wide, in page space after every matrix):

    off       the box lies outside the page (its crop box) altogether;
    small     the box is less than ``MIN_POINTS`` tall (and wide): too small to read;
    narrow    the box is less than ``MIN_ASPECT`` of its height wide (``1 Tz``, a matrix that
              squashes the text): no letter shape is left to read;
    ink       the box holds no pixel the text changed: the text is transparent (``/ca 0``, a soft
              mask), has the colour of what is under it (white on white, stroke-only white, blue
              on a blue box), is covered by what is painted after it (a white rectangle, an
              image, an annotation), clipped away, or in an optional-content layer that is off;
    overlap   the box is mostly covered by another character's box that has ink (``-7 Tc``
              stacks a sentence's letters on one spot; text printed over other text): no
              letter of either can be told apart.

None of these needs a rule about *how* a PDF hides text: the rasteriser applies the PDF's own
graphics state, and the page shows ink or it does not. The verdicts go to
:mod:`affidavit.sources.align`, which maps PDFium's characters onto the extracted text.

PDFs are untrusted input: :func:`render_pdf` runs the rasteriser in a child process (this file
run as a script by ``python -I``: it imports nothing of Affidavit's) whose address space and CPU time are limited, with at most
``MAX_PAGES`` pages and ``MAX_PIXELS`` pixels per page rendered; a crash or a limit reached is a
:class:`RenderFailed`, never a hang or this process's memory.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from typing import Any

SCALE = 1.5
"""Pixels per point (108 dpi): a 5pt footnote is 7 pixels tall."""
MAX_PIXELS = 6_000_000
"""Pixels per rendered page at most (a huge page is rendered at a lower scale)."""
MAX_PAGES = 3000
"""Pages rendered per document at most; a longer document is not confirmed by rendering."""
NOISE = 8
"""A pixel's change (the largest of its colour channels', of 255) below this is no ink."""
INK_SHARE = 0.02
"""A character shows ink when the text changed its box's pixels by at least this share of the
box's area in full pixels (a black glyph on white fills 10-40 % of its box; one drawn at 10 %
opacity changes it by a tenth of that)."""
MIN_INK = 1.5
"""And by at least this many full pixels (a full stop at 5pt)."""
MIN_POINTS = 2.5
"""A character box less than this many points tall and wide is too small to read (about a 2pt
font, the smallest size today's rules accept)."""
MIN_ASPECT = 0.08
"""A character box narrower than this share of its height is squeezed past reading (``l`` and
``.`` are about 0.2 of their box's height in ordinary fonts)."""
OVERLAP = 0.7
"""A character whose box (the middle of its height) is covered this much by the boxes of inked
characters other than its neighbours is unreadable: text printed over text."""
CROWDED = 0.12
"""Consecutive characters whose origins are closer than this share of their box's height are
stacked (``-7 Tc``): the narrowest letters advance about 0.2 of it."""
CROWDED_RUN = 3
"""How many stacked steps in a row make the characters unreadable (one is a kerning pair)."""
MEMORY_BYTES = 2 * 1024**3
"""The renderer's address space at most."""
CPU_SECONDS_BASE = 30
CPU_SECONDS_PER_PAGE = 2
"""The renderer's CPU time at most: a base and a share per page (work, not a wall clock)."""
MAX_FORM_DEPTH = 32

VISIBLE = "v"
OFF, SMALL, NARROW, NO_INK, OVERLAPPED = "o", "s", "n", "i", "x"
REASONS = {
    OFF: "placed outside the page",
    SMALL: "too small to read",
    NARROW: "squeezed too narrow to read",
    NO_INK: "leaves no ink on the rendered page (transparent, the colour of what is under it, "
    "covered, masked, clipped away or in a layer that is off)",
    OVERLAPPED: "drawn over other text, so neither can be read",
}
"""What each verdict code means, for a person reading a flag."""
_INHERITS = frozenset({"Mn", "Me", "Cf", "Sk", "Lm"})
"""Combining marks, format characters and spacing accents: judged with their neighbour (their
box is an accent's, not a letter's), never counted as overlapping a letter."""


class RenderFailed(Exception):
    """The rasteriser could not render the document (damaged, too large, a limit reached)."""


@dataclass(frozen=True)
class PageGlyphs:
    """One page's characters in PDFium's order (no whitespace) and a verdict code for each."""

    chars: str
    verdicts: str


def engine_name() -> str:
    """The rasteriser and its version, as a flag or a source record names it."""
    import pypdfium2

    return f"PDFium {pypdfium2.version.PDFIUM_INFO.version}"


def _text_objects(container: Any, raw: Any, form: bool, depth: int = 0) -> list[Any]:
    count = raw.FPDFFormObj_CountObjects(container) if form else raw.FPDFPage_CountObjects(container)
    found: list[Any] = []
    for index in range(max(count, 0)):
        obj = (
            raw.FPDFFormObj_GetObject(container, index)
            if form
            else raw.FPDFPage_GetObject(container, index)
        )
        kind = raw.FPDFPageObj_GetType(obj)
        if kind == raw.FPDF_PAGEOBJ_TEXT:
            found.append(obj)
        elif kind == raw.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
            found += _text_objects(obj, raw, True, depth + 1)
    return found


def _render(page: Any, scale: float) -> Any:
    bitmap = page.render(scale=scale, rev_byteorder=True, may_draw_forms=False)
    return bitmap.to_numpy().copy()


def page_glyphs(page: Any) -> PageGlyphs:
    """The verdict for each character of one ``pypdfium2`` page (see the module docstring)."""
    import ctypes

    import numpy as np
    import pypdfium2.raw as raw

    width, height = page.get_size()
    scale = SCALE
    if width * height * scale * scale > MAX_PIXELS:
        scale = math.sqrt(MAX_PIXELS / max(width * height, 1.0))
    shown = _render(page, scale)
    texts = _text_objects(page.raw, raw, False)
    for obj in texts:
        raw.FPDFPageObj_SetIsActive(obj, False)
    try:
        bare = _render(page, scale)
    finally:
        for obj in texts:
            raw.FPDFPageObj_SetIsActive(obj, True)
    change = np.abs(shown.astype(np.int16) - bare.astype(np.int16)).max(axis=2)
    ink = np.where(change >= NOISE, change, 0).astype(np.float64) / 255.0
    rows, cols = ink.shape
    summed = np.zeros((rows + 1, cols + 1), dtype=np.float64)
    summed[1:, 1:] = ink.cumsum(0).cumsum(1)

    textpage = page.get_textpage()
    tp = textpage.raw
    count = raw.FPDFText_CountChars(tp)
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []  # page space: left, bottom, right, top
    origins: list[tuple[float, float, float]] = []  # x, y, the text's angle
    ox, oy = ctypes.c_double(), ctypes.c_double()
    pixels: list[tuple[int, int, int, int] | None] = []  # bitmap: x0, y0, x1, y1 (clipped)
    rect = raw.FS_RECTF()
    dx, dy = ctypes.c_int(), ctypes.c_int()
    pw, ph = int(math.ceil(width * scale)), int(math.ceil(height * scale))
    for index in range(max(count, 0)):
        code = raw.FPDFText_GetUnicode(tp, index)
        char = chr(code) if 0 <= code < 0x110000 else "\ufffd"
        if char.isspace() or raw.FPDFText_IsGenerated(tp, index) == 1 or code == 0:
            continue
        if not raw.FPDFText_GetLooseCharBox(tp, index, rect):
            rect.left = rect.right = rect.bottom = rect.top = 0.0
        box = (rect.left, rect.bottom, rect.right, rect.top)
        corners = []
        for x, y in ((rect.left, rect.top), (rect.right, rect.bottom)):
            raw.FPDF_PageToDevice(page.raw, 0, 0, pw, ph, 0, x, y, dx, dy)
            corners.append((dx.value, dy.value))
        (ax, ay), (bx, by) = corners
        left, top = min(ax, bx), min(ay, by)  # a box thinner than a pixel still covers one
        x0, x1 = max(left, 0), min(max(ax, bx, left + 1), cols)
        # a pixel more above and below: an underscore's ink sits on the box's edge
        y0, y1 = max(top - 1, 0), min(max(ay, by, top + 1) + 1, rows)
        if not raw.FPDFText_GetCharOrigin(tp, index, ox, oy):
            ox.value, oy.value = rect.left, rect.bottom
        chars.append(char)
        boxes.append(box)
        angle = raw.FPDFText_GetCharAngle(tp, index)
        origins.append((ox.value, oy.value, angle if angle >= 0 else 0.0))
        pixels.append((x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None)
    textpage.close()

    verdicts: list[str] = []
    for char, box, where in zip(chars, boxes, pixels, strict=True):
        w, h = abs(box[2] - box[0]), abs(box[3] - box[1])
        big, small = max(w, h), min(w, h)
        inherits = unicodedata.category(char) in _INHERITS
        if where is None:
            verdicts.append(OFF)
        elif big < MIN_POINTS:
            verdicts.append(SMALL)
        elif not inherits and small < MIN_ASPECT * big:
            verdicts.append(NARROW)
        else:
            x0, y0, x1, y1 = where
            area = (x1 - x0) * (y1 - y0)
            mass = summed[y1, x1] - summed[y0, x1] - summed[y1, x0] + summed[y0, x0]
            verdicts.append(VISIBLE if mass >= max(MIN_INK, INK_SHARE * area) else NO_INK)
    _overlaps(chars, boxes, verdicts)
    _crowded(chars, boxes, origins, verdicts)
    return PageGlyphs("".join(chars), "".join(verdicts))


def _overlaps(
    chars: list[str], boxes: list[tuple[float, float, float, float]], verdicts: list[str]
) -> None:
    """Mark inked characters whose box other inked characters' boxes mostly cover (sampled
    over the box's advance and the middle of its height, where letters of one line meet and
    lines never do). A character's own neighbours in reading order don't count (an italic
    letter overhangs them), nor do the same letter printed again on the same spot (a fake
    bold) and the parts of a ligature: stacked letters (``-7 Tc``) or a line printed over
    another overlap with many."""
    cell = 24.0
    bands = {
        i: _band(boxes[i])
        for i, v in enumerate(verdicts)
        if v == VISIBLE and unicodedata.category(chars[i]) not in _INHERITS
    }
    grid: dict[tuple[int, int], list[int]] = {}
    for i, (left, bottom, right, top) in bands.items():
        for gx in range(int(left // cell), int(right // cell) + 1):
            for gy in range(int(bottom // cell), int(top // cell) + 1):
                grid.setdefault((gx, gy), []).append(i)
    marked = []
    for i, (left, bottom, right, top) in bands.items():
        others = {
            j
            for gx in range(int(left // cell), int(right // cell) + 1)
            for gy in range(int(bottom // cell), int(top // cell) + 1)
            for j in grid.get((gx, gy), ())
            if abs(j - i) > 1 and not _same_spot(i, j, chars, bands)
        }
        if not others:
            continue
        points = [
            (left + (right - left) * (x + 0.5) / 8, bottom + (top - bottom) * (y + 0.5) / 3)
            for x in range(8)
            for y in range(3)
        ]
        covered = sum(
            any(
                bands[j][0] < px < bands[j][2] and bands[j][1] < py < bands[j][3]
                for j in others
            )
            for px, py in points
        )
        if covered >= OVERLAP * len(points):
            marked.append(i)
    for i in marked:
        verdicts[i] = OVERLAPPED


def _crowded(
    chars: list[str],
    boxes: list[tuple[float, float, float, float]],
    origins: list[tuple[float, float, float]],
    verdicts: list[str],
) -> None:
    """Mark runs of inked characters on one line each drawn where the one before it was, or
    behind it: a line's letters stacked on one spot by negative character spacing. (Text moves
    forward along its line; only a new line goes back, and it moves across the line too.)"""
    inked = [
        i
        for i, v in enumerate(verdicts)
        if v == VISIBLE and unicodedata.category(chars[i]) not in _INHERITS
    ]
    run: list[int] = []
    for previous, current in zip(inked, inked[1:], strict=False):
        height = abs(boxes[current][3] - boxes[current][1])
        (px, py, _), (cx, cy, angle) = origins[previous], origins[current]
        dx, dy = cx - px, cy - py
        along = dx * math.cos(angle) + dy * math.sin(angle)
        across = -dx * math.sin(angle) + dy * math.cos(angle)
        twice = chars[previous] == chars[current] and math.hypot(dx, dy) < 0.01
        if not twice and abs(across) < 0.5 * height and along < CROWDED * height:
            run = run or [previous]
            run.append(current)
            continue
        _mark_run(run, verdicts)
        run = []
    _mark_run(run, verdicts)


def _mark_run(run: list[int], verdicts: list[str]) -> None:
    if len(run) > CROWDED_RUN:
        for i in run:
            verdicts[i] = OVERLAPPED


def _same_spot(
    i: int, j: int, chars: list[str], bands: dict[int, tuple[float, float, float, float]]
) -> bool:
    """Two characters that are one glyph or one letter twice: the parts of a ligature (``fi``:
    neighbours sharing one box) or the same letter printed again on the spot (a fake bold)."""
    a, b = bands[i], bands[j]
    if abs(i - j) <= 3 and all(abs(x - y) < 0.01 for x, y in zip(a, b, strict=True)):
        return True
    return chars[i] == chars[j] and abs(a[0] - b[0]) < 0.3 * (a[2] - a[0])


def _band(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """The part of a character's box where the letters of one line meet: its advance, and the
    middle of its height (30 % to 70 %: lines set tight still don't meet there)."""
    left, bottom, right, top = _normal(box)
    height = top - bottom
    return left, bottom + 0.3 * height, right, bottom + 0.7 * height


def _normal(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    left, bottom, right, top = box
    return min(left, right), min(bottom, top), max(left, right), max(bottom, top)


def glyphs_in_process(data: bytes) -> list[PageGlyphs]:
    """Every page's verdicts, rendered in this process (the child process's work)."""
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise RenderFailed(f"PDFium could not open the PDF ({exc})") from exc
    try:
        if len(document) > MAX_PAGES:
            raise RenderFailed(f"it has {len(document)} pages (at most {MAX_PAGES} are rendered)")
        pages = []
        for index in range(len(document)):
            page = document[index]
            try:
                pages.append(page_glyphs(page))
            finally:
                page.close()
        return pages
    finally:
        document.close()


def _limit(pages: int) -> None:  # pragma: no cover - runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    cpu = CPU_SECONDS_BASE + CPU_SECONDS_PER_PAGE * max(pages, 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def render_pdf(data: bytes, pages: int) -> list[PageGlyphs]:
    """Every page's verdicts, rendered by a child process under memory and CPU limits (``pages``,
    the page count pypdf read, sizes the CPU budget). Raises :class:`RenderFailed`."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    try:
        done = subprocess.run(  # this file as a script (-I: no PYTHONPATH, no user site)
            [sys.executable, "-I", os.path.abspath(__file__)],
            input=data,
            capture_output=True,
            env=env,
            preexec_fn=lambda: _limit(pages),
            check=False,
        )
    except OSError as exc:
        raise RenderFailed(f"the renderer could not start ({exc})") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = why[-1] if why else f"exit status {done.returncode}"
        raise RenderFailed(f"the renderer stopped: {detail[:300]}")
    try:
        answer = json.loads(done.stdout)
        return [PageGlyphs(str(p[0]), str(p[1])) for p in answer]
    except (ValueError, TypeError, IndexError) as exc:
        raise RenderFailed("the renderer's answer could not be read") from exc


def main() -> None:  # pragma: no cover - the child process (exercised through render_pdf)
    data = sys.stdin.buffer.read()
    try:
        pages = glyphs_in_process(data)
    except RenderFailed as exc:
        print(str(exc), file=sys.stderr)
        raise SystemExit(2) from None
    json.dump([[p.chars, p.verdicts] for p in pages], sys.stdout)


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = [
    "REASONS",
    "VISIBLE",
    "PageGlyphs",
    "RenderFailed",
    "engine_name",
    "glyphs_in_process",
    "render_pdf",
]
