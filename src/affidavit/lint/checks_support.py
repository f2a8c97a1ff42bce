"""Lint's ``unsupported_claim`` check (W11): active claims whose text their quotes don't support.

The re-derivation is doctor's own (:func:`affidavit.support.audit.rejudge`), under the current
check. An unsupported claim is an error. A claim the current check finds only uncertain is a
warning when it was admitted as *supported* — under an older check, with no person reading it —
and not reported otherwise: a person approved it seeing the words that lack support (or it was
admitted before verdicts were recorded). The fix is a ``retract_claim`` plan, which always waits
for a person.
"""

from __future__ import annotations

from typing import Any

from ..support import SUPPORTED, UNCERTAIN, UNSUPPORTED, SupportChecker, load_model
from ..support.audit import rejudge
from ..support.kept import keeping_in
from .checks_context import CheckContext
from .findings import Finding, FindingQuote

_REASON_CHARS = 300


def check_unsupported_claim(ctx: CheckContext) -> list[Finding]:
    """Active claims whose text says what their quotes (the sources' own words) don't."""
    findings = []
    checker = SupportChecker(load_model(ctx.vault.config))  # the one doctor and the gate use
    with keeping_in(None if ctx.vault.read_only else ctx.vault.state_dir):
        problems = rejudge(ctx.db, ctx.store, checker, ctx.checked_claims).problems
    for problem in problems:
        unread = problem.verdict == UNCERTAIN and problem.was == SUPPORTED
        if problem.verdict != UNSUPPORTED and not unread:
            continue
        where = f"page '{problem.page}'" if problem.page else "context.md"
        words = ", ".join(problem.missing[:8])
        reason = f"its quotes don't support: {words}"[:_REASON_CHARS]
        fix: dict[str, Any] = {"op": "retract_claim", "claim": problem.claim_id, "reason": reason}
        since = (
            f" (admitted as {problem.was} under {problem.was_check or 'an older check'})"
            if problem.was and problem.was != problem.verdict
            else ""
        )
        message = (
            f"claim {problem.claim_id} on {where} says what its quotes don't: {problem.reason}"
            if not unread
            else f"claim {problem.claim_id} on {where} went in with no person, and the current "
            f"support check can't confirm it: {problem.reason}"
        )
        findings.append(
            Finding(
                kind="unsupported_claim",
                severity="warning" if unread else "error",
                subject=problem.claim_id,
                message=message + since,
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
