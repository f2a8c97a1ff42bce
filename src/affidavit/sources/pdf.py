"""PDF text (pypdf), page by page, with the text a reader of the page would not see flagged (W12).

pypdf extracts the text; its visitor callbacks show each piece of text with the graphics state it
is drawn in, which this module tracks (``q``/``Q``, ``Tr``, fill colours). A piece is flagged
``hidden`` when it is drawn

    in text render mode 3 or 7 (neither filled nor stroked: invisible), unless the page paints an
        image over at least half of it (before or after the text): that is how OCR tools lay a
        text layer over a scanned page, whose words the image shows (a logo or a speck shows
        none of them, and an image only listed in the page's resources is not painted);
    in white (gray, RGB or CMYK fill) on the default white page;
    at a font size of 2pt or less (after the text and current transformation matrices);
    starting outside the page's crop box (or media box);
    outside the clipping path in force (``W``/``W*``: the box of the path, intersected with the
        clip saved by ``q``; a clip of no area hides everything), by more than the text's size;
    under an opaque image painted after it over where it starts (an image with a soft mask or
        a stencil is not opaque), unless the image covers half the page: a scan over its own
        text layer, as above.

Flags are offsets into the joined text; hidden text is kept in the text.
"""

from __future__ import annotations

import io
import logging
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import SourceError
from .css import HIDDEN
from .sanitizer import Flag

PAGE_SEPARATOR = "\n\f\n"
TINY_POINTS = 2.0
WHITE = 0.95
_INVISIBLE_MODES = (3, 7)
_MARGIN = 2.0
Matrix = tuple[float, float, float, float, float, float]


Box = tuple[float, float, float, float]  # left, bottom, right, top
_PAINT = frozenset({"n", "f", "F", "f*", "B", "B*", "b", "b*", "S", "s"})
_POINTS = {"m": 2, "l": 2, "c": 6, "v": 4, "y": 4}


@dataclass(frozen=True)
class _Graphics:
    mode: int = 0
    fill: tuple[float, ...] = (0.0,)  # gray, RGB or CMYK components
    space: str = "gray"
    clip: Box | None = None  # the clipping path's box in device space (None: the whole page)


@dataclass
class _Page:
    number: int
    box: Box
    images: dict[str, bool]  # the page's image XObjects: name -> opaque
    state: _Graphics = field(default_factory=_Graphics)
    scanned: bool = False  # an image painted over at least half of the page
    saved: list[_Graphics] = field(default_factory=list)
    pieces: list[tuple[str, str]] = field(default_factory=list)  # text, why hidden ("" if not)
    places: list[tuple[float, float, float] | None] = field(default_factory=list)  # x, y, size
    path: list[tuple[float, float]] = field(default_factory=list)  # the path being built
    clipping: bool = False  # W or W* seen: the next painting operator sets the clip

    def before(self, operator: bytes, args: list[Any], cm: Any, tm: Any) -> None:
        op = operator.decode("latin-1", "replace")
        if op in _POINTS or op == "re" or op in _PAINT or op in ("W", "W*"):
            self._path(op, args, cm)
        elif op == "q":
            self.saved.append(self.state)
        elif op == "Q":
            self.state = self.saved.pop() if self.saved else _Graphics()
        elif op == "Do" and args and str(args[0]) in self.images:
            covers = self._covers_page(cm)
            self.scanned = self.scanned or covers
            if self.images[str(args[0])]:
                self._cover(cm, covers)
        elif op == "Tr" and args:
            self.state = replace(self.state, mode=_int(args[0]))
        elif op in ("g", "rg", "k"):
            self.state = replace(self.state, fill=_floats(args), space=_SPACES[op])
        elif op == "cs":
            self.state = replace(self.state, fill=(0.0,), space="other")
        elif op in ("sc", "scn"):
            values = _floats(args)
            space = {1: "gray", 3: "rgb", 4: "cmyk"}.get(len(values), "other")
            self.state = replace(self.state, fill=values, space=space)

    def _path(self, op: str, args: list[Any], cm: Any) -> None:
        """Build the current path's points in device space; ``W`` then a painting operator
        intersects the clip with the path's box (as ``q`` saves and ``Q`` restores it)."""
        try:
            matrix = _matrix(cm)
        except (TypeError, ValueError):
            return
        values = _floats(args)
        if op == "re" and len(values) == 4:
            x, y, w, h = values
            self.path += [_apply(matrix, px, py) for px in (x, x + w) for py in (y, y + h)]
        elif op in _POINTS and len(values) == _POINTS[op]:
            self.path += [_apply(matrix, *values[i : i + 2]) for i in range(0, len(values), 2)]
        elif op in ("W", "W*"):
            self.clipping = True
        elif op in _PAINT:
            if self.clipping and self.path:
                xs, ys = [p[0] for p in self.path], [p[1] for p in self.path]
                box = (min(xs), min(ys), max(xs), max(ys))
                self.state = replace(self.state, clip=_intersect(self.state.clip, box))
            self.path, self.clipping = [], False

    def _cover(self, cm: Any, scan: bool) -> None:
        """Mark the text painted so far under this opaque image (a scan: only as OCR text)."""
        try:
            matrix = _matrix(cm)
        except (TypeError, ValueError):
            return
        corners = [_apply(matrix, x, y) for x in (0.0, 1.0) for y in (0.0, 1.0)]
        xs, ys = [p[0] for p in corners], [p[1] for p in corners]
        left, bottom, right, top = min(xs), min(ys), max(xs), max(ys)
        where = f"on page {self.number} of the PDF"
        for index, place in enumerate(self.places):
            text, why = self.pieces[index]
            if place is None or why or not text.strip():
                continue
            x, y, _ = place
            if left < x < right and bottom < y < top:
                reason = f"PDF text covered by an image painted over it {where}"
                self.pieces[index] = (text, _OCR + reason if scan else reason)

    def _covers_page(self, cm: Any) -> bool:
        """Whether an image painted under ``cm`` (it fills the unit square) covers half the page."""
        try:
            a, b, c, d, _, _ = _matrix(cm)
        except (TypeError, ValueError):
            return False
        left, bottom, right, top = self.box
        page = max(right - left, 0.0) * max(top - bottom, 0.0)
        return page > 0 and abs(a * d - b * c) >= page / 2

    def text(self, text: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        if text:
            self.pieces.append((text, self._why(cm, tm, size) if text.strip() else ""))
            self.places.append(self._place(cm, tm, size))

    def _place(self, cm: Any, tm: Any, size: Any) -> tuple[float, float, float] | None:
        try:
            matrix = _multiply(_matrix(tm), _matrix(cm))
            return matrix[4], matrix[5], float(size) * math.hypot(matrix[2], matrix[3])
        except (TypeError, ValueError, IndexError):
            return None

    def _why(self, cm: Any, tm: Any, size: Any) -> str:
        where = f"on page {self.number} of the PDF"
        if self.state.mode in _INVISIBLE_MODES:  # kept unless a scan covers the page: see flags()
            return f"{_OCR}invisible PDF text (text render mode {self.state.mode}) {where}"
        if _is_white(self.state):
            return f"white PDF text on the white page {where}"
        try:
            matrix = _multiply(_matrix(tm), _matrix(cm))
            points = float(size) * math.hypot(matrix[2], matrix[3])
            x, y = matrix[4], matrix[5]
        except (TypeError, ValueError, IndexError):
            return ""
        if 0 < points <= TINY_POINTS or float(size) == 0:
            return f"PDF text at a font size of {points:.2g}pt {where}"
        left, bottom, right, top = self.box
        if not (left - _MARGIN <= x <= right + _MARGIN and bottom - _MARGIN <= y <= top + _MARGIN):
            return f"PDF text placed outside the page (at {x:.0f}, {y:.0f}) {where}"
        clip = self.state.clip
        if clip is not None:
            c_left, c_bottom, c_right, c_top = clip
            room = max(points, _MARGIN)
            empty = c_right - c_left <= 0 or c_top - c_bottom <= 0
            inside = c_left - room <= x <= c_right + room and c_bottom - room <= y <= c_top + room
            if empty or not inside:
                return f"PDF text outside its clipping path (at {x:.0f}, {y:.0f}) {where}"
        return ""


_SPACES = {"g": "gray", "rg": "rgb", "k": "cmyk"}
_OCR = "\0ocr:"
"""Marks the reason of invisible text, which an OCR scan of the whole page makes visible."""


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _floats(args: list[Any]) -> tuple[float, ...]:
    values: list[float] = []
    for arg in args:
        try:
            values.append(float(arg))
        except (TypeError, ValueError):
            return ()
    return tuple(values)


def _is_white(state: _Graphics) -> bool:
    fill = state.fill
    if state.space == "gray" and len(fill) == 1:
        return fill[0] >= WHITE
    if state.space == "rgb" and len(fill) == 3:
        return min(fill) >= WHITE
    if state.space == "cmyk" and len(fill) == 4:
        return max(fill) <= 1 - WHITE
    return False


def _matrix(values: Any) -> Matrix:
    a, b, c, d, e, f = (float(v) for v in list(values)[:6])
    return (a, b, c, d, e, f)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


def _intersect(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _multiply(m: Matrix, n: Matrix) -> Matrix:
    return (
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    )


def _image_names(page: Any) -> dict[str, bool]:
    """The page's image XObjects by name, each with whether it is opaque (no soft mask, colour
    key mask or stencil: what is under it does not show through)."""
    try:
        resources: Any = page.get("/Resources")
        xobjects: Any = resources.get_object().get("/XObject") if resources is not None else None
        if xobjects is None:
            return {}
        xobjects = xobjects.get_object()
        images: dict[str, bool] = {}
        for name in xobjects:
            image = xobjects[name].get_object()
            if image.get("/Subtype") == "/Image":
                masked = "/SMask" in image or "/Mask" in image or bool(image.get("/ImageMask"))
                images[str(name)] = not masked
        return images
    except Exception:  # a damaged resource dictionary: no image seen
        return {}


def _box(page: Any) -> tuple[float, float, float, float]:
    box = page.cropbox or page.mediabox
    return (float(box.left), float(box.bottom), float(box.right), float(box.top))


def _page_flags(text: str, page: _Page, base: int) -> list[Flag]:
    """Flags for the hidden pieces of one page, found in order in the page's extracted text."""
    flags: list[Flag] = []
    cursor = 0
    for piece, marked in page.pieces:
        why = marked
        if marked.startswith(_OCR):
            why = "" if page.scanned else marked[len(_OCR) :]
        at = text.find(piece, cursor)
        if at < 0:
            stripped = piece.strip()
            at = text.find(stripped, cursor) if stripped else -1
            piece = stripped
        if at < 0:
            if why:  # pypdf rewrote the piece: flag from here to the next line's end
                end = text.find("\n", cursor + 1)
                flags.append(
                    Flag(HIDDEN, base + cursor, base + (len(text) if end < 0 else end), why)
                )
            continue
        if why:
            flags.append(Flag(HIDDEN, base + at, base + at + len(piece), why))
        cursor = at + len(piece)
    return flags


def _valid_unicode(text: str) -> str:
    """Replace lone surrogates (some PDF fonts map glyphs to them) so the text encodes as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _read(data: bytes) -> list[tuple[str, _Page]]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and not reader.decrypt(""):
        raise SourceError(
            "The PDF is encrypted with a password. Decrypt it first "
            "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) and add the result."
        )
    out: list[tuple[str, _Page]] = []
    for number, page in enumerate(reader.pages, start=1):
        seen = _Page(number, _box(page), _image_names(page))
        text = page.extract_text(visitor_operand_before=seen.before, visitor_text=seen.text)
        out.append((_valid_unicode(text or ""), seen))
    return out


def extract_pdf(data: bytes) -> tuple[str, list[list[int]], list[Flag]]:
    """The text of a PDF (pages joined by ``PAGE_SEPARATOR``), its page map and hidden-text flags."""
    logger = logging.getLogger("pypdf")
    level = logger.level
    try:
        with warnings.catch_warnings():
            # pypdf warns and logs about many harmless quirks of real PDFs; errors still raise.
            warnings.simplefilter("ignore")
            logger.setLevel(logging.CRITICAL)
            read = _read(data)
    except SourceError:
        raise
    except Exception as exc:  # pypdf raises many kinds of errors on damaged files
        raise SourceError(
            f"Not a readable PDF ({type(exc).__name__}: {exc}). Check that the file is complete; "
            f"re-export or repair it (e.g. `qpdf in.pdf out.pdf`) and add it again."
        ) from exc
    finally:
        logger.setLevel(level)
    if not any(text.strip() for text, _ in read):
        raise SourceError(
            f"The PDF's {len(read)} page(s) hold no extractable text: it is probably scanned "
            f"images. Affidavit does no OCR: run it yourself (e.g. `ocrmypdf in.pdf out.pdf`) and "
            f"add the result."
        )
    pages: list[list[int]] = []
    flags: list[Flag] = []
    offset = 0
    for text, page in read:
        pages.append([offset, page.number])
        flags += _page_flags(text, page, offset)
        offset += len(text) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(text for text, _ in read), pages, flags


__all__ = ["PAGE_SEPARATOR", "extract_pdf"]
