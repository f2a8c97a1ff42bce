"""Markdown text a reader of the rendered page does not see, or sees struck through (W12).

A markdown source's stored text is its raw markdown, so everything a renderer turns into nothing
is still there to quote. :func:`markdown_flags` marks, with offsets into the text,

    hidden  link reference definitions, whole lines (``[label]: url "title"``), which include the
            ``[//]: # (comment)`` idiom; images (``![alt](src "title")``, ``![alt][ref]``), whose
            alt text and title are not page text; link titles (``[text](url "title")``: a tooltip)
            and Obsidian comments (``%%...%%``, inline or over several lines), which Obsidian
            never shows
    struck  ``~~strikethrough~~`` and ``~strikethrough~`` (GFM renders one tilde or two as a
            strikethrough), matched by GFM's delimiter rules (flanking, equal run lengths, one
            paragraph, not in code), so ``~212 metres and ~5 minutes`` or ``(~45 tokens/s)``,
            where a tilde means "about", strike nothing

    hidden  front matter (``---`` YAML or ``+++`` TOML at the very start), and raw HTML a browser
            turns into nothing: processing instructions (``<?php ... ?>``), declarations
            (``<!DOCTYPE ...>``) and CDATA sections, each up to its first ``>``

Inline HTML in markdown (``<div hidden>``, ``<div popover>``, ``<span style="display:none">``, ``<del>``...) is
flagged by :func:`affidavit.sources.extract.html_in_markdown_flags`, comments by the sanitizer.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

from .css import HIDDEN, STRUCK
from .sanitizer import Flag

_TITLE = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\((?:[^()\\\n]|\\.)*\))"""
_DESTINATION = r"(?:<[^<>\n]*>|[^\s<>()][^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
_REFERENCE = re.compile(
    rf"^ {{0,3}}\[(?!\^)((?:[^\[\]\\\n]|\\.){{1,999}})\]:[ \t]*\n?[ \t]*({_DESTINATION})"
    rf"(?:(?:[ \t]+|[ \t]*\n[ \t]*){_TITLE})?[ \t]*$",
    re.MULTILINE,
)
_IMAGE = re.compile(
    rf"!\[(?:[^\[\]\\\n]|\\.)*\](?:\([ \t]*(?:{_DESTINATION})?(?:[ \t]+{_TITLE})?[ \t]*\)"
    r"|\[(?:[^\[\]\\\n]|\\.)*\])?"
)
_LINK_TITLE = re.compile(rf"\]\([ \t]*{_DESTINATION}[ \t]+({_TITLE})[ \t]*\)")
_OBSIDIAN_COMMENT = re.compile(r"(?<!\\)%%.*?%%", re.DOTALL)
_BLOCK_BREAK = re.compile(r"\n[ \t]*(?:\n|[-*+>#|]|\d{1,9}[.)]|```|~~~)")
"""A newline that ends a paragraph: a blank line or the start of another block (a list item,
quote, heading, table row, fence); no strikethrough reaches across it."""
_FRONT_MATTER = re.compile(
    r"\A\ufeff?((?:---|\+\+\+)[ \t]*\r?\n.*?^(?:---|\.\.\.|\+\+\+)[ \t]*$)",
    re.DOTALL | re.MULTILINE,
)
"""YAML (``---``) or TOML (``+++``) front matter at the very start: metadata, not page text."""
_NOT_SHOWN_HTML = re.compile(
    r"(?:^ {0,3}(?P<what><\?[^>]*>?|<![A-Za-z][^>]*>?|<!\[CDATA\[[^>]*>?)"
    r"|(?<=[^\\])(?P<inline><\?(?=[^\n]*\?>)[^>]*>|<![A-Za-z][^>]*>|<!\[CDATA\[[^>]*>))",
    re.MULTILINE,
)
"""Raw HTML a browser parses into nothing it shows: a processing instruction (``<?php ...``),
a declaration (``<!DOCTYPE ...>``, ``<!ELEMENT ...>``) or a CDATA section, each up to the first
``>`` (where the HTML parser ends it: what follows is shown); at a line's start (an HTML block)
or inline (a processing instruction then needs its ``?>``, as CommonMark's raw HTML does)."""
_TILDES = re.compile(r"(?<!~)~+(?!~)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.DOTALL | re.M)
_BACKTICKS = re.compile(r"`+")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Code spans as CommonMark finds them, erring toward "not code": a backtick run opens one
    unless it is escaped or inside an HTML tag (``<b title="`">``: the tag comes first), and the
    next run of the same length in the same paragraph closes it."""
    spans: list[tuple[int, int]] = []
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opener = runs[i]
        at = opener.start()
        escaped = at > 0 and text[at - 1] == "\\"
        in_tag = text.rfind("<", 0, at) > text.rfind(">", 0, at)
        if escaped or in_tag:
            i += 1
            continue
        size = len(opener.group())
        closer = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == size), None)
        if closer is None or _BLOCK_BREAK.search(text, at, runs[closer].start()):
            i += 1
            continue
        spans.append((at, runs[closer].end()))
        i = closer + 1
    return spans


def without_code(text: str, filler: str = "\x01") -> str:
    """``text`` with fenced code blocks and code spans blanked out with ``filler`` (same length,
    newlines kept): what is in code is shown as written, so a tilde, image or comment there
    hides nothing, and no strikethrough reaches into code."""
    chars = list(text)
    for match in _FENCE.finditer(text):
        for k in range(match.start(), match.end()):
            if chars[k] != "\n":
                chars[k] = filler
    blanked = "".join(chars)
    for start, end in _code_spans(blanked):
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = filler
    return "".join(chars)


def markdown_flags(text: str) -> list[Flag]:
    """Hidden and struck-through spans of a markdown text (see the module docstring)."""
    flags: list[Flag] = []
    newlines = [m.start() for m in re.finditer("\n", text)]
    prose = without_code(text)  # code is shown as it is written: nothing in it is hidden

    def _line(_: str, offset: int) -> int:
        return bisect_left(newlines, offset) + 1

    for match in _REFERENCE.finditer(prose):
        label, destination = match.group(1), match.group(2)
        if label.strip() in ("//", "comment", "_") or destination in ("#", "<>"):
            what = "a markdown comment ([//]: # (...)), not shown when rendered"
        else:
            what = "a markdown link reference definition, not shown when rendered"
        flags.append(
            Flag(HIDDEN, match.start(), match.end(), f"{what}: line {_line(text, match.start())}")
        )
    for match in _IMAGE.finditer(prose):
        flags.append(
            Flag(
                HIDDEN,
                match.start(),
                match.end(),
                f"a markdown image: its alt text and title are not page text: line "
                f"{_line(text, match.start())}",
            )
        )
    for match in _LINK_TITLE.finditer(prose):
        flags.append(
            Flag(
                HIDDEN,
                match.start(1),
                match.end(1),
                f"a markdown link title (a tooltip, not page text): line {_line(text, match.start())}",
            )
        )
    for match in _OBSIDIAN_COMMENT.finditer(prose):
        flags.append(
            Flag(
                HIDDEN,
                match.start(),
                match.end(),
                f"an Obsidian comment (%%...%%), not shown when rendered: line "
                f"{_line(text, match.start())}",
            )
        )
    front = _FRONT_MATTER.match(text)
    if front:
        flags.append(
            Flag(
                HIDDEN,
                front.start(1),
                front.end(1),
                "front matter (the page's metadata, not shown as its text): line 1",
            )
        )
    for match in _NOT_SHOWN_HTML.finditer(prose):
        group = "what" if match.group("what") is not None else "inline"
        if front and match.start() < front.end():
            continue
        what = match.group(group)
        kind = (
            "a processing instruction"
            if what.startswith("<?")
            else "a CDATA section"
            if what.startswith("<![")
            else "a declaration"
        )
        flags.append(
            Flag(
                HIDDEN,
                match.start(group),
                match.end(group),
                f"{kind} in the markdown's HTML ({what[:12]}...), which a browser never shows: "
                f"line {_line(text, match.start(group))}",
            )
        )
    for start, end in _struck(prose):
        shown = "~~...~~" if text.startswith("~~", start) else "~...~"
        flags.append(
            Flag(STRUCK, start, end, f"struck-through text ({shown}): line {_line(text, start)}")
        )
    return flags


def _is_space(ch: str) -> bool:
    return ch == "" or ch.isspace()


def _is_punctuation(ch: str) -> bool:
    return ch != "" and unicodedata.category(ch)[0] in "PS"


def _struck(prose: str) -> list[tuple[int, int]]:
    """The spans GFM strikes through: a run of one or two tildes that can open (left-flanking:
    before a non-space, and before a non-punctuation character or after a space or punctuation)
    closed by the next run of the same length that can close (right-flanking, the mirror) in
    the same paragraph. A tilde after a backslash is a plain tilde."""
    spans: list[tuple[int, int]] = []
    openers: list[tuple[int, int]] = []  # (offset, length), innermost last
    for match in _TILDES.finditer(prose):
        at, size = match.start(), len(match.group())
        if size > 2 or (at > 0 and prose[at - 1] == "\\"):
            continue
        before = prose[at - 1] if at > 0 else ""
        after = prose[match.end()] if match.end() < len(prose) else ""
        left = not _is_space(after) and (
            not _is_punctuation(after) or _is_space(before) or _is_punctuation(before)
        )
        right = not _is_space(before) and (
            not _is_punctuation(before) or _is_space(after) or _is_punctuation(after)
        )
        openers = [o for o in openers if not _BLOCK_BREAK.search(prose, o[0], at)]
        closed = next((i for i in range(len(openers) - 1, -1, -1) if openers[i][1] == size), None)
        if right and closed is not None:
            spans.append((openers[closed][0], match.end()))
            del openers[closed:]
        elif left:
            openers.append((at, size))
    return spans


__all__ = ["markdown_flags", "without_code"]
