"""Markdown text a reader of the rendered page does not see, or sees struck through (W12).

A markdown source's stored text is its raw markdown, so everything a renderer turns into nothing
is still there to quote. :func:`markdown_flags` marks, with offsets into the text,

    hidden  link reference definitions, whole lines (``[label]: url "title"``), which include the
            ``[//]: # (comment)`` idiom; images (``![alt](src "title")``, ``![alt][ref]``), whose
            alt text and title are not page text; link titles (``[text](url "title")``: a tooltip)
            and Obsidian comments (``%%...%%``, inline or over several lines), which Obsidian
            never shows
    struck  ``~~strikethrough~~`` (GFM; a single ``~`` is left alone: it often means "about")

Inline HTML in markdown (``<div hidden>``, ``<span style="display:none">``, ``<del>``...) is
flagged by :func:`affidavit.sources.extract.html_in_markdown_flags`, comments by the sanitizer.
"""

from __future__ import annotations

import re
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
_STRUCK = re.compile(r"(?<![~\\])~~(?!~)(?=\S)((?:[^~\n]|~(?!~)|\n(?![ \t]*\n))+?)(?<=\S)~~(?!~)")


def markdown_flags(text: str) -> list[Flag]:
    """Hidden and struck-through spans of a markdown text (see the module docstring)."""
    flags: list[Flag] = []
    newlines = [m.start() for m in re.finditer("\n", text)]

    def _line(_: str, offset: int) -> int:
        return bisect_left(newlines, offset) + 1

    for match in _REFERENCE.finditer(text):
        label, destination = match.group(1), match.group(2)
        if label.strip() in ("//", "comment", "_") or destination in ("#", "<>"):
            what = "a markdown comment ([//]: # (...)), not shown when rendered"
        else:
            what = "a markdown link reference definition, not shown when rendered"
        flags.append(
            Flag(HIDDEN, match.start(), match.end(), f"{what}: line {_line(text, match.start())}")
        )
    for match in _IMAGE.finditer(text):
        flags.append(
            Flag(
                HIDDEN,
                match.start(),
                match.end(),
                f"a markdown image: its alt text and title are not page text: line "
                f"{_line(text, match.start())}",
            )
        )
    for match in _LINK_TITLE.finditer(text):
        flags.append(
            Flag(
                HIDDEN,
                match.start(1),
                match.end(1),
                f"a markdown link title (a tooltip, not page text): line {_line(text, match.start())}",
            )
        )
    for match in _OBSIDIAN_COMMENT.finditer(text):
        flags.append(
            Flag(
                HIDDEN,
                match.start(),
                match.end(),
                f"an Obsidian comment (%%...%%), not shown when rendered: line "
                f"{_line(text, match.start())}",
            )
        )
    for match in _STRUCK.finditer(text):
        if text.count("`", text.rfind("\n", 0, match.start()) + 1, match.start()) % 2:
            continue  # inside a code span
        flags.append(
            Flag(
                STRUCK,
                match.start(),
                match.end(),
                f"struck-through text (~~...~~): line {_line(text, match.start())}",
            )
        )
    return flags


__all__ = ["markdown_flags"]
