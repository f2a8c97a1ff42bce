"""The built-in job handlers: ingest, reindex and lint, each the same service its command runs.

A handler runs in the job's own process, returns JSON data (the job's result) or raises
:class:`JobFailed`. Its work must be resumable: a job whose worker died is run again from the
start and must skip what is already durable (ingest skips recorded chunks and finishes plans
already proposed; reindex skips vectors whose lineage is current).
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from ..clock import iso, utc_now
from ..db import connect
from ..errors import AffidavitError
from ..ingest.pipeline import Ingestor, IngestReport
from ..providers.from_config import provider_from_config
from .context import JobContext
from .lease import report_progress
from .payloads import IngestPayload, LintPayload, ReindexPayload, WatchPayload, register_handler


class JobFailed(AffidavitError):
    """The job ran but did not succeed; ``result`` is kept with the job all the same."""

    def __init__(self, message: str, result: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.result = result


def _job_chunks(ctx: JobContext) -> dict[str, int]:
    """Chunks this job recorded, by outcome, over all its attempts."""
    rows = ctx.vault.db.execute(
        "SELECT outcome, count(*) FROM ingested_chunks WHERE job_id = ? GROUP BY outcome",
        (ctx.job.id,),
    )
    return {str(outcome): int(count) for outcome, count in rows}


def ingest_result(ctx: JobContext, report: IngestReport) -> dict[str, Any]:
    sources = []
    for source in report.sources:
        sources.append(
            {
                "target": source.target,
                "status": source.status,
                "source_id": source.source_id,
                "name": source.name,
                "trust": source.trust,
                "message": source.message,
                "chunks": {
                    s: sum(1 for c in source.chunks if c.status == s)
                    for s in sorted({c.status for c in source.chunks})
                },
                "problems": [
                    {"chunk": c.index + 1, "status": c.status, "message": c.message}
                    for c in source.chunks
                    if c.status in ("failed", "rejected")
                ],
            }
        )
    return {"totals": report.totals(), "job_chunks": _job_chunks(ctx), "sources": sources}


def run_ingest(ctx: JobContext, payload: IngestPayload) -> dict[str, Any]:
    """Ingest the payload's sources; plans go to the inbox, or are applied with ``yes``."""
    vault = ctx.vault
    provider = provider_from_config(vault.config, payload.model)
    if payload.dry_run:  # the job's preview: what it would send and cost, nothing stored
        from ..ingest.dry_run import estimate

        try:
            return estimate(vault, provider, list(payload.sources), payload.trust).to_json()
        finally:
            provider.close()
    reviewer = provider_from_config(vault.config, payload.model) if vault.config.review else None
    seen: dict[str, tuple[int, int]] = {}

    def progress(name: str, done: int, total: int) -> None:
        seen[name] = (done, total)
        chunks = _job_chunks(ctx)
        applied = chunks.get("applied", 0) + chunks.get("partial", 0)
        pending = chunks.get("pending", 0)
        ctx.progress(
            sum(d for d, _ in seen.values()),
            sum(t for _, t in seen.values()),
            f"{name}: chunk {done}/{total} · source {len(seen)} · plans: {applied} applied, "
            f"{pending} in the inbox",
        )

    try:
        report = Ingestor(
            vault,
            provider,
            reviewer=reviewer,
            apply_now=payload.yes,
            progress=progress,
            actor=ctx.actor,
            job_id=ctx.job.id,
            checkpoint=ctx.checkpoint,
            step=ctx.step,
            budget=payload.budget,
        ).run(list(payload.sources), payload.trust)
    finally:
        provider.close()
        if reviewer is not None:
            reviewer.close()
    result = ingest_result(ctx, report)
    if report.failed:
        names = ", ".join(s.target for s in report.failed[:5])
        raise JobFailed(
            f"{len(report.failed)} of {len(report.sources)} source(s) failed ({names}); "
            "see the job's result for why.",
            result,
        )
    return result


def run_watch(ctx: JobContext, payload: WatchPayload) -> dict[str, Any]:
    """One look over the payload's folders (``affidavit watch --once``): what changed since
    the last look is ingested through the policy's path, what was deleted is reported. A job
    of one of the daemon's watches (``payload.watch``) looks only at the changed ``paths`` (all
    of the folder without them), and only while that watch is registered and its folder
    passes the checks again now (:func:`affidavit.watch.registered.refusal`)."""
    from ..watch import Watcher  # watchfiles and pathspec: only for this kind

    if payload.watch is not None:
        skipped = _watch_gone(ctx, payload)
        if skipped is not None:
            return skipped
    events: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        events.append(event)
        if event["event"] in ("ingested", "failed", "deleted"):
            ctx.progress(len(events), 0, f"{event['event']}: {event.get('path', '')}"[:200])

    provider = provider_from_config(ctx.vault.config, payload.model)
    try:
        watcher = Watcher(
            ctx.vault,
            [Path(f) for f in payload.folders],
            provider,
            emit,
            trust=payload.trust,
            actor=ctx.actor,
            confined=payload.watch is not None,
        )
        if payload.paths is None:
            watcher.catch_up()
        else:
            watcher.handle(Path(p) for p in payload.paths)
        if not _more_queued(ctx):  # the last of a burst: the queue is quiet now
            watcher.settle()
    finally:
        provider.close()
    counts: dict[str, int] = {}
    for event in events:
        counts[event["event"]] = counts.get(event["event"], 0) + 1
    result = {
        "counts": counts,
        "events": events[:1000],
        "events_left_out": max(0, len(events) - 1000),
    }
    if counts.get("failed") or counts.get("error"):
        raise JobFailed(
            f"{counts.get('failed', 0) + counts.get('error', 0)} file(s) could not be ingested; "
            "see the job's result for why.",
            result,
        )
    return result


def _more_queued(ctx: JobContext) -> bool:
    """Whether another job waits in the vault's queue: a watch job then leaves the automatic
    lint (``settle``) to the last one, as ``affidavit watch`` runs it only when quiet, so a
    save queued behind it never waits for a whole-wiki lint the save before made due."""
    row = ctx.vault.db.execute(
        "SELECT 1 FROM jobs WHERE status = 'queued' AND id != ? LIMIT 1", (ctx.job.id,)
    ).fetchone()
    return row is not None


def _watch_gone(ctx: JobContext, payload: WatchPayload) -> dict[str, Any] | None:
    """The result of a daemon watch's job that must read nothing (None: it may run): its watch
    was removed or refused since it was queued, or its folder fails the checks now (the watch
    is then refused, and the job fails saying why)."""
    from ..errors import NotFoundError
    from ..watch.registered import get_watch, refusal, refuse

    assert payload.watch is not None
    try:
        watch = get_watch(ctx.vault, payload.watch)
    except NotFoundError:
        return {"skipped": f"watch {payload.watch} was removed; nothing was read"}
    if payload.folders != [watch.folder]:
        raise JobFailed(
            f"this job names watch {watch.id} but folders {payload.folders}, not its folder "
            f"{watch.folder}; queue a plain watch job instead (`affidavit watch DIR --once "
            "--async`).",
            {},
        )
    if watch.status == "refused":
        return {"skipped": f"watch {watch.id} is refused: {watch.error}"}
    why = refusal(watch.folder, ctx.vault)
    if why is not None:
        refuse(ctx.vault, watch.id, why)
        raise JobFailed(f"watch {watch.id} refused: {why}", {"refused": why})
    return None


def run_reindex(ctx: JobContext, payload: ReindexPayload) -> dict[str, Any]:
    """Rebuild the search index, then the stale claim vectors (with [embeddings])."""
    from ..retrieval.embeddings import load_embedder, unavailable_reason
    from ..retrieval.tantivy_index import IndexBusy, rebuild_search_index

    embedder = load_embedder()
    with ctx.vault.write_lock():
        try:
            result: dict[str, Any] = {"search_index": rebuild_search_index(ctx.vault.db)}
        except IndexBusy as exc:
            raise JobFailed(str(exc), {}) from None
    if embedder is None:
        result["vectors"] = f"skipped: {unavailable_reason()}"
        return result
    from ..retrieval.vectors import VectorIndex  # numpy: only with the extra

    index = VectorIndex(clock=ctx.vault.clock)

    def progress(done: int, total: int) -> None:
        ctx.progress(done, total, f"embedded {done}/{total} claims")

    with ctx.vault.write_lock():
        report = index.reindex(ctx.vault.db, embedder, progress=progress)
    result.update(_as_json(report))
    return result


def run_lint(ctx: JobContext, payload: LintPayload) -> dict[str, Any]:
    """Run lint through ``affidavit.lint.run_lint(vault, propose=..., progress=...)``."""
    try:
        lint = importlib.import_module("affidavit.lint")
    except ImportError as exc:
        raise JobFailed(f"lint is not available in this installation ({exc}).") from None
    run = getattr(lint, "run_lint", None)
    if run is None:
        raise JobFailed(
            "lint can't run as a job yet: affidavit.lint has no run_lint(vault, propose=..., "
            "progress=...). Run `affidavit lint` in the foreground instead."
        )
    # The checks read one snapshot on the vault's connection, so progress goes through its own.
    progress_db = connect(ctx.vault.state_dir / "db.sqlite")

    def progress(stage: str, done: int, total: int) -> None:
        message = f"lint: {stage} {done}/{total}"
        report_progress(progress_db, ctx.job.id, done, total, message, iso(utc_now()))

    try:
        provider = provider_from_config(ctx.vault.config)
        try:
            report = run(  # its fix plans are the requester's: a token's are an agent's (W13)
                ctx.vault,
                provider,
                propose=payload.propose,
                trigger="job",
                progress=progress,
                actor=ctx.actor,
            )
        finally:
            provider.close()
    finally:
        progress_db.close()
    return _as_json(report)


def _as_json(report: Any) -> dict[str, Any]:
    if hasattr(report, "to_json"):
        data = report.to_json()
    elif is_dataclass(report) and not isinstance(report, type):
        data = asdict(report)
    else:
        data = report
    return data if isinstance(data, dict) else {"value": data}


register_handler("ingest", IngestPayload, run_ingest)
register_handler("watch", WatchPayload, run_watch)
register_handler("reindex", ReindexPayload, run_reindex)
register_handler("lint", LintPayload, run_lint)
