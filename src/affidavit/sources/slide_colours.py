"""Which slide text a viewer can't tell from what it sits on (W12, ``.pptx``).

A run's colour is judged only where the file states it: the run's own fill (``a:rPr``), else
its shape's list style for the paragraph's level (``a:lstStyle``). ``a:noFill`` text draws no
letters at all. What it sits on is found as a slide show paints it, bottom up: the slide's
background (its own ``p:bg``, else the layout's, else the master's; a theme background style
through ``p:bgRef``), then every shape under the text's shape whose box meets it — the master's
and the layout's drawn shapes (not their placeholders), then the slide's shapes before it — and
last the text's own shape fill (``a:solidFill``, or a theme fill through ``p:style/a:fillRef``).

Colours are resolved through the master's colour map (``p:clrMap``, ``bg1`` → ``lt1``...) and
the theme's colour scheme, with the usual transforms (``lumMod``, ``lumOff``, ``tint``,
``shade``). Whenever a layer can't be known — a picture, a gradient or pattern, a partly
transparent fill, a shape that covers only part of the text's box — the background is unknown
and the text is not judged: a white title on a photograph is no alarm. Text whose colour the
file leaves to the master's text styles or the layout's placeholders is not judged either
(docs/sources.md).
"""

from __future__ import annotations

import colorsys
from typing import Any

from .office import MIN_CONTRAST, contrast, require, rgb

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
REL_THEME = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/theme"
UNKNOWN = "unknown"
"""A layer whose colour can't be known (picture, gradient, partial cover): nothing is judged."""
NONE = "none"
"""A layer that paints nothing (``a:noFill``)."""
_FILLS = {f"{A}{name}" for name in ("solidFill", "gradFill", "blipFill", "pattFill", "grpFill")}
_CHOICES = {f"{A}{name}" for name in ("srgbClr", "schemeClr", "sysClr", "prstClr", "scrgbClr")}
_PRESET = {"white": "FFFFFF", "black": "000000"}


class Palette:
    """A slide's colour scheme and map: scheme colour names to ``RRGGBB``."""

    def __init__(self, slide: Any) -> None:
        master = slide.slide_layout.slide_master
        self.scheme: dict[str, str] = {}
        self.fill_styles: list[Any] = []
        self.background_styles: list[Any] = []
        theme = _theme(master)
        if theme is not None:
            for scheme in theme.iter(f"{A}clrScheme"):
                for slot in scheme:
                    colour = _plain(next(iter(slot), None))
                    if colour:
                        self.scheme[_local(slot.tag)] = colour
                break
            for style_list, into in (
                ("fillStyleLst", self.fill_styles),
                ("bgFillStyleLst", self.background_styles),
            ):
                for found in theme.iter(f"{A}{style_list}"):
                    into.extend(found)
                    break
        self.map: dict[str, str] = {}
        for element in (master._element, slide.slide_layout._element, slide._element):
            for mapping in element.iter(f"{P}clrMap", f"{A}overrideClrMapping"):
                self.map.update({k: str(v) for k, v in mapping.attrib.items()})

    def colour(self, choice: Any, placeholder: str | None = None) -> str | None:
        """``RRGGBB`` of a colour choice element, or None when it can't be told (or is partly
        transparent, which the caller takes as unknown)."""
        if choice is None or choice.tag not in _CHOICES:
            return None
        tag = _local(choice.tag)
        value: str | None
        if tag == "srgbClr":
            value = rgb(choice.get("val"))
        elif tag == "sysClr":
            value = rgb(choice.get("lastClr"))
        elif tag == "prstClr":
            value = _PRESET.get(str(choice.get("val")))
        elif tag == "schemeClr":
            name = str(choice.get("val"))
            value = placeholder if name == "phClr" else self.scheme.get(self.map.get(name, name))
        else:
            value = None
        if value is None:
            return None
        return _transformed(value, choice)


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _plain(choice: Any) -> str | None:
    if choice is None:
        return None
    if _local(choice.tag) == "srgbClr":
        return rgb(choice.get("val"))
    if _local(choice.tag) == "sysClr":
        return rgb(choice.get("lastClr"))
    return None


def _theme(master: Any) -> Any:
    etree = require("lxml.etree", "PowerPoint presentations")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    for rel in master.part.rels.values():
        if not rel.is_external and rel.reltype == REL_THEME:
            try:
                return etree.fromstring(rel.target_part.blob, parser)
            except etree.XMLSyntaxError:  # a damaged theme: its colours stay unknown
                return None
    return None


def _percent(element: Any) -> float:
    try:
        return int(str(element.get("val"))) / 100_000
    except ValueError:
        return 1.0


def _transformed(value: str, choice: Any) -> str | None:
    """The colour after DrawingML's transforms; None when it is partly transparent."""
    r, g, b = (int(value[i : i + 2], 16) / 255 for i in (0, 2, 4))
    for step in choice:
        name = _local(step.tag)
        amount = _percent(step)
        if name == "alpha":
            if amount < 0.999:
                return None
        elif name in ("lumMod", "lumOff"):
            hue, light, sat = colorsys.rgb_to_hls(r, g, b)
            light = light * amount if name == "lumMod" else light + amount
            r, g, b = colorsys.hls_to_rgb(hue, min(1.0, max(0.0, light)), sat)
        elif name == "tint":
            r, g, b = (c + (1 - c) * (1 - amount) for c in (r, g, b))
        elif name == "shade":
            r, g, b = (c * amount for c in (r, g, b))
    return "".join(f"{round(min(1.0, max(0.0, c)) * 255):02X}" for c in (r, g, b))


def _choice(fill: Any) -> Any:
    return next((child for child in fill if child.tag in _CHOICES), None)


def _fill(palette: Palette, holder: Any, style: Any = None) -> str | None:
    """The layer a shape (or background) paints: ``RRGGBB``, NONE, UNKNOWN, or None when the
    element states no fill (and no theme style gives one)."""
    if holder is not None:
        for child in holder:
            if child.tag == f"{A}noFill":
                return NONE
            if child.tag == f"{A}solidFill":
                return palette.colour(_choice(child)) or UNKNOWN
            if child.tag in _FILLS:
                return UNKNOWN
    if style is not None:
        ref = style.find(f"{A}fillRef")
        if ref is not None:
            return _themed(palette, ref, palette.fill_styles, 1)
    return None


def _themed(palette: Palette, ref: Any, styles: list[Any], first: int) -> str:
    """A theme fill style by index (``a:fillRef``/``p:bgRef``), in the colour the reference gives."""
    try:
        index = int(str(ref.get("idx")))
    except ValueError:
        return UNKNOWN
    if index == 0 and first == 1:
        return NONE
    position = index - first
    if not 0 <= position < len(styles):
        return UNKNOWN
    entry = styles[position]
    if entry.tag == f"{A}noFill":
        return NONE
    if entry.tag != f"{A}solidFill":
        return UNKNOWN
    given = palette.colour(_choice(ref))
    return palette.colour(_choice(entry), placeholder=given) or UNKNOWN


def _background(palette: Palette, element: Any) -> str | None:
    """The background a slide, layout or master sets itself, or None."""
    bg = element.find(f"{P}cSld/{P}bg")
    if bg is None:
        return None
    props = bg.find(f"{P}bgPr")
    if props is not None:
        return _fill(palette, props) or UNKNOWN
    ref = bg.find(f"{P}bgRef")
    if ref is not None:
        try:
            index = int(str(ref.get("idx")))
        except ValueError:
            return UNKNOWN
        if index >= 1001:
            return _themed(palette, ref, palette.background_styles, 1001)
        return _themed(palette, ref, palette.fill_styles, 1)
    return UNKNOWN


Box = tuple[int, int, int, int]


def _box(element: Any) -> Box | None:
    """A top-level shape's box (left, top, right, bottom) in EMU, from its ``a:xfrm``."""
    xfrm = next(
        (x for x in element.iter(f"{A}xfrm", f"{P}xfrm")),
        None,
    )
    if xfrm is None:
        return None
    off, ext = xfrm.find(f"{A}off"), xfrm.find(f"{A}ext")
    if off is None or ext is None:
        return None
    try:
        left, top = int(str(off.get("x"))), int(str(off.get("y")))
        width, height = int(str(ext.get("cx"))), int(str(ext.get("cy")))
    except ValueError:
        return None
    return (left, top, left + width, top + height)


def _meets(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _covers(a: Box, b: Box) -> bool:
    return a[0] <= b[0] and a[1] <= b[1] and a[2] >= b[2] and a[3] >= b[3]


def _layer(palette: Palette, shape: Any) -> str | None:
    """What a drawn shape paints over its box: a colour, NONE, UNKNOWN or None (nothing)."""
    tag = _local(shape.tag)
    if tag in ("pic", "graphicFrame", "contentPart"):
        return UNKNOWN  # a picture, chart, table or ink: not a colour we can read
    if tag == "grpSp":
        return UNKNOWN
    if tag == "cxnSp":
        return None  # a connector line: too thin to hide a text box
    return _fill(palette, shape.find(f"{P}spPr"), shape.find(f"{P}style"))


def _drawn(tree: Any, placeholders: bool) -> list[Any]:
    out = []
    for shape in tree:
        if shape.tag in (f"{P}nvGrpSpPr", f"{P}grpSpPr"):
            continue
        if not placeholders and shape.find(f".//{P}nvPr/{P}ph") is not None:
            continue  # a layout's or master's placeholder is not drawn on the slide
        out.append(shape)
    return out


class Backdrop:
    """The colour under each top-level shape of one slide (or UNKNOWN)."""

    def __init__(self, slide: Any) -> None:
        self.palette = Palette(slide)
        layout = slide.slide_layout
        master = layout.slide_master
        self.base = (
            _background(self.palette, slide._element)
            or _background(self.palette, layout._element)
            or _background(self.palette, master._element)
            or "FFFFFF"
        )
        self.under: list[Any] = []
        for owner in (master, layout):
            tree = owner._element.find(f"{P}cSld/{P}spTree")
            if tree is not None:
                self.under.extend(_drawn(tree, placeholders=False))
        tree = slide._element.find(f"{P}cSld/{P}spTree")
        self.slide_shapes = _drawn(tree, placeholders=True) if tree is not None else []

    def behind(self, shape: Any, box: Box | None = None) -> str:
        """The colour the top-level ``shape`` sits on (its own fill left out), or UNKNOWN.
        ``box``: where the shape is, when it inherits its place (a placeholder with no
        ``a:xfrm`` of its own sits where its layout's placeholder is)."""
        box = box or _box(shape)
        if box is None:
            return UNKNOWN
        colour = self.base
        position = next(
            (i for i, s in enumerate(self.slide_shapes) if s is shape), len(self.slide_shapes)
        )
        for layer in self.under + self.slide_shapes[:position]:
            other = _box(layer)
            if other is None or not _meets(other, box):
                continue
            paint = _layer(self.palette, layer)
            if paint is None or paint == NONE:
                continue
            if paint == UNKNOWN or not _covers(other, box):
                return UNKNOWN
            colour = paint
        return colour

    def own(self, shape: Any) -> str | None:
        """The shape's own fill: ``RRGGBB``, UNKNOWN, or None (transparent)."""
        paint = _fill(self.palette, shape.find(f"{P}spPr"), shape.find(f"{P}style"))
        return None if paint in (None, NONE) else paint

    def own_cell(self, cell: Any) -> str | None:
        """A table cell's own fill (``a:tcPr``): ``RRGGBB``, UNKNOWN, or None (unstated)."""
        props = cell.find(f"{A}tcPr")
        paint = _fill(self.palette, props) if props is not None else None
        return None if paint in (None, NONE) else paint

    def text_colour(self, run: Any, shape: Any, level: int) -> str | None:
        """The run's stated colour: ``RRGGBB``, NONE (no fill: no letters drawn), or None when the
        file leaves it to the master or layout (not judged)."""
        props = run.find(f"{A}rPr")
        stated = _fill(self.palette, props) if props is not None else None
        if stated == NONE and props is not None:
            outline = props.find(f"{A}ln")
            if outline is not None and outline.find(f"{A}noFill") is None:
                return None  # outlined letters: drawn, colour not judged
        if stated is None:
            styles = shape.find(f"{P}txBody/{A}lstStyle")
            level_props = (
                styles.find(f"{A}lvl{level + 1}pPr/{A}defRPr") if styles is not None else None
            )
            stated = _fill(self.palette, level_props) if level_props is not None else None
        return None if stated == UNKNOWN else stated


def highlight(run: Any, palette: Palette) -> str | None:
    """The run's highlight colour (``a:highlight``), which is what its letters sit on."""
    mark = run.find(f"{A}rPr/{A}highlight")
    return palette.colour(_choice(mark)) if mark is not None else None


def unseen(colour: str | None, background: str | None) -> str | None:
    """Why text of ``colour`` on ``background`` is unseen on the slide, or None."""
    if colour is None:
        return None
    if colour == NONE:
        return "text with no fill (a:noFill): no letters are drawn"
    if background is None or background == UNKNOWN:
        return None
    ratio = contrast(colour, background)
    if ratio < MIN_CONTRAST:
        return f"text coloured #{colour} on a #{background} background (contrast {ratio:.2f})"
    return None


__all__ = ["NONE", "UNKNOWN", "Backdrop", "Box", "highlight", "unseen"]
