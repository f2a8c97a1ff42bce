"""OpenDocument text ``.odt``: the body's paragraphs and headings in order (lists, tables, text
boxes included), then footnotes, then annotations and tracked deletions, with what a reader's
office suite does not show flagged hidden (W12).

Opened by ``odfpy`` (the ``[formats]`` extra) after :func:`~.office.open_zip` has checked the
package. Flagged hidden:

- text whose resolved style (``style:parent-style-name`` chains, paragraph style then span
  style) has ``text:display="none"``, a colour that barely differs from its background, or a
  size below 4 points. A document with no master page (``office:master-styles``, which every
  editor writes) is judged twice: LibreOffice then ignores a paragraph style's parent, so text
  hidden in either reading is flagged;
- hidden sections (``text:section`` with ``text:display="none"`` or a condition), paragraphs
  with a ``text:hidden-paragraph`` field and ``text:hidden-text`` fields that are hidden;
- annotations (``office:annotation``, comments in the margin) and the deleted text of tracked
  changes (``text:tracked-changes``), kept as units at the end.

Whitespace is collapsed as ODF says (``text:s`` and ``text:tab`` give spaces and tabs). Each
paragraph is a unit of the text map ("paragraph 4", "footnote 1", "annotation 2").
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from ..errors import SourceError
from .office import MIN_POINTS, TextBuilder, faint, open_zip, require
from .sanitizer import Flag

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_SPACES = re.compile(r"[ \t\r\n]+")
_LENGTH = re.compile(r"^\s*([0-9.]+)\s*(pt|cm|mm|in|pc|px|%)?\s*$")
_POINTS = {"pt": 1.0, "cm": 72 / 2.54, "mm": 72 / 25.4, "in": 72.0, "pc": 12.0, "px": 0.75}
_ANNOTATION = "an annotation (a comment in the margin), not the document's text"
_DELETION = "a tracked deletion, not in the document's text"
_NOT_SHOWN = 'hidden text (text:display="none"), which the office suite does not show'
_PARENTLESS = (
    " as LibreOffice shows it (the document has no master page, and LibreOffice then ignores "
    "the paragraph style's parent, style:parent-style-name)"
)


def _qname(node: Any) -> tuple[str, str]:
    qname = getattr(node, "qname", None)
    return (str(qname[0]), str(qname[1])) if qname else ("", "")


def _attr(node: Any, ns: str, name: str) -> str | None:
    value = getattr(node, "attributes", {}).get((ns, name))
    return None if value is None else str(value)


def _text_of(node: Any) -> str:
    return str(getattr(node, "data", ""))


class _Styles:
    def __init__(self, document: Any) -> None:
        self.styles: dict[tuple[str, str], Any] = {}
        self.defaults: dict[str, Any] = {}
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}
        masters = getattr(getattr(document, "masterstyles", None), "childNodes", [])
        self.parentless_paragraphs = not any(
            _qname(node) == (STYLE, "master-page") for node in masters
        )
        """True when LibreOffice lays the paragraphs out ignoring their styles' parents (it does
        so for a document without a master page, measured with LibreOffice 7.4)."""
        for container in (document.styles, document.automaticstyles):
            for node in getattr(container, "childNodes", []):
                qname = _qname(node)
                if qname == (STYLE, "style"):
                    name, family = _attr(node, STYLE, "name"), _attr(node, STYLE, "family")
                    if name:
                        self.styles[(family or "", name)] = node
                elif qname == (STYLE, "default-style") and (
                    _attr(node, STYLE, "family") == "paragraph"
                ):
                    self.defaults = _own(node)

    def own(self, family: str, name: str | None) -> dict[str, Any]:
        """What the style named sets itself, its parents left out."""
        node = self.styles.get((family, name)) if name else None
        return _own(node) if node is not None else {}

    def props(self, family: str, name: str | None) -> dict[str, Any]:
        if not name:
            return {}
        key = (family, name)
        if key in self._cache:
            return self._cache[key]
        chain: list[Any] = []
        current: str | None = name
        while current and (family, current) in self.styles and len(chain) < 32:
            node = self.styles[(family, current)]
            if node in chain:
                break
            chain.append(node)
            current = _attr(node, STYLE, "parent-style-name")
        merged: dict[str, Any] = {}
        for node in reversed(chain):
            merged = _merge(merged, _own(node))
        self._cache[key] = merged
        return merged


def _own(style: Any) -> dict[str, Any]:
    """The visibility-related properties a style sets itself."""
    found: dict[str, Any] = {}
    for child in getattr(style, "childNodes", []):
        qname = _qname(child)
        if qname == (STYLE, "text-properties"):
            display = _attr(child, TEXT, "display")
            if display is not None:
                found["display"] = display
            for key, name in (("color", "color"), ("size", "font-size")):
                value = _attr(child, FO, name)
                if value is not None:
                    found[key] = value
            background = _attr(child, FO, "background-color")
            if background and background != "transparent":
                found["background"] = background
        elif qname == (STYLE, "paragraph-properties"):
            background = _attr(child, FO, "background-color")
            if background and background != "transparent":
                found["paragraph_background"] = background
        elif qname == (STYLE, "graphic-properties"):  # a frame's or shape's fill
            fill = _attr(child, DRAW, "fill-color")
            if fill and _attr(child, DRAW, "fill") in ("solid", None):
                found["frame_fill"] = fill
            background = _attr(child, FO, "background-color")
            if background and background != "transparent":
                found["frame_fill"] = background
    return found


def _merge(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """``own`` over ``base``; a percentage size scales the size it inherits."""
    merged = {**base, **own}
    size = own.get("size")
    if isinstance(size, str) and size.strip().endswith("%"):
        parent = _points(base.get("size")) or 12.0
        match = _LENGTH.match(size)
        if match:
            merged["size"] = f"{parent * float(match.group(1)) / 100}pt"
    return merged


def _points(value: Any) -> float | None:
    match = _LENGTH.match(str(value or ""))
    if not match or match.group(2) == "%":
        return None
    try:
        return float(match.group(1)) * _POINTS.get(match.group(2) or "pt", 1.0)
    except ValueError:
        return None


def _hidden(props: dict[str, Any]) -> str | None:
    if props.get("display") in ("none", "condition"):
        return _NOT_SHOWN
    points = _points(props.get("size"))
    if points is not None and points < MIN_POINTS:
        return f"text {points:g} pt high, too small to read"
    background = (
        props.get("background") or props.get("paragraph_background") or props.get("frame_fill")
    )
    why = faint(props.get("color"), background)
    return f"{why}, unreadable" if why else None


class _Reader:
    def __init__(self, styles: _Styles, out: TextBuilder) -> None:
        self.styles = styles
        self.out = out
        self.number = 0
        self.notes: list[Any] = []
        self.annotations: list[Any] = []
        self.deletions: list[Any] = []
        self.later: list[Any] = []  # (paragraph, why, fill) inside a paragraph's frames

    def block(self, node: Any, why: str | None) -> None:
        """A container (the body, a section, a list, a table...): its paragraphs in order."""
        qname = _qname(node)
        if qname in ((TEXT, "p"), (TEXT, "h")):
            self.paragraph(node, why)
            while self.later:
                nested, nested_why, fill = self.later.pop(0)
                self.paragraph(nested, nested_why, fill=fill)
            return
        if qname == (TEXT, "tracked-changes"):
            self.deletions.append(node)
            return
        if qname == (OFFICE, "annotation"):
            self.annotations.append(node)
            return
        if qname == (TEXT, "section") and _attr(node, TEXT, "display") in ("none", "condition"):
            why = why or "a hidden section (text:section display none), not shown"
        for child in getattr(node, "childNodes", []):
            if getattr(child, "qname", None) is not None:
                self.block(child, why)

    def paragraph(
        self, node: Any, why: str | None, label: str = "", fill: str | None = None
    ) -> None:
        self.number += 1
        style = _attr(node, TEXT, "style-name")
        base = {**self.styles.defaults, **({"frame_fill": fill} if fill else {})}
        family_props = {**base, **self.styles.props("paragraph", style)}
        parentless = (
            {**base, **self.styles.own("paragraph", style)}
            if self.styles.parentless_paragraphs
            else None
        )
        if any(
            _qname(child) == (TEXT, "hidden-paragraph")
            and _attr(child, TEXT, "is-hidden") == "true"
            for child in getattr(node, "childNodes", [])
        ):
            why = why or "a paragraph hidden by a text:hidden-paragraph field"
        level = 0
        if _qname(node) == (TEXT, "h"):
            try:
                level = min(6, max(1, int(_attr(node, TEXT, "outline-level") or "1")))
            except ValueError:
                level = 1
        self.out.start(label or f"paragraph {self.number}", "#" * level + " " if level else "")
        self.inline(node, why, family_props, parentless)

    def inline(
        self,
        node: Any,
        why: str | None,
        props: dict[str, Any],
        parentless: dict[str, Any] | None = None,
    ) -> None:
        """``parentless``: the same properties with the paragraph style's parents left out, when
        LibreOffice reads them so; text hidden in either reading is flagged."""
        hidden = why or _hidden(props)
        if hidden is None and parentless is not None:
            other = _hidden(parentless)
            hidden = other + _PARENTLESS if other else None
        for child in getattr(node, "childNodes", []):
            qname = getattr(child, "qname", None)
            if qname is None:
                data = _SPACES.sub(" ", _text_of(child))
                data = data.lstrip(" ") if self.out.at_start else data
                self.out.add(data, hidden)
                continue
            if qname == (TEXT, "span"):
                own = self.styles.props("text", _attr(child, TEXT, "style-name"))
                self.inline(
                    child,
                    why,
                    _merge(props, own),
                    _merge(parentless, own) if parentless is not None else None,
                )
            elif qname == (TEXT, "s"):
                try:
                    count = max(1, min(1000, int(_attr(child, TEXT, "c") or "1")))
                except ValueError:
                    count = 1
                self.out.add(" " * count, hidden)
            elif qname == (TEXT, "tab"):
                self.out.add("\t", hidden)
            elif qname == (TEXT, "line-break"):
                self.out.add("\n", hidden)
            elif qname == (TEXT, "note"):
                self.notes.append(child)
            elif qname == (OFFICE, "annotation"):
                self.annotations.append(child)
            elif qname == (OFFICE, "annotation-end"):
                continue
            elif qname == (TEXT, "hidden-text"):
                shown = _attr(child, TEXT, "is-hidden") != "true"
                self.inline(
                    child, why or (None if shown else "a hidden text field"), props, parentless
                )
            elif qname in ((TEXT, "p"), (TEXT, "h")):
                self.later.append((child, why, None))
            elif qname[0] == TEXT or qname[0] == OFFICE:
                self.inline(child, why, props, parentless)
            else:  # frames, text boxes, shapes: their paragraphs follow this one
                frame = self.styles.props("graphic", _attr(child, DRAW, "style-name"))
                for nested in _paragraphs(child):
                    self.later.append((nested, why, frame.get("frame_fill")))


def _paragraphs(node: Any) -> list[Any]:
    found: list[Any] = []
    for child in getattr(node, "childNodes", []):
        if _qname(child) in ((TEXT, "p"), (TEXT, "h")):
            found.append(child)
        elif getattr(child, "qname", None) is not None:
            found += _paragraphs(child)
    return found


_NAMED_DTD = re.compile(rb"<!DOCTYPE[^>\[]*>", re.I)
_MANIFEST_ROOT = (
    b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
)


def _without_named_dtds(package: zipfile.ZipFile, data: bytes) -> bytes:
    """``data`` with the ``<!DOCTYPE ...>`` lines that only name a DTD taken out of its XML
    parts (OpenOffice.org 2 wrote one in every manifest; odfpy's parser, under defusedxml,
    refuses any external reference). :func:`~.office.open_zip` has made sure none declares
    an entity; the one thing that DTD gave, the manifest's namespace (a fixed attribute its
    root may leave out), is written on the root instead."""
    named = [
        info
        for info in package.infolist()
        if info.filename.endswith(".xml") and _NAMED_DTD.search(package.read(info)[:4096])
    ]
    if not named:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in package.infolist():
            body = package.read(info)
            if info in named:
                body = _NAMED_DTD.sub(b"", body, count=1)
                if info.filename == "META-INF/manifest.xml" and b"xmlns:manifest" not in body:
                    body = body.replace(b"<manifest:manifest", _MANIFEST_ROOT, 1)
            copy.writestr(info, body)
    return out.getvalue()


_KINDS = {
    "spreadsheet": "a spreadsheet",
    "presentation": "a presentation",
    "graphics": "a drawing",
    "formula": "a formula",
    "chart": "a chart",
    "database": "a database",
    "image": "an image",
}


def _kind(package: zipfile.ZipFile) -> tuple[str, str]:
    """What an OpenDocument package with no text body is, read from its ``mimetype`` member, in
    words ("a spreadsheet", "a text template that holds only styles"), and what to do about it."""
    export = "Export its text as .odt or .pdf and add that."
    try:
        raw = package.read("mimetype").decode("ascii", "replace").strip()
    except KeyError:
        return "of no type it states (no mimetype member)", export
    mimetype = "".join(c for c in raw[:80] if c.isprintable())  # the file's words, shown
    kind = mimetype.rsplit(".", 1)[-1]
    template = kind.endswith("-template")
    kind = kind.removesuffix("-template")
    if kind in ("text", "text-master", "text-web"):
        if template:
            return "a text template that holds only styles", "There is no text in it to add."
        return "text with no body", export
    words = _KINDS.get(kind, f"'{mimetype}'")
    return (f"{words} template" if template else words), export


def extract_odt(data: bytes) -> tuple[str, dict[str, Any], list[Flag]]:
    """The text, ``units`` map and hidden-text flags of an ``.odt`` document."""
    package = open_zip(data, "OpenDocument text")
    opendocument = require("odf.opendocument", "OpenDocument text")
    data = _without_named_dtds(package, data)
    try:
        document = opendocument.load(io.BytesIO(data))
    except Exception as exc:  # odfpy raises many kinds for a damaged package
        raise SourceError(
            f"The OpenDocument text could not be read ({type(exc).__name__}: {exc}). Open it in "
            f"LibreOffice, save it again as .odt and add that."
        ) from exc
    body = getattr(document, "text", None)
    if body is None:
        raise SourceError(
            "The OpenDocument file holds no text document: it is {}. {}".format(*_kind(package))
        )
    out = TextBuilder("paragraph")
    reader = _Reader(_Styles(document), out)
    reader.block(body, None)
    for number, note in enumerate(reader.notes, 1):
        for child in getattr(note, "childNodes", []):
            if _qname(child) == (TEXT, "note-body"):
                for p in _paragraphs(child):
                    reader.paragraph(p, None, f"footnote {number}")
    for number, annotation in enumerate(reader.annotations, 1):
        for p in _paragraphs(annotation):
            reader.paragraph(p, _ANNOTATION, f"annotation {number}")
    for tracked in reader.deletions:
        for region in getattr(tracked, "childNodes", []):
            for change in getattr(region, "childNodes", []):
                if _qname(change) == (TEXT, "deletion"):
                    for p in _paragraphs(change):
                        reader.paragraph(p, _DELETION, "a tracked deletion")
    return out.text(), out.text_map("odt", "OpenDocument text"), out.flags


__all__ = ["extract_odt"]
