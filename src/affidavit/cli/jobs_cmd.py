"""``affidavit jobs``: the vault's job queue — list, show, cancel, wait for and run jobs.

Everything works on the database: no daemon is needed. ``affidavit jobs work`` is a foreground
worker for when no daemon serves the vault. With ``--database URL --vault NAME`` list, show,
cancel and wait act on a vault of a PostgreSQL database (its jobs run by ``affidavit worker``),
printed the same way.
"""

from __future__ import annotations

import builtins
import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import click

from ..agents import local_actor
from ..jobs import JOB_STATUSES, BasePayload, Job, JobQueue, Worker
from ..jobs.models import JobEvent
from ._common import echo_json, json_option, opened_vault, user_errors, vault_path
from .database import database_options, database_vault

EXIT_FAILED = 1
EXIT_DEADLINE = 124
"""``affidavit jobs wait``: the deadline passed before the job finished (as timeout(1) does)."""


def current_user() -> str:
    """The local user name, as the queue records who requested a job (the kernel's uid)."""
    return local_actor()


def submit_job(ctx: click.Context, payload: BasePayload, as_json: bool) -> Job:
    """Queue ``payload`` for the current vault and tell the user how to follow it."""
    with opened_vault(ctx) as vault:
        job = JobQueue(vault).submit(payload, requested_by=current_user())
    if as_json:
        echo_json(job.model_dump(mode="json"))
    else:
        click.echo(f"Queued {job.kind} job {job.id}.")
        click.echo(f"  follow it:  affidavit jobs wait {job.id}")
        click.echo("  no daemon serving this vault? run it:  affidavit jobs work --once")
    return job


class JobBook(Protocol):
    """What the commands read and do on a vault's jobs: :class:`JobQueue` (a vault folder) or
    :class:`~affidavit.service.pg_jobs.PgJobs` (a vault of a PostgreSQL database)."""

    def list(self, status: str | None = None, limit: int = 50) -> list[Job]: ...
    def get(self, job_id: str) -> Job: ...
    def events(self, job_id: str, after_seq: int = 0) -> builtins.list[JobEvent]: ...
    def cancel(self, job_id: str, actor: str) -> Job: ...
    def wait(self, job_id: str, deadline_seconds: float) -> Job: ...


@contextmanager
def job_book(ctx: click.Context, db_url: str | None, db_vault: str | None) -> Iterator[JobBook]:
    """The jobs of ``--vault NAME`` of the database ``--database URL`` (given to this command or
    to ``affidavit jobs`` before it), else of the vault folder (the global ``--vault PATH``)."""
    group = ctx.parent.params if ctx.parent is not None and ctx.command is not jobs else {}
    db_vault = db_vault or group.get("db_vault")
    if db_vault is None:
        with opened_vault(ctx) as vault:
            yield JobQueue(vault)
        return
    from ..service.pg_jobs import PgJobs

    with database_vault(db_url or group.get("db_url"), db_vault) as pg:
        yield PgJobs(pg)


def _line(job: Job) -> str:
    progress = f"{job.progress.done}/{job.progress.total}" if job.progress.total else "-"
    note = job.error or job.progress.message
    flag = " (cancelling)" if job.cancel_requested and job.status == "running" else ""
    return (
        f"{job.id}  {job.status:<9} {job.kind:<8} {progress:>7}  {job.created_at}  "
        f"{job.requested_by or '-'}{flag}  {note[:80]}"
    ).rstrip()


@click.group("jobs", invoke_without_command=True)
@click.option("--status", type=click.Choice(JOB_STATUSES), help="Only jobs with this status.")
@click.option("--limit", default=50, show_default=True, help="How many jobs to list.")
@database_options
@json_option
@click.pass_context
@user_errors
def jobs(
    ctx: click.Context, status: str | None, limit: int, db_url: str | None,
    db_vault: str | None, as_json: bool,
) -> None:  # fmt: skip
    """List the vault's jobs, newest first (ingest, reindex, lint run as jobs).

    Jobs are queued with --async (e.g. `affidavit ingest --async`), run by a worker — the
    daemon, or `affidavit jobs work` — one at a time per vault, and resumed after a crash.

    \b
    Examples:
      affidavit jobs
      affidavit jobs --status running --json
      affidavit jobs show job-3f2a9c
      affidavit jobs --database postgresql://wiki@db/wiki --vault handbook
    """
    if ctx.invoked_subcommand is not None:
        if db_vault is not None and ctx.invoked_subcommand == "work":
            raise click.UsageError(
                "`affidavit jobs work` runs a vault folder's jobs; a database's jobs are run by "
                "`affidavit worker --database URL --vault NAME`."
            )
        return
    with job_book(ctx, db_url, db_vault) as book:
        found = book.list(status=status, limit=limit)
    if as_json:
        echo_json([job.model_dump(mode="json") for job in found])
        return
    if not found:
        click.echo("No jobs." if status is None else f"No {status} jobs.")
    for job in found:
        click.echo(_line(job))


@jobs.command("show")
@click.argument("job_id")
@database_options
@json_option
@click.pass_context
@user_errors
def show(
    ctx: click.Context, job_id: str, db_url: str | None, db_vault: str | None, as_json: bool
) -> None:
    """Show one job: payload, progress, attempts, result or error, and its events.

    \b
    Example:
      affidavit jobs show 3f2a9c --json
    """
    with job_book(ctx, db_url, db_vault) as book:
        job = book.get(job_id)
        events = book.events(job.id)
    if as_json:
        data: dict[str, Any] = job.model_dump(mode="json")
        data["events"] = [e.model_dump(mode="json") for e in events]
        echo_json(data)
        return
    click.echo(f"{job.id}  {job.kind}  {job.status}")
    click.echo(f"  requested by {job.requested_by or '-'} at {job.created_at}")
    click.echo(f"  payload: {job.payload}")
    if job.queued:
        click.echo(
            f"  attempts: {job.attempts}/{job.max_attempts} · time limit: "
            f"{job.timeout_seconds or 'none'}{'s' if job.timeout_seconds else ''}"
        )
    if job.progress.total or job.progress.message:
        click.echo(f"  progress: {job.progress.done}/{job.progress.total} {job.progress.message}")
    if job.lease_owner:
        click.echo(f"  worker: {job.lease_owner} (lease until {job.lease_expires_at})")
    if job.error:
        click.echo(f"  error: {job.error}")
    if job.result is not None and "totals" in job.result:
        click.echo(f"  result: {job.result['totals']}")
    for event in events[-20:]:
        click.echo(f"  [{event.seq}] {event.at} {event.type} {event.data or ''}".rstrip())


@jobs.command("cancel")
@click.argument("job_id")
@database_options
@click.pass_context
@user_errors
def cancel(ctx: click.Context, job_id: str, db_url: str | None, db_vault: str | None) -> None:
    """Cancel a job: a queued one at once, a running one by its worker, which stops the job's
    processes (SIGTERM, then SIGKILL) — and everything they started.

    \b
    Example:
      affidavit jobs cancel job-3f2a9c
      affidavit jobs cancel job-3f2a9c --database postgresql://wiki@db/wiki --vault handbook
    """
    with job_book(ctx, db_url, db_vault) as book:  # who asked: this user (cancel_requested_by)
        job = book.cancel(job_id, current_user())
    if job.status == "cancelled":
        click.echo(f"Cancelled {job.id}.")
    else:
        click.echo(f"Asked the worker to stop {job.id}; `affidavit jobs wait {job.id}` follows it.")


@jobs.command("wait")
@click.argument("job_id")
@click.option(
    "--deadline",
    type=float,
    default=3600,
    show_default=True,
    help="Give up waiting after this many seconds (the job keeps running).",
)
@database_options
@json_option
@click.pass_context
@user_errors
def wait(
    ctx: click.Context, job_id: str, deadline: float, db_url: str | None, db_vault: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Wait for a job to finish, printing its progress. Exit status: 0 done, 1 failed or
    cancelled, 124 the deadline passed first.

    \b
    Example:
      affidavit jobs wait job-3f2a9c --deadline 600 && affidavit inbox
    """
    with job_book(ctx, db_url, db_vault) as queue:
        job = queue.get(job_id)
        shown = ""
        remaining = deadline
        while not job.terminal and job.queued and remaining > 0:
            step = min(1.0, remaining)
            job = queue.wait(job.id, step)
            remaining -= step
            line = f"{job.status} {job.progress.done}/{job.progress.total} {job.progress.message}"
            if not as_json and line != shown and job.status == "running":
                click.echo(line.rstrip(), err=True)
                shown = line
    if as_json:
        echo_json(job.model_dump(mode="json"))
    elif job.terminal:
        click.echo(f"{job.id} {job.status}" + (f": {job.error}" if job.error else ""))
    else:
        click.echo(
            f"{job.id} is still {job.status} after {deadline:g}s. Is a worker running? "
            "(`affidavit serve`, or `affidavit jobs work`; for a database's vault, "
            "`affidavit worker --database URL`)"
        )
    if job.status == "done" or (not job.queued and job.status != "failed"):
        return
    ctx.exit(EXIT_FAILED if job.terminal else EXIT_DEADLINE)


@jobs.command("work")
@click.option("--once", is_flag=True, help="Run at most one job, then exit.")
@click.option(
    "--poll", type=float, default=1.0, show_default=True, help="Seconds between queue checks."
)
@click.pass_context
@user_errors
def work(ctx: click.Context, once: bool, poll: float) -> None:
    """Run this vault's queued jobs in the foreground (when no daemon serves the vault).

    Ctrl-C (or SIGTERM) stops at the running job's next checkpoint and puts it back in the
    queue; the next worker resumes it.

    \b
    Examples:
      affidavit jobs work --once
      affidavit ingest ~/papers/ --async --yes && affidavit jobs work
    """
    worker_id = f"cli-{socket.gethostname()}-{os.getpid()}"
    root = vault_path(ctx)
    with opened_vault(ctx) as vault:
        root = vault.root
    with Worker(root, worker_id) as worker:
        if once:
            job = worker.run_once()
            if job is None:
                click.echo("No job to run.")
                return
            click.echo(_line(job))
            if job.status not in ("done", "queued"):
                ctx.exit(EXIT_FAILED)
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        click.echo(f"Worker {worker_id} serving {root}; Ctrl-C stops it.", err=True)
        worker.run_forever(stop, poll_seconds=poll)


COMMANDS = [jobs]
