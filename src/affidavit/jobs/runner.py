"""The job's own process: ``python -m affidavit.jobs.runner --standby`` (the job on stdin).

A :class:`~affidavit.jobs.worker.Worker` starts it in a new session (its own process group) so
that a timeout or a cancellation can stop it and everything it started with one signal. It:

- turns SIGTERM into a stop request, honoured at the job's next checkpoint (exit status 75);
- with ``--standby`` or ``--watch-stdin``, kills its whole process group as soon as its stdin
  closes — the worker
  holds the other end, so a worker that dies (even by SIGKILL) never leaves its job running;
- holds ``.affidavit/jobs.lock`` (flock) while it works: at most one job process per vault,
  even while a dead worker's job process is still being torn down;
- opens the vault (which recovers an interrupted apply), clears the git index lock a killed
  attempt's git may have left, checks that its claim still holds,
  tells the worker it began (one byte on ``--ready-fd``: the job's time limit starts then),
  runs the handler and records the result — done or failed — under that claim.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from ..clock import Clock, iso, utc_now
from ..errors import AffidavitError
from ..store.apply import Step
from ..vault import open_vault
from .context import EXIT_FINISHED, EXIT_STOPPED, JobContext, JobInterrupted
from .forkserver import serve
from .handlers import JobFailed
from .hold import chain, hold_from_env
from .lease import finish, holds
from .models import job_from_row
from .payloads import handler_for, parse_payload

JOBS_LOCK = "jobs.lock"

log = logging.getLogger("affidavit.jobs")


def _job_lock(state_dir: Path, stop: threading.Event, timeout: float) -> int | None:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC  # a symlink here is refused
    fd = os.open(state_dir / JOBS_LOCK, flags, 0o600)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if stop.is_set() or time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.02)


def run_job(
    vault_root: Path,
    job_id: str,
    token: str,
    *,
    stop: threading.Event | None = None,
    clock: Clock = utc_now,
    step: Step | None = None,
    lock_timeout: float = 60.0,
    ready_fd: int | None = None,
) -> int:
    """Run one claimed job in this process; returns the exit status (0 or 75).

    ``ready_fd`` (the worker's ready pipe) gets one byte when the handler begins: the job's
    time limit counts from then, not from the imports or the wait for the vault's job lock.
    """
    stop = stop or threading.Event()
    lock = _job_lock(Path(vault_root) / ".affidavit", stop, lock_timeout)
    if lock is None:
        log.warning("job %s: another job process still holds this vault; retry later", job_id)
        return EXIT_STOPPED
    try:
        vault = open_vault(Path(vault_root), clock=clock)
        try:
            row = vault.db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or not holds(vault.db, job_id, token):
                log.warning("job %s: this process's claim no longer holds; not running it", job_id)
                return EXIT_STOPPED
            job = job_from_row(row)
            status, error, result = "done", "", None
            # a killed attempt's git died with its process group and may have left index.lock
            # (opening the vault only clears it when a plan's journal is pending; a source's
            # commit has none). Holding the job lock, that attempt's processes are gone; holding
            # the writer lock, no other writer runs git: a lock left now is stale.
            with vault.write_lock():
                vault.git.clear_stale_lock()
            _tell_ready(ready_fd)
            try:
                payload = parse_payload(job.payload)
                handler = handler_for(job.kind)
                result = handler(JobContext(vault, job, stop, step), payload)
            except JobInterrupted:
                log.info("job %s stopped at a checkpoint", job_id)
                return EXIT_STOPPED
            except JobFailed as exc:
                status, error, result = "failed", str(exc), exc.result
            except AffidavitError as exc:
                status, error = "failed", str(exc)
            except Exception as exc:  # a bug: keep the trace in the log, the gist in the job
                log.error("job %s crashed:\n%s", job_id, traceback.format_exc())
                status, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
            if not finish(
                vault.db, job_id, token, status, iso(utc_now()), error=error, result=result
            ):
                log.warning("job %s: lost its claim before recording %s", job_id, status)
            return EXIT_FINISHED
        finally:
            vault.close()
    finally:
        os.close(lock)


def _tell_ready(fd: int | None) -> None:
    """Tell the worker the job began (one byte on its ready pipe), then close the pipe."""
    if fd is None:
        return
    try:
        os.write(fd, b"1")
    except OSError:  # the worker is gone; the stdin watchdog ends this process
        pass
    finally:
        os.close(fd)


def _watch_stdin() -> None:
    """Block until stdin closes (the worker died or is done), then kill this process group."""
    try:  # the raw fd, not sys.stdin: a buffered read would block interpreter shutdown
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _warm_up() -> None:
    """Import what most jobs use before the job arrives: the built-in engine, the plan schema,
    and what a watch job adds to an ingest's (the watch, its ignore files, the automatic lint),
    so that a process forked from a fork server starts its job with nothing left to import."""
    from ..lint import runner as lint_runner  # noqa: F401
    from ..plan.schema import plan_json_schema
    from ..providers import build_provider
    from ..watch import changes, watcher  # noqa: F401

    build_provider("extractive", {}).close()
    plan_json_schema()
    time.strptime("2026", "%Y")  # its module is imported on first use


def _read_assignment() -> list[str] | None:
    """The job a worker hands this standby process: one JSON line on stdin; None on EOF."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 1)  # byte by byte: what follows the line belongs to the watchdog
        if not chunk:
            return None
        data += chunk
    value = json.loads(data)
    return [str(value["vault"]), str(value["job_id"]), str(value["token"])]


def worker_pid() -> int:
    """The pid of the worker this job process serves: its parent, or its fork server's."""
    return _WORKER_PID or os.getppid()


_WORKER_PID = 0  # set in a fork server: its parent, the worker


def main(
    argv: Sequence[str] | None = None, *, clock: Clock = utc_now, step: Step | None = None
) -> int:
    """Entry point; ``clock`` and ``step`` let a test run the real runner with a fixed clock
    and a crash injected at an apply step. The environment may add a hold at an apply step (a
    test hook for tests that kill the daemon: :mod:`affidavit.jobs.hold`).

    Without VAULT JOB TOKEN (``--standby``), the process imports everything, then waits for its
    job as one JSON line on stdin. With ``--fork-server FD`` it imports everything, then forks
    such a standby process for each request on the socket FD (:mod:`affidavit.jobs.forkserver`):
    a worker keeps one fork server, and one standby forked from it, for its next job.
    """
    parser = argparse.ArgumentParser(prog="python -m affidavit.jobs.runner")
    parser.add_argument("job", nargs="*", metavar="VAULT JOB_ID TOKEN")
    parser.add_argument("--watch-stdin", action="store_true")
    parser.add_argument("--standby", action="store_true")
    parser.add_argument("--fork-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--ready-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    waits = args.standby or args.fork_server is not None
    if len(args.job) != (0 if waits else 3):
        parser.error("give VAULT JOB_ID TOKEN, or --standby (and the job on stdin)")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:  # a test hook, inert unless its variables are set (see affidavit.jobs.hold)
        step = chain(step, hold_from_env(os.environ, stop))
    except AffidavitError as exc:
        print(f"affidavit.jobs.runner: {exc}", file=sys.stderr)
        return 2
    if waits:
        _warm_up()
    if args.fork_server is not None:
        global _WORKER_PID
        _WORKER_PID = os.getppid()
        standby = lambda ready_fd: _standby(ready_fd, stop, clock, step)  # noqa: E731
        return serve(args.fork_server, standby)
    if args.standby:
        return _standby(args.ready_fd, stop, clock, step)
    if args.watch_stdin:
        threading.Thread(target=_watch_stdin, name="watch-worker", daemon=True).start()
    _log_to_stderr()
    vault, job_id, token = args.job
    return run_job(
        Path(vault), job_id, token, stop=stop, clock=clock, step=step, ready_fd=args.ready_fd
    )


def _standby(ready_fd: int | None, stop: threading.Event, clock: Clock, step: Step | None) -> int:
    """A standby's life after its imports: wait for the job on stdin, then run it (its whole
    group killed as soon as stdin closes)."""
    job = _read_assignment()
    if job is None:  # the worker went away before it had a job for us
        return EXIT_FINISHED
    threading.Thread(target=_watch_stdin, name="watch-worker", daemon=True).start()
    _log_to_stderr()
    vault, job_id, token = job
    return run_job(Path(vault), job_id, token, stop=stop, clock=clock, step=step, ready_fd=ready_fd)


def _log_to_stderr() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")


if __name__ == "__main__":
    sys.exit(main())
