"""Host-known context for the support check (W11): the headings a quoted sentence stands under.

A source's sentence often leaves out its subject — the article is *about* it ("She is best known
for …" under "# Snow Tha Product"). The host, not the proposer, reads that subject from the
stored source text: the document's title (its first heading, when it comes before the quote) and
the nearest heading above the quote. Nothing else counts: not a heading after the quote, not
another section's heading, not a string the plan supplies. The support check lets a name, number
or word found only there make a text *uncertain* (a person decides), never *supported*.
"""

from __future__ import annotations

import functools
import re

__all__ = ["headings_above"]

_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*")
_MAX_HEADING = 300
"""Characters of a heading line taken as context: a longer "heading" is a paragraph."""
WINDOW = 65536
"""How far above a quote its heading is looked for: the cost per claim stays bounded on a large
source without headings, and a section longer than this simply gives no context."""


def _heading_at(text: str, line_start: int) -> str | None:
    end = text.find("\n", line_start)
    line = text[line_start : end if end != -1 else len(text)]
    if len(line) > _MAX_HEADING + 8:
        return None
    match = _HEADING.fullmatch(line.rstrip("\r"))
    return match.group(2).strip() or None if match else None


@functools.lru_cache(maxsize=4)
def _first_heading(text: str) -> tuple[str | None, int]:
    """The document's title (its first ATX heading) and where its ``\n#`` stands (0 when the
    text opens with it), found once per text: a quote deep in a large source doesn't scan the
    whole text above it for each claim. A text that opens with a line that isn't a heading
    ("#tag") has no title."""
    if text.startswith("#"):
        return _heading_at(text, 0), 0
    first = text.find("\n#")
    while first != -1:
        title = _heading_at(text, first + 1)
        if title is not None:
            return title, first
        first = text.find("\n#", first + 1)
    return None, -1


def headings_above(text: str, start: int) -> tuple[str, ...]:
    """The document's title (its first ATX heading, if that comes before ``start``) and the
    nearest heading above ``start``, as the stored text writes them (at most two, no repeats)."""
    nearest: str | None = None
    at = start
    floor = max(0, start - WINDOW)
    while at > floor and nearest is None:
        found = text.rfind("\n#", floor, at)
        line = found + 1 if found != -1 else 0
        if found == -1 and (floor > 0 or not text.startswith("#")):
            break
        nearest = _heading_at(text, line)
        at = found
        if found == -1:
            break
    if nearest is None:
        return ()
    title, at = _first_heading(text)
    if at > 0 and at + 2 > start:  # the document's first heading comes after the quote
        title = None
    out = [title] if title is not None and title != nearest else []
    return (*out, nearest)
