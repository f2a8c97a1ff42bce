"""The support check over the wiki as it stands: every active claim against its quotes (W11).

Shared by ``affidavit doctor`` and lint's ``unsupported_claim`` check, so they never disagree.
The quotes are read as the source's own words at the recorded offsets; a claim whose source
can't be read, or whose quote no longer stands at its offsets, is left to the evidence checks,
which report that.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ..errors import AffidavitError
from ..evidence import normalize_quote
from ..sources.store import SourceStore
from .support import UNCERTAIN, UNSUPPORTED
from .support_checker import SupportChecker
from .support_context import headings_above


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


def support_problems(
    db: sqlite3.Connection, store: SourceStore, checker: SupportChecker | None = None
) -> tuple[int, list[SupportProblem]]:
    """Check every active claim; return how many were checked and the problems, by claim id."""
    checker = checker or SupportChecker()
    cursor = db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        'SELECT c.id, c.page_slug, c.text, e.source_id, e.start, e."end", e.quote '
        "FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.status = 'active' ORDER BY c.id, e.idx"
    ).fetchall()
    claims: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
    context: dict[str, list[str]] = {}
    unreadable: set[str] = set()
    for claim_id, page, text, source_id, start, end, quote in rows:
        entry = claims.setdefault(claim_id, (page or "", text, []))
        try:
            span = store.text(source_id)[start:end] if start is not None else quote
        except AffidavitError:
            unreadable.add(claim_id)
            continue
        if normalize_quote(span) != normalize_quote(quote):
            unreadable.add(claim_id)  # moved or altered: evidence_unverified's business
            continue
        entry[2].append((source_id, span))
        if start is not None:
            context.setdefault(claim_id, []).extend(headings_above(store.text(source_id), start))
    problems: list[SupportProblem] = []
    for claim_id, (page, text, quotes) in claims.items():
        if claim_id in unreadable:
            continue
        verdict = checker.check(
            text,
            [span for _, span in quotes],
            context=list(dict.fromkeys(context.get(claim_id, []))),
        )
        if verdict.verdict in (UNCERTAIN, UNSUPPORTED):
            problems.append(
                SupportProblem(
                    claim_id,
                    page,
                    text,
                    verdict.verdict,
                    verdict.missing,
                    verdict.reason,
                    tuple(span for _, span in quotes),
                    tuple(source_id for source_id, _ in quotes),
                )
            )
    return len(claims), problems
