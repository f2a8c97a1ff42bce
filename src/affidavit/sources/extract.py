"""From a source's original bytes to the text quotes are found in, with a map back to the original.

Supported formats and what extraction keeps:

    text/markdown, text/plain, text/x-rst  the decoded text, exactly (markup and \\r\\n stay)
    text/html        visible text; script/style/template dropped; block elements break lines;
                     hidden text kept but flagged; comments flagged
    application/pdf  each page's text (pypdf), pages joined by "\\n\\f\\n"

The ``text_map`` says how an offset into the text maps back to the original:
``{"kind": "text", "encoding": ...}`` (line numbers come from the text itself),
``{"kind": "html", "encoding": ..., "segments": [[text_offset, original_line], ...]}`` or
``{"kind": "pdf", "pages": [[text_offset, page_number], ...]}``. Nothing is ever truncated.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
import warnings
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Any

from ..errors import SourceError
from .sanitizer import Flag, merge_flags, scan

MARKDOWN = "text/markdown"
PLAIN = "text/plain"
RST = "text/x-rst"
HTML = "text/html"
PDF = "application/pdf"

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
}
"""File name extensions Affidavit reads, and the media type each one means."""

MEDIA_EXTENSIONS: dict[str, str] = {
    MARKDOWN: "md",
    PLAIN: "txt",
    RST: "rst",
    HTML: "html",
    PDF: "pdf",
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
    "application/pdf": PDF,
    "application/x-pdf": PDF,
}
SUPPORTED_HELP = ".md, .markdown, .txt, .rst, .html, .htm and .pdf"
PAGE_SEPARATOR = "\n\f\n"
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


def line_number(text: str, offset: int) -> int:
    """The 1-based line of ``text`` that holds character ``offset``."""
    return text.count("\n", 0, max(0, offset)) + 1


def location(text: str, text_map: dict[str, Any], offset: int) -> str:
    """Where ``offset`` of a source's text sits in its original: "line 12", "line 40 of the HTML"
    or "page 3". For many offsets of one text, use :func:`locator`."""
    if text_map.get("kind") in ("html", "pdf"):
        return locator(text, text_map)(offset)
    return f"line {line_number(text, offset)}"


def locator(text: str, text_map: dict[str, Any]) -> Callable[[int], str]:
    """A function giving :func:`location` for offsets of ``text``, fast for many offsets (the
    line starts are found once)."""
    kind = text_map.get("kind")
    if kind in ("html", "pdf"):
        marks = text_map.get("segments" if kind == "html" else "pages") or []
        starts = [int(mark[0]) for mark in marks]
        template = "line {} of the HTML" if kind == "html" else "page {}"

        def mapped(offset: int) -> str:
            index = bisect_right(starts, offset) - 1
            return template.format(marks[index][1]) if index >= 0 else "line 1"

        return mapped
    newlines = [match.start() for match in re.finditer("\n", text)]
    return lambda offset: f"line {bisect_right(newlines, offset - 1) + 1}"


def extract(data: bytes, media_type: str, charset: str | None = None) -> Extracted:
    """Extract the text of ``data`` (a ``media_type`` document), with its map and every flag.

    ``charset`` is the one a web server declared, if any. Raises :class:`SourceError` when the bytes
    can't be read as that format or hold no text at all.
    """
    own: list[Flag] = []
    text_map: dict[str, Any]
    if media_type == PDF:
        text, pages = _extract_pdf(data)
        text_map = {"kind": "pdf", "pages": pages}
    elif media_type == HTML:
        text, text_map, own = _extract_html(data, charset)
    elif media_type in (MARKDOWN, PLAIN, RST):
        text, encoding = _decode(data, charset)
        text_map = {"kind": "text", "encoding": encoding}
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
    return Extracted(text, text_map, merge_flags([*own, *scan(text)]))


def _valid_unicode(text: str) -> str:
    """Replace lone surrogates (some PDF fonts map glyphs to them) so the text encodes as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _extract_pdf(data: bytes) -> tuple[str, list[list[int]]]:
    from pypdf import PdfReader

    logger = logging.getLogger("pypdf")
    level = logger.level
    try:
        with warnings.catch_warnings():
            # pypdf warns and logs about many harmless quirks of real PDFs; errors still raise.
            warnings.simplefilter("ignore")
            logger.setLevel(logging.CRITICAL)
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise SourceError(
                    "The PDF is encrypted with a password. Decrypt it first "
                    "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) and add the result."
                )
            texts = [_valid_unicode(page.extract_text() or "") for page in reader.pages]
    except SourceError:
        raise
    except Exception as exc:  # pypdf raises many kinds of errors on damaged files
        raise SourceError(
            f"Not a readable PDF ({type(exc).__name__}: {exc}). Check that the file is complete; "
            f"re-export or repair it (e.g. `qpdf in.pdf out.pdf`) and add it again."
        ) from exc
    finally:
        logger.setLevel(level)
    if not any(text.strip() for text in texts):
        raise SourceError(
            f"The PDF's {len(texts)} page(s) hold no extractable text: it is probably scanned "
            f"images. Affidavit does no OCR: run it yourself (e.g. `ocrmypdf in.pdf out.pdf`) and "
            f"add the result."
        )
    pages: list[list[int]] = []
    offset = 0
    for number, text in enumerate(texts, start=1):
        pages.append([offset, number])
        offset += len(text) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(texts), pages


# --- HTML ----------------------------------------------------------------------------------------

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param"}
    | {"source", "track", "wbr"}
)
_DROP = frozenset({"script", "style", "template"})
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
_HIDDEN_STYLES = (
    (re.compile(r"(?<![-\w])display\s*:\s*none"), "display:none"),
    (re.compile(r"(?<![-\w])visibility\s*:\s*(?:hidden|collapse)"), "visibility:hidden"),
    (
        re.compile(r"(?<![-\w])font-size\s*:\s*(?:0+\.?0*|\.0+)(?:px|pt|em|rem|%)?\s*(?:;|!|$)"),
        "font-size:0",
    ),
    (re.compile(r"(?<![-\w])opacity\s*:\s*(?:0+\.?0*|\.0+)\s*(?:;|!|$)"), "opacity:0"),
    (re.compile(r"(?<![-\w])color\s*:\s*transparent"), "color:transparent"),
    (re.compile(r"(?<![-\w])(?:left|top|text-indent)\s*:\s*-\d{3,}"), "positioned off-screen"),
)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I)
_SPACES = re.compile(r"[ \t\n\r\f]+")


def _hidden_reason(tag: str, attrs: list[tuple[str, str | None]]) -> str | None:
    reasons = []
    for key, value in attrs:
        if key == "hidden":
            reasons.append("the hidden attribute")
        elif key == "aria-hidden" and (value or "").strip().lower() == "true":
            reasons.append('aria-hidden="true"')
        elif key == "style" and value:
            style = value.lower()
            reasons += [label for pattern, label in _HIDDEN_STYLES if pattern.search(style)]
    return f"<{tag}> with {', '.join(reasons)}" if reasons else None


@dataclass(frozen=True)
class _Open:
    tag: str
    hidden: str | None  # why this element or an ancestor hides its text, and where
    dropped: bool
    pre: bool


class _HtmlText(HTMLParser):
    """Collects the visible text of an HTML document, its line map, hidden spans and comments."""

    def __init__(self) -> None:
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
        self.hidden_end = -1
        self.hidden_by: str | None = None

    @property
    def state(self) -> _Open:
        return self.stack[-1] if self.stack else _Open("", None, False, False)

    def _break(self, tag: str) -> None:
        if tag in _PARAGRAPH:
            self.pending_break = 2
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
        start = self.length
        self._append(chunk)
        hidden = self.state.hidden
        if hidden is not None:
            if self.hidden_end == before and self.hidden_by == hidden:
                start = before  # the separator between two chunks of one hidden element
            self.flags.append(
                Flag("hidden_styling", start, self.length, f"text hidden by {hidden}")
            )
            self.hidden_end, self.hidden_by = self.length, hidden

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        closes = _IMPLIED_END.get(tag, set())
        if self.stack and (
            self.stack[-1].tag in closes or (tag in _CLOSES_P and self.stack[-1].tag == "p")
        ):
            self._pop_through(len(self.stack) - 1)
        self._break(tag)
        if tag in _VOID:
            return
        parent = self.state
        reason = _hidden_reason(tag, attrs)
        hidden = parent.hidden or (f"{reason} (line {line} of the HTML)" if reason else None)
        self.stack.append(
            _Open(
                tag,
                hidden,
                parent.dropped or tag in _DROP,
                parent.pre or tag in ("pre", "textarea"),
            )
        )

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            self._break(tag)
            return
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index].tag == tag:
                self._pop_through(index)
                return

    def _pop_through(self, index: int) -> None:
        while len(self.stack) > index:
            self._break(self.stack.pop().tag)

    def handle_data(self, data: str) -> None:
        state = self.state
        if state.dropped:
            return
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
                f"HTML comment at line {line} of the HTML: {data.strip()[:200]!r}",
            )
        )

    def text(self) -> str:
        body = "".join(self.parts)
        return body + "\n" if body and not body.endswith("\n") else body


def _html_encoding(data: bytes, declared: str | None) -> str | None:
    if declared:
        return declared
    match = _META_CHARSET.search(data[:4096])
    return match.group(1).decode("ascii", "replace") if match else None


def _extract_html(data: bytes, charset: str | None) -> tuple[str, dict[str, Any], list[Flag]]:
    source, encoding = _decode(data, _html_encoding(data, charset))
    parser = _HtmlText()
    try:
        parser.feed(source)
        parser.close()
    except (AssertionError, ValueError) as exc:  # html.parser gives up on a few broken inputs
        raise SourceError(
            f"The HTML could not be parsed ({exc}). Save the page as text or markdown and add that."
        ) from exc
    text = parser.text()
    return text, {"kind": "html", "encoding": encoding, "segments": parser.segments}, parser.flags


__all__ = [
    "EXTENSIONS",
    "HTML",
    "MARKDOWN",
    "MEDIA_EXTENSIONS",
    "PAGE_SEPARATOR",
    "PDF",
    "PLAIN",
    "RST",
    "SUPPORTED_HELP",
    "Extracted",
    "charset_of",
    "detect_media_type",
    "extract",
    "line_number",
    "location",
    "locator",
]
