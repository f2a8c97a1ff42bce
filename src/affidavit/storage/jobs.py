"""The job queue's contract for workers on any host: enqueue, claim, renew, progress, complete,
fail, recover — one :class:`JobStore` with two backends (today's SQLite queue,
:mod:`affidavit.storage.sqlite_jobs`; PostgreSQL, :mod:`affidavit.storage.postgres_jobs`).

A worker that claims a job gets a :class:`Claim`: the job's **fencing token** ``fence`` (a
per-job counter, one more at every claim) and a random secret ``token``. Every write the worker
then makes for the job — a heartbeat, progress, its result, its end — names both, and is refused
with :class:`LeaseLost` unless they are the job's current ones. A worker whose lease expired while
it was paused or cut off, and whose job another worker claimed since, can therefore write nothing
late: the job's effects are recorded once, by the holder of the current claim. The counter orders
the claims; the secret makes a claim impossible to forge from its number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ConflictError


class LeaseLost(ConflictError):
    """A write for a job by a worker whose claim is not the job's current one (its lease expired
    and another worker claimed the job, or the job ended, or the claim was never issued)."""


@dataclass(frozen=True)
class Claim:
    """A worker's claim on one job of one vault; every write for the job carries it."""

    vault: str
    job_id: str
    fence: int  # the job's claim counter when this claim was made
    token: str = field(repr=False)  # a random secret, issued with the claim
    owner: str
    attempt: int


@dataclass(frozen=True)
class JobRecord:
    """A job as the queue holds it."""

    id: str
    kind: str
    status: str  # queued | running | done | failed | cancelled
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    fence: int
    owner: str | None  # the current claim's worker, while running
    progress: tuple[int, int, str]  # done, total, message
    result: dict[str, Any] | None
    error: str
    events: tuple[str, ...]  # the event types, oldest first

    @property
    def terminal(self) -> bool:
        return self.status in ("done", "failed", "cancelled")


def well_formed(claim: Claim) -> bool:
    """Whether ``claim`` could have been issued at all (text without NUL, a fence a BIGINT
    holds); one that could not is refused as :class:`LeaseLost` before any query."""
    texts = (claim.vault, claim.job_id, claim.token)
    return (
        all(isinstance(t, str) and "\x00" not in t for t in texts)
        and isinstance(claim.fence, int)
        and 0 < claim.fence < 2**63
    )


def lost(claim: Claim, row: Mapping[str, Any] | None) -> LeaseLost:
    """The refusal of a write by ``claim``, saying what the job is now (never its secret)."""
    if row is None:
        return LeaseLost(
            f"no job {claim.job_id} in vault {claim.vault}: this claim names a job it was not "
            "issued for; claim a job with JobStore.claim."
        )
    return LeaseLost(
        f"job {claim.job_id} of vault {claim.vault} is no longer held by this claim (fence "
        f"{claim.fence}; the job is {row['status']} at fence {row['fence']}): its lease expired "
        "and another worker took it, or it ended. Stop working on it; nothing was written."
    )


def check_lease(seconds: float) -> float:
    if not (isinstance(seconds, int | float) and 0 < seconds < 86400 * 7):
        raise ConflictError(
            f"a lease of {seconds!r} seconds makes no sense; give a positive number of seconds "
            "under a week (a worker renews it by heartbeats)."
        )
    return float(seconds)


def check_attempts(max_attempts: int) -> int:
    if not isinstance(max_attempts, int) or max_attempts < 1:
        raise ConflictError(f"a job needs max_attempts >= 1, not {max_attempts!r}")
    return max_attempts


def result_json(result: Mapping[str, Any]) -> str:
    return json.dumps(dict(result), ensure_ascii=False, sort_keys=True)


class JobStore(Protocol):
    """A vault's durable job queue, claimed by workers in any process on any host."""

    backend: str

    def enqueue(
        self,
        vault: str,
        payload: Mapping[str, Any],
        requested_by: str,
        *,
        max_attempts: int = 3,
    ) -> str:
        """Validate ``payload`` (a job kind's typed payload) and queue it; returns the job id."""

    def claim(self, vault: str, owner: str, lease_seconds: float) -> Claim | None:
        """The vault's next job for ``owner``, held for ``lease_seconds``, or None when none is
        free. A running job whose lease expired is claimed again (the fence moves on), or failed
        when it has used its attempts."""

    def renew(self, claim: Claim, lease_seconds: float) -> None:
        """Heartbeat: the lease runs ``lease_seconds`` from now; :class:`LeaseLost` if lost."""

    def progress(self, claim: Claim, done: int, total: int, message: str) -> None:
        """Record progress; :class:`LeaseLost` if the claim is not current."""

    def complete(self, claim: Claim, result: Mapping[str, Any]) -> None:
        """End the job as done with ``result``; :class:`LeaseLost` if the claim is not current."""

    def fail(self, claim: Claim, error: str) -> None:
        """End the job as failed; :class:`LeaseLost` if the claim is not current."""

    def recover(self, vault: str) -> list[str]:
        """Settle running jobs whose lease expired (queued again, or failed past their attempts);
        returns their ids."""

    def job(self, vault: str, job_id: str) -> JobRecord | None: ...

    def jobs(self, vault: str) -> list[JobRecord]:
        """Every job of the vault, oldest first."""

    def close(self) -> None: ...
