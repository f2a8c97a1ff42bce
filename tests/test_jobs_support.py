"""Test job kinds and a job runner with injected faults, for the job queue tests.

Run as a script it is a job runner (the real one, :func:`affidavit.jobs.runner.main`) that also
knows the test kinds, and can fix the clock and kill its worker and itself at an apply step:

    python tests/test_jobs_support.py [--fixed-clock] [--kill-at STEP:N] [--slow-start S]
        [--awake FILE] --standby

``--slow-start S`` sleeps S seconds before the runner starts, as imports do on a busy machine;
``--awake FILE`` then writes FILE (the test learns the slow start is over).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from affidavit.jobs import BasePayload, JobContext, JobFailed, register_handler  # noqa: E402

SUPPORT_RUNNER = (sys.executable, str(Path(__file__).resolve()))
"""The ``runner`` command of a :class:`~affidavit.jobs.Worker` that knows the test kinds."""


class SleepPayload(BasePayload):
    """Start a grandchild (optionally one that ignores SIGTERM), then count ``steps``
    checkpoints (0: forever), resuming from the count a previous attempt reached. With
    ``release``, the job finishes only once that file exists (it keeps passing checkpoints
    meanwhile): a test can stop or kill it mid-job whatever the machine's speed."""

    kind: Literal["test-sleep"] = "test-sleep"
    marker: str
    steps: int = 0
    spawn: bool = True
    stubborn: bool = False  # ignore SIGTERM and never reach a checkpoint
    release: str = ""


def run_sleep(ctx: JobContext, payload: SleepPayload) -> dict[str, Any]:
    marker = Path(payload.marker)
    if payload.stubborn:  # from its first line: the SIGTERM of a timeout finds it deaf
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if payload.spawn:
        code = "import signal, time\n"
        if payload.stubborn:
            code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        code += "time.sleep(600)\n"
        child = subprocess.Popen([sys.executable, "-c", code])
        _write_whole(marker.with_suffix(".grandchild"), str(child.pid))
    count = marker.with_suffix(".count")
    start = int(count.read_text()) if count.exists() else 0
    _write_whole(marker, str(os.getpid()))
    step = start
    released = lambda: not payload.release or Path(payload.release).exists()  # noqa: E731
    while payload.stubborn or not payload.steps or step < payload.steps or not released():
        time.sleep(0.05)
        if payload.stubborn:
            continue
        if payload.steps and step >= payload.steps:  # counted: held until released
            ctx.checkpoint()
            continue
        step += 1
        _write_whole(count, str(step))
        ctx.progress(step, payload.steps, f"step {step}")
    return {"started_from": start, "steps": step}


def _write_whole(path: Path, text: str) -> None:
    """A file a SIGKILL can't leave half-written (write_text truncates first: a kill between
    truncate and write left an empty file, and the resumed attempt crashed on it)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


class SlotPayload(BasePayload):
    """Hold an exclusive slot file for a moment; fail if another job holds it."""

    kind: Literal["test-slot"] = "test-slot"
    slot: str
    log: str


def run_slot(ctx: JobContext, payload: SlotPayload) -> dict[str, Any]:
    try:
        fd = os.open(payload.slot, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        with open(payload.log, "a") as log:
            log.write(f"overlap {ctx.job.id}\n")
        raise JobFailed("another job held the slot") from None
    time.sleep(0.15)
    os.close(fd)
    os.unlink(payload.slot)
    with open(payload.log, "a") as log:
        log.write(f"ran {ctx.job.id}\n")
    return {}


class MeetPayload(BasePayload):
    """Touch ``mine``, then wait for ``theirs``: done only if another job runs alongside."""

    kind: Literal["test-meet"] = "test-meet"
    mine: str
    theirs: str


def run_meet(ctx: JobContext, payload: MeetPayload) -> dict[str, Any]:
    Path(payload.mine).touch()
    deadline = time.monotonic() + 900  # a hang guard: the other job's start is slow under load
    while not Path(payload.theirs).exists():
        if time.monotonic() > deadline:
            raise JobFailed("the other vault's job never ran at the same time")
        time.sleep(0.02)
    return {"met": True}


register_handler("test-sleep", SleepPayload, run_sleep)
register_handler("test-slot", SlotPayload, run_slot)
register_handler("test-meet", MeetPayload, run_meet)


def _main(argv: list[str]) -> int:
    from datetime import UTC, datetime

    from affidavit.clock import Clock, utc_now
    from affidavit.jobs.runner import main, worker_pid
    from tests.conftest import FakeClock

    clock: Clock = utc_now
    kill_at: tuple[str, int] | None = None
    while argv and argv[0] in ("--fixed-clock", "--kill-at", "--slow-start", "--awake"):
        option = argv.pop(0)
        if option == "--slow-start":
            time.sleep(float(argv.pop(0)))
        elif option == "--awake":  # after --slow-start: tell the test the slow start is over
            _write_whole(Path(argv.pop(0)), str(os.getpid()))
        elif option == "--fixed-clock":
            clock = FakeClock(datetime(2026, 11, 30, 10, 0, tzinfo=UTC))
        elif option == "--kill-at":
            name, _, nth = argv.pop(0).partition(":")
            kill_at = (name, int(nth or 1))
    seen: dict[str, int] = {}

    def step(name: str) -> None:
        seen[name] = seen.get(name, 0) + 1
        if kill_at and kill_at == (name, seen[name]):
            os.kill(worker_pid(), signal.SIGKILL)  # the worker: "the daemon was killed"
            os.killpg(os.getpgrp(), signal.SIGKILL)  # and its job, at this very step

    return main(argv, clock=clock, step=step)


def test_support_kinds_are_registered() -> None:
    from affidavit.jobs import job_kinds

    assert {"test-sleep", "test-slot", "test-meet"} <= set(job_kinds())


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
