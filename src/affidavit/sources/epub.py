"""EPUB books: each chapter of the spine, in reading order, through the HTML path.

Opened by ``ebooklib`` (the ``[formats]`` extra) after :func:`~.office.open_zip` has checked the
package. Each chapter's XHTML is read by the same parser as an HTML source
(:func:`affidavit.sources.extract._parse_html`), with the stylesheets the chapter links and its
own ``<style>`` applied, **separately**: one chapter's CSS can't hide or un-hide another's.
Hidden and struck text, comments and navigation are flagged or dropped as for HTML (W12, by the
fast rules: chapters are not rendered by a browser); a chapter's ``<title>``, which a reading
system shows in no page, is flagged too. Units of the text map say the chapter,
its file and the line of its XHTML ("chapter 3 (text/ch03.xhtml), line 41").
"""

from __future__ import annotations

import io
import posixpath
import warnings
from typing import Any

from ..errors import SourceError
from .css import HIDDEN
from .extract import _decode, _html_encoding, _parse_html
from .office import TextBuilder, open_zip, require
from .sanitizer import Flag

_MAX_SHEET = 1_000_000


def _sheets(book: Any, chapter: Any, soup: Any) -> list[str]:
    """The text of the stylesheets ``chapter`` links (in document order)."""
    base = posixpath.dirname(chapter.get_name())
    found: list[str] = []
    for link in soup.find_all("link"):
        rel = link.get("rel") or ""
        rels = rel if isinstance(rel, list) else str(rel).split()
        href = str(link.get("href") or "").split("#", 1)[0]
        media = str(link.get("media") or "")
        if "stylesheet" not in [r.lower() for r in rels] or not href or "print" in media.lower():
            continue
        item = book.get_item_with_href(posixpath.normpath(posixpath.join(base, href)))
        if item is None:
            continue
        found.append(_decode(bytes(item.get_content())[:_MAX_SHEET])[0])
    return found


def extract_epub(data: bytes) -> tuple[str, dict[str, Any], list[Flag]]:
    """The text, ``units`` map and flags of an ``.epub`` book."""
    open_zip(data, "EPUB book", every_member=True)
    epub = require("ebooklib.epub", "EPUB books")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ebooklib's notices about its future defaults
            book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    except Exception as exc:  # ebooklib raises many kinds for a damaged book
        raise SourceError(
            f"The EPUB book could not be read ({type(exc).__name__}: {exc}). Open it in an "
            f"e-book editor (e.g. Calibre), save it again and add that."
        ) from exc
    out = TextBuilder("chapter")
    units: list[list[Any]] = []
    flags: list[Flag] = []
    number = 0
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, tuple | list) else entry
        item = book.get_item_with_id(idref)
        if item is None:
            continue
        name = item.get_name()
        raw = item.content if isinstance(item.content, bytes) else item.get_content()
        source, _ = _decode(raw, _html_encoding(raw, None))
        parser = _parse_html(source, f"of {name}")
        parser.sheets[:0] = _sheets(book, item, parser.soup)
        text = parser.text()
        if not text.strip():
            continue
        number += 1
        if out.length:
            out.append("\n")
        start = out.length
        out.append(text)
        units += [
            [start + at, f"chapter {number} ({name}), line {line}"] for at, line in parser.segments
        ]
        titles = [
            Flag(HIDDEN, at, end, f"the <title> of {name} (metadata: a reader shows the chapter)")
            for _, at, end, node in parser.chunks
            if node.name == "title"
        ]
        for flag in [*parser.flags, *parser.visibility_flags(), *titles]:
            flags.append(Flag(flag.kind, start + flag.start, start + flag.end, flag.detail))
    out.units = units
    text_map = out.text_map("epub", "EPUB chapters (their CSS rules decide)")
    return out.text(), text_map, flags


__all__ = ["extract_epub"]
