"""The vault's job queue: submit, list, look, cancel, and follow a job's events (SSE).

Jobs run in the daemon's worker (one per served vault; the queue's lease runs one job per vault
at a time, even across daemons). An ``ingest`` job reads local files or URLs with the daemon's
own rights, so only the vault's owner may submit one, and only to a daemon that runs as the
owner (or when the owner is root): a token, or another local user, can never make the daemon read
a file they could not read themselves.
"""

from __future__ import annotations

import os
from typing import Annotated

import anyio
from fastapi import APIRouter, Body, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from ...jobs.models import JOB_STATUSES, Job, JobEvent
from ...jobs.payloads import IngestPayload, JobPayload, WatchPayload
from ...jobs.queue import JobQueue
from ...service.backend import Forbidden
from ...service.models import AccessRole
from ..auth import Principal, access, allows
from ..deps import CallerDep, RoleDep, ServedDep, VaultDep, vault_param
from ..job_stream import event_stream, resume_at
from ..registry import ServedVault

router = APIRouter(
    prefix="/v1/vaults/{vault}/jobs", dependencies=[Depends(vault_param)], tags=["jobs"]
)


@router.post("", response_model=Job, status_code=202, **access("propose"))
def submit(
    vault: VaultDep,
    caller: CallerDep,
    role: RoleDep,
    payload: Annotated[JobPayload, Body(description="The job, tagged by kind.")],
) -> Job:
    """Queue a job (ingest, watch, reindex, lint). Ingest and watch need the owner, see above."""
    if isinstance(payload, (IngestPayload, WatchPayload)):
        given = payload.sources if isinstance(payload, IngestPayload) else payload.folders
        reads_as_daemon(caller, role, f"an {payload.kind} job", any("://" not in s for s in given))
    return JobQueue(vault).submit(payload, caller.actor)


def reads_as_daemon(caller: Principal, role: AccessRole, what: str, local: bool) -> None:
    """Refuse ``what`` (it makes the daemon read files, or URLs) unless the caller is the
    vault's owner and, for ``local`` paths, the daemon's own user (or root): a token, or another
    local user, can never make the daemon read a file they could not read themselves."""
    if role != "owner":
        raise Forbidden(f"{what} reads files and URLs as the daemon: only the owner may ask it.")
    if local and caller.uid not in (0, os.geteuid()):
        raise Forbidden(
            f"this daemon runs as UID {os.geteuid()}, not as you (UID {caller.uid}); it won't "
            "read local paths for you. Use `affidavit ingest` or `affidavit watch` directly, or "
            "your own daemon."
        )


@router.get("", response_model=list[Job], **access("read"))
def list_jobs(
    vault: VaultDep,
    status: Annotated[str | None, Query(pattern="^(" + "|".join(JOB_STATUSES) + ")$")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[Job]:
    """The newest jobs, optionally only those with ``status``."""
    return JobQueue(vault).list(status=status, limit=limit)


@router.get("/{job_id}", response_model=Job, **access("read"))
def get_job(vault: VaultDep, job_id: str) -> Job:
    """A job: status, progress, result or error, attempts, lease."""
    return JobQueue(vault).get(job_id)


@router.post("/{job_id}/cancel", response_model=Job, **access("propose"))
def cancel(vault: VaultDep, caller: CallerDep, role: RoleDep, job_id: str) -> Job:
    """Cancel a job. Needs approve, or propose for a job you submitted yourself."""
    queue = JobQueue(vault)
    job = queue.get(job_id)
    if not allows(role, "approve") and job.requested_by != caller.actor:
        raise Forbidden(
            f"job {job.id} was submitted by {job.requested_by}; cancelling it needs approve."
        )
    return queue.cancel(job.id, caller.actor)


def _poll(served: ServedVault, job_id: str, after: int) -> tuple[list[JobEvent], Job]:
    with served.borrow() as vault:
        queue = JobQueue(vault)
        return queue.events(job_id, after), queue.get(job_id)


def _resolve(served: ServedVault, job_id: str) -> str:
    with served.borrow() as vault:
        return JobQueue(vault).resolve(job_id)


@router.get(
    "/{job_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Job events (SSE)."}},
    **access("read"),
)
async def events(
    request: Request,
    served: ServedDep,
    job_id: str,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> StreamingResponse:
    """The job's events as ``text/event-stream``, from ``after`` (or Last-Event-ID) until the
    job is done, failed or cancelled; the stream then ends."""
    full = await anyio.to_thread.run_sync(_resolve, served, job_id)
    return event_stream(
        lambda seq: _poll(served, full, seq), resume_at(after, last_event_id),
        request.app.state.stopping,
    )  # fmt: skip
