"""Workers for the job-queue contract tests (tests/test_storage_jobs.py), run in child processes
(``multiprocessing`` spawn) against either backend: each reopens the queue from its address (a
``postgresql://`` URL or a vault folder) and writes what happened to it, one line per event, to
its own log, which the test reads.

- :func:`drain` claims and completes jobs until every job of the vault has ended.
- :func:`hold` claims one job and keeps its lease by heartbeats until a ``release`` file
  appears, then tries its late writes (progress, completion) and logs whether they were refused.
  It sets ``idle`` to 1 only while it touches no database, so a test can stop it (SIGSTOP) at a
  moment it holds no transaction or row lock, and see that it did.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from affidavit.storage import Claim, JobStore, LeaseLost, open_jobs

VAULT = "main"
PAUSE = 0.02  # between polls of an empty queue; no test waits on it


def queue_at(where: str) -> JobStore:
    return open_jobs(where, name=VAULT)


def log(path: Path, *words: object) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (" ".join(map(str, words)) + "\n").encode())
    finally:
        os.close(fd)


def lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def drain(where: str, name: str, lease_seconds: float, out: str) -> None:
    """Claim and complete jobs until every job of the vault has ended."""
    path = Path(out)
    queue = queue_at(where)
    try:
        while True:
            claim = queue.claim(VAULT, name, lease_seconds)
            if claim is None:
                if all(job.terminal for job in queue.jobs(VAULT)):
                    return
                time.sleep(PAUSE)
                continue
            log(path, "claimed", claim.job_id, claim.fence)
            try:
                queue.progress(claim, 1, 2, f"{name} halfway")
                queue.complete(claim, {"by": name, "fence": claim.fence})
            except LeaseLost:
                log(path, "refused", claim.job_id, claim.fence)
                continue
            log(path, "completed", claim.job_id, claim.fence)
    finally:
        queue.close()


def _late(queue: JobStore, claim: Claim, path: Path, name: str) -> None:
    for what, write in (
        ("progress", lambda: queue.progress(claim, 2, 2, f"{name} late")),
        ("complete", lambda: queue.complete(claim, {"by": name, "fence": claim.fence})),
    ):
        try:
            write()
        except LeaseLost:
            log(path, what, "refused", claim.job_id, claim.fence)
        else:
            log(path, what, "accepted", claim.job_id, claim.fence)


def hold(where: str, name: str, lease_seconds: float, out: str, idle: Any) -> None:
    """Claim one job, heartbeat until ``<out>.release`` exists, then write late."""
    path, release = Path(out), Path(out + ".release")
    queue = queue_at(where)
    try:
        claim = None
        while claim is None:
            claim = queue.claim(VAULT, name, lease_seconds)
            if claim is None:
                time.sleep(PAUSE)
        log(path, "claimed", claim.job_id, claim.fence)
        while True:
            idle.value = 1
            time.sleep(min(lease_seconds / 5, 0.1))  # a heartbeat well inside the lease
            if release.exists():
                idle.value = 0
                break
            idle.value = 0
            try:
                queue.renew(claim, lease_seconds)
            except LeaseLost:
                log(path, "renew", "refused", claim.job_id, claim.fence)
        try:
            queue.renew(claim, lease_seconds)
        except LeaseLost:
            log(path, "renew", "refused", claim.job_id, claim.fence)
        _late(queue, claim, path, name)
    finally:
        queue.close()
