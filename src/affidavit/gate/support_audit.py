"""The support check over the wiki as it stands: every active claim against its quotes (W11).

Shared by ``affidavit doctor`` and lint's ``unsupported_claim`` check, so they never disagree.
The quotes are read as the source's own words at the recorded offsets; a claim whose source
can't be read, or whose quote no longer stands at its offsets, is left to the evidence checks,
which report that.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from dataclasses import dataclass
from itertools import chain
from typing import cast

from ..errors import AffidavitError
from ..evidence import normalize_quote
from ..sources.store import SourceStore
from .support import UNCERTAIN, UNSUPPORTED
from .support_checker import SupportChecker
from .support_context import WINDOW, _heading_at


@dataclass(frozen=True)
class SupportProblem:
    """An active claim whose text its quotes don't support (or only uncertainly)."""

    claim_id: str
    page: str  # '' for a context.md entry
    text: str
    verdict: str  # uncertain | unsupported
    missing: tuple[str, ...]
    reason: str
    quotes: tuple[str, ...]
    source_ids: tuple[str, ...]


class HeadingIndex:
    """:func:`~affidavit.gate.support_context.headings_above` for many quotes of one text: its
    heading lines found once, then each quote's in a binary search, not by scanning back from
    the quote (up to 64 KiB for each claim of a long source without headings)."""

    def __init__(self, text: str) -> None:
        self.lines: list[int] = []
        """Where each heading line starts (a line that opens with ``#`` and reads as one)."""
        self.names: list[str] = []
        if text.startswith("#"):
            name = _heading_at(text, 0)
            if name is not None:
                self.lines.append(0)
                self.names.append(name)
        found = text.find("\n#")
        while found != -1:
            name = _heading_at(text, found + 1)
            if name is not None:
                self.lines.append(found + 1)
                self.names.append(name)
            found = text.find("\n#", found + 2)
        # the document's title, as _first_heading reads it: its opening line when the text
        # opens with "#" (None if that line is no heading), else its first heading line
        if text.startswith("#"):
            self.title, self.title_at = _heading_at(text, 0), 0
        elif self.lines:
            self.title, self.title_at = self.names[0], self.lines[0] - 1
        else:
            self.title, self.title_at = None, -1

    def above(self, start: int) -> tuple[str, ...]:
        """What ``headings_above(text, start)`` returns."""
        floor = max(0, start - WINDOW)
        at = bisect_right(self.lines, start - 1) - 1  # the last heading line before the quote
        if at < 0:
            return ()
        line = self.lines[at]
        if (line == 0 and floor > 0) or (line > 0 and line - 1 < floor):
            return ()  # farther up than the window looks
        nearest = self.names[at]
        title = self.title
        if self.title_at > 0 and self.title_at + 2 > start:
            title = None  # the document's first heading comes after the quote
        out = [title] if title is not None and title != nearest else []
        return (*out, nearest)


def support_problems(
    db: sqlite3.Connection, store: SourceStore, checker: SupportChecker | None = None
) -> tuple[int, list[SupportProblem]]:
    """Check every active claim; return how many were checked and the problems, by claim id.

    The rows are read in claim order and worked through one source at a time (each text read
    once, its headings found once). A claim whose text is one of its quotes (the extractive
    engine's) is supported by the check's first rule and not checked again; the others' verdicts
    are mostly the gate's own, still in the check's cache after an ingest
    (:data:`~affidavit.gate.support.CHECK_CACHE`)."""
    checker = checker or SupportChecker()
    cursor = db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        'SELECT c.id, c.page_slug, c.text, e.source_id, e.start, e."end", e.quote '
        "FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.status = 'active' ORDER BY c.id, e.idx"
    ).fetchall()
    spans: list[str | None] = [None] * len(rows)
    """Each row's span (None: unreadable, or no longer the quote)."""
    headings: list[tuple[str, ...]] = [()] * len(rows)
    by_source: dict[str, list[int]] = {}
    for n, row in enumerate(rows):
        by_source.setdefault(row[3], []).append(n)
    for source_id, group in by_source.items():
        try:
            source_text = store.text(source_id)
        except AffidavitError:
            source_text = None
        index: HeadingIndex | None = None
        for n in group:
            start, end, quote = rows[n][4], rows[n][5], rows[n][6]
            if start is None:
                spans[n] = quote
                continue
            if source_text is None:
                continue
            span = source_text[start:end]
            if span != quote and normalize_quote(span) != normalize_quote(quote):
                continue  # moved or altered: evidence_unverified's business
            if index is None:
                index = HeadingIndex(source_text)
            spans[n] = span
            headings[n] = index.above(start)
    problems: list[SupportProblem] = []
    count, first = 0, 0
    while first < len(rows):
        claim_id, page, text = rows[first][:3]
        last = first + 1
        while last < len(rows) and rows[last][0] == claim_id:
            last += 1
        count += 1
        quotes, first = spans[first:last], last
        if None in quotes or text in quotes:
            continue  # unreadable; or its text is a quote, which the check finds supported
        verdict = checker.check(
            text,
            cast("list[str]", quotes),
            context=list(dict.fromkeys(chain.from_iterable(headings[last - len(quotes) : last]))),
        )
        if verdict.verdict in (UNCERTAIN, UNSUPPORTED):
            problems.append(
                SupportProblem(
                    claim_id,
                    page or "",
                    text,
                    verdict.verdict,
                    verdict.missing,
                    verdict.reason,
                    tuple(cast("list[str]", quotes)),
                    tuple(row[3] for row in rows[last - len(quotes) : last]),
                )
            )
    return count, problems
