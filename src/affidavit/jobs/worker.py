"""A worker: claims a vault's jobs one at a time and runs each in its own process group.

While the job's process runs, the worker renews the lease (heartbeat), watches for a cancel
request, the job's time limit and its own stop event, and stops the work when needed: SIGTERM
(honoured at the job's next checkpoint), then SIGKILL to the whole group after a grace period.
Whatever the job started dies with it. If the worker itself dies, the job's process sees its
stdin close and kills its group; the next worker resumes the job from its checkpoints.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..clock import iso, utc_now
from ..errors import AffidavitError
from ..vault import Vault, open_vault
from .context import EXIT_STOPPED
from .forkserver import EXIT_UNKNOWN, ForkServer, JobProcess
from .lease import Lease, claim, finish, holds, renew, requeue
from .models import Job
from .queue import JobQueue

log = logging.getLogger("affidavit.jobs")

RUNNER: tuple[str, ...] = (sys.executable, "-m", "affidavit.jobs.runner")


class Worker:
    """Runs the jobs of the vault at ``vault_root``; ``worker_id`` names it in leases and logs.

    ``runner`` is the command that runs one job (default: ``python -m affidavit.jobs.runner``);
    it is started once as the worker's fork server (``--fork-server``, imports done), which
    forks each job's process; the job is handed to it as a JSON line on stdin. ``now`` is the
    lease's clock; ``monotonic`` the one a job's time limit is measured by. In
    :meth:`run_forever` the fork server and one forked standby are started before the first job
    is claimed, and the next standby is forked as soon as one is handed a job.
    """

    def __init__(
        self,
        vault_root: Path,
        worker_id: str,
        *,
        lease_seconds: float | None = None,
        grace_seconds: float | None = None,
        runner: Sequence[str] | None = None,
        now: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.vault: Vault = open_vault(Path(vault_root))
        self.vault_root = self.vault.root
        self.worker_id = worker_id
        config = self.vault.config
        self.lease_seconds = float(lease_seconds or config.get("jobs.lease_seconds"))
        self.grace_seconds = float(grace_seconds or config.get("jobs.kill_grace_seconds"))
        self.runner = tuple(runner or RUNNER)
        self.now = now
        self.monotonic = monotonic  # the time limit, grace and heartbeat schedule (tests: fixed)
        self.queue = JobQueue(self.vault, now=now)
        self._server: ForkServer | None = None
        self._standby: JobProcess | None = None
        self._prewarm = False

    def close(self) -> None:
        self._stop_forking()
        self.vault.close()

    def _stop_forking(self) -> None:
        """End the standby and the fork server (the next job starts them again)."""
        self._discard_standby()
        if self._server is not None:
            self._server.close()
            self._server = None

    def processes(self) -> dict[str, int | None]:
        """The pids of this worker's fork server and of its standby job process (None: none)."""
        server, standby = self._server, self._standby
        return {
            "fork_server": server.pid if server is not None else None,
            "standby": standby.pid if standby is not None else None,
        }

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop ---------------------------------------------------------------------------
    def run_forever(
        self,
        stop: threading.Event,
        poll_seconds: float = 1.0,
        wake: threading.Event | None = None,
    ) -> None:
        """Run jobs until ``stop`` is set; the running job is then stopped at its next
        checkpoint and put back in the queue, to be resumed by the next worker. ``wake``, set
        by whoever queues a job in this process (the daemon's watches), ends the wait between
        polls at once."""
        log.info("worker %s serving %s", self.worker_id, self.vault_root)
        self._prewarm = True
        while not stop.is_set():
            try:
                self._keep_warm(stop)
                job = self.run_once(stop)
            except (AffidavitError, sqlite3.OperationalError) as exc:
                log.error("worker %s: %s", self.worker_id, exc)
                job = None
            except Exception:  # a bug must not end the worker: log it, try again later
                log.exception("worker %s: unexpected error", self.worker_id)
                job = None
            if job is None and wake is None:
                stop.wait(poll_seconds)
            elif job is None and wake is not None:
                wake.wait(poll_seconds)  # a stop is noticed within poll_seconds
                wake.clear()
        self._prewarm = False
        self._stop_forking()  # nothing of the worker's outlives its loop
        log.info("worker %s stopped", self.worker_id)

    def run_once(self, stop: threading.Event | None = None) -> Job | None:
        """Claim the next job (or resume an abandoned one) and run it to its end; None when
        there is nothing to do or another worker holds this vault's running job."""
        lease = claim(self.vault.db, self.worker_id, self.lease_seconds, self.now(), utc_now)
        if lease is None:
            return None
        log.info("job %s: attempt %d by %s", lease.job_id, lease.attempt, self.worker_id)
        try:
            self._supervise(lease, stop or threading.Event())
        finally:
            if not self._prewarm:  # one job, not a loop: nothing of the worker outlives it
                self._stop_forking()
        job = self.queue.get(lease.job_id)
        log.info("job %s: %s %s", job.id, job.status, job.error)
        return job

    # -- one job ----------------------------------------------------------------------------
    def _fork_server(self) -> ForkServer:
        """The worker's fork server, started anew if it is gone (killed, or never started)."""
        if self._server is not None and not self._server.alive():
            log.warning("worker %s: its fork server ended; starting another", self.worker_id)
            self._server.close()
            self._server = None
        if self._server is None:
            self._server = ForkServer(self.runner)
        return self._server

    def _spawn(self, stop: threading.Event | None = None) -> JobProcess:
        """A standby job process, forked by the fork server (waiting for its imports the first
        time); it writes one byte to its ready pipe when it begins the job it is handed
        (vault open, claim checked), which starts its time limit."""
        return self._fork_server().fork(stop)

    def _keep_warm(self, stop: threading.Event) -> None:
        """Between jobs of :meth:`run_forever`: a fork server running and a standby forked from
        it waiting, whatever killed the last ones (so the next job starts at once)."""
        if self._standby is not None and self._standby.poll() is not None:
            log.warning("worker %s: its standby job process died; forking another", self.worker_id)
            self._discard_standby()
        try:
            server = self._fork_server()
            if self._standby is None:
                self._standby = server.fork(stop)
        except OSError as exc:
            if not stop.is_set():
                log.error("worker %s: no standby job process: %s", self.worker_id, exc)

    def _began(self, proc: JobProcess) -> bool:
        """Whether the job's process said it began the job (see :meth:`_spawn`)."""
        if proc.ready is None:
            return True
        try:
            return bool(os.read(proc.ready, 1))
        except BlockingIOError:
            return False

    def _reap(self, proc: JobProcess) -> None:
        """Kill the process's whole group, close its pipes, wait for it and let it be reaped."""
        _signal(proc.pid, signal.SIGKILL, group=True)
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            proc.stdin = None
        proc.wait()
        proc.close()

    def _discard_standby(self) -> None:
        proc, self._standby = self._standby, None
        if proc is not None:
            self._reap(proc)

    def _hand_over(self, lease: Lease, stop: threading.Event) -> JobProcess:
        """Give the job to the standby process (or a newly forked one); fork the next one."""
        line = json.dumps(
            {"vault": str(self.vault_root), "job_id": lease.job_id, "token": lease.token}
        ).encode()
        for _ in range(2):
            proc, self._standby = self._standby or self._spawn(stop), None
            assert proc.stdin is not None
            try:
                proc.stdin.write(line + b"\n")
                proc.stdin.flush()
                break
            except BrokenPipeError:  # the standby died meanwhile: fork another
                self._reap(proc)
        else:
            raise OSError("the job's process exited before it was given the job")
        if self._prewarm:
            try:
                self._standby = self._spawn(stop)
            except OSError as exc:  # the job is handed over; the next look tries again
                log.error("worker %s: no standby job process: %s", self.worker_id, exc)
        return proc

    def _supervise(self, lease: Lease, stop: threading.Event) -> None:
        try:
            proc = self._hand_over(lease, stop)
        except OSError as exc:
            count = not stop.is_set()  # a shutdown gives the attempt back
            self._requeue(lease, f"could not start the job's process: {exc}", count=count)
            return
        try:
            rc, reason = self._watch(proc, lease, stop)
        finally:  # even when the worker itself fails: nothing the job started outlives it
            self._reap(proc)
        self._settle(lease, rc, reason)

    def _watch(self, proc: JobProcess, lease: Lease, stop: threading.Event) -> tuple[int, str]:
        """Heartbeat and watch the job's process until it exits; stop it when the job is
        cancelled, times out, or the worker stops. Returns its exit status and why it was
        stopped ("" when it ended by itself)."""
        reason = ""
        started = self.monotonic()
        began: float | None = None  # the time limit counts from when the job itself began
        stopping_since = 0.0
        grace = self.grace_seconds
        beat_every = max(0.5, min(self.lease_seconds / 3, 5.0))
        next_beat = started + beat_every
        next_check = started
        while True:
            try:
                rc = proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            now = self.monotonic()
            if began is None and self._began(proc):
                began = now
            if not reason:
                if stop.is_set():
                    reason, grace = "shutdown", max(self.grace_seconds, self.lease_seconds)
                    _signal(proc.pid, signal.SIGTERM, group=False)  # finish the current step
                elif (
                    lease.timeout_seconds
                    and began is not None
                    and now - began > lease.timeout_seconds
                ):
                    reason = "timeout"
                elif now >= next_check:
                    next_check = now + 0.25
                    if self._cancel_requested(lease.job_id):
                        reason = "cancel"
                if reason in ("timeout", "cancel"):
                    _signal(proc.pid, signal.SIGTERM, group=True)
                if reason:
                    stopping_since = now
                    log.info("job %s: stopping (%s)", lease.job_id, reason)
            elif now - stopping_since > grace:
                _signal(proc.pid, signal.SIGKILL, group=True)
            if now >= next_beat:
                next_beat = now + beat_every
                if not renew(self.vault.db, lease, self.lease_seconds, self.now()):
                    if self._recorded(lease):  # it finished: let it close the vault and exit
                        next_beat = float("inf")
                        continue
                    log.warning("job %s: lease lost; stopping its process", lease.job_id)
                    reason = "lease_lost"
                    _signal(proc.pid, signal.SIGKILL, group=True)
        return rc, reason

    def _recorded(self, lease: Lease) -> bool:
        """Whether the job's process recorded the job's outcome under this lease (a renew
        then fails because the job is no longer running, not because another worker took it):
        the process is closing its vault, which waits for its search-index catch-up."""
        row = self.vault.db.execute(
            "SELECT status, lease_token FROM jobs WHERE id = ?", (lease.job_id,)
        ).fetchone()
        return row is not None and row[0] in ("done", "failed") and row[1] is None

    def _cancel_requested(self, job_id: str) -> bool:
        row = self.vault.db.execute(
            "SELECT cancel_requested FROM jobs WHERE id = ?", (job_id,)
        ).fetchone()
        return bool(row and row[0])

    def _settle(self, lease: Lease, rc: int, reason: str) -> None:
        """Record how the attempt ended, unless its process already did (done / failed)."""
        db = self.vault.db
        if reason == "lease_lost" or not holds(db, lease.job_id, lease.token):
            return
        at = iso(utc_now())
        if reason == "cancel":
            row = db.execute("SELECT cancelled_by FROM jobs WHERE id = ?", (lease.job_id,))
            who = row.fetchone()[0] or "someone"
            finish(db, lease.job_id, lease.token, "cancelled", at, error=f"cancelled by {who}")
        elif reason == "timeout":
            finish(
                db,
                lease.job_id,
                lease.token,
                "failed",
                at,
                error=(
                    f"timed out after {lease.timeout_seconds}s (attempt {lease.attempt}); its "
                    "processes were stopped. The work done so far is kept: submit the job again "
                    "(with a longer timeout, or raise jobs.timeout_seconds) to finish it."
                ),
            )
        elif reason == "shutdown":
            self._requeue(lease, "the worker shut down; the job resumes where it stopped", False)
        else:
            ended = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
            if rc == EXIT_STOPPED:
                ended = "its process stopped early (another job process held the vault)"
            elif rc == EXIT_UNKNOWN:
                ended = "an unknown status (its fork server died before it)"
            if lease.attempt >= lease.max_attempts:
                finish(
                    db,
                    lease.job_id,
                    lease.token,
                    "failed",
                    at,
                    error=f"gave up after {lease.attempt} attempt(s); the last ended with {ended}. "
                    "The worker's log (stderr) says why.",
                )
            else:
                self._requeue(lease, f"attempt {lease.attempt} ended with {ended}", True)

    def _requeue(self, lease: Lease, reason: str, count: bool) -> None:
        requeue(self.vault.db, lease.job_id, lease.token, iso(utc_now()), reason, count=count)


def _signal(pid: int, sig: signal.Signals, *, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
