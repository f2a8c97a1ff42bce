"""A worker: claims a vault's jobs one at a time and runs each in its own process group.

While the job's process runs, the worker renews the lease (heartbeat), watches for a cancel
request, the job's time limit and its own stop event, and stops the work when needed: SIGTERM
(honoured at the job's next checkpoint), then SIGKILL to the whole group after a grace period.
Whatever the job started dies with it. If the worker itself dies, the job's process sees its
stdin close and kills its group; the next worker resumes the job from its checkpoints.
"""

from __future__ import annotations

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
from .lease import Lease, claim, finish, holds, renew, requeue
from .models import Job
from .queue import JobQueue

log = logging.getLogger("affidavit.jobs")

RUNNER: tuple[str, ...] = (sys.executable, "-m", "affidavit.jobs.runner")


class Worker:
    """Runs the jobs of the vault at ``vault_root``; ``worker_id`` names it in leases and logs.

    ``runner`` is the command that runs one job (default: ``python -m affidavit.jobs.runner``);
    it is started with ``--standby`` and handed its job as a JSON line on stdin. ``now`` is the
    lease's clock; ``monotonic`` the one a job's time limit is measured by. In
    :meth:`run_forever` the worker keeps the next job's process started and warm (its imports
    done) while the current job runs.
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
        self._standby: subprocess.Popen[bytes] | None = None
        self._ready: dict[int, int] = {}  # pid of a job process -> read end of its ready pipe
        self._prewarm = False

    def close(self) -> None:
        self._discard_standby()
        self.vault.close()

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
        self._discard_standby()
        log.info("worker %s stopped", self.worker_id)

    def run_once(self, stop: threading.Event | None = None) -> Job | None:
        """Claim the next job (or resume an abandoned one) and run it to its end; None when
        there is nothing to do or another worker holds this vault's running job."""
        lease = claim(self.vault.db, self.worker_id, self.lease_seconds, self.now(), utc_now)
        if lease is None:
            return None
        log.info("job %s: attempt %d by %s", lease.job_id, lease.attempt, self.worker_id)
        self._supervise(lease, stop or threading.Event())
        job = self.queue.get(lease.job_id)
        log.info("job %s: %s %s", job.id, job.status, job.error)
        return job

    # -- one job ----------------------------------------------------------------------------
    def _spawn(self) -> subprocess.Popen[bytes]:
        """A standby job process; it writes one byte to its ready pipe when it begins the job
        it is handed (imports done, vault open, claim checked), which starts its time limit."""
        ready, ready_w = os.pipe()
        try:
            proc = subprocess.Popen(
                [*self.runner, "--standby", "--ready-fd", str(ready_w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                pass_fds=(ready_w,),
                start_new_session=True,  # its own process group: stopped whole
            )
        except BaseException:
            os.close(ready)
            raise
        finally:
            os.close(ready_w)
        os.set_blocking(ready, False)
        self._ready[proc.pid] = ready
        return proc

    def _began(self, proc: subprocess.Popen[bytes]) -> bool:
        """Whether the job's process said it began the job (see :meth:`_spawn`)."""
        fd = self._ready.get(proc.pid)
        if fd is None:
            return True
        try:
            return bool(os.read(fd, 1))
        except BlockingIOError:
            return False

    def _reap(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill the process's whole group, close its pipes and wait for it."""
        _signal(proc.pid, signal.SIGKILL, group=True)
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()
        fd = self._ready.pop(proc.pid, None)
        if fd is not None:
            os.close(fd)

    def _discard_standby(self) -> None:
        proc, self._standby = self._standby, None
        if proc is not None:
            self._reap(proc)

    def _hand_over(self, lease: Lease) -> subprocess.Popen[bytes]:
        """Give the job to the warm standby process (or a fresh one); start the next standby."""
        line = json.dumps(
            {"vault": str(self.vault_root), "job_id": lease.job_id, "token": lease.token}
        ).encode()
        for _ in range(2):
            proc, self._standby = self._standby or self._spawn(), None
            assert proc.stdin is not None
            try:
                proc.stdin.write(line + b"\n")
                proc.stdin.flush()
                break
            except BrokenPipeError:  # the standby died meanwhile: start another
                self._reap(proc)
        else:
            raise OSError("the job's process exited before it was given the job")
        if self._prewarm:
            self._standby = self._spawn()
        return proc

    def _supervise(self, lease: Lease, stop: threading.Event) -> None:
        try:
            proc = self._hand_over(lease)
        except OSError as exc:
            self._requeue(lease, f"could not start the job's process: {exc}", count=True)
            return
        try:
            rc, reason = self._watch(proc, lease, stop)
        finally:  # even when the worker itself fails: nothing the job started outlives it
            self._reap(proc)
        self._settle(lease, rc, reason)

    def _watch(
        self, proc: subprocess.Popen[bytes], lease: Lease, stop: threading.Event
    ) -> tuple[int, str]:
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
