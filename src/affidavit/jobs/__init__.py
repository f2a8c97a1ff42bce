"""The durable job queue (SPEC §4, issue 6): ingest, reindex and lint as background jobs.

Jobs live in the vault's database with a typed payload, status, progress, result and an event
stream. One job of a vault runs at a time across every process (a lease row claimed in a
``BEGIN IMMEDIATE`` transaction, kept by a heartbeat); each runs in its own process group so a
timeout or a cancellation stops everything it started; a job whose worker died is resumed from
its checkpoints, and its effects happen once.

    queue = JobQueue(vault)
    job = queue.submit(IngestPayload(sources=["/abs/notes.md"], yes=True), requested_by="ann")
    Worker(vault.root, "worker-1").run_once()
    queue.wait(job.id, deadline_seconds=60).status  # 'done'
"""

from .context import JobContext, JobInterrupted
from .handlers import JobFailed
from .lease import Lease
from .models import EVENT_TYPES, JOB_STATUSES, Job, JobEvent, JobProgress, JobStatus
from .payloads import (
    JOB_PAYLOAD,
    BasePayload,
    IngestPayload,
    JobPayload,
    JobPayloadError,
    LintPayload,
    ReindexPayload,
    WatchPayload,
    job_kinds,
    parse_payload,
    register_handler,
)
from .queue import JobQueue
from .worker import Worker

__all__ = [
    "EVENT_TYPES",
    "JOB_PAYLOAD",
    "JOB_STATUSES",
    "BasePayload",
    "IngestPayload",
    "Job",
    "JobContext",
    "JobEvent",
    "JobFailed",
    "JobInterrupted",
    "JobPayload",
    "JobPayloadError",
    "JobProgress",
    "JobQueue",
    "JobStatus",
    "Lease",
    "LintPayload",
    "ReindexPayload",
    "WatchPayload",
    "Worker",
    "job_kinds",
    "parse_payload",
    "register_handler",
]
