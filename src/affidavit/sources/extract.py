"""From a source's original bytes to the text quotes are found in, with a map back to the original.

Supported formats and what extraction keeps:

    text/markdown, text/plain, text/x-rst  the decoded text, exactly (markup and \\r\\n stay)
    text/html        visible text; script/style/template dropped; block elements break lines;
                     hidden text kept but flagged; comments flagged
    application/pdf  each page's text (pypdf), pages joined by "\\n\\f\\n"
    .docx .odt .pptx paragraphs, slides and notes (:mod:`.word`, :mod:`.opendocument`,
                     :mod:`.slides`; the ``[formats]`` extra), hidden text kept but flagged
    .epub            each chapter through the HTML path, separately (:mod:`.epub`)
    text/x-obsidian-markdown  a note of an Obsidian vault as Obsidian shows it (:mod:`.obsidian`)

The ``text_map`` says how an offset into the text maps back to the original:
``{"kind": "text", "encoding": ...}`` (line numbers come from the text itself),
``{"kind": "html", "encoding": ..., "segments": [[text_offset, original_line], ...]}`` or
``{"kind": "pdf", "pages": [[text_offset, page_number], ...]}`` or, for the office and book
formats, ``{"kind": "units", "format": ..., "units": [[text_offset, "paragraph 3"], ...]}``.
Nothing is ever truncated.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any

from bs4 import BeautifulSoup, Tag

from ..errors import SourceError
from .css import HIDDEN, Hiding, Styler, media_applies
from .hidden_markdown import markdown_flags
from .html_tables import Grid, data_table
from .obsidian import OBSIDIAN, extract_obsidian, obsidian_vault
from .office import DOCX, EPUB, ODT, PACKAGES, PPTX
from .pdf import PAGE_SEPARATOR, extract_pdf
from .roff import extract_roff
from .rst import extract_rst
from .sanitizer import Flag, merge_flags, scan
from .visibility import RENDERED_TYPES, RULES, Sight, beyond, seen

MARKDOWN = "text/markdown"
PLAIN = "text/plain"
RST = "text/x-rst"
HTML = "text/html"
PDF = "application/pdf"
MAN = "text/troff"
_MAN_SUFFIX = re.compile(r"\.[1-9][a-z]*$")

EXTENSIONS: dict[str, str] = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mdown": MARKDOWN,
    ".txt": PLAIN,
    ".text": PLAIN,
    ".rst": RST,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
    ".odt": ODT,
    ".pptx": PPTX,
    ".epub": EPUB,
}
"""File name extensions Affidavit reads, and the media type each one means."""

MEDIA_EXTENSIONS: dict[str, str] = {
    MARKDOWN: "md",
    PLAIN: "txt",
    RST: "rst",
    MAN: "man",
    HTML: "html",
    PDF: "pdf",
    DOCX: "docx",
    ODT: "odt",
    PPTX: "pptx",
    EPUB: "epub",
    OBSIDIAN: "md",
}
"""The extension a stored original gets for each media type."""

_CONTENT_TYPES = {
    "text/markdown": MARKDOWN,
    "text/x-markdown": MARKDOWN,
    "text/plain": PLAIN,
    "text/x-rst": RST,
    "text/prs.fallenstein.rst": RST,
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "text/troff": MAN,
    "application/x-troff-man": MAN,
    "application/pdf": PDF,
    "application/x-pdf": PDF,
    DOCX: DOCX,
    ODT: ODT,
    PPTX: PPTX,
    EPUB: EPUB,
}
BINARY = frozenset({PDF, *PACKAGES})
"""Media types whose originals are binary files (stored as their bytes, never sniffed as text)."""
SUPPORTED_HELP = (
    ".md, .markdown, .txt, .rst, man pages (.1 to .9, also gzipped), .html, .htm, .docx, .odt, "
    ".pptx, .epub and .pdf"
)
_HTML_SNIFF = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)


@dataclass(frozen=True)
class Extracted:
    """The extracted text of one source, how its offsets map to the original, and its flags."""

    text: str
    text_map: dict[str, Any]
    flags: list[Flag]


def _base_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    match = re.search(r"charset\s*=\s*\"?([\w.:-]+)", content_type or "", re.I)
    return match.group(1) if match else None


def detect_media_type(name: str, data: bytes, content_type: str | None = None) -> str:
    """The media type of ``data`` named ``name`` (and served as ``content_type``, for URLs).

    PDF magic bytes win; then a server's HTML or PDF content type; then the file extension; then any
    other supported content type; a name without extension is sniffed. Anything else is refused.
    """
    if data.startswith(b"%PDF-"):
        return PDF
    served = _CONTENT_TYPES.get(_base_type(content_type))
    if served in (HTML, PDF):
        return served
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if is_man_page_name(name):
        return MAN
    if served is not None:
        return served
    if not suffix or _base_type(content_type) == "application/octet-stream":
        head = data[:8192]
        if _HTML_SNIFF.match(head):
            return HTML
        if head and b"\x00" not in head:
            try:
                head.decode("utf-8")
                return PLAIN
            except UnicodeDecodeError as exc:
                if exc.start >= len(head) - 4:  # a character cut at the sniff window's edge
                    return PLAIN
    what = f"'{suffix}' files" if suffix else "files of this kind"
    if content_type:
        what += f" served as {_base_type(content_type)}"
    raise SourceError(
        f"{name}: can't read {what}. Affidavit reads {SUPPORTED_HELP}; convert it to one of "
        f"these (e.g. with pandoc) and add the result."
    )


def file_media_type(name: str, path: Path, data: bytes) -> str:
    """The media type of the file ``name`` (at ``path``) holding ``data``: as
    :func:`detect_media_type` says, but a markdown file inside an Obsidian vault is a note."""
    media_type = detect_media_type(name, data)
    if media_type == MARKDOWN and obsidian_vault(path) is not None:
        return OBSIDIAN
    return media_type


def is_man_page_name(name: str) -> bool:
    """True for a man page's file name: ``ls.1``, ``printf.3p``, ``ls.1.gz``."""
    base = PurePosixPath(name).name.lower()
    base = base[:-3] if base.endswith(".gz") else base
    return bool(_MAN_SUFFIX.search(base)) and not base.startswith(".")


def _decode(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode text bytes: BOM, then a declared charset, then UTF-8, cp1252, latin-1."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), encoding + " (BOM)"
            except UnicodeDecodeError:
                break
    candidates = ["utf-8", "cp1252", "latin-1"]
    if declared:
        try:
            name = codecs.lookup(declared).name
        except LookupError:
            name = ""
        if name and name not in ("utf-16", "utf-32"):
            candidates.insert(0, name)
    for encoding in candidates:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


_MAPPED = {"html": "line {} of the HTML", "pdf": "page {}", "lines": "line {}", "units": "{}"}
"""Text map kinds whose offsets map through recorded marks, and how a mark is shown."""


def line_number(text: str, offset: int) -> int:
    """The 1-based line of ``text`` that holds character ``offset``."""
    return text.count("\n", 0, max(0, offset)) + 1


def location(text: str, text_map: dict[str, Any], offset: int) -> str:
    """Where ``offset`` of a source's text sits in its original: "line 12", "line 40 of the HTML"
    or "page 3". For many offsets of one text, use :func:`locator`."""
    if text_map.get("kind") in _MAPPED:
        return locator(text, text_map)(offset)
    return f"line {line_number(text, offset)}"


def locator(text: str, text_map: dict[str, Any]) -> Callable[[int], str]:
    """A function giving :func:`location` for offsets of ``text``, fast for many offsets (the
    line starts are found once)."""
    kind = text_map.get("kind")
    if kind in _MAPPED:
        key = {"pdf": "pages", "units": "units"}.get(str(kind), "segments")
        marks = text_map.get(key) or []
        starts = [int(mark[0]) for mark in marks]
        template = _MAPPED[str(kind)]

        def mapped(offset: int) -> str:
            index = bisect_right(starts, offset) - 1
            return template.format(marks[index][1]) if index >= 0 else "line 1"

        return mapped
    newlines = _newlines(text)
    return lambda offset: f"line {bisect_right(newlines, offset - 1) + 1}"


_NEWLINES: list[tuple[str, list[int]]] = []
"""The newline offsets of the last few texts located, each held with its text (compared by
identity: a store hands out the same text object for as long as it keeps it)."""
_NEWLINES_KEPT = 2


def _newlines(text: str) -> list[int]:
    """Offsets of ``text``'s newlines: found once per text object, not once per plan (a plan's
    claims cite a source whose text may be 50 MB; scanning it per plan made each chunk of a large
    source cost in proportion to the whole source)."""
    for known, offsets in list(_NEWLINES):
        if known is text:
            return offsets
    offsets = [match.start() for match in re.finditer("\n", text)]
    _NEWLINES[:] = [(text, offsets), *_NEWLINES[: _NEWLINES_KEPT - 1]]
    return offsets


def extract(
    data: bytes,
    media_type: str,
    charset: str | None = None,
    *,
    render: bool = True,
    cache: Path | None = None,
    owner: tuple[int, int] | None = None,
    office: bool = False,
) -> Extracted:
    """Extract the text of ``data`` (a ``media_type`` document), with its map and every flag.

    ``charset`` is the one a web server declared, if any. The fast rules flag hidden text first;
    with ``render`` (the default) an HTML or PDF document is then rendered and what a reader
    does not see flagged too (:func:`affidavit.sources.visibility.seen`, its answer kept in
    ``cache`` and in the text map's ``visibility``; the renderers run as ``owner`` when this
    process is root); with ``office`` too, a Word or OpenDocument text
    (``sources.render_office``). Raises :class:`SourceError` when the bytes
    can't be read as that format or hold no text at all.
    """
    own: list[Flag] = []
    text_map: dict[str, Any]
    if media_type == PDF:
        text, pages, own = extract_pdf(data)
        text_map = {"kind": "pdf", "pages": pages}
    elif media_type == HTML:
        text, text_map, own = _extract_html(data, charset)
    elif media_type == RST:
        source, encoding = _decode(data, charset)
        text, segments, own = extract_rst(source)
        text_map = {"kind": "lines", "format": "rst", "encoding": encoding, "segments": segments}
    elif media_type == MAN:
        text, segments, encoding = extract_roff(data)
        text_map = {"kind": "lines", "format": "man", "encoding": encoding, "segments": segments}
    elif media_type in (MARKDOWN, PLAIN):
        text, encoding = _decode(data, charset)
        text_map = {"kind": "text", "encoding": encoding}
        if media_type == MARKDOWN:
            own = [*markdown_flags(text), *html_in_markdown_flags(text)]
    elif media_type == OBSIDIAN:
        source, encoding = _decode(data, charset)
        text, text_map, own = extract_obsidian(source)
        text_map["encoding"] = encoding
        own += html_in_markdown_flags(text)
    elif media_type in PACKAGES:
        text, text_map, own = _extract_package(data, media_type)
    else:
        raise SourceError(
            f"Unsupported media type {media_type!r}. Affidavit reads {SUPPORTED_HELP}."
        )
    if not text.strip():
        hint = (
            " A page built by JavaScript has no text until a browser runs it: save it from a "
            "browser (as HTML or text) and add that file."
            if media_type == HTML
            else ""
        )
        raise SourceError(f"The source holds no text; there is nothing a claim could quote.{hint}")
    if media_type in (HTML, PDF) or (office and media_type in RENDERED_TYPES):
        sight = (
            seen(data, media_type, text, text_map, cache, owner, office)
            if render
            else Sight(checked=RULES, note="rendering was not asked for")
        )
        own += beyond(sight.flags, own)  # the renderer decides what the rules did not flag
        text_map["visibility"] = sight.record()
    return Extracted(text, text_map, merge_flags([*own, *scan(text)]))


def _extract_package(data: bytes, media_type: str) -> tuple[str, dict[str, Any], list[Flag]]:
    """A zip-packaged document's text, map and flags (the readers import their libraries, the
    ``[formats]`` extra, only when such a document comes)."""
    if media_type == DOCX:
        from .word import extract_docx

        return extract_docx(data)
    if media_type == ODT:
        from .opendocument import extract_odt

        return extract_odt(data)
    if media_type == PPTX:
        from .slides import extract_pptx

        return extract_pptx(data)
    from .epub import extract_epub

    return extract_epub(data)


# --- HTML ----------------------------------------------------------------------------------------

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param"}
    | {"source", "track", "wbr"}
)
_DROP = frozenset({"script", "style", "template"})
MAX_DEPTH = 512
"""Elements nested deeper than this get no node of their own; a page that does is all marked
hidden (a deeper element could hide anything, and building the tree would take quadratic time)."""

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_PARAGRAPH = _HEADINGS | {
    "address", "article", "aside", "blockquote", "details", "dl", "fieldset", "figure", "footer",
    "form", "header", "hr", "main", "nav", "ol", "p", "pre", "section", "table", "title", "ul",
}  # fmt: skip
_LINE = frozenset({
    "body", "br", "caption", "center", "dd", "dialog", "div", "dt", "figcaption", "head", "html",
    "legend", "li", "option", "summary", "tr",
})  # fmt: skip
_CELL = frozenset({"td", "th"})
_CLOSES_P = (_PARAGRAPH - {"title"}) | {"dialog", "div"}
_IMPLIED_END = {
    "p": {"p"},
    "li": {"li"},
    "dt": {"dt", "dd"},
    "dd": {"dt", "dd"},
    "tr": {"tr"},
    "td": {"td", "th"},
    "th": {"td", "th"},
    "option": {"option"},
}
_BOLD_ITEM = re.compile(
    r"\s*<p(?:\s[^>]*)?>\s*<(b|strong)(?:\s[^>]*)?>([^<]*[^\s<][^<]*)</\1\s*>\s*</p\s*>", re.I
)
"""A list item that opens with a paragraph of bold text alone (``<li><p><b>Maximum Number Of
Columns</b></p><p>...``): SQLite's manual writes its sections' headings so."""
_LIST_TAG = re.compile(r"<(/?)(ol|ul|li)\b", re.I)
_LIST_SCAN = 1 << 18
"""Characters of the source read past a list's start tag for its items (a longer list's bold
items are not taken as headings)."""


def _headed_items(source: str, content: int) -> bool:
    """Every item of the list whose content starts at ``content`` opens with a paragraph of bold
    text alone (:data:`_BOLD_ITEM`): its items are sections, each headed by that paragraph. An
    item without one would stand under the previous item's heading, so a list that mixes them
    has none."""
    depth, items = 0, 0
    for match in _LIST_TAG.finditer(source, content, min(len(source), content + _LIST_SCAN)):
        closing, tag = match.group(1), match.group(2).lower()
        if tag in ("ol", "ul"):
            depth += -1 if closing else 1
            if depth < 0:
                return items > 0
        elif not closing and depth == 0:
            if not _BOLD_ITEM.match(source, source.index(">", match.end()) + 1):
                return False
            items += 1
    return False


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I)
_SPACES = re.compile(r"[ \t\n\r\f]+")


@dataclass(frozen=True)
class _Open:
    tag: str
    node: Tag
    dropped: bool
    pre: bool


@dataclass
class _Element:
    node: Tag
    start: int  # raw offset of the element's content (just past its start tag)
    end: int  # raw offset where it was closed (its end tag, an implied end, or the end)


class _HtmlText(HTMLParser):
    """Collects the visible text of an HTML document, its line map, its tree and comments.

    The tree (Beautiful Soup tags with exactly this parser's structure) and the ``<style>`` text
    go to :class:`~affidavit.sources.css.Styler`, which says which text a browser would not show:
    :meth:`visibility_flags` flags it in the extracted text, :meth:`raw_flags` in the raw source
    (for HTML inside markdown). Hidden text is kept in the text, so offsets of visible text never
    depend on the styles.
    """

    def __init__(self, source: str, unit: str = "of the HTML") -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.last = ""
        self.newlines = 0  # how many newlines the text ends with
        self.pending_break = 0
        self.pending_space = False
        self.stack: list[_Open] = []
        self.segments: list[list[int]] = []
        self.flags: list[Flag] = []
        self.unit = unit
        self.soup = BeautifulSoup("", "html.parser")
        self.sheets: list[str] = []
        self.too_deep = 0  # the line of the first element nested past MAX_DEPTH (0: none)
        self.chunks: list[tuple[int, int, int, Tag]] = []  # separator start, start, end, element
        self.elements: dict[int, _Element] = {}
        self.markup: list[tuple[int, int, str, int]] = []  # start tags with attribute values
        self.source_length = len(source)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.event = 0
        self.heading = 0  # the open <hN>'s level, until its first text gets its "#" marks
        self.level = 1  # the level of the last <hN> written: a bold list item's heading is below it
        self.headed: set[int] = set()  # the stack indexes of open lists whose items are headed
        self.fence = 0  # 1: a fenced element opened, its fence not yet written; 2: written
        self.fence_at = -1  # the stack index of the open fenced element (<pre>, <table>...)
        self.source = source
        self.grid: Grid | None = None  # the open data table, written as pipe rows

    @property
    def state(self) -> _Open:
        return self.stack[-1] if self.stack else _Open("", self.soup, False, False)

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column if line <= len(self.line_starts) else 0

    def _break(self, tag: str) -> None:
        if self.grid is not None:  # a data table's rows are lines; breaks in a cell are spaces
            self.pending_space = self.pending_space or tag in _PARAGRAPH | _LINE | _CELL
            return
        if tag in _PARAGRAPH or tag == "li":  # a list item is a block of its own: items
            self.pending_break = 2  # without a full stop (an FAQ's list of questions) never join
        elif tag in _LINE:
            self.pending_break = max(self.pending_break, 1)
        elif tag in _CELL:
            self.pending_space = True

    def _append(self, chunk: str) -> None:
        self.parts.append(chunk)
        self.length += len(chunk)
        self.last = chunk[-1]
        stripped = len(chunk.rstrip("\n"))
        self.newlines = self.newlines + len(chunk) if stripped == 0 else len(chunk) - stripped

    def _mark(self, chunk: str, line_start: bool = False) -> None:
        """Write the convention's own ``chunk`` (a table's pipes), after any pending break."""
        if not chunk:
            return
        if line_start:
            self.pending_break = max(self.pending_break, 1)
        if self.length and self.pending_break > self.newlines:
            self._append("\n" * (self.pending_break - self.newlines))
        self.pending_break, self.pending_space = 0, False
        self._append(chunk)

    def _emit(self, chunk: str, line: int) -> None:
        if not chunk:
            return
        before = self.length
        if self.length:
            if self.pending_break > self.newlines:
                self._append("\n" * (self.pending_break - self.newlines))
            elif self.pending_space and self.last not in " \n":
                self._append(" ")
        self.pending_break, self.pending_space = 0, False
        if not self.segments or self.segments[-1][1] != line:
            self.segments.append([self.length, line])
        if self.fence == 1:
            self._append("```\n")  # the extraction convention: preformatted text is fenced
            self.fence = 2
        elif self.heading and (self.newlines or not self.length):
            self._append("#" * self.heading + " ")  # and headings are ATX lines
        self.heading = 0
        start = self.length
        self._append(chunk)
        self.chunks.append((before, start, self.length, self.state.node))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        self.event = self._offset()
        closes = _IMPLIED_END.get(tag, set())
        if self.stack and (
            self.stack[-1].tag in closes or (tag in _CLOSES_P and self.stack[-1].tag == "p")
        ):
            self._pop_through(len(self.stack) - 1)
        self._break(tag)
        values: dict[str, Any] = {}
        for key, value in attrs:
            values.setdefault(key, value or "")
        if isinstance(values.get("class"), str):
            values["class"] = str(values["class"]).split()
        parent = self.state
        if len(self.stack) >= MAX_DEPTH:  # the tree stops growing (appending deeper is O(depth))
            self.too_deep = self.too_deep or line
            node = parent.node
        else:
            node = self.soup.new_tag(tag, attrs=values, sourceline=line)
            parent.node.append(node)
        markup = self.get_starttag_text() or ""
        if any(value and any(c.isalnum() for c in value) for _, value in attrs):
            self.markup.append((self.event, self.event + len(markup), tag, line))
        if tag in _VOID:
            return
        if tag in _HEADINGS and not parent.pre:
            self.heading = self.level = int(tag[1])
        elif (
            tag == "li"
            and self.grid is None
            and self.fence_at < 0
            and not parent.dropped
            and not parent.pre
            and len(self.stack) - 1 in self.headed
            and self.stack[-1].tag in ("ol", "ul")
        ):
            self.heading = min(6, self.level + 1)  # its bold first paragraph heads the item
        elif tag == "title" and not parent.pre:
            self.heading = 1  # the document's own title, first
        elif self.grid is not None and not parent.dropped and tag in _CELL:
            self._mark(self.grid.cell(tag), line_start=not self.grid.row_open)
        elif (
            tag == "table"
            and self.fence_at < 0
            and self.grid is None
            and not parent.dropped
            and data_table(self.source, self.event + len(markup))
        ):
            self.grid = Grid(len(self.stack))
        elif self.fence_at < 0 and not parent.dropped and _fenced(tag, values):
            self.fence, self.fence_at = 1, len(self.stack)
        content = self.event + len(markup)
        self.headed.discard(len(self.stack))
        if (
            tag in ("ol", "ul")
            and self.grid is None
            and not (parent.dropped or parent.pre)
            and _headed_items(self.source, content)
        ):
            self.headed.add(len(self.stack))
        if node is not parent.node:
            self.elements[id(node)] = _Element(node, content, self.source_length)
        self.stack.append(
            _Open(
                tag,
                node,
                parent.dropped or tag in _DROP or _navigation(tag, values),
                parent.pre or tag in ("pre", "textarea"),
            )
        )

    def handle_endtag(self, tag: str) -> None:
        self.event = self._offset()
        if tag in _VOID:
            self._break(tag)
            return
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index].tag == tag:
                self._pop_through(index)
                return

    def _pop_through(self, index: int) -> None:
        while len(self.stack) > index:
            closed = self.stack.pop()
            element = self.elements.get(id(closed.node))
            if element is not None:
                element.end = max(element.start, self.event)
            if self.grid is not None and closed.tag == "tr":
                self._mark(self.grid.row_end())
            if self.grid is not None and len(self.stack) == self.grid.at:
                self._mark(self.grid.row_end())
                self.grid = None
            elif closed.tag in _HEADINGS or closed.tag == "title":
                self.heading = 0
            elif len(self.stack) == self.fence_at:
                if self.fence == 2:
                    self._append("```\n" if self.newlines else "\n```\n")
                self.fence, self.fence_at = 0, -1
            self._break(closed.tag)

    def handle_data(self, data: str) -> None:
        state = self.state
        if state.dropped:
            if state.tag == "style":
                media = state.node.get("media")  # <style media="print"> never styles a screen
                if not isinstance(media, str) or media_applies(media):
                    self.sheets.append(data)
            return
        state.node.append(data)
        if state.tag == "a" and "headerlink" in (state.node.get("class") or []):
            return  # the "¶" permalink a documentation generator puts after each heading
        first_line = self.getpos()[0]
        for number, raw in enumerate(data.split("\n")):
            line = first_line + number
            if state.pre:
                if number and self.length and not self.pending_break:
                    self._append("\n")  # a newline inside <pre> is kept; a pending break absorbs it
                self._emit(raw, line)
                continue
            if number or raw[:1] in " \t\r\f":
                self.pending_space = True
            collapsed = _SPACES.sub(" ", raw).strip(" ")
            self._emit(collapsed, line)
            if collapsed and raw[-1:] in " \t\r\f":
                self.pending_space = True

    def handle_comment(self, data: str) -> None:
        line = self.getpos()[0]
        self.flags.append(
            Flag(
                "html_comment",
                self.length,
                self.length,
                f"HTML comment at line {line} {self.unit}: {data.strip()[:200]!r}",
            )
        )

    def text(self) -> str:
        body = "".join(self.parts)
        return body + "\n" if body and not body.endswith("\n") else body

    def styler(self) -> Styler:
        def where(tag: Tag) -> str:
            return f"<{tag.name}> at line {tag.sourceline} {self.unit}"

        unchecked = (
            f"elements nested more than {MAX_DEPTH} deep (from line {self.too_deep} {self.unit}): "
            "what a browser shows of the page is not worked out, so none of it is taken as seen"
            if self.too_deep
            else None
        )
        return Styler(self.soup, self.sheets, where, unchecked=unchecked)

    def visibility_flags(self) -> list[Flag]:
        """Flags over the extracted text for what a browser would not show or shows struck."""
        styler = self.styler()
        flags: list[Flag] = []
        last: dict[str, tuple[int, Hiding]] = {}  # kind -> (index in flags, its hiding)
        for before, start, end, node in self.chunks:
            for verdict in (styler.text_hiding(node), styler.struck(node)):
                if verdict is None:
                    continue
                kind = verdict.kind
                previous = last.get(kind)
                if previous is not None and previous[1] == verdict:
                    index = previous[0]
                    if flags[index].end == before:  # the separator between chunks of one element
                        flags[index] = Flag(kind, flags[index].start, end, verdict.detail)
                        continue
                last[kind] = (len(flags), verdict)
                flags.append(Flag(kind, start, end, verdict.detail))
        return flags

    def raw_flags(self) -> list[Flag]:
        """Flags over the raw source (HTML inside markdown): the content of elements a browser
        would not show or shows struck, and start tags whose attributes hold text."""
        styler = self.styler()
        flags: list[Flag] = []
        for element in self.elements.values():
            node = element.node
            parent = node.parent if isinstance(node.parent, Tag) else None
            if node.name in _DROP and element.end > element.start:
                flags.append(
                    Flag(
                        HIDDEN,
                        element.start,
                        element.end,
                        f"the content of <{node.name}> "
                        f"at line {node.sourceline} {self.unit} (not shown)",
                    )
                )
                continue
            for verdict, above in (
                (styler.text_hiding(node), styler.text_hiding(parent)),
                (styler.struck(node), styler.struck(parent)),
            ):
                if verdict is not None and verdict != above and element.end > element.start:
                    flags.append(Flag(verdict.kind, element.start, element.end, verdict.detail))
        for start, end, tag, line in self.markup:
            flags.append(
                Flag(
                    HIDDEN,
                    start,
                    end,
                    f"the attributes of an HTML <{tag}> tag at line {line} {self.unit} "
                    f"(markup, not shown as text)",
                )
            )
        return flags


def _navigation(tag: str, attrs: dict[str, Any]) -> bool:
    """A site's navigation (``<nav>``, ``role="navigation"``): links around the document, not
    the document; left out of the text like scripts."""
    return tag == "nav" or str(attrs.get("role", "")).lower() == "navigation"


def _fenced(tag: str, attrs: dict[str, Any]) -> bool:
    """Elements the extraction convention puts inside ``` fences: preformatted text, tables
    that hold no data grid (:mod:`.html_tables`), and the signatures documentation generators
    put in ``<dt class="sig">``."""
    return tag in ("pre", "table") or (tag == "dt" and "sig" in (attrs.get("class") or []))


def _html_encoding(data: bytes, declared: str | None) -> str | None:
    if declared:
        return declared
    match = _META_CHARSET.search(data[:4096])
    return match.group(1).decode("ascii", "replace") if match else None


def _extract_html(data: bytes, charset: str | None) -> tuple[str, dict[str, Any], list[Flag]]:
    source, encoding = _decode(data, _html_encoding(data, charset))
    parser = _parse_html(source)
    text = parser.text()
    flags = [*parser.flags, *parser.visibility_flags()]
    return text, {"kind": "html", "encoding": encoding, "segments": parser.segments}, flags


def _parse_html(source: str, unit: str = "of the HTML") -> _HtmlText:
    parser = _HtmlText(source, unit)
    try:
        parser.feed(source)
        parser.close()
    except (AssertionError, ValueError) as exc:  # html.parser gives up on a few broken inputs
        raise SourceError(
            f"The HTML could not be parsed ({exc}). Save the page as text or markdown and add that."
        ) from exc
    return parser


def html_in_markdown_flags(text: str) -> list[Flag]:
    """Flags over a markdown text for its inline HTML: hidden or struck elements (with any
    ``<style>`` in it applied) and tags whose attributes hold text."""
    if "<" not in text:
        return []
    try:
        parser = _parse_html(text, "of the markdown")
    except SourceError:
        return []
    return parser.raw_flags()


__all__ = [
    "BINARY",
    "DOCX",
    "EPUB",
    "EXTENSIONS",
    "HTML",
    "MAN",
    "MARKDOWN",
    "MEDIA_EXTENSIONS",
    "OBSIDIAN",
    "ODT",
    "PAGE_SEPARATOR",
    "PDF",
    "PLAIN",
    "PPTX",
    "RST",
    "SUPPORTED_HELP",
    "Extracted",
    "charset_of",
    "detect_media_type",
    "extract",
    "file_media_type",
    "is_man_page_name",
    "line_number",
    "location",
    "locator",
]
