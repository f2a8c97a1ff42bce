"""The job queue of one vault, in its database: submit, look, cancel, follow, wait.

Everything here works on the database alone, so the CLI needs no daemon: a job submitted by
``affidavit ingest --async`` runs when a worker (``affidavit serve`` or ``affidavit jobs work``)
claims it.
"""

from __future__ import annotations

import builtins
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..clock import iso
from ..db import transaction
from ..errors import ConflictError, NotFoundError
from ..storage.queries import like_prefix
from ..vault import Vault
from .lease import add_event, holder_gone, inline_gone, recover_stale
from .models import JOB_STATUSES, Job, JobEvent, event_from_row, job_from_row
from .payloads import DATABASE_ONLY, BasePayload, JobPayloadError, parse_payload


class JobQueue:
    """The queue of ``vault``. Cheap to build; holds no state besides the vault."""

    def __init__(self, vault: Vault, *, now: Callable[[], float] = time.time) -> None:
        self.vault = vault
        self.db = vault.db
        self.now = now

    # -- submitting -------------------------------------------------------------------------
    def submit(
        self,
        payload: BasePayload | Mapping[str, Any],
        requested_by: str,
        *,
        timeout_seconds: int | None = None,
        max_attempts: int | None = None,
    ) -> Job:
        """Validate ``payload`` and queue it; the job runs when a worker claims it."""
        typed = parse_payload(payload)
        if typed.kind in DATABASE_ONLY:
            raise JobPayloadError(
                f"a {typed.kind} job runs on a PostgreSQL database's vault only (affidavit worker "
                "--database); on this vault, use an ingest job with file paths."
            )
        config = self.vault.config
        timeout = (
            int(config.get("jobs.timeout_seconds")) if timeout_seconds is None else timeout_seconds
        )
        attempts = int(config.get("jobs.max_attempts")) if max_attempts is None else max_attempts
        if timeout < 0 or attempts < 1:
            raise ConflictError("a job needs timeout_seconds >= 0 and max_attempts >= 1")
        job_id = "job-" + secrets.token_hex(6)
        at = iso(self.vault.clock())
        with transaction(self.db):
            self.db.execute(
                "INSERT INTO jobs (id, kind, status, created_at, queued, payload, requested_by, "
                "max_attempts, timeout_seconds, updated_at) "
                "VALUES (?, ?, 'queued', ?, 1, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    typed.kind,
                    at,
                    json.dumps(typed.model_dump(mode="json"), sort_keys=True),
                    requested_by,
                    attempts,
                    timeout,
                    at,
                ),
            )
            add_event(
                self.db, job_id, "submitted", {"kind": typed.kind, "requested_by": requested_by}, at
            )
        return self.get(job_id)

    # -- looking ----------------------------------------------------------------------------
    def resolve(self, ref: str) -> str:
        """The full id of the job ``ref`` names: its id, or a unique prefix (with or without
        ``job-``) of at least 4 characters."""
        ref = ref.strip().lower()
        bare = ref.removeprefix("job-")
        if len(bare) < 4:
            raise NotFoundError(f"job id {ref!r} is too short; give at least 4 characters.")
        rows = self.db.execute(
            "SELECT id FROM jobs WHERE id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' "
            "ORDER BY id LIMIT 2",
            (like_prefix(ref), like_prefix("job-" + bare)),
        ).fetchall()
        if not rows:
            raise NotFoundError(f"no job {ref}. `affidavit jobs` lists the jobs of this vault.")
        if len(rows) > 1:
            raise NotFoundError(f"job id {ref} is ambiguous; give more characters.")
        return str(rows[0]["id"])

    def recover(self) -> builtins.list[str]:
        """Settle running jobs whose holder is gone (requeued, or failed with the reason), so
        what is listed is what is true; returns their ids."""
        return recover_stale(self.db, self.now(), iso(self.vault.clock()))

    def get(self, job_id: str) -> Job:
        """The job ``job_id`` (a unique prefix is enough), after :meth:`recover`."""
        self.recover()
        row = self.db.execute("SELECT * FROM jobs WHERE id = ?", (self.resolve(job_id),)).fetchone()
        return job_from_row(row)

    def list(self, status: str | None = None, limit: int = 50) -> builtins.list[Job]:
        """The newest ``limit`` jobs, optionally only those with ``status`` (after
        :meth:`recover`)."""
        self.recover()
        if status is not None and status not in JOB_STATUSES:
            raise NotFoundError(f"no job status {status!r}; use one of {', '.join(JOB_STATUSES)}.")
        where, args = ("WHERE status = ?", [status]) if status else ("", [])
        rows = self.db.execute(
            f"SELECT * FROM jobs {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (*args, max(1, limit)),
        ).fetchall()
        return [job_from_row(r) for r in rows]

    def events(self, job_id: str, after_seq: int = 0) -> builtins.list[JobEvent]:
        """The job's events with ``seq`` greater than ``after_seq``, oldest first."""
        full = self.resolve(job_id)
        rows = self.db.execute(
            "SELECT * FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT 1000",
            (full, after_seq),
        ).fetchall()
        return [event_from_row(r) for r in rows]

    # -- acting -----------------------------------------------------------------------------
    def cancel(self, job_id: str, actor: str) -> Job:
        """Cancel a job: a queued one at once; a running one is stopped by its worker (SIGTERM,
        then SIGKILL, to its whole process group) and becomes ``cancelled``. A job whose holder
        is gone (a dead worker, or a foreground command that was killed) is cancelled at once;
        a foreground run that is still alive is refused: stop its command instead."""
        full = self.resolve(job_id)
        at = iso(self.vault.clock())
        with transaction(self.db):
            row = self.db.execute("SELECT * FROM jobs WHERE id = ?", (full,)).fetchone()
            foreground = not row["queued"] and row["status"] == "running"
            if foreground and row["lease_pid"] is not None and inline_gone(row) is not True:
                raise ConflictError(
                    f"job {full} is running in the foreground of a command (pid "
                    f"{row['lease_pid']} on {row['lease_host']}); stop that command there "
                    "(Ctrl-C). The chunks it finished are kept."
                )
            if row["status"] in ("done", "failed", "cancelled"):
                raise ConflictError(f"job {full} is already {row['status']}; nothing to cancel.")
            orphan = row["status"] == "running" and (foreground or holder_gone(row, self.now()))
            if row["status"] == "queued" or orphan:
                self.db.execute(
                    "UPDATE jobs SET status = 'cancelled', cancel_requested = 1, cancelled_by = ?, "
                    "error = ?, finished_at = ?, updated_at = ?, lease_owner = NULL, "
                    "lease_token = NULL, lease_expires_at = NULL WHERE id = ?",
                    (actor, f"cancelled by {actor}", at, at, full),
                )
                add_event(
                    self.db,
                    full,
                    "cancelled",
                    {"actor": actor, "error": f"cancelled by {actor}"},
                    at,
                )
            elif not row["cancel_requested"]:
                self.db.execute(
                    "UPDATE jobs SET cancel_requested = 1, cancelled_by = ?, updated_at = ? "
                    "WHERE id = ?",
                    (actor, at, full),
                )
                add_event(self.db, full, "cancel_requested", {"actor": actor}, at)
        return self.get(full)

    def wait(self, job_id: str, deadline_seconds: float) -> Job:
        """Block until the job is done, failed or cancelled, or ``deadline_seconds`` passed;
        returns the job as it is then (check ``job.terminal``)."""
        full = self.resolve(job_id)
        end = time.monotonic() + max(0.0, deadline_seconds)
        pause = 0.02
        while True:
            job = self.get(full)
            if job.terminal or not job.queued or time.monotonic() >= end:
                return job
            time.sleep(min(pause, max(0.0, end - time.monotonic())))
            pause = min(pause * 1.5, 0.5)
