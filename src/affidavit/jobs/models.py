"""The job and its events as pydantic models: what the CLI prints and the daemon returns."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
JOB_STATUSES: tuple[str, ...] = ("queued", "running", "done", "failed", "cancelled")
TERMINAL: frozenset[str] = frozenset({"done", "failed", "cancelled"})

EVENT_TYPES: tuple[str, ...] = (
    "submitted",  # {kind, requested_by}
    "started",  # {attempt, worker, resumed}
    "progress",  # {done, total, message}
    "cancel_requested",  # {actor}
    "requeued",  # {reason}: the worker stopped; the job waits to be resumed
    "done",  # {result summary}
    "failed",  # {error}
    "cancelled",  # {actor, error}
)
"""Every event type a job can emit; a terminal job's last event is done, failed or cancelled."""


class JobProgress(BaseModel):
    """How far the running job is: ``done`` of ``total`` steps, and what it is doing."""

    model_config = ConfigDict(frozen=True)
    done: int = 0
    total: int = 0
    message: str = ""


class Job(BaseModel):
    """One job of a vault's queue (or, with ``queued`` false, an ingest run inline by a command)."""

    model_config = ConfigDict(frozen=True)
    id: str
    kind: str
    status: JobStatus
    queued: bool = Field(description="False for work a command ran in the foreground.")
    payload: dict[str, Any] = Field(description="The validated payload, tagged by kind.")
    requested_by: str
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    updated_at: str | None = None
    progress: JobProgress = JobProgress()
    result: dict[str, Any] | None = None
    error: str = ""
    attempts: int = 0
    max_attempts: int = 0
    timeout_seconds: int = Field(0, description="Time limit of one attempt; 0: none.")
    cancel_requested: bool = False
    cancelled_by: str | None = None
    lease_owner: str | None = Field(None, description="The worker holding the job.")
    lease_expires_at: str | None = None
    heartbeat_at: str | None = None

    @property
    def terminal(self) -> bool:
        """Whether the job is finished (done, failed or cancelled) and will not change again."""
        return self.status in TERMINAL


class JobEvent(BaseModel):
    """One entry of a job's event stream, in ``seq`` order (for server-sent events)."""

    model_config = ConfigDict(frozen=True)
    seq: int
    job_id: str
    at: str
    type: str
    data: dict[str, Any]


def _stamp(value: float | None) -> str | None:
    if value is None:
        return None
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def _json(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else {"value": value}


def job_from_row(row: sqlite3.Row) -> Job:
    """A :class:`Job` from a row of ``jobs`` (any row: queued jobs and older inline runs)."""
    queued = bool(row["queued"])
    payload = _json(row["payload"]) or {}
    result = _json(row["result"])
    if not queued:
        detail = _json(row["detail"]) or {}
        payload = {"kind": row["kind"], **{k: v for k, v in detail.items() if k != "totals"}}
        result = {"totals": detail["totals"]} if "totals" in detail else None
    return Job(
        id=row["id"],
        kind=row["kind"],
        status=row["status"],
        queued=queued,
        payload=payload,
        requested_by=row["requested_by"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        updated_at=row["updated_at"],
        progress=JobProgress(
            done=row["progress_done"],
            total=row["progress_total"],
            message=row["progress_message"],
        ),
        result=result,
        error=row["error"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        timeout_seconds=row["timeout_seconds"],
        cancel_requested=bool(row["cancel_requested"]),
        cancelled_by=row["cancelled_by"],
        lease_owner=row["lease_owner"] if row["status"] == "running" else None,
        lease_expires_at=_stamp(row["lease_expires_at"]) if row["status"] == "running" else None,
        heartbeat_at=_stamp(row["heartbeat_at"]),
    )


def event_from_row(row: sqlite3.Row) -> JobEvent:
    return JobEvent(
        seq=row["seq"],
        job_id=row["job_id"],
        at=row["at"],
        type=row["type"],
        data=json.loads(row["data"]),
    )
