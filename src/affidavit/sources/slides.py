"""PowerPoint ``.pptx``: each slide's text (titles, text boxes, tables, groups) in order, then its
speaker notes marked as notes, with what a viewer of the slide show does not see flagged hidden.

Opened by ``python-pptx`` (the ``[formats]`` extra) after :func:`~.office.open_zip` has checked
the package. Flagged hidden (W12):

- every text of a hidden slide (``<p:sld show="0">``), skipped in the slide show;
- shapes marked hidden (``cNvPr hidden="1"``) and shapes less than half on the slide (a text
  box pushed off the slide's edge, where at most a cut-off end of it shows);
- runs smaller than 4 points;
- runs whose stated colour barely differs from what they sit on, or that have no fill at all
  (:mod:`.slide_colours`: the slide's, layout's and master's backgrounds and the shapes under
  the text; a picture or gradient under it leaves the text unjudged).

Speaker notes are the presenter's text: kept, as units called "notes of slide N" (a quote from
them says so wherever it is shown), colours not judged. Each paragraph is a unit of the text map
("slide 3", "notes of slide 3").
"""

from __future__ import annotations

import io
from typing import Any

from ..errors import SourceError
from .office import MIN_POINTS, TextBuilder, open_zip, require
from .sanitizer import Flag
from .slide_colours import UNKNOWN, Backdrop, Box, highlight, unseen

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_HIDDEN_SLIDE = "text of a hidden slide, skipped in the slide show"
_HIDDEN_SHAPE = "a hidden shape on the slide"
_OFF_SLIDE = "a shape mostly outside the slide's area, not shown (or cut off)"


def _shape_hidden(shape: Any) -> bool:
    for props in shape._element.iter(f"{P}cNvPr"):
        return str(props.get("hidden", "")).lower() in ("1", "true")
    return False


def _off_slide(shape: Any, width: int, height: int) -> bool:
    """True when less than half of the shape's box lies on the slide (its text is cut off, or
    not shown at all)."""
    try:
        left, top, w, h = (int(v) for v in (shape.left, shape.top, shape.width, shape.height))
    except (AttributeError, ValueError, TypeError):
        return False
    if w <= 0 or h <= 0:
        return left + w <= 0 or top + h <= 0 or left >= width or top >= height
    shown_w = max(0, min(left + w, width) - max(left, 0))
    shown_h = max(0, min(top + h, height) - max(top, 0))
    return shown_w * shown_h < 0.5 * w * h


class _Reader:
    def __init__(self, out: TextBuilder, width: int, height: int) -> None:
        self.out = out
        self.width = width
        self.height = height
        self.backdrop: Backdrop | None = None  # the current slide's; None for notes

    def shapes(
        self,
        shapes: Any,
        label: str,
        why: str | None,
        top: bool = True,
        under: str | None = None,
    ) -> None:
        """``under``: for a group's shapes, the colour under the group (UNKNOWN once one of its
        shapes paints something, which may lie under the next)."""
        for shape in shapes:
            hidden = why
            if hidden is None and _shape_hidden(shape):
                hidden = _HIDDEN_SHAPE
            if hidden is None and top and _off_slide(shape, self.width, self.height):
                hidden = _OFF_SLIDE
            behind = self._behind(shape, top, under)
            if getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP
                self.shapes(shape.shapes, label, hidden, top=False, under=behind)
                continue
            title = bool(getattr(shape, "is_placeholder", False)) and _is_title(shape)
            if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                self.frame(shape.text_frame, label, hidden, "# " if title else "", shape, behind)
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    for cell in row.cells:
                        fill = self._cell(cell)
                        self.frame(cell.text_frame, label, hidden, "", shape, fill)
            if not top and self.backdrop and self.backdrop.own(shape._element) is not None:
                under = UNKNOWN  # what this shape paints may lie under its next siblings

    def _behind(self, shape: Any, top: bool, under: str | None) -> str | None:
        """The colour the shape's text sits on: its own fill, else what is under it."""
        if self.backdrop is None:
            return None
        own = self.backdrop.own(shape._element)
        if own is not None:
            return own
        return self.backdrop.behind(shape._element, _place(shape)) if top else under

    def _cell(self, cell: Any) -> str | None:
        """A table cell's own stated fill; a table style's fills are not read (unjudged)."""
        if self.backdrop is None:
            return None
        own = self.backdrop.own_cell(cell._tc)
        return own if own is not None else UNKNOWN

    def frame(
        self,
        frame: Any,
        label: str,
        why: str | None,
        prefix: str,
        shape: Any = None,
        background: str | None = None,
    ) -> None:
        for paragraph in frame.paragraphs:
            self.out.start(label, prefix)
            level = int(getattr(paragraph, "level", 0) or 0)
            for child in paragraph._p:
                tag = child.tag if isinstance(child.tag, str) else ""
                if tag in (f"{A}r", f"{A}fld"):
                    text = "".join(t.text or "" for t in child.iter(f"{A}t"))
                    hidden = why or _tiny(child) or self._faint(child, shape, level, background)
                    self.out.add(text, hidden)
                elif tag == f"{A}br":
                    self.out.add("\n", why)

    def _faint(self, run: Any, shape: Any, level: int, background: str | None) -> str | None:
        if self.backdrop is None or shape is None:
            return None
        colour = self.backdrop.text_colour(run, shape._element, level)
        marked = highlight(run, self.backdrop.palette)
        why = unseen(colour, marked or background)
        return f"{why}, unreadable on the slide" if why else None


def _place(shape: Any) -> Box | None:
    """The shape's box, inherited from its layout's placeholder when it states none."""
    try:
        left, top, width, height = (
            int(v) for v in (shape.left, shape.top, shape.width, shape.height)
        )
    except (AttributeError, ValueError, TypeError):
        return None
    return (left, top, left + width, top + height)


def _is_title(shape: Any) -> bool:
    try:
        return int(shape.placeholder_format.type) in (1, 3)  # TITLE, CENTER_TITLE
    except (AttributeError, ValueError, TypeError):
        return False


def _tiny(run: Any) -> str | None:
    props = run.find(f"{A}rPr")
    size = props.get("sz") if props is not None else None
    try:
        points = int(size) / 100 if size is not None else None
    except ValueError:
        return None
    if points is not None and points < MIN_POINTS:
        return f"text {points:g} pt high, too small to read"
    return None


def extract_pptx(data: bytes) -> tuple[str, dict[str, Any], list[Flag]]:
    """The text, ``units`` map and hidden-text flags of a ``.pptx`` presentation."""
    open_zip(data, "PowerPoint presentation")
    pptx = require("pptx", "PowerPoint presentations")
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises many kinds for a damaged package
        raise SourceError(
            f"The PowerPoint presentation could not be read ({type(exc).__name__}: {exc}). "
            f"Open it in PowerPoint or LibreOffice, save it again as .pptx and add that."
        ) from exc
    width = int(presentation.slide_width or 0) or 9_144_000
    height = int(presentation.slide_height or 0) or 6_858_000
    out = TextBuilder("slide")
    reader = _Reader(out, width, height)
    for number, slide in enumerate(presentation.slides, 1):
        hidden = str(slide._element.get("show", "1")).lower() in ("0", "false")
        why = _HIDDEN_SLIDE if hidden else None
        reader.backdrop = Backdrop(slide)
        reader.shapes(slide.shapes, f"slide {number}", why)
        reader.backdrop = None
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None:
                reader.frame(notes, f"notes of slide {number}", why, "")
    return out.text(), out.text_map("pptx", "PowerPoint presentations"), out.flags


__all__ = ["extract_pptx"]
