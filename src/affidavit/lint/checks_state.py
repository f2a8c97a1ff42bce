"""Lint checks of what the wiki rests on and waits for: stored sources, the evidence of active
claims, stored vectors, pending plans."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..clock import iso, parse_iso
from ..doctor import QuoteProblem
from ..retrieval.embeddings import text_sha256
from .checks_context import CheckContext, examples
from .findings import Finding, FindingQuote

# --- sources and evidence -----------------------------------------------------------------------


def check_source_tampered(ctx: CheckContext) -> list[Finding]:
    """Stored sources whose original or extracted text is missing or no longer hashes right."""
    by_source: dict[str, list[str]] = {}
    for problem in ctx.sources:
        if problem.tampered:
            by_source.setdefault(problem.source_id, []).append(problem.message)
    findings = []
    for source_id, problems in sorted(by_source.items()):
        cited, hint = ctx.tampered_source(source_id)
        findings.append(
            Finding(
                kind="source_tampered",
                severity="error",
                subject=source_id,
                message=f"source {source_id[:12]}: {'; '.join(problems)} "
                f"({cited} active claim(s) cite it)",
                fix_hint=hint,
            )
        )
    return findings


def check_evidence_unverified(ctx: CheckContext) -> list[Finding]:
    """Active claims with a quote that is no longer in its source, or not at its recorded offsets.

    A quote missing from an intact source gets a ``retract_claim`` fix; when the source itself was
    tampered with, restoring it (see source_tampered) is the fix, not retracting the claim.
    """
    by_claim: dict[str, list[QuoteProblem]] = {}
    for problem in ctx.quotes:
        by_claim.setdefault(problem.claim_id, []).append(problem)
    findings = []
    for claim_id, problems in sorted(by_claim.items()):
        page = problems[0].page
        where = f"page '{page}'" if page else "context.md"
        tampered = sorted({p.source_id[:12] for p in problems if p.source_id in ctx.tampered})
        missing = [p for p in problems if p.kind != "moved"]
        quotes = [
            FindingQuote(
                quote=p.quote,
                claim_id=claim_id,
                source_id=p.source_id,
                verified=False,
                location=p.location,
                reason=p.reason if p.kind != "moved" else f"{p.reason}: {ctx.moved[0]}",
            )
            for p in problems
        ]
        fix: dict[str, Any] | None = None
        if tampered:
            hint = (
                f"restore source(s) {', '.join(tampered)} {ctx.restore_from} (see source_tampered)"
            )
        elif missing:
            reason = f"its evidence is no longer in source {missing[0].source_id[:12]}"
            fix = {"op": "retract_claim", "claim": claim_id, "reason": reason}
            hint = (
                f'retract it: propose {{"op": "retract_claim", "claim": "{claim_id}", '
                f'"reason": "{reason}"}}'
            )
        else:
            hint = ctx.moved[1]
        what = "no longer verify" if missing else "moved in their source"
        findings.append(
            Finding(
                kind="evidence_unverified",
                severity="error" if missing else "warning",
                subject=claim_id,
                message=f"claim {claim_id} on {where}: {len(problems)} quote(s) {what}: "
                + "; ".join(q.reason for q in quotes),
                quotes=quotes,
                claims=[claim_id],
                pages=[page] if page else [],
                fix=fix,
                fix_hint=hint,
            )
        )
    return findings


# --- embeddings and plans -----------------------------------------------------------------------


def check_stale_embedding(ctx: CheckContext) -> list[Finding]:
    """Stored vectors search would ignore: of claims no longer active, of text that changed, or of
    another embedding model or version than the installed one. One finding per reason (they are
    all fixed by one ``affidavit reindex``); without vectors nothing is loaded."""
    if ctx.db.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
        return []
    cursor = ctx.db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT v.claim_id, v.model, v.model_version, v.dim, v.text_sha256, c.status, c.text "
        "FROM vectors v LEFT JOIN claims c ON c.id = v.claim_id ORDER BY v.claim_id"
    ).fetchall()
    embedder = ctx.embedder()
    current = None if embedder is None else (embedder.name, embedder.version, embedder.dim)
    stale: dict[str, list[str]] = {"inactive": [], "text": []}
    lineages: dict[tuple[str, str, int], list[str]] = {}
    for claim_id, model, version, dim, sha, status, text in rows:
        if status != "active":
            stale["inactive"].append(claim_id)
        elif sha != text_sha256(text):
            stale["text"].append(claim_id)
        elif current is not None and (model, version, dim) != current:
            lineages.setdefault((model, version, dim), []).append(claim_id)
    fix_hint = "`affidavit reindex` rebuilds stale vectors and deletes those of inactive claims"
    findings = []
    for reason, what in (
        ("inactive", "belong to claims that are no longer active (or gone)"),
        ("text", "were embedded from another text than their claim's current one"),
    ):
        ids = stale[reason]
        if ids:
            findings.append(
                Finding(
                    kind="stale_embedding",
                    severity="warning",
                    subject=f"vectors/{reason}",
                    message=f"{len(ids)} vector(s) {what}: {examples(ids)}",
                    fix_hint=fix_hint,
                )
            )
    for (model, version, dim), ids in sorted(lineages.items()):
        assert current is not None
        findings.append(
            Finding(
                kind="stale_embedding",
                severity="warning",
                subject=f"vectors/{model}/{version}",
                message=f"{len(ids)} vector(s) of {model} {version} ({dim} dimensions), but the "
                f"installed model is {current[0]} {current[1]}: search ignores them; "
                f"{examples(ids)}",
                fix_hint=fix_hint,
            )
        )
    return findings


def _duration(delta: timedelta) -> str:
    minutes = int(abs(delta).total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def check_plan_expiring(ctx: CheckContext) -> list[Finding]:
    """Pending plans that expire within ``lint.expiring_hours`` (or already have)."""
    now = ctx.vault.clock()
    hours = int(ctx.vault.config.get("lint.expiring_hours"))
    rows = ctx.db.execute(
        "SELECT id, author, origin, expires_at FROM plans WHERE status = 'pending' "
        "AND expires_at <= ? ORDER BY expires_at, id",
        (iso(now + timedelta(hours=hours)),),
    ).fetchall()
    findings = []
    for plan_id, author, origin, expires_at in rows:
        left = parse_iso(expires_at) - now
        when = (
            f"expires in {_duration(left)} ({expires_at})"
            if left > timedelta(0)
            else f"expired {_duration(left)} ago ({expires_at}) and can no longer be applied"
        )
        short = plan_id[:12]
        findings.append(
            Finding(
                kind="plan_expiring",
                severity="warning",
                subject=plan_id,
                message=f"pending plan {short} by {author} ({origin}) {when}",
                fix_hint=f"review it with `affidavit inbox show {short}`, then "
                f"`affidavit approve {short}` or `affidavit reject {short} --reason ...`",
            )
        )
    return findings
