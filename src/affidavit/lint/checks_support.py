"""Lint's ``unsupported_claim`` check (W11): active claims whose text their quotes don't support.

The re-derivation is doctor's own (:func:`affidavit.support.audit.support_problems`). Claims
the rules find only uncertain are not reported: a person approved them seeing the words that lack
support. The fix is a ``retract_claim`` plan, which always waits for a person.
"""

from __future__ import annotations

from typing import Any

from ..support import UNSUPPORTED
from ..support.audit import support_problems
from .checks_context import CheckContext
from .findings import Finding, FindingQuote

_REASON_CHARS = 300


def check_unsupported_claim(ctx: CheckContext) -> list[Finding]:
    """Active claims whose text says what their quotes (the sources' own words) don't."""
    findings = []
    for problem in support_problems(ctx.db, ctx.store)[1]:
        if problem.verdict != UNSUPPORTED:
            continue
        where = f"page '{problem.page}'" if problem.page else "context.md"
        words = ", ".join(problem.missing[:8])
        reason = f"its quotes don't support: {words}"[:_REASON_CHARS]
        fix: dict[str, Any] = {"op": "retract_claim", "claim": problem.claim_id, "reason": reason}
        findings.append(
            Finding(
                kind="unsupported_claim",
                severity="error",
                subject=problem.claim_id,
                message=f"claim {problem.claim_id} on {where} says what its quotes don't: "
                f"{problem.reason}",
                quotes=[
                    FindingQuote(
                        quote=span, claim_id=problem.claim_id, source_id=source_id, verified=True
                    )
                    for span, source_id in zip(problem.quotes, problem.source_ids, strict=True)
                ],
                claims=[problem.claim_id],
                pages=[problem.page] if problem.page else [],
                fix=fix,
                fix_hint="retract it, or supersede it with a claim its quotes support",
            )
        )
    return findings
