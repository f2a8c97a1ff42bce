"""HTML data tables as the extracted text's pipe rows, one line per row.

A reader of a reference table reads it row by row with the header in mind ("``PRAGMA foo``,
Default: 0"). The extraction convention writes such a table as a markdown pipe table: each
``<tr>`` one line ``| cell | cell |``, a first row of ``<th>`` cells followed by a ``| --- |``
line, breaks inside a cell (``<br>``, ``<p>``) a space, so the extractive engine
(:mod:`affidavit.extractive.tables`) can quote each row whole with its column names. The
pipes are the convention's, not the page's, like the ``` fences around ``<pre>``: no element's
text includes them, so hidden-text flags (W12) cover exactly the cells a browser hides.

Only a *data* table is written this way: at least one row of two cells, no table inside it,
no preformatted text in it. A layout table (one column, nested tables, code in cells) stays a
fenced block as before, which a table of two code samples side by side needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DELIMITER_LINE = re.compile(r"^\|(?: --- \|)+$", re.MULTILINE)
_TAG = re.compile(r"<(/?)(table|pre|textarea|xmp|listing|plaintext|tr|td|th)\b", re.IGNORECASE)


def data_table(source: str, content: int) -> bool:
    """True if the table whose content starts at offset ``content`` of the HTML ``source`` is a
    data table (the module docstring). Reads ahead to the table's end tag only: each table is
    read once, so the whole page stays linear."""
    cells = widest = 0
    for match in _TAG.finditer(source, content):
        closing, name = match.group(1), match.group(2).lower()
        if name == "table":
            if closing:
                break
            return False  # a table in a table: layout
        if closing:
            continue
        if name == "tr":
            widest, cells = max(widest, cells), 0
        elif name in ("td", "th"):
            cells += 1
        else:
            return False  # preformatted text in a cell: code side by side, kept fenced
    return max(widest, cells) >= 2


def grid_lines_blank(text: str) -> str:
    """``text`` with the header delimiter lines this module writes (``| --- | --- |``) blanked
    out, same length: a renderer draws no such line, and aligning its characters with the text
    (W12) must not take them for text it hides. The pipes themselves are ignored there."""
    if "| --- |" not in text:
        return text
    return _DELIMITER_LINE.sub(lambda m: " " * len(m.group()), text)


@dataclass
class Grid:
    """The open data table's state while its text is written: where it sits on the parser's
    stack, whether a row line is open, its cells so far and whether all of them are headers."""

    at: int
    row_open: bool = False
    cells: int = 0
    all_headers: bool = True
    rows: int = 0

    def cell(self, tag: str) -> str:
        """The text a new ``<td>``/``<th>`` writes first: a row's opening pipe, or the pipe
        between two cells."""
        first = not self.row_open
        self.row_open = True
        self.cells += 1
        self.all_headers = self.all_headers and tag == "th"
        return "| " if first else " | "

    def row_end(self) -> str:
        """The text the end of a row writes: its closing pipe, and after a first row of header
        cells the delimiter line that marks it as the header."""
        if not self.row_open:
            return ""
        out = " |\n"
        if self.rows == 0 and self.all_headers:
            out += "|" + " --- |" * self.cells + "\n"
        self.rows += 1
        self.row_open, self.cells, self.all_headers = False, 0, True
        return out


__all__ = ["Grid", "data_table", "grid_lines_blank"]
