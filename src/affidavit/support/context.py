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
import threading
from bisect import bisect_right
from collections import OrderedDict

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


class _Headings:
    """Where a text's heading lines are: the offset of each ``\n`` that opens a line holding a
    heading (sorted) with the heading, and the heading that opens the text (if any). Found once
    per text, so a quote's heading is a binary search, not a scan back through the text above
    it (a ~46 KB speech with one title scanned all of it for each claim)."""

    __slots__ = ("at", "first", "names", "title")

    def __init__(self, text: str) -> None:
        self.at: list[int] = []
        self.names: list[str] = []
        found = text.find("\n#")
        while found != -1:
            heading = _heading_at(text, found + 1)
            if heading is not None:
                self.at.append(found)
                self.names.append(heading)
            found = text.find("\n#", found + 2)
        self.first = _heading_at(text, 0) if text.startswith("#") else None
        # the document's title and where its ``\n#`` stands, as :func:`_first_heading` says
        if text.startswith("#"):
            self.title: tuple[str | None, int] = (self.first, 0)
        else:
            self.title = (self.names[0], self.at[0]) if self.at else (None, -1)


_INDEXES: OrderedDict[str, _Headings] = OrderedDict()
_INDEX_CHARS = 1 << 27
"""Characters of the texts whose heading lines are kept (the text used last stays whatever its
size); the texts themselves are the source store's, so this holds little of its own."""
_index_chars = 0
_LOCK = threading.Lock()


def _headings(text: str) -> _Headings:
    global _index_chars
    with _LOCK:
        found = _INDEXES.get(text)
        if found is not None:
            _INDEXES.move_to_end(text)
            return found
    index = _Headings(text)
    with _LOCK:
        if text not in _INDEXES:
            _INDEXES[text] = index
            _index_chars += len(text)
            while _index_chars > _INDEX_CHARS and len(_INDEXES) > 1:
                dropped, _ = _INDEXES.popitem(last=False)
                _index_chars -= len(dropped)
    return index


def headings_above(text: str, start: int) -> tuple[str, ...]:
    """The document's title (its first ATX heading, if that comes before ``start``) and the
    nearest heading above ``start``, as the stored text writes them (at most two, no repeats).

    The nearest heading is the last heading line whose ``\n`` lies in ``[start - WINDOW,
    start - 2]`` (its ``\n#`` ends before ``start``), else, when the window reaches the top, the
    heading that opens the text: what :func:`_scan_above` finds scanning back, from an index."""
    if start <= 0:
        return ()
    index = _headings(text)
    floor = max(0, start - WINDOW)
    at = bisect_right(index.at, start - 2) - 1
    if at >= 0 and index.at[at] >= floor:
        nearest: str | None = index.names[at]
    elif floor == 0:
        nearest = index.first
    else:
        nearest = None
    if nearest is None:
        return ()
    return _with_title(index.title, start, nearest)


def _with_title(first: tuple[str | None, int], start: int, nearest: str) -> tuple[str, ...]:
    title, at = first
    if at > 0 and at + 2 > start:  # the document's first heading comes after the quote
        title = None
    out = [title] if title is not None and title != nearest else []
    return (*out, nearest)


def _scan_above(text: str, start: int) -> tuple[str, ...]:
    """:func:`headings_above` by scanning back from ``start`` (what it did before its index; kept
    for the test that holds the two equal)."""
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
    return _with_title(_first_heading(text), start, nearest)
