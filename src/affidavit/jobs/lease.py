"""The lease: which worker runs a vault's one running job, until when, proven by a token.

A worker claims a job in one ``BEGIN IMMEDIATE`` transaction: it may take a queued job only when
no queue job is running, or when the running job's lease expired or its holder (same host) is
dead — then the job is resumed, one attempt more. A partial unique index on ``jobs`` makes a
second running job impossible whatever the code does. Every later write of the holder (heartbeat,
result) names the claim's token, so a worker that lost its lease can't overwrite the next one.

A worker's lease names its process and when that process started (:func:`holder_name`), so a
later process the kernel gives the same pid is not taken for the holder.

A command that runs an ingest in the foreground records itself (host and process) on its job row
(``queued = 0``). :func:`recover_stale` settles running jobs whose holder is gone — requeued (or
failed, past their attempts), or, for a foreground run whose command died, failed with the reason —
so ``affidavit jobs`` and the next ``affidavit ingest`` never show a dead run as ``running``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import Clock, iso
from ..db import transaction


@dataclass(frozen=True)
class Lease:
    """A worker's claim on one job."""

    job_id: str
    token: str
    owner: str
    attempt: int
    timeout_seconds: int
    max_attempts: int


def add_event(
    db: sqlite3.Connection, job_id: str, type_: str, data: dict[str, Any], at: str
) -> None:
    """Append an event to the job's stream (inside the caller's transaction)."""
    db.execute(
        "INSERT INTO job_events (job_id, at, type, data) VALUES (?, ?, ?, ?)",
        (job_id, at, type_, json.dumps(data, ensure_ascii=False, sort_keys=True)),
    )


_STARTED = re.compile(r"started (\d+)\)")


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None if unknown: with
    the pid it names one process, whatever later process the kernel gives the same pid."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return fields[19] if len(fields) > 19 else None


def holder_name(label: str, pid: int) -> str:
    """A lease holder's name that records its process's start: "command (pid 12, started 345)"."""
    start = process_start(pid)
    return f"{label} (pid {pid}, started {start})" if start else f"{label} (pid {pid})"


def pid_alive(pid: int, holder: str | None = None) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie, and (when ``holder`` names
    its start, see :func:`holder_name`) is still the process that took the lease, not a later
    one the kernel gave the same pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    fields = stat.rsplit(")", 1)[-1].split()
    if fields[0] == "Z":
        return False
    recorded = _STARTED.search(holder or "")
    return recorded is None or len(fields) <= 19 or fields[19] == recorded.group(1)


def holder_gone(row: sqlite3.Row, now: float) -> bool:
    """Whether a running job's holder lost it: lease expired, or holder process dead here."""
    expires = row["lease_expires_at"]
    if expires is None or expires <= now:
        return True
    return (
        row["lease_host"] == socket.gethostname()
        and row["lease_pid"] is not None
        and not pid_alive(int(row["lease_pid"]), row["lease_owner"])
    )


def inline_gone(row: sqlite3.Row) -> bool | None:
    """Whether the command running a foreground job (``queued = 0``) is gone: True when its
    process is dead on this host, False when it is alive, None when that can't be checked (it
    runs on another host, or the row predates recording the process)."""
    pid = row["lease_pid"]
    if pid is None or row["lease_host"] != socket.gethostname():
        return None
    return not pid_alive(int(pid), row["lease_owner"])


def abandoned(row: sqlite3.Row, now: float) -> bool:
    """Whether a running job's holder is gone for sure: its process is dead on this host, or
    (a queue job held from another host) its lease expired without a heartbeat."""
    if not row["queued"]:
        return inline_gone(row) is True
    if row["lease_host"] == socket.gethostname() and row["lease_pid"] is not None:
        return not pid_alive(int(row["lease_pid"]), row["lease_owner"])
    expires = row["lease_expires_at"]
    return expires is None or expires <= now


def start_inline(db: sqlite3.Connection, job_id: str, kind: str, at: str, detail: str) -> None:
    """Record a job a command runs in the foreground, with this host and process as holder."""
    with transaction(db):
        db.execute(
            "INSERT INTO jobs (id, kind, status, created_at, detail, started_at, updated_at, "
            "lease_owner, lease_host, lease_pid, heartbeat_at) "
            "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job_id,
                kind,
                at,
                detail,
                at,
                at,
                holder_name("command", os.getpid()),
                socket.gethostname(),
                os.getpid(),
                time.time(),
            ),
        )


def _end_abandoned(db: sqlite3.Connection, row: sqlite3.Row, at: str) -> bool:
    """End an abandoned queue job that may not be resumed (cancel pending, or no attempts
    left), inside the caller's transaction; False when it may be resumed."""
    if row["cancel_requested"]:
        who = row["cancelled_by"] or "someone"
        _finish_row(db, row["id"], "cancelled", at, error=f"cancelled by {who}")
        return True
    if row["attempts"] >= row["max_attempts"]:
        _finish_row(
            db,
            row["id"],
            "failed",
            at,
            error=(
                f"gave up after {row['attempts']} attempt(s): the worker running it "
                f"({row['lease_owner']}) stopped each time before it finished. "
                "Look at the worker's log, then submit the job again."
            ),
        )
        return True
    return False


def recover_stale(db: sqlite3.Connection, now: float, at: str) -> list[str]:
    """Settle every running job whose holder is gone (see :func:`abandoned`); returns their ids.

    A queue job goes back to ``queued`` (its attempt counted; the next worker resumes it from
    its checkpoints), or is failed past ``max_attempts`` (cancelled when a cancel was pending).
    A foreground run whose command died is failed, saying how to finish it.
    """
    candidates = db.execute("SELECT id FROM jobs WHERE status = 'running'").fetchall()
    if not candidates:
        return []
    recovered: list[str] = []
    with transaction(db):
        for (job_id,) in candidates:
            row = db.execute(
                "SELECT * FROM jobs WHERE id = ? AND status = 'running'", (job_id,)
            ).fetchone()
            if row is None or not abandoned(row, now):
                continue
            recovered.append(job_id)
            holder = f"pid {row['lease_pid']} on {row['lease_host']}"
            if not row["queued"]:
                _finish_row(
                    db,
                    job_id,
                    "failed",
                    at,
                    error=(
                        f"interrupted: the command running it ({holder}) stopped before it "
                        "finished. The chunks it finished are kept: run the same "
                        "`affidavit ingest` again to do the rest."
                    ),
                )
            elif not _end_abandoned(db, row, at):
                db.execute(
                    "UPDATE jobs SET status = 'queued', updated_at = ?, lease_owner = NULL, "
                    "lease_token = NULL, lease_expires_at = NULL WHERE id = ?",
                    (at, job_id),
                )
                add_event(
                    db,
                    job_id,
                    "requeued",
                    {
                        "reason": f"its worker ({row['lease_owner']}, {holder}) stopped during "
                        f"attempt {row['attempts']}; the next worker resumes it"
                    },
                    at,
                )
    return recovered


def _finish_row(
    db: sqlite3.Connection,
    job_id: str,
    status: str,
    at: str,
    *,
    error: str = "",
    result: dict[str, Any] | None = None,
) -> None:
    db.execute(
        "UPDATE jobs SET status = ?, finished_at = ?, updated_at = ?, error = ?, "
        "result = coalesce(?, result), lease_owner = NULL, lease_token = NULL, "
        "lease_expires_at = NULL WHERE id = ?",
        (
            status,
            at,
            at,
            error,
            None if result is None else json.dumps(result, ensure_ascii=False, sort_keys=True),
            job_id,
        ),
    )
    data: dict[str, Any] = {"error": error} if error else {}
    add_event(db, job_id, status, data, at)


def claim(
    db: sqlite3.Connection,
    owner: str,
    lease_seconds: float,
    now: float,
    clock: Clock,
) -> Lease | None:
    """Claim the vault's next job for ``owner``, or None when there is none or another holds it.

    A running job whose holder is gone is resumed first; past its ``max_attempts`` (or with a
    cancel request pending) it is failed (or cancelled) instead and the next job is considered.
    """
    at = iso(clock())
    with transaction(db):
        running = db.execute(
            "SELECT * FROM jobs WHERE queued = 1 AND status = 'running'"
        ).fetchone()
        row: sqlite3.Row | None = None
        if running is not None:
            if not holder_gone(running, now):
                return None
            if not _end_abandoned(db, running, at):
                row = running
        if row is None:
            row = db.execute(
                "SELECT * FROM jobs WHERE queued = 1 AND status = 'queued' ORDER BY rowid LIMIT 1"
            ).fetchone()
        if row is None:
            return None
        token = secrets.token_hex(12)
        attempt = int(row["attempts"]) + 1
        db.execute(
            "UPDATE jobs SET status = 'running', attempts = ?, lease_owner = ?, lease_token = ?, "
            "lease_host = ?, lease_pid = ?, lease_expires_at = ?, heartbeat_at = ?, "
            "started_at = coalesce(started_at, ?), updated_at = ? WHERE id = ?",
            (
                attempt,
                holder_name(owner, os.getpid()),  # with its process's start: pid reuse is seen
                token,
                socket.gethostname(),
                os.getpid(),
                now + lease_seconds,
                now,
                at,
                at,
                row["id"],
            ),
        )
        add_event(
            db,
            row["id"],
            "started",
            {"attempt": attempt, "worker": owner, "resumed": int(row["attempts"]) > 0},
            at,
        )
    return Lease(
        job_id=row["id"],
        token=token,
        owner=owner,
        attempt=attempt,
        timeout_seconds=int(row["timeout_seconds"]),
        max_attempts=int(row["max_attempts"]),
    )


def renew(db: sqlite3.Connection, lease: Lease, lease_seconds: float, now: float) -> bool:
    """Heartbeat: extend the lease; False when the lease was lost (another worker resumed)."""
    with transaction(db):
        cursor = db.execute(
            "UPDATE jobs SET heartbeat_at = ?, lease_expires_at = ? "
            "WHERE id = ? AND lease_token = ? AND status = 'running'",
            (now, now + lease_seconds, lease.job_id, lease.token),
        )
    return cursor.rowcount == 1


def holds(db: sqlite3.Connection, job_id: str, token: str) -> bool:
    row = db.execute(
        "SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND status = 'running'",
        (job_id, token),
    ).fetchone()
    return row is not None


def finish(
    db: sqlite3.Connection,
    job_id: str,
    token: str,
    status: str,
    at: str,
    *,
    error: str = "",
    result: dict[str, Any] | None = None,
) -> bool:
    """End the job as ``status`` if ``token`` still holds its lease; False otherwise."""
    with transaction(db):
        if not holds(db, job_id, token):
            return False
        _finish_row(db, job_id, status, at, error=error, result=result)
    return True


def requeue(
    db: sqlite3.Connection, job_id: str, token: str, at: str, reason: str, *, count: bool
) -> bool:
    """Put a running job back in the queue, resumable; ``count=False`` gives the attempt back."""
    with transaction(db):
        if not holds(db, job_id, token):
            return False
        db.execute(
            "UPDATE jobs SET status = 'queued', updated_at = ?, lease_owner = NULL, "
            "lease_token = NULL, lease_expires_at = NULL, attempts = attempts - ? WHERE id = ?",
            (at, 0 if count else 1, job_id),
        )
        add_event(db, job_id, "requeued", {"reason": reason}, at)
    return True


def report_progress(
    db: sqlite3.Connection, job_id: str, done: int, total: int, message: str, at: str
) -> None:
    """Record progress on the job row and as an event."""
    with transaction(db):
        db.execute(
            "UPDATE jobs SET progress_done = ?, progress_total = ?, progress_message = ?, "
            "updated_at = ? WHERE id = ?",
            (done, total, message[:500], at, job_id),
        )
        add_event(
            db, job_id, "progress", {"done": done, "total": total, "message": message[:500]}, at
        )
