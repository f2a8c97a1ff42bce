"""``affidavit worker --database URL``: a worker on any host that runs a PostgreSQL database's
queued jobs (docs/team.md).

It claims the oldest free job of its vaults (``FOR UPDATE SKIP LOCKED``: any number of workers,
on any hosts, each on its own job), heartbeats the lease from a thread while the job runs, and
ends the job through its claim. Every write of the job carries the claim too
(:mod:`.pg_ingest`; the pass after an ingest's chunks and the ``lint`` kind, :mod:`.pg_after`):
a worker paused or cut off past its lease, whose job another worker took,
writes nothing. A worker killed anywhere leaves its job running until the lease expires; the
next claim re-runs it, and the chunks whose transaction committed are not asked again. A worker
that loses the database (restarted, its link down) logs ``database_error`` with the seconds it
waits before it tries again (``retry_in``: the poll, doubled at each failure in a row up to
:data:`BACKOFF_MAX`); it never exits for that, nor for a database down when it starts
(:func:`connect_when_up`).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from ..config import Config
from ..errors import AffidavitError, DatabaseUnavailable
from ..providers.base import Provider
from ..storage.jobs import Claim, LeaseLost
from ..storage.postgres import PostgresStorage
from ..storage.postgres_jobs import PostgresJobStore
from .payloads import LintPayload, StoredIngestPayload, parse_payload
from .pg_after import PgAfterIngest, PgLint
from .pg_ingest import Cancelled, PgIngest, Stopped

ProviderFor = Callable[[str | None], Provider]
Log = Callable[[dict[str, Any]], None]

BACKOFF_MAX = 30.0
"""The longest wait between two tries of a database that doesn't answer (seconds)."""


def backoff(poll: float, failures: int) -> float:
    """The wait after ``failures`` failures in a row: the poll, doubled each time, at most
    :data:`BACKOFF_MAX` (or the poll, if longer)."""
    return float(min(poll * 2 ** min(failures - 1, 30), max(BACKOFF_MAX, poll)))


def connect_when_up(
    connect: Callable[[], PostgresStorage], *, stop: threading.Event, log: Log, poll: float
) -> PostgresStorage | None:
    """``connect()``, tried again with :func:`backoff` while the database doesn't answer
    (:class:`~affidavit.errors.DatabaseUnavailable`, each try logged as ``database_error`` with
    its ``retry_in``); None once ``stop`` is set first. A database that refuses (a password, a
    name: :class:`~affidavit.errors.ConfigError`) is raised: waiting won't fix it."""
    failures = 0
    while not stop.is_set():
        try:
            return connect()
        except DatabaseUnavailable as exc:
            failures += 1
            wait = backoff(poll, failures)
            log({"event": "database_error", "error": str(exc)[:400], "failures": failures,
                 "retry_in": round(wait, 2)})  # fmt: skip
            stop.wait(wait)
    return None


def _stderr(event: dict[str, Any]) -> None:
    print(json.dumps(event, sort_keys=True), file=sys.stderr, flush=True)


class PgWorker:
    """Claims and runs the jobs of ``vaults`` (None: every vault of the database)."""

    def __init__(
        self,
        storage: PostgresStorage,
        *,
        vaults: list[str] | None = None,
        owner: str | None = None,
        lease_seconds: float = 30.0,
        poll_seconds: float = 1.0,
        config: Config | None = None,
        provider_for: ProviderFor | None = None,
        log: Log = _stderr,
    ) -> None:
        self.jobs = PostgresJobStore(storage)
        self.vaults = vaults
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.config = config or Config()
        self.provider_for = provider_for or self._provider
        self.log = log
        self.stop = threading.Event()

    def _provider(self, model: str | None) -> Provider:
        from ..providers.from_config import provider_from_config

        return provider_from_config(self.config, model)  # None: the config's model.provider

    def run(self, *, drain: bool = False) -> int:
        """Run jobs until :attr:`stop` is set (or, with ``drain``, until none is free);
        returns how many this worker ended."""
        ended = 0
        failures = 0  # in a row: the wait before the next try doubles
        while not self.stop.is_set():
            try:
                claimed = self.run_once()
            except psycopg.Error as exc:  # the database away (a restart, a cut link) while
                # claiming: a claim that committed is the next claim's once its lease expires
                failures += 1
                wait = backoff(self.poll_seconds, failures)
                self.log({"event": "database_error", "error": str(exc)[:300],
                          "failures": failures, "retry_in": round(wait, 2)})  # fmt: skip
                self.stop.wait(wait)
                continue
            failures = 0
            if claimed:
                ended += 1
            elif drain:
                break
            else:
                self.stop.wait(self.poll_seconds)
        return ended

    def run_once(self) -> bool:
        """Claim one free job of the vaults and run it; False when none was free."""
        for vault in self.vaults or self.jobs.storage.vaults():
            claim = self.jobs.claim(vault, self.owner, self.lease_seconds)
            if claim is not None:
                self._run(claim)
                return True
        return False

    def _heartbeat(self, claim: Claim, lost: threading.Event, done: threading.Event) -> None:
        while not done.wait(self.lease_seconds / 3):
            try:
                self.jobs.renew(claim, self.lease_seconds)
            except LeaseLost:
                lost.set()  # the job's writes check the claim themselves; stop early
                return
            except psycopg.Error as exc:  # the database away: retried at the next beat
                self.log({"event": "heartbeat_failed", "job": claim.job_id, "error": str(exc)})

    def _run(self, claim: Claim) -> None:
        row = self.jobs.rows(claim.vault, claim.job_id)[0]
        self.log({"event": "claimed", "vault": claim.vault, "job": claim.job_id,
                  "fence": claim.fence, "worker": self.owner})  # fmt: skip
        stop = threading.Event()
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(claim, stop, done), daemon=True)
        beat.start()
        watch = threading.Thread(target=self._follow_stop, args=(stop, done), daemon=True)
        watch.start()
        try:
            self._work(claim, row, stop)
        finally:
            done.set()
            beat.join()
            watch.join()

    def _follow_stop(self, stop: threading.Event, done: threading.Event) -> None:
        """Pass the worker's stop on to the job (looked at every 0.2 s); ends as soon as the job
        does — waiting on the worker's stop instead held every job's end up to 0.2 s, which a
        queue of one-chunk jobs paid per job (docs/benchmarks.md, pghosts28)."""
        while not done.wait(0.2):
            if self.stop.is_set():
                stop.set()
                return

    def _work(self, claim: Claim, row: dict[str, Any], stop: threading.Event) -> None:
        try:
            payload = parse_payload(str(row["payload"]))
            if isinstance(payload, LintPayload):
                lint = PgLint(self.jobs, claim, requested_by=str(row["requested_by"]),
                              config=self.config, lease_seconds=self.lease_seconds)  # fmt: skip
                self.jobs.complete(claim, lint.run(payload.propose))
                self.log({"event": "done", "job": claim.job_id})
                return
            if not isinstance(payload, StoredIngestPayload):
                raise AffidavitError(
                    f"a {payload.kind} job can't run on PostgreSQL yet (docs/team.md); only "
                    "ingest_stored jobs (POST …/jobs with the sources' text) and lint do."
                )
            provider = self.provider_for(payload.model)
            try:
                ingest = PgIngest(
                    self.jobs, claim, provider, requested_by=str(row["requested_by"]),
                    config=self.config, stop=stop, lease_seconds=self.lease_seconds,
                )  # fmt: skip
                result = ingest.run(payload)
            finally:
                provider.close()
            if result["failed"]:
                names = ", ".join(s[:12] for s in result["failed"][:5])
                errors = [s["error"] for s in result["sources"] if s["error"]]
                self.jobs.fail(claim, f"{len(result['failed'])} source(s) failed ({names}): "
                               f"{errors[0]}"[:2000])  # fmt: skip
                self.log({"event": "failed", "job": claim.job_id})
                return
            if stop.is_set():  # the pass is the job's too: another claim does it
                raise Stopped(f"worker {self.owner} is stopping; job {claim.job_id} waits")
            after = PgAfterIngest(self.jobs, claim, requested_by=str(row["requested_by"]),
                                  config=self.config, lease_seconds=self.lease_seconds)  # fmt: skip
            result["after_ingest"] = after.run()
            self.jobs.complete(claim, result)
            self.log({"event": "done", "job": claim.job_id, "totals": result["totals"]})
        except Cancelled as exc:
            self.jobs.cancelled(claim, exc.by)
            self.log({"event": "cancelled", "job": claim.job_id, "by": exc.by})
        except LeaseLost as exc:
            self.log({"event": "lease_lost", "job": claim.job_id, "error": str(exc)})
        except Stopped:
            try:
                self.jobs.release(claim, f"worker {self.owner} stopped")
                self.log({"event": "released", "job": claim.job_id})
            except LeaseLost as exc:
                self.log({"event": "lease_lost", "job": claim.job_id, "error": str(exc)})
        except psycopg.Error as exc:  # the database away, the session ended: the lease
            # expires and the job is claimed again (given up after max_attempts)
            self.log({"event": "database_error", "job": claim.job_id, "error": str(exc)[:300]})
            time.sleep(self.poll_seconds)
        except Exception as exc:  # the job's fault (or a bug): it fails, the worker goes on
            why = str(exc) if isinstance(exc, AffidavitError) else f"{type(exc).__name__}: {exc}"
            try:
                self.jobs.fail(claim, why[:2000] or type(exc).__name__)
                self.log({"event": "failed", "job": claim.job_id, "error": why[:300]})
            except LeaseLost as lost:
                self.log({"event": "lease_lost", "job": claim.job_id, "error": str(lost)})


__all__ = ["BACKOFF_MAX", "PgWorker", "backoff", "connect_when_up"]
