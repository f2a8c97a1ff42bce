"""Keeping a vault right in the desk: lint findings, retracting a source, jobs and their progress.

Decisions go through :mod:`affidavit.service.review` (the same calls as the API's lint routes and
``affidavit sources retract``); job progress is the API's own event stream
(:func:`affidavit.server.routes.jobs.events`), reached with the desk's session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..jobs.models import Job
from ..lint.findings import Status
from ..server.registry import ServedVault
from ..server.routes import jobs as job_routes
from ..service import review
from ..service import vaults as svc
from ..service.models import FlagOut, SourceOut
from ..vault import Vault
from .desk import WebDesk, WebRefusal

FLAGS_SHOWN = 50
FINDINGS_SHOWN = 50
"""Lint findings per page of the desk's lint screen."""
SEVERITIES = ("error", "warning", "info")
DECISIONS: dict[str, Status] = {"dismiss": "dismissed", "resolve": "resolved", "reopen": "open"}


def routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/{vault}/lint")
    async def findings(
        request: Request,
        vault: str,
        status: str = "open",
        kind: str = "",
        severity: str = "",
        offset: int = 0,
    ) -> Response:
        visit = desk.visit(request, vault)
        wanted: Status = status if status in ("open", "dismissed", "resolved") else "open"  # type: ignore[assignment]
        kind, severity = kind[:64], severity if severity in SEVERITIES else ""
        start = max(0, offset)
        rows, total, kinds = await desk.run(
            visit, lambda w: w.findings_page(wanted, kind, severity, start, FINDINGS_SHOWN)
        )
        context = desk.context(
            visit,
            title="Lint findings",
            findings=rows,
            showing=wanted,
            total=total,
            kinds=kinds,
            kind=kind,
            severity=severity,
            severities=SEVERITIES,
            offset=start,
            shown=FINDINGS_SHOWN,
        )
        return desk.page("lint.html", **context)

    @router.post("/web/{vault}/lint/{finding_id}/decide")
    async def decide(request: Request, vault: str, finding_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "approve", "deciding a finding")
        status = DECISIONS.get(visit.field("decision"))
        if status is None:
            raise WebRefusal(400, "choose dismiss, resolve or reopen.", "Use the buttons.")
        note = visit.field("note")[:1000]
        actor = visit.session.principal.actor
        found = await desk.run(visit, lambda w: w.decide_finding(finding_id, status, actor, note))
        desk.flash(visit, f"Finding {found.id} is {found.status} now.")
        return desk.redirect(f"/web/{vault}/lint")

    @router.post("/web/{vault}/lint/{finding_id}/fix")
    async def fix(request: Request, vault: str, finding_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "propose", "proposing a fix")
        actor = visit.session.principal.actor
        plans, why = await desk.run(visit, lambda w: w.propose_fix(finding_id, actor))
        if not plans:
            raise WebRefusal(409, f"no fix plan for {finding_id}: {why or 'none can be made'}.")
        desk.flash(visit, f"Proposed fix plan {plans[0][:12]}: it waits for approval.")
        return desk.redirect(f"/web/{vault}/plans/{plans[0]}")

    @router.post("/web/{vault}/sources/{source_id}/retract")
    async def retract(request: Request, vault: str, source_id: str) -> Response:
        visit = await desk.post(request, vault)
        desk.require(visit, "propose", "proposing a retraction")
        reason = visit.field("reason").strip()[:500] or "retracted by a person"
        actor = visit.session.principal.actor
        message, plan_id = await desk.run(
            visit, lambda w: w.retract_source(source_id, reason, actor)
        )
        desk.flash(visit, message)
        return desk.redirect(f"/web/{vault}/plans/{plan_id}")

    @router.get("/web/{vault}/jobs")
    async def jobs(request: Request, vault: str) -> Response:
        visit = desk.visit(request, vault)
        rows = await desk.run(visit, lambda w: w.jobs(50))
        shown = [(job, job_progress(job)) for job in rows]
        return desk.page("jobs.html", **desk.context(visit, title="Jobs", jobs=shown))

    @router.get("/web/{vault}/jobs/{job_id}/events")
    async def job_events(request: Request, vault: str, job_id: str, after: int = 0) -> Response:
        visit = desk.visit(request, vault)
        last = request.headers.get("last-event-id")
        if not isinstance(visit.served, ServedVault):  # a PostgreSQL database's vault
            from .pg import pg_job_events

            return await pg_job_events(
                request, visit.served, job_id, max(0, after), last[:20] if last else None
            )
        return await job_routes.events(
            request, visit.served, job_id, max(0, after), last[:20] if last else None
        )


def job_progress(job: Job) -> str:
    """A job's progress in words: its last report, or for a finished job that reported none
    (or only zeros) what its result counted — never a bare "0/0"."""
    done, total, message = job.progress.done, job.progress.total, job.progress.message
    if total:
        return f"{done}/{total} {message}".strip()
    result = job.result or {}
    counted = []
    sources = result.get("sources")
    if isinstance(sources, list):
        counted.append(f"{len(sources)} source(s)")
    totals = result.get("totals")
    if isinstance(totals, dict):
        counted += [f"{v} {k}" for k, v in totals.items() if isinstance(v, int) and v]
    chunks = result.get("job_chunks")
    if isinstance(chunks, dict):
        counted += [f"{v} chunk plan(s) {k}" for k, v in chunks.items() if isinstance(v, int) and v]
    if counted:
        return ", ".join(counted)
    if message:
        return message
    return {"queued": "waiting for a worker", "running": "started; no progress reported yet"}.get(
        job.status, "no progress reported"
    )


def source_view(vault: Vault, source_id: str, start: int, end: int) -> dict[str, Any]:
    """A source with a span of its text, and what retracting it would take out (dry run)."""
    record = svc.get_source(vault, source_id)
    shown = review.excerpt(vault, record.id, start, end) if end > start else None
    radius: list[str] = []
    if record.status == "active":
        _, radius = review.source_retraction(vault, record.id, "", "", dry_run=True)
    return source_screen(
        record, shown, radius, lambda flag: review.excerpt(vault, record.id, flag.start, flag.end)
    )


def source_screen(
    record: SourceOut,
    shown: review.Excerpt | None,
    radius: list[str],
    around: Callable[[FlagOut], review.Excerpt],
) -> dict[str, Any]:
    """The source screen of either backend: ``around`` a flag's span in its text."""
    flagged = [  # each flag highlighted in the text around it (the first FLAGS_SHOWN)
        (flag, around(flag)) for flag in record.flags[:FLAGS_SHOWN] if 0 <= flag.start < flag.end
    ]
    return {"source": record, "excerpt": shown, "radius": radius, "flagged": flagged}


__all__ = ["job_progress", "routes", "source_screen", "source_view"]
