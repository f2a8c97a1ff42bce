"""Word ``.docx``: the text of the body (paragraphs and table cells, in order), footnotes and
endnotes, then comments, with what Word does not show flagged hidden (W12).

Opened by ``python-docx`` (the ``[formats]`` extra) after :func:`~.office.open_zip` has checked
the package. A run is flagged when its resolved properties (document defaults, then the
paragraph's style, the run's character style, then its own properties; ``w:basedOn`` chains
followed) make it unseen:

- ``w:vanish`` (Word's "hidden" font effect);
- a colour that barely differs from what it sits on (the run's shading or highlight, the
  paragraph's shading (its own or its style's), its table cell's shading or its text box's
  fill, the page colour Word displays, else white): white or near-white on white, black on a black cell;
- a size below 4 points (``w:sz`` under 8 half-points), or characters squeezed below 20 % of
  their width (``w:w``);
- tracked deletions (``w:del``, ``w:moveFrom``: ``w:delText``), not in the document's text;
- fields' instructions (``w:instrText``: ``HYPERLINK "..."``, ``PAGE``...), which Word replaces
  by their result;
- comments (``word/comments.xml``): kept as units at the end, flagged: margin notes, not text.

Headers, footers and drawings' alt text are left out. Each paragraph is a unit of the text map
("paragraph 12", "footnote 2", "comment 1").
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

from ..errors import SourceError
from .office import MIN_POINTS, TextBuilder, faint, open_zip, require, rgb
from .sanitizer import Flag

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
WPS = "{http://schemas.microsoft.com/office/word/2010/wordprocessingShape}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_OFF = ("0", "false", "off")
MIN_SCALE = 20
"""Characters squeezed below this percentage of their width (``w:w``) are taken as unseen."""
_HIGHLIGHTS = {
    "white": "FFFFFF", "black": "000000", "yellow": "FFFF00", "green": "00FF00",
    "cyan": "00FFFF", "magenta": "FF00FF", "blue": "0000FF", "red": "FF0000",
    "darkBlue": "000080", "darkCyan": "008080", "darkGreen": "008000", "darkMagenta": "800080",
    "darkRed": "800000", "darkYellow": "808000", "darkGray": "808080", "lightGray": "C0C0C0",
}  # fmt: skip
_WALKED = {"hyperlink", "ins", "moveTo", "smartTag", "fldSimple", "customXml", "bdo", "dir"}
_DELETED = "a tracked deletion (w:del), not in the document's text"
_INSTRUCTION = "a field's instruction (w:instrText), which Word replaces by its result"
_COMMENT = "a comment in the Word document's margin, not its text"


def _on(element: Any) -> bool:
    return element is not None and element.get(f"{W}val", "true") not in _OFF


class _Styles:
    """The run properties each style gives, following ``w:basedOn``."""

    def __init__(self, root: Any) -> None:
        self.styles: dict[str, Any] = {}
        self.defaults: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.default_paragraph: str | None = None  # the style of a paragraph that names none
        self._cache: dict[str, dict[str, Any]] = {}
        if root is None:
            return
        for style in root.iter(f"{W}style"):
            style_id = style.get(f"{W}styleId")
            if style_id:
                self.styles[style_id] = style
                name = style.find(f"{W}name")
                self.names[style_id] = (name.get(f"{W}val") if name is not None else "") or ""
                if style.get(f"{W}type") == "paragraph" and style.get(f"{W}default") in (
                    "1",
                    "true",
                    "on",
                ):
                    self.default_paragraph = style_id
        defaults = root.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr")
        self.defaults = _properties(defaults)

    def props(self, style_id: str | None) -> dict[str, Any]:
        """The run properties of style ``style_id`` with those it is based on (its own win)."""
        if not style_id or style_id not in self.styles:
            return {}
        if style_id in self._cache:
            return self._cache[style_id]
        chain: list[Any] = []
        current: str | None = style_id
        while current and current in self.styles and len(chain) < 32:
            style = self.styles[current]
            if style in chain:
                break
            chain.append(style)
            based = style.find(f"{W}basedOn")
            current = based.get(f"{W}val") if based is not None else None
        merged: dict[str, Any] = {}
        for style in reversed(chain):
            merged.update(_properties(style.find(f"{W}rPr")))
        self._cache[style_id] = merged
        return merged

    def shading(self, style_id: str | None) -> str | None:
        """The paragraph shading (``w:pPr/w:shd`` fill) style ``style_id`` gives, if any."""
        current, seen = style_id, 0
        while current and current in self.styles and seen < 32:
            style = self.styles[current]
            fill = _fill(style.find(f"{W}pPr"))
            if fill is not None:
                return fill
            based = style.find(f"{W}basedOn")
            current = based.get(f"{W}val") if based is not None else None
            seen += 1
        return None

    def heading(self, style_id: str | None) -> int:
        """The heading level of a paragraph style ("heading 2": 2, "Title": 1), else 0."""
        name = self.names.get(style_id or "", "").lower()
        if name == "title":
            return 1
        if name.startswith("heading ") and name[8:].isdigit():
            return min(6, int(name[8:]))
        return 0


def _properties(rpr: Any) -> dict[str, Any]:
    """The visibility-related run properties ``rpr`` sets."""
    found: dict[str, Any] = {}
    if rpr is None:
        return found
    vanish = rpr.find(f"{W}vanish")
    if vanish is not None:
        found["vanish"] = _on(vanish)
    color = rpr.find(f"{W}color")
    if color is not None:
        found["color"] = color.get(f"{W}val")
        found["theme_color"] = _theme_ref(color, "themeColor", "themeTint", "themeShade")
    size = rpr.find(f"{W}sz")
    if size is not None:
        with contextlib.suppress(ValueError):
            found["size"] = int(size.get(f"{W}val", ""))
    shading = rpr.find(f"{W}shd")
    if shading is not None and (shading.get(f"{W}fill") or "auto") != "auto":
        found["background"] = shading.get(f"{W}fill")
        found["theme_background"] = _theme_ref(
            shading, "themeFill", "themeFillTint", "themeFillShade"
        )
    highlight = rpr.find(f"{W}highlight")
    if highlight is not None and highlight.get(f"{W}val") in _HIGHLIGHTS:
        found["background"] = _HIGHLIGHTS[str(highlight.get(f"{W}val"))]
    scale = rpr.find(f"{W}w")
    if scale is not None:
        with contextlib.suppress(ValueError):
            found["scale"] = int(str(scale.get(f"{W}val", "100")).rstrip("%"))
    return found


def _theme_ref(element: Any, name: str, tint: str, shade: str) -> tuple[str, str, str] | None:
    """A theme colour reference (``w:themeColor``, ``w:themeFill``) with its tint and shade."""
    theme = element.get(f"{W}{name}")
    if not theme:
        return None
    return (str(theme), str(element.get(f"{W}{tint}") or ""), str(element.get(f"{W}{shade}") or ""))


_SCHEME_SLOTS = {
    "dark1": "dk1", "light1": "lt1", "dark2": "dk2", "light2": "lt2", "hyperlink": "hlink",
    "followedHyperlink": "folHlink",
}  # fmt: skip
_MAPPED = {"background1": "bg1", "text1": "t1", "background2": "bg2", "text2": "t2"}
_MAPPED_DEFAULT = {"bg1": "light1", "t1": "dark1", "bg2": "light2", "t2": "dark2"}


class _Theme:
    """The document theme's colours (``word/theme/theme1.xml``) as Word resolves
    ``w:themeColor`` and ``w:themeFill``: through the settings' ``w:clrSchemeMapping``, then
    ``themeTint``/``themeShade``. Word shows the theme colour, whatever ``w:val`` says."""

    def __init__(self, document: Any) -> None:
        self.scheme: dict[str, str] = {}
        self.mapping = dict(_MAPPED_DEFAULT)
        theme = _part_root(document, "/theme")
        for scheme in theme.iter(f"{A}clrScheme") if theme is not None else ():
            for slot in scheme:
                for choice in slot:
                    value = choice.get("val") if choice.tag == f"{A}srgbClr" else None
                    value = value or (choice.get("lastClr") if choice.tag == f"{A}sysClr" else None)
                    colour = rgb(value)
                    if colour:
                        self.scheme[str(slot.tag).rsplit("}", 1)[-1]] = colour
            break
        try:
            settings = document.settings.element
        except Exception:  # no settings part: the default mapping
            settings = None
        mapping = settings.find(f"{W}clrSchemeMapping") if settings is not None else None
        for key in _MAPPED_DEFAULT:
            value = mapping.get(f"{W}{key}") if mapping is not None else None
            if value:
                self.mapping[key] = str(value)

    def colour(self, ref: tuple[str, str, str] | None) -> str | None:
        if ref is None:
            return None
        name, tint, shade = ref
        name = self.mapping.get(_MAPPED.get(name, ""), name)
        value = self.scheme.get(_SCHEME_SLOTS.get(name, name))
        if value is None:
            return None
        channels = [int(value[i : i + 2], 16) for i in (0, 2, 4)]
        with contextlib.suppress(ValueError):
            if tint:
                t = int(tint, 16) / 255
                channels = [round(c * t + 255 * (1 - t)) for c in channels]
            if shade:
                f = int(shade, 16) / 255
                channels = [round(c * f) for c in channels]
        return "".join(f"{min(255, max(0, c)):02X}" for c in channels)


def _container_fill(p: Any) -> str | None:
    """The background a paragraph's nearest container paints: a table cell's shading, or the
    solid fill of the text box (a DrawingML shape) it is in. A shape with no geometry
    (``a:prstGeom``/``a:custGeom``, which Word always writes) has no outline to fill: LibreOffice
    paints nothing there, so its fill is not taken as the text's background."""
    for ancestor in p.iterancestors(f"{W}tc", f"{WPS}wsp"):
        if ancestor.tag == f"{W}tc":
            return _fill(ancestor.find(f"{W}tcPr"))
        shape = ancestor.find(f"{WPS}spPr")
        if shape is None or (
            shape.find(f"{A}prstGeom") is None and shape.find(f"{A}custGeom") is None
        ):
            return None
        color = shape.find(f"{A}solidFill/{A}srgbClr")
        return str(color.get("val")) if color is not None and color.get("val") else None
    return None


def _fill(element: Any) -> str | None:
    """The fill colour of a ``w:shd`` under ``element``'s properties, if any."""
    shading = element.find(f"{W}shd") if element is not None else None
    fill = shading.get(f"{W}fill") if shading is not None else None
    return None if not fill or fill == "auto" else str(fill)


class _Reader:
    def __init__(
        self, styles: _Styles, page: str | None, builder: TextBuilder, theme: _Theme | None = None
    ) -> None:
        self.styles = styles
        self.page = page
        self.theme = theme
        self.shade_theme: str | None = None  # the paragraph's own shading's theme fill
        self.out = builder
        self.fields: list[str] = []  # per open field: "instruction" until its separator
        self.paragraph: dict[str, Any] = {}
        self.shade: str | None = None

    def paragraph_start(self, p: Any, label: str) -> None:
        ppr = p.find(f"{W}pPr")
        style_id = None
        self.shade = _fill(ppr)
        shading = ppr.find(f"{W}shd") if ppr is not None else None
        self.shade_theme = (
            self.theme.colour(_theme_ref(shading, "themeFill", "themeFillTint", "themeFillShade"))
            if self.theme is not None and shading is not None and self.shade is not None
            else None
        )
        if ppr is not None:
            style = ppr.find(f"{W}pStyle")
            style_id = style.get(f"{W}val") if style is not None else None
        style_id = style_id or self.styles.default_paragraph
        if self.shade is None:
            self.shade = self.styles.shading(style_id)
        if self.shade is None:  # else its table cell's shading, or its text box's fill
            self.shade = _container_fill(p)
        self.paragraph = {**self.styles.defaults, **self.styles.props(style_id)}
        level = self.styles.heading(style_id)
        self.out.start(label, "#" * level + " " if level else "")

    def walk(self, element: Any, why: str | None) -> None:
        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if not tag.startswith(W):
                continue
            local = tag[len(W) :]
            if local == "r":
                self.run(child, why)
            elif local in ("del", "moveFrom"):
                self.walk(child, why or _DELETED)
            elif local in _WALKED:
                self.walk(child, why)
            elif local == "sdt":
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self.walk(content, why)

    def hidden(self, run: Any) -> str | None:
        rpr = run.find(f"{W}rPr")
        props = dict(self.paragraph)
        if rpr is not None:
            style = rpr.find(f"{W}rStyle")
            if style is not None:
                props.update(self.styles.props(style.get(f"{W}val")))
        props.update(_properties(rpr))
        if props.get("vanish"):
            return "hidden text (w:vanish), which Word does not show"
        size = props.get("size")
        if isinstance(size, int) and size / 2 < MIN_POINTS:
            return f"text {size / 2:g} pt high, too small to read"
        scale = props.get("scale")
        if isinstance(scale, int) and scale < MIN_SCALE:
            return f"text squeezed to {scale}% of its width (w:w), too narrow to read"
        background = props.get("background") or self.shade or self.page
        colours = [props.get("color")]
        backgrounds = [background]
        if self.theme is not None:  # Word shows the theme's colour; judged both ways
            colours.append(self.theme.colour(props.get("theme_color")))
            if props.get("background"):
                backgrounds.append(self.theme.colour(props.get("theme_background")))
            elif self.shade is not None:
                backgrounds.append(self.shade_theme)
        for colour in colours:
            for behind in backgrounds[:1] + [b for b in backgrounds[1:] if b]:
                why = faint(colour, behind) if colour else None
                if why:
                    return f"{why}, unreadable"
        return None

    def run(self, run: Any, why: str | None) -> None:
        hidden = why or self.hidden(run)
        for child in run:
            tag = child.tag if isinstance(child.tag, str) else ""
            local = tag[len(W) :] if tag.startswith(W) else ""
            if local == "t":
                instruction = self.fields and self.fields[-1] == "instruction"
                self.out.add(child.text or "", hidden or (_INSTRUCTION if instruction else None))
            elif local == "delText":
                self.out.add(child.text or "", hidden or _DELETED)
            elif local in ("instrText", "delInstrText"):
                self.out.add(child.text or "", hidden or _INSTRUCTION)
            elif local == "fldChar":
                kind = child.get(f"{W}fldCharType")
                if kind == "begin":
                    self.fields.append("instruction")
                elif kind == "separate" and self.fields:
                    self.fields[-1] = "result"
                elif kind == "end" and self.fields:
                    self.fields.pop()
            elif local == "tab":
                self.out.add("\t", hidden)
            elif local in ("br", "cr"):
                self.out.add("\n", hidden)
            elif local == "noBreakHyphen":
                self.out.add("-", hidden)


def _part_root(document: Any, suffix: str) -> Any:
    """The parsed XML of the document part related by a relationship type ending in ``suffix``."""
    etree = require("lxml.etree", "Word documents")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    for rel in document.part.rels.values():
        if rel.is_external or not str(rel.reltype).endswith(suffix):
            continue
        return etree.fromstring(rel.target_part.blob, parser)
    return None


def _page_colour(document: Any) -> str | None:
    """The page colour Word shows: ``w:background`` counts only when the settings say to display
    it (``w:displayBackgroundShape``, which Word writes with every page colour); without that
    Word, like LibreOffice, shows the page white, so white text on it is unseen."""
    background = document.element.find(f"{W}background")
    if background is None:
        return None
    try:
        settings = document.settings.element
    except Exception:  # a package without a settings part: Word's defaults, no background shown
        return None
    if not _on(settings.find(f"{W}displayBackgroundShape")):
        return None
    colour = background.get(f"{W}color")
    return str(colour) if colour else None


def extract_docx(data: bytes) -> tuple[str, dict[str, Any], list[Flag]]:
    """The text, ``units`` map and hidden-text flags of a ``.docx`` document."""
    open_zip(data, "Word document")
    docx = require("docx", "Word documents")
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many kinds for a damaged package
        raise SourceError(
            f"The Word document could not be read ({type(exc).__name__}: {exc}). Open it in "
            f"Word or LibreOffice, save it again as .docx and add that."
        ) from exc
    root = document.element
    page = _page_colour(document)
    styles = _Styles(document.styles.element)
    out = TextBuilder("paragraph")
    reader = _Reader(styles, page, out, _Theme(document))
    number = 0
    for p in root.body.iter(f"{W}p"):
        if any(a.tag == MC_FALLBACK for a in p.iterancestors()):
            continue  # the same drawing's text as the mc:Choice before it
        number += 1
        reader.paragraph_start(p, f"paragraph {number}")
        reader.walk(p, None)
    for suffix, name in (("/footnotes", "footnote"), ("/endnotes", "endnote")):
        notes = _part_root(document, suffix)
        for note in notes.iter(f"{W}{name}") if notes is not None else ():
            if note.get(f"{W}type") in ("separator", "continuationSeparator"):
                continue
            for p in note.iter(f"{W}p"):
                reader.paragraph_start(p, f"{name} {note.get(f'{W}id')}")
                reader.walk(p, None)
    comments = _part_root(document, "/comments")
    for comment in comments.iter(f"{W}comment") if comments is not None else ():
        for p in comment.iter(f"{W}p"):
            reader.paragraph_start(p, f"comment {comment.get(f'{W}id')}")
            reader.walk(p, _COMMENT)
    text = out.text()
    return text, out.text_map("docx", "Word documents"), out.flags


__all__ = ["extract_docx"]
