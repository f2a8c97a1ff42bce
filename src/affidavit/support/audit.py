"""The support check over the wiki as it stands: every active claim against its quotes (W11).

Shared by ``affidavit doctor`` and lint's ``unsupported_claim`` check, so they never disagree.
The quotes are read as the source's own words at the recorded offsets; a claim whose source
can't be read, or whose quote no longer stands at its offsets, is left to the evidence checks,
which report that.

Each claim's row records the verdict it was admitted with and the check that gave it (migration
``m013_text_by_text``), so the wiki is judged again under the current check and what changed
since admission is known (:func:`rejudge`): a claim admitted as supported that the current check
finds unsupported, or only uncertain (no person ever read it), and the reverse.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import cast

from ..errors import AffidavitError
from ..evidence import normalize_quote
from ..evidence.verify import SourceTexts
from ..sources.store import SourceStore
from ..storage.queries import Sql, plain_rows
from .checker import SupportChecker
from .context import headings_above
from .rules import SUPPORTED, UNCERTAIN, UNSUPPORTED
from .version import check_version


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
    was: str = ""
    """The verdict the claim was admitted with ('' when not recorded: admitted before issue 22)."""
    was_check: str = ""
    """The check that gave it (:func:`~affidavit.support.version.check_version`)."""

    @property
    def changed(self) -> bool:
        """Admitted with a recorded verdict the current check no longer gives."""
        return bool(self.was) and self.was != self.verdict


@dataclass
class Rejudged:
    """The wiki judged again under the current check, against what each claim was admitted with."""

    checked: int
    check: str
    """The current check's version."""
    problems: list[SupportProblem]
    changed: Counter[str] = field(default_factory=Counter)
    """Claims whose verdict changed since admission, by ``"was → now"``."""
    older: int = 0
    """Claims admitted under another check (or before the check was recorded)."""

    def lines(self) -> list[str]:
        """What changed, in words (empty when nothing did)."""
        out = []
        if self.older:
            out.append(
                f"{self.older} claim(s) were admitted under another support check than the "
                f"current one ({self.check}) or before it was recorded; all were judged again"
            )
        if self.changed:
            out.append(
                "changed since admission: "
                + ", ".join(f"{n} {what}" for what, n in sorted(self.changed.items()))
            )
        return out


def support_problems(
    db: sqlite3.Connection,
    store: SourceStore,
    checker: SupportChecker | None = None,
    claim_ids: list[str] | None = None,
) -> tuple[int, list[SupportProblem]]:
    """Check every active claim (or those of ``claim_ids``); return how many were checked and
    the problems, by claim id.

    The rows are read in claim order and worked through one source at a time (each text read
    once, its headings found once). A claim whose text is one of its quotes (the extractive
    engine's) is supported by the check's first rule and not checked again; the others' verdicts
    are mostly the gate's own, still in the check's cache after an ingest
    (:data:`~affidavit.support.rules.CHECK_CACHE`)."""
    found = rejudge(db, store, checker, claim_ids)
    return found.checked, found.problems


def rejudge(
    db: Sql,
    store: SourceTexts,
    checker: SupportChecker | None = None,
    claim_ids: list[str] | None = None,
) -> Rejudged:
    """Every active claim (or those of ``claim_ids``) judged again (see
    :func:`support_problems`), with what changed since each was admitted."""
    checker = checker or SupportChecker()
    current = check_version(checker.model)
    cursor = plain_rows(db)
    only = "" if claim_ids is None else "AND c.id IN (SELECT value FROM json_each(?)) "
    rows = cursor.execute(
        'SELECT c.id, c.page_slug, c.text, e.source_id, e.start, e."end", e.quote, '
        "c.support, c.support_check "
        "FROM claims c JOIN evidence e ON e.claim_id = c.id "
        f"WHERE c.status = 'active' {only}ORDER BY c.id, e.idx",
        () if claim_ids is None else (json.dumps(claim_ids),),
    ).fetchall()
    changed: Counter[str] = Counter()
    older = 0
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
            spans[n] = span
            headings[n] = headings_above(source_text, start)  # indexed once per text
    problems: list[SupportProblem] = []
    count, first = 0, 0
    while first < len(rows):
        claim_id, page, text = rows[first][:3]
        last = first + 1
        while last < len(rows) and rows[last][0] == claim_id:
            last += 1
        count += 1
        was, was_check = rows[first][7], rows[first][8]
        older += was_check != current
        quotes, first = spans[first:last], last
        if None in quotes:
            continue  # unreadable: the evidence checks report it
        if text in quotes:  # its text is a quote, which the check finds supported
            if was and was != SUPPORTED:
                changed[f"{was} → {SUPPORTED}"] += 1
            continue
        verdict = checker.check(
            text,
            cast("list[str]", quotes),
            context=list(dict.fromkeys(chain.from_iterable(headings[last - len(quotes) : last]))),
        )
        if was and was != verdict.verdict:
            changed[f"{was} → {verdict.verdict}"] += 1
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
                    was,
                    was_check,
                )
            )
    return Rejudged(count, current, problems, changed, older)
