"""A worker's warm job processes (issue 27 item 2): a fork server with everything imported, and a
standby forked from it before any job is queued, so a job — the daemon's watch's job of a save —
never waits for a process's imports. Observed by process ids, never by time: each job still runs
in a process of its own that ran nothing before, killed processes are replaced and their job
runs exactly once, cancellation stops the job and what it started."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.jobs import JobQueue, Worker
from affidavit.jobs.forkserver import ForkServer
from affidavit.jobs.lease import pid_alive
from affidavit.vault import Vault

from .test_jobs_support import SUPPORT_RUNNER, SleepPayload
from .test_jobs_worker import gone, until

pytestmark = pytest.mark.slow


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[-1].split()[1])


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def open_paths(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return found


class Running:
    """A worker in :meth:`Worker.run_forever`, on a thread of this test."""

    def __init__(self, vault: Vault) -> None:
        self.worker = Worker(vault.root, "w-warm", runner=SUPPORT_RUNNER, grace_seconds=1)
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.thread = threading.Thread(
            target=self.worker.run_forever, args=(self.stop, 0.05, self.wake)
        )
        self.thread.start()

    def standby(self) -> int:
        """The standby's pid, once there is one (waits for the fork server's imports)."""
        until(lambda: self.worker.processes()["standby"] is not None, "a standby")
        pid = self.worker.processes()["standby"]
        assert pid is not None
        return pid

    def server(self) -> int:
        until(lambda: self.worker.processes()["fork_server"] is not None, "a fork server")
        pid = self.worker.processes()["fork_server"]
        assert pid is not None
        return pid

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=600)
        assert not self.thread.is_alive()
        self.worker.close()


@pytest.fixture
def running(vault: Vault) -> Iterator[Running]:
    worker = Running(vault)
    try:
        yield worker
    finally:
        worker.close()


def job_pid(marker: Path) -> int:
    return int(marker.read_text())


def test_a_standby_waits_before_the_first_job_and_runs_it(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    standby, server = running.standby(), running.server()
    assert JobQueue(vault).list() == []  # nothing queued yet: the standby came first
    assert parent(standby) == server and pid_alive(standby)
    marker = tmp_path / "first"
    job = JobQueue(vault).submit(SleepPayload(marker=str(marker), steps=1, spawn=False), "ann")
    running.wake.set()
    until(lambda: JobQueue(vault).get(job.id).terminal, "the job")
    assert JobQueue(vault).get(job.id).status == "done"
    assert job_pid(marker) == standby  # the job ran in the process that was waiting for it
    assert running.worker.processes()["fork_server"] == server


def test_back_to_back_jobs_each_take_a_standby_forked_before_they_were_queued(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    queue = JobQueue(vault)
    server = running.server()
    first, second, release = tmp_path / "one", tmp_path / "two", tmp_path / "release"
    one = queue.submit(
        SleepPayload(marker=str(first), steps=1, spawn=False, release=str(release)), "ann"
    )
    running.wake.set()
    until(first.exists, "the first job to run")
    ran_first = job_pid(first)
    until(lambda: running.worker.processes()["standby"] not in (None, ran_first), "next standby")
    waiting = running.standby()
    assert parent(waiting) == server  # forked, warm, and not yet given a job
    two = queue.submit(SleepPayload(marker=str(second), steps=1, spawn=False), "ann")
    release.touch()  # the first ends; the second was queued while it ran: back to back
    until(lambda: queue.get(two.id).terminal, "the second job")
    assert (queue.get(one.id).status, queue.get(two.id).status) == ("done", "done")
    assert job_pid(second) == waiting != ran_first  # its own process, started before it queued
    assert server == running.worker.processes()["fork_server"]
    assert not pid_alive(ran_first)  # a process runs one job, then it is gone


def test_the_fork_server_holds_what_a_fresh_standby_holds(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    """An attacker's version: a fork server that ran the jobs itself, or kept the vault open
    between them, would hold their state; it runs none and opens no vault."""
    queue = JobQueue(vault)
    server = running.server()
    running.standby()
    before = open_paths(server)
    pids = []
    for n in range(3):
        marker = tmp_path / f"job{n}"
        job = queue.submit(SleepPayload(marker=str(marker), steps=1, spawn=False), "ann")
        running.wake.set()
        until(lambda j=job.id: queue.get(j).terminal, f"job {n}")  # type: ignore[misc]
        pids.append(job_pid(marker))
    assert server not in pids and len(set(pids)) == 3
    assert running.worker.processes()["fork_server"] == server
    assert threads(server) == 1  # forking is safe: no thread of it holds a lock
    vault_files = [p for p in open_paths(server) if p.startswith(str(vault.root))]
    assert vault_files == [] and len(open_paths(server)) == len(before)


def test_a_killed_standby_is_replaced_and_the_job_runs_once(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    queue = JobQueue(vault)
    killed = running.standby()
    os.kill(killed, signal.SIGKILL)
    until(lambda: not pid_alive(killed), "the standby to die")  # before the job is queued
    marker = tmp_path / "after"
    job = queue.submit(SleepPayload(marker=str(marker), steps=2, spawn=False), "ann")
    running.wake.set()  # whether the worker noticed the death first or at the hand-over
    until(lambda: queue.get(job.id).terminal, "the job")
    done = queue.get(job.id)
    assert (done.status, done.attempts) == ("done", 1), done.error
    assert done.result == {"started_from": 0, "steps": 2}
    assert job_pid(marker) != killed and not pid_alive(killed)
    assert running.standby() not in (killed, job_pid(marker))  # and the next one waits


def test_a_killed_fork_server_is_replaced(vault: Vault, running: Running, tmp_path: Path) -> None:
    queue = JobQueue(vault)
    old = running.server()
    standby = running.standby()
    os.kill(old, signal.SIGKILL)
    until(lambda: running.worker.processes()["fork_server"] not in (None, old), "a new server")
    new = running.server()
    first, second = tmp_path / "one", tmp_path / "two"
    one = queue.submit(SleepPayload(marker=str(first), steps=1, spawn=False), "ann")
    running.wake.set()
    until(lambda: queue.get(one.id).terminal, "the first job")
    assert (queue.get(one.id).status, queue.get(one.id).attempts) == ("done", 1)
    assert job_pid(first) == standby  # the standby forked before the server died still served
    two = queue.submit(SleepPayload(marker=str(second), steps=1, spawn=False), "ann")
    running.wake.set()
    until(lambda: queue.get(two.id).terminal, "the second job")
    assert (queue.get(two.id).status, queue.get(two.id).attempts) == ("done", 1)
    assert job_pid(second) not in (standby, old, new)
    assert new == running.worker.processes()["fork_server"]


def test_a_killed_job_process_is_resumed_exactly_once(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    queue = JobQueue(vault)
    marker, release = tmp_path / "killed", tmp_path / "release"
    job = queue.submit(SleepPayload(marker=str(marker), steps=3, release=str(release)), "ann")
    running.wake.set()
    until(lambda: queue.get(job.id).progress.done >= 3, "its checkpoints")
    first = job_pid(marker)
    os.kill(first, signal.SIGKILL)
    until(lambda: queue.get(job.id).attempts >= 2 or queue.get(job.id).terminal, "a retry")
    release.touch()
    until(lambda: queue.get(job.id).terminal, "the job")
    done = queue.get(job.id)
    assert (done.status, done.attempts) == ("done", 2), done.error
    assert done.result is not None and done.result["started_from"] == 3  # from its checkpoint
    requeued = [e.data["reason"] for e in queue.events(job.id) if e.type == "requeued"]
    assert requeued == ["attempt 1 ended with signal 9"]  # the status came through the server
    assert job_pid(marker) != first
    until(lambda: gone(marker.with_suffix(".grandchild")), "what the first attempt started")


def test_a_job_whose_fork_server_died_is_still_settled_and_resumed_once(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    """Its exit status died with the server: the worker still sees it end (a pidfd), requeues
    it with the reason, and the next attempt resumes from its checkpoint."""
    queue = JobQueue(vault)
    server = running.server()
    marker, release = tmp_path / "orphan", tmp_path / "release"
    job = queue.submit(SleepPayload(marker=str(marker), steps=2, release=str(release)), "ann")
    running.wake.set()
    until(lambda: queue.get(job.id).progress.done >= 2, "its checkpoints")
    first = job_pid(marker)
    os.kill(server, signal.SIGKILL)
    until(lambda: not pid_alive(server), "the fork server to die")
    os.kill(first, signal.SIGKILL)
    until(lambda: queue.get(job.id).attempts >= 2 or queue.get(job.id).terminal, "a retry")
    release.touch()
    until(lambda: queue.get(job.id).terminal, "the job")
    done = queue.get(job.id)
    assert (done.status, done.attempts) == ("done", 2), done.error
    assert done.result is not None and done.result["started_from"] == 2
    requeued = [e.data["reason"] for e in queue.events(job.id) if e.type == "requeued"]
    assert requeued == ["attempt 1 ended with an unknown status (its fork server died before it)"]
    assert running.worker.processes()["fork_server"] not in (None, server)


def test_cancel_stops_the_job_and_what_it_started_and_the_next_job_runs(
    vault: Vault, running: Running, tmp_path: Path
) -> None:
    queue = JobQueue(vault)
    marker = tmp_path / "cancelled"
    job = queue.submit(SleepPayload(marker=str(marker)), "ann")  # forever, with a grandchild
    running.wake.set()
    until(lambda: marker.with_suffix(".grandchild").exists() and marker.exists(), "the job")
    queue.cancel(job.id, "ann")
    until(lambda: queue.get(job.id).terminal, "the cancel")
    assert queue.get(job.id).status == "cancelled"
    until(lambda: gone(marker) and gone(marker.with_suffix(".grandchild")), "its processes")
    after = tmp_path / "after"
    nxt = queue.submit(SleepPayload(marker=str(after), steps=1, spawn=False), "ann")
    running.wake.set()
    until(lambda: queue.get(nxt.id).terminal, "the next job")
    assert queue.get(nxt.id).status == "done" and job_pid(after) != job_pid(marker)


def test_a_fork_given_up_before_its_answer_retires_the_server() -> None:
    """A fork request abandoned (the worker stopping while the server still imports) is
    answered later; a worker that kept the server would take that pid for its next request's
    process. The server is no longer alive, so the worker starts another."""
    stop = threading.Event()
    stop.set()
    server = ForkServer(SUPPORT_RUNNER)
    try:
        with pytest.raises(OSError, match="stopping"):
            server.fork(stop)
        assert not server.alive()
    finally:
        server.close()
    fresh = ForkServer(SUPPORT_RUNNER)
    try:
        standby = fresh.fork()
        assert fresh.alive() and parent(standby.pid) == fresh.pid
        assert standby.stdin is not None
        standby.stdin.close()  # no job for it: it exits, as a standby whose worker left
        standby.stdin = None
        assert standby.wait() == 0
        standby.close()
    finally:
        fresh.close()
