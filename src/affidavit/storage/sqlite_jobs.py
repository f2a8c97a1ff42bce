"""The job-queue contract (:mod:`affidavit.storage.jobs`) over today's SQLite queue, unchanged:
:class:`affidavit.jobs.JobQueue` submits and recovers, :mod:`affidavit.jobs.lease` claims (one
running job per vault, in a ``BEGIN IMMEDIATE`` transaction) and ends jobs. No table is added:
the fence is the job's ``attempts`` (one more at every claim) and the secret its ``lease_token``;
every fenced write checks both in the transaction that writes.

(Today's worker gives an attempt back when it requeues a job it was asked to stop; a fence number
can then repeat, but the claim's secret is new, so the old claim is still refused.)
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from ..clock import iso
from ..db import transaction
from ..jobs import lease as leases
from ..jobs.queue import JobQueue
from .base import check_text
from .jobs import Claim, JobRecord, check_attempts, check_lease, lost, well_formed
from .sqlite import SQLiteStorage


class SQLiteJobStore:
    """The queue of one SQLite vault (``storage``'s) as a :class:`~.jobs.JobStore`."""

    backend = "sqlite"

    def __init__(self, storage: SQLiteStorage) -> None:
        self.storage = storage
        self.vault = storage.vault
        self.db = storage.vault.db

    def close(self) -> None:
        self.storage.close()

    def _at(self) -> str:
        return iso(self.vault.clock())

    def enqueue(
        self,
        vault: str,
        payload: Mapping[str, Any],
        requested_by: str,
        *,
        max_attempts: int = 3,
    ) -> str:
        self.storage._check(vault)
        job = JobQueue(self.vault).submit(
            payload,
            check_text("requested_by", requested_by),
            max_attempts=check_attempts(max_attempts),
        )
        return job.id

    def claim(self, vault: str, owner: str, lease_seconds: float) -> Claim | None:
        self.storage._check(vault)
        seconds = check_lease(lease_seconds)
        got = leases.claim(
            self.db, check_text("owner", owner), seconds, time.time(), self.vault.clock
        )
        if got is None:
            return None
        return Claim(vault, got.job_id, got.attempt, got.token, owner, got.attempt)

    def _held(self, claim: Claim) -> None:
        """Refuse (:class:`LeaseLost`) unless ``claim`` is the job's current one; called inside
        the transaction that writes."""
        if not well_formed(claim):
            raise lost(claim, None)
        self.storage._check(claim.vault)
        row = self.db.execute(
            "SELECT status, attempts AS fence, lease_token FROM jobs WHERE id = ? AND queued = 1",
            (claim.job_id,),
        ).fetchone()
        if (
            row is None
            or row["status"] != "running"
            or row["fence"] != claim.fence
            or row["lease_token"] != claim.token
        ):
            raise lost(claim, row)

    def renew(self, claim: Claim, lease_seconds: float) -> None:
        seconds, now = check_lease(lease_seconds), time.time()
        with transaction(self.db):
            self._held(claim)
            self.db.execute(
                "UPDATE jobs SET heartbeat_at = ?, lease_expires_at = ? WHERE id = ?",
                (now, now + seconds, claim.job_id),
            )

    def progress(self, claim: Claim, done: int, total: int, message: str) -> None:
        with transaction(self.db):
            self._held(claim)
            leases.report_progress(
                self.db, claim.job_id, done, total, check_text("message", message), self._at()
            )

    def _finish(self, claim: Claim, status: str, **kwargs: Any) -> None:
        with transaction(self.db):
            self._held(claim)
            if not leases.finish(self.db, claim.job_id, claim.token, status, self._at(), **kwargs):
                raise lost(claim, None)  # unreachable: held just above, in this transaction

    def complete(self, claim: Claim, result: Mapping[str, Any]) -> None:
        self._finish(claim, "done", result=dict(result))

    def fail(self, claim: Claim, error: str) -> None:
        self._finish(claim, "failed", error=check_text("error", error) or "failed")

    def recover(self, vault: str) -> list[str]:
        self.storage._check(vault)
        return JobQueue(self.vault).recover()

    def _record(self, row: sqlite3.Row) -> JobRecord:
        events = self.db.execute(
            "SELECT type FROM job_events WHERE job_id = ? ORDER BY seq", (row["id"],)
        ).fetchall()
        return JobRecord(
            id=str(row["id"]),
            kind=str(row["kind"]),
            status=str(row["status"]),
            payload=json.loads(row["payload"] or "{}"),
            attempts=int(row["attempts"]),
            max_attempts=int(row["max_attempts"]),
            fence=int(row["attempts"]),
            owner=row["lease_owner"] if row["status"] == "running" else None,
            progress=(
                int(row["progress_done"]),
                int(row["progress_total"]),
                str(row["progress_message"]),
            ),
            result=json.loads(row["result"]) if row["result"] else None,
            error=str(row["error"]),
            events=tuple(str(e["type"]) for e in events),
        )

    def job(self, vault: str, job_id: str) -> JobRecord | None:
        self.storage._check(vault)
        row = self.db.execute(
            "SELECT * FROM jobs WHERE id = ? AND queued = 1", (job_id,)
        ).fetchone()
        return None if row is None else self._record(row)

    def jobs(self, vault: str) -> list[JobRecord]:
        self.storage._check(vault)
        rows = self.db.execute(
            "SELECT * FROM jobs WHERE queued = 1 ORDER BY created_at, rowid"
        ).fetchall()
        return [self._record(row) for row in rows]
