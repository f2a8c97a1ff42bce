"""A PostgreSQL vault's job queue as the daemon serves it: submit an ingest of sources sent in the
request (stored content-addressed in the database, then queued as one ``ingest_stored`` job that
``affidavit worker --database`` runs on any host), submit a lint of the vault, list, show and
cancel jobs. The records are
SQLite's (:class:`~affidavit.jobs.models.Job`)."""

from __future__ import annotations

import builtins
import json
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..clock import iso
from ..errors import NotFoundError
from ..jobs.models import JOB_STATUSES, Job, JobEvent, JobProgress
from ..jobs.payloads import LintPayload, ModelName, StoredIngestPayload
from ..storage.postgres_jobs import PostgresJobStore
from .backend import Forbidden
from .pg_vaults import PgVault

TRUST_NEEDS_APPROVE = "trusted"
"""The tier only a caller with the approve role may give a source it sends."""


class SentSource(BaseModel):
    """One source sent to be ingested: its text (UTF-8), a name, and its trust tier."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=255, pattern=r"^[^/\x00]+$")
    text: str = Field(min_length=1, max_length=2_000_000)
    media_type: Literal["text/markdown", "text/plain"] = "text/markdown"
    trust: Literal["untrusted", "semi-trusted", "trusted"] = "semi-trusted"


class IngestRequest(BaseModel):
    """``POST …/jobs`` on a PostgreSQL vault: the sources to ingest, as one job."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["ingest"] = "ingest"
    sources: list[SentSource] = Field(min_length=1, max_length=100)
    model: ModelName | None = Field(
        default=None, description="The worker's provider for this job (default: extractive)."
    )


class LintRequest(BaseModel):
    """``POST …/jobs`` ``{"kind": "lint"}`` on a PostgreSQL vault: lint over the vault, run by a
    worker (jobs/pg_after.py); ``propose`` puts the fixable findings' plans in the inbox."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["lint"]
    propose: bool = False


def job_of(row: dict[str, Any]) -> Job:
    """A job row of a PostgreSQL vault (:meth:`PostgresJobStore.rows`) as the API shows it."""
    running = row["status"] == "running"
    return Job(
        id=row["id"], kind=row["kind"], status=row["status"], queued=True,
        payload=json.loads(row["payload"]), requested_by=row["requested_by"],
        created_at=row["created"], started_at=row["started"], finished_at=row["finished"],
        updated_at=row["heartbeat"] or row["started"] or row["created"],
        progress=JobProgress(done=row["progress_done"], total=row["progress_total"],
                             message=row["progress_message"]),
        result=json.loads(row["result"]) if row["result"] else None, error=row["error"],
        attempts=row["attempts"], max_attempts=row["max_attempts"],
        cancel_requested=row["cancel_requested_by"] is not None,
        cancelled_by=row["cancel_requested_by"] or (
            row["error"].removeprefix("cancelled by ") if row["status"] == "cancelled" else None
        ),
        lease_owner=row["lease_owner"] if running else None,
        lease_expires_at=row["lease_until"] if running else None, heartbeat_at=row["heartbeat"],
    )  # fmt: skip


class PgJobs:
    """The job queue of one served PostgreSQL vault."""

    def __init__(self, vault: PgVault) -> None:
        self.vault = vault
        self.queue = PostgresJobStore(vault.storage)  # shares the daemon's pool; never closed

    def submit(self, body: IngestRequest, actor: str, may_trust: bool) -> Job:
        """Store each source (the same bytes are one source) and queue one job ingesting them."""
        if not may_trust and any(s.trust == TRUST_NEEDS_APPROVE for s in body.sources):
            raise Forbidden(
                "only a caller with the approve role may send a trusted source; send it as "
                "semi-trusted or untrusted, or ask an approver."
            )
        ids = []
        for sent in body.sources:
            source_id = self.vault.storage.add_source(
                self.vault.name, sent.text.encode("utf-8"), origin=f"api:{actor}/{sent.name}",
                name=sent.name, added_at=iso(self.vault.clock()),
                media_type=sent.media_type, trust=sent.trust,  # extracted there: W12's flags
            )  # fmt: skip
            ids.append(source_id)
        payload = StoredIngestPayload(sources=list(dict.fromkeys(ids)), model=body.model)
        typed = payload.model_dump(mode="json")
        attempts = int(self.vault.config.get("jobs.max_attempts"))
        job_id = self.queue.enqueue(self.vault.name, typed, actor, max_attempts=attempts)
        return self.get(job_id)

    def submit_lint(self, body: LintRequest, actor: str) -> Job:
        """Queue a lint of the vault (its fix plans, with ``propose``, are ``actor``'s)."""
        typed = LintPayload(propose=body.propose).model_dump(mode="json")
        attempts = int(self.vault.config.get("jobs.max_attempts"))
        return self.get(self.queue.enqueue(self.vault.name, typed, actor, max_attempts=attempts))

    def list(self, status: str | None = None, limit: int = 50) -> list[Job]:
        """The newest ``limit`` jobs, only those with ``status`` when given (as on SQLite)."""
        if status is not None and status not in JOB_STATUSES:
            raise NotFoundError(f"no job status {status!r}; use one of {', '.join(JOB_STATUSES)}.")
        return [job_of(r) for r in self.queue.rows(self.vault.name, limit=limit, status=status)]

    def get(self, job_id: str) -> Job:
        """The job ``job_id`` names (its id, or a unique prefix of it, as on SQLite)."""
        found = self.queue.rows(self.vault.name, self.queue.resolve(self.vault.name, job_id))
        if not found:
            raise NotFoundError(f"no job {job_id[:40]!r} in this vault; GET …/jobs lists them.")
        return job_of(found[0])

    def events(self, job_id: str, after_seq: int = 0) -> builtins.list[JobEvent]:
        """The job's events after ``after_seq``, oldest first (its ``job_events`` rows)."""
        full = self.queue.resolve(self.vault.name, job_id)
        return [
            JobEvent(seq=r["seq"], job_id=r["job_id"], at=r["at"], type=r["type"],
                     data=json.loads(r["data"]))
            for r in self.queue.events(self.vault.name, full, after_seq)
        ]  # fmt: skip

    def wait(self, job_id: str, deadline_seconds: float) -> Job:
        """Poll the job until it is done, failed or cancelled, or ``deadline_seconds`` passed;
        the job as it is then (as :meth:`JobQueue.wait`: check ``job.terminal``)."""
        full = self.queue.resolve(self.vault.name, job_id)
        end = time.monotonic() + max(0.0, deadline_seconds)
        pause = 0.05
        while True:
            job = self.get(full)
            if job.terminal or time.monotonic() >= end:
                return job
            time.sleep(min(pause, max(0.0, end - time.monotonic())))
            pause = min(pause * 1.5, 0.5)

    def cancel(self, job_id: str, actor: str) -> Job:
        """Cancel the job; ``actor`` is recorded as who asked (``cancel_requested_by``)."""
        full = self.queue.resolve(self.vault.name, job_id)
        self.queue.cancel(self.vault.name, full, actor)
        return self.get(full)


__all__ = ["IngestRequest", "LintRequest", "PgJobs", "SentSource", "job_of"]
