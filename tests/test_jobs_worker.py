"""Workers with real processes and signals: one job per vault at a time, vaults in parallel,
cancel / timeout / shutdown stop the job and everything it started, a dead worker's job resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from affidavit.jobs import IngestPayload, Job, JobQueue, Worker
from affidavit.jobs.lease import pid_alive
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import SAMPLES
from .test_jobs_support import SUPPORT_RUNNER, MeetPayload, SleepPayload, SlotPayload

WORKER = """
import json, signal, sys, threading
from pathlib import Path
from affidavit.jobs import Worker
worker = Worker(Path(sys.argv[1]), sys.argv[2], runner=json.loads(sys.argv[3]), grace_seconds=1)
if sys.argv[4:] == ["forever"]:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.run_forever(stop, poll_seconds=0.02)
else:
    job = worker.run_once()
    print(job.status if job else "none")
"""


def until(condition: Callable[[], bool], what: str, seconds: float = 600) -> None:
    """Wait for ``condition`` (a state, not a speed: the limit only stops a hung test)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def gone(pid_file: Path) -> bool:
    return not pid_alive(int(pid_file.read_text()))


def worker_process(root: Path, name: str, *mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(root), name, json.dumps(SUPPORT_RUNNER), *mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def outcome(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=120)
    return proc.returncode, out.strip()


def test_ingest_job_runs_with_progress(vault: Vault) -> None:
    queue = JobQueue(vault)
    doc = str(SAMPLES / "sotu" / "1790-washington.md")
    job = queue.submit(IngestPayload(sources=[doc], yes=True, trust="trusted"), "ann")
    with Worker(vault.root, "w1") as worker:
        done = worker.run_once()
        assert worker.run_once() is None
    assert done is not None and done.id == job.id and done.status == "done", done
    assert done.attempts == 1 and done.progress.done == done.progress.total > 1
    assert done.result is not None
    assert done.result["job_chunks"] == {"applied": done.progress.total}
    assert done.result["totals"]["claims"]["admitted"] > 0
    types = [e.type for e in queue.events(job.id)]
    assert types[:2] == ["submitted", "started"] and types[-1] == "done"
    assert types.count("progress") == done.progress.total
    pages = vault.db.execute("SELECT count(*) FROM pages").fetchone()[0]
    assert pages > 0
    # the approvals carry who asked for the job
    actors = {r[0] for r in vault.db.execute("SELECT decided_by FROM plans")}
    assert actors == {"ann"}


def test_failed_sources_fail_the_job_with_a_result(vault: Vault, tmp_path: Path) -> None:
    queue = JobQueue(vault)
    job = queue.submit(IngestPayload(sources=[str(tmp_path / "missing.md")]), "ann")
    with Worker(vault.root, "w1") as worker:
        done = worker.run_once()
    assert done is not None and done.status == "failed"
    assert "1 of 1 source(s) failed" in done.error
    assert done.result is not None and done.result["sources"][0]["status"] == "failed"
    assert queue.events(job.id)[-1].type == "failed"


def test_cancel_stops_the_job_and_its_grandchild(vault: Vault, tmp_path: Path) -> None:
    marker = tmp_path / "sleep"
    queue = JobQueue(vault)
    job = queue.submit(SleepPayload(marker=str(marker)), "ann")
    worker = worker_process(vault.root, "w-cancel")
    try:
        until(lambda: marker.with_suffix(".grandchild").exists() and marker.exists(), "job")
        cancelled = queue.cancel(job.id, "bob")
        assert cancelled.cancel_requested
        assert outcome(worker) == (0, "cancelled")
    finally:
        worker.kill()
        worker.communicate()
    final = queue.get(job.id)
    assert final.status == "cancelled" and final.error == "cancelled by bob"
    until(lambda: gone(marker) and gone(marker.with_suffix(".grandchild")), "the processes end")


def test_timeout_kills_a_job_that_ignores_sigterm(vault: Vault, tmp_path: Path) -> None:
    marker = tmp_path / "stubborn"
    queue = JobQueue(vault)
    job = queue.submit(SleepPayload(marker=str(marker), stubborn=True), "ann", timeout_seconds=1)

    def clock() -> float:  # time stands still until the job is deaf and its grandchild started
        return time.monotonic() if marker.exists() else 0.0

    with Worker(
        vault.root, "w-timeout", runner=SUPPORT_RUNNER, grace_seconds=1, monotonic=clock
    ) as worker:
        done = worker.run_once()
    assert done is not None and done.status == "failed"
    assert done.error.startswith("timed out after 1s (attempt 1)")
    assert queue.events(job.id)[-1].type == "failed"
    until(lambda: gone(marker) and gone(marker.with_suffix(".grandchild")), "the processes end")


def test_the_time_limit_counts_the_job_not_its_process_start(vault: Vault, tmp_path: Path) -> None:
    """A job process slow to start (imports on a busy machine) is not timed out before its job
    began: the limit counts from the job's first line. (Before, the 1 s limit ran out during a
    3 s start, so the job was killed before it ran and its marker files never existed.)"""
    marker, awake = tmp_path / "late", tmp_path / "awake"
    queue = JobQueue(vault)
    job = queue.submit(
        SleepPayload(marker=str(marker), steps=1, spawn=False), "ann", timeout_seconds=1
    )
    slow = (*SUPPORT_RUNNER, "--slow-start", "3", "--awake", str(awake))
    frozen: list[float] = []

    def clock() -> float:
        """Real time during the 3 s start, which is longer than the 1 s limit; stopped once the
        start is over, so the job's own run (its database writes, however slow on a busy
        machine) never reaches the limit: the test depends on what is counted, not on speed."""
        if frozen:
            return frozen[0]
        now = time.monotonic()
        if awake.exists():
            frozen.append(now)
        return now

    with Worker(vault.root, "w-slow", runner=slow, monotonic=clock) as worker:
        done = worker.run_once()
    assert done is not None and done.id == job.id and done.status == "done", done.error
    assert done.result == {"started_from": 0, "steps": 1}
    assert marker.read_text().isdigit()  # the job wrote its pid: it ran


def test_a_killed_worker_takes_its_job_down_and_the_next_resumes_it(
    vault: Vault, tmp_path: Path
) -> None:
    marker = tmp_path / "resume"
    queue = JobQueue(vault)
    release = tmp_path / "release"  # held after its steps until then: killed mid-job, always
    job = queue.submit(SleepPayload(marker=str(marker), steps=3, release=str(release)), "ann")
    worker = worker_process(vault.root, "w-doomed")
    until(lambda: marker.with_suffix(".count").exists(), "the first checkpoint")
    worker.send_signal(signal.SIGKILL)
    assert outcome(worker)[0] == -signal.SIGKILL
    until(lambda: gone(marker) and gone(marker.with_suffix(".grandchild")), "the orphans to die")
    requeued = queue.get(job.id)  # the next look sees its worker's process is gone
    assert requeued.status == "queued" and requeued.attempts == 1
    assert queue.events(job.id)[-1].type == "requeued"
    release.touch()
    with Worker(vault.root, "w-next", runner=SUPPORT_RUNNER) as fresh:
        done = fresh.run_once()
    assert done is not None and done.status == "done" and done.attempts == 2
    assert done.result is not None and done.result["started_from"] > 0  # from its checkpoint
    resumed = [e.data for e in queue.events(job.id) if e.type == "started"]
    assert [(d["worker"], d["resumed"]) for d in resumed] == [
        ("w-doomed", False),
        ("w-next", True),
    ]


def test_shutdown_requeues_the_running_job_at_a_checkpoint(vault: Vault, tmp_path: Path) -> None:
    marker = tmp_path / "shutdown"
    queue = JobQueue(vault)
    release = tmp_path / "release"  # held after its steps until then: stopped mid-job, always
    job = queue.submit(
        SleepPayload(marker=str(marker), steps=3, spawn=False, release=str(release)), "ann"
    )
    stop = threading.Event()
    with Worker(vault.root, "w-stop", runner=SUPPORT_RUNNER) as worker:
        thread = threading.Thread(target=worker.run_forever, args=(stop, 0.05))
        thread.start()
        until(lambda: queue.get(job.id).progress.done >= 3, "progress")
        stop.set()
        thread.join(timeout=600)
        assert not thread.is_alive()
    stopped = queue.get(job.id)
    assert stopped.status == "queued" and stopped.attempts == 0, stopped
    assert queue.events(job.id)[-1].type == "requeued"
    release.touch()
    with Worker(vault.root, "w-again", runner=SUPPORT_RUNNER) as worker:
        done = worker.run_once()
    assert done is not None and done.status == "done" and done.attempts == 1
    assert done.result is not None and done.result["started_from"] >= 3


def test_two_workers_on_one_vault_never_run_two_jobs_at_once(vault: Vault, tmp_path: Path) -> None:
    queue = JobQueue(vault)
    slot, log = tmp_path / "slot", tmp_path / "log"
    jobs = [queue.submit(SlotPayload(slot=str(slot), log=str(log)), "ann") for _ in range(6)]
    workers = [worker_process(vault.root, f"w{n}", "forever") for n in range(2)]
    try:
        until(lambda: all(queue.get(j.id).terminal for j in jobs), "the jobs", 120)
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        assert [outcome(w)[0] for w in workers] == [0, 0]
    assert [queue.get(j.id).status for j in jobs] == ["done"] * 6
    lines = log.read_text().splitlines()
    assert not [line for line in lines if line.startswith("overlap")]
    assert sorted(lines) == sorted(f"ran {j.id}" for j in jobs)


def test_different_vaults_run_in_parallel(tmp_path: Path) -> None:
    roots = [init_vault(tmp_path / f"v{n}")[0] for n in range(2)]
    a, b = tmp_path / "a", tmp_path / "b"
    jobs: list[Job] = []
    for vault, (mine, theirs) in zip(roots, ((a, b), (b, a)), strict=True):
        jobs.append(JobQueue(vault).submit(MeetPayload(mine=str(mine), theirs=str(theirs)), "x"))
    results: dict[int, Job | None] = {}

    def run(n: int) -> None:
        with Worker(roots[n].root, f"w{n}", runner=SUPPORT_RUNNER) as worker:
            results[n] = worker.run_once()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()  # the suite's timeout is the hang guard
    assert [r.status if r else None for r in (results[0], results[1])] == ["done", "done"]
    for vault in roots:
        vault.close()


def test_graceful_run_forever_with_nothing_to_do(vault: Vault) -> None:
    stop = threading.Event()
    stop.set()
    with Worker(vault.root, "idle") as worker:
        worker.run_forever(stop, poll_seconds=0.01)  # returns at once
    assert JobQueue(vault).list() == []


def test_worker_sees_a_vault_opened_elsewhere(vault: Vault, tmp_path: Path) -> None:
    again = open_vault(vault.root)
    try:
        job = JobQueue(again).submit(SleepPayload(marker=str(tmp_path / "m"), steps=1), "ann")
    finally:
        again.close()
    with Worker(vault.root, "w", runner=SUPPORT_RUNNER) as worker:
        done = worker.run_once()
    assert done is not None and done.id == job.id and done.status == "done"
    assert os.path.exists(tmp_path / "m.count")


pytestmark = pytest.mark.slow


def test_a_job_that_recorded_its_outcome_is_let_exit_not_killed(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    """A heartbeat after the job's process recorded "done" (while it closes its vault, which
    waits for its search-index catch-up) fails to renew, as the job no longer runs: that is
    not a lost lease, and the process is not killed mid-close. The clock makes every poll a
    heartbeat, so the heartbeat lands in that window whatever the machine's speed."""
    ticks = iter(range(0, 10**9, 10))
    doc = str(SAMPLES / "sotu" / "1790-washington.md")
    job = JobQueue(vault).submit(
        IngestPayload(sources=[doc], yes=True, trust="trusted"), "ann", timeout_seconds=10**8
    )
    clock = lambda: float(next(ticks))  # noqa: E731
    with (
        caplog.at_level("INFO", logger="affidavit.jobs"),
        Worker(vault.root, "w-close", monotonic=clock) as worker,
    ):
        done = worker.run_once()
    assert done is not None and done.id == job.id and (done.status, done.error) == ("done", "")
    assert "lease lost" not in caplog.text
