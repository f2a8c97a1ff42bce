"""One job-queue contract, two backends (issue 26, stage 2a): workers in separate processes drain
a vault's jobs, each done exactly once; a worker paused (SIGSTOP) past its lease writes nothing
late once resumed, and the job is completed once, by the worker that took it over; a worker
killed (SIGKILL) mid-job has its job recovered after the lease; forged, old and cross-vault claims
are refused. On today's SQLite queue and on a real PostgreSQL 15 (tests/pg_cluster.py).

Leases are short, but nothing here waits on a margin: every wait polls a condition, with a
generous bound that only a hung test reaches."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.storage import Claim, JobStore, LeaseLost
from affidavit.vault import init_vault

from . import job_workers as jw

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

SPAWN = multiprocessing.get_context("forkserver")  # children fork from a clean server: quick
SPAWN.set_forkserver_preload(  # imported once, by the server, not by every worker
    ["affidavit.storage.sqlite_jobs", "affidavit.storage.postgres_jobs", "tests.job_workers"]
)
BOUND = 60.0  # seconds: only a hung test waits this long
LINT: dict[str, Any] = {"kind": "lint"}
ATTACKS = ["'; DROP TABLE jobs; --", "%s {s} ?", "0" * 32, "שלום 🧪 \u200b", ""]


def until(condition: Callable[[], Any], what: str) -> Any:
    end = time.monotonic() + BOUND
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


@dataclass
class Where:
    backend: str
    main: str  # the address of vault "main"
    other: str  # the address of a second vault (SQLite: made by the test that needs it;
    # PostgreSQL: the same database)
    other_vault: str  # its name


def _fresh_pg(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for schema in ("v_main", "v_other", "affidavit"):
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Where]:
    if request.param == "sqlite":
        init_vault(tmp_path / "vault")[0].close()
        yield Where("sqlite", str(tmp_path / "vault"), str(tmp_path / "other"), jw.VAULT)
        return
    from affidavit.storage import open_storage

    url = str(request.getfixturevalue("pg_url"))
    _fresh_pg(url)
    storage = open_storage(url)
    try:
        storage.create_vault(jw.VAULT, "owner")
        storage.create_vault("other", "owner")
    finally:
        storage.close()
    yield Where("postgresql", url, url, "other")


@pytest.fixture
def queue(where: Where) -> Iterator[JobStore]:
    made = jw.queue_at(where.main)
    yield made
    made.close()


@pytest.fixture
def procs() -> Iterator[list[BaseProcess]]:
    """Child processes, never left behind: resumed if stopped, then killed."""
    started: list[BaseProcess] = []
    yield started
    for proc in started:
        if proc.is_alive() and proc.pid is not None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.join()


def start(procs: list[BaseProcess], target: Callable[..., None], *args: Any) -> BaseProcess:
    proc = SPAWN.Process(target=target, args=args, daemon=True)
    proc.start()
    procs.append(proc)
    return proc


def finished(proc: BaseProcess) -> int | None:
    proc.join(BOUND)
    assert proc.exitcode is not None, f"{proc.name} did not finish"
    return proc.exitcode


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]


def stop_while_idle(proc: BaseProcess, idle: Any) -> None:
    """SIGSTOP ``proc`` at a moment it holds no transaction (its ``idle`` flag, see
    tests/job_workers.py), so what is tested is its lease, not a lock it would keep."""
    pid = proc.pid
    assert pid is not None
    for _ in range(200):
        until(lambda: idle.value == 1, "the worker to be idle")
        os.kill(pid, signal.SIGSTOP)
        until(lambda: state(pid) == "T", "the worker to stop")
        if idle.value == 1:
            return
        os.kill(pid, signal.SIGCONT)
    raise AssertionError("the worker was never idle when stopped")


def test_workers_in_processes_drain_every_job_exactly_once(where: Where, tmp_path: Path, queue: JobStore, procs: list[BaseProcess]) -> None:  # fmt: skip
    ids = [queue.enqueue(jw.VAULT, LINT, "ann") for _ in range(12)]
    logs = [tmp_path / f"w{n}.log" for n in range(3)]
    workers = [start(procs, jw.drain, where.main, f"w{n}", 30.0, str(logs[n])) for n in range(3)]
    assert [finished(w) for w in workers] == [0, 0, 0]

    completed = [(n, words[1]) for n, log in enumerate(logs) for words in jw.lines(log)
                 if words[0] == "completed"]  # fmt: skip
    assert sorted(job for _, job in completed) == sorted(ids)  # each once, by one worker
    for n, job_id in completed:
        job = queue.job(jw.VAULT, job_id)
        assert job is not None and job.status == "done"
        assert job.result == {"by": f"w{n}", "fence": job.fence}
        assert job.events.count("done") == 1 and job.events[-1] == "done"
    assert {j.status for j in queue.jobs(jw.VAULT)} == {"done"}


def test_a_worker_paused_past_its_lease_writes_nothing_late(where: Where, tmp_path: Path, queue: JobStore, procs: list[BaseProcess]) -> None:  # fmt: skip
    job_id = queue.enqueue(jw.VAULT, LINT, "ann")
    paused_log, taker_log = tmp_path / "paused.log", tmp_path / "taker.log"
    paused_idle, taker_idle = SPAWN.Value("i", 0), SPAWN.Value("i", 0)
    paused = start(procs, jw.hold, where.main, "paused", 0.5, str(paused_log), paused_idle)
    until(lambda: jw.lines(paused_log), "the first worker's claim")
    assert jw.lines(paused_log) == [["claimed", job_id, "1"]]
    stop_while_idle(paused, paused_idle)

    # its lease runs out while it is stopped, and another worker claims the job (fence 2)
    taker = start(procs, jw.hold, where.main, "taker", 30.0, str(taker_log), taker_idle)
    until(lambda: jw.lines(taker_log), "the second worker's claim")
    assert jw.lines(taker_log) == [["claimed", job_id, "2"]]

    # resumed while the job runs under the new claim: its heartbeat, progress and completion
    # are all refused, and nothing of them reaches the job
    Path(str(paused_log) + ".release").touch()
    assert paused.pid is not None
    os.kill(paused.pid, signal.SIGCONT)
    assert finished(paused) == 0
    late = jw.lines(paused_log)[1:]
    assert ["renew", "refused", job_id, "1"] in late
    assert ["progress", "refused", job_id, "1"] in late
    assert ["complete", "refused", job_id, "1"] in late
    assert not [words for words in late if "accepted" in words]
    job = queue.job(jw.VAULT, job_id)
    assert job is not None
    assert (job.status, job.fence, job.progress, job.result) == ("running", 2, (0, 0, ""), None)

    # the current holder's writes go through: the job is completed once, by it
    Path(str(taker_log) + ".release").touch()
    assert finished(taker) == 0
    assert jw.lines(taker_log)[1:] == [
        ["progress", "accepted", job_id, "2"],
        ["complete", "accepted", job_id, "2"],
    ]
    done = queue.job(jw.VAULT, job_id)
    assert done is not None
    assert (done.status, done.result, done.fence) == ("done", {"by": "taker", "fence": 2}, 2)
    assert done.progress == (2, 2, "taker late")
    assert done.events.count("done") == 1 and done.events.count("started") == 2


def test_a_worker_killed_mid_job_is_recovered_after_its_lease(where: Where, tmp_path: Path, queue: JobStore, procs: list[BaseProcess]) -> None:  # fmt: skip
    first = queue.enqueue(jw.VAULT, LINT, "ann", max_attempts=3)
    second = queue.enqueue(jw.VAULT, LINT, "ann")
    killed_log, other_log = tmp_path / "killed.log", tmp_path / "other.log"
    idle = SPAWN.Value("i", 0)
    killed = start(procs, jw.hold, where.main, "killed", 0.5, str(killed_log), idle)
    until(lambda: jw.lines(killed_log), "the first worker's claim")
    assert killed.pid is not None
    os.kill(killed.pid, signal.SIGKILL)
    assert finished(killed) == -signal.SIGKILL
    held = queue.job(jw.VAULT, first)
    assert held is not None and held.status == "running"

    # SQLite sees the holder's process is gone at once; PostgreSQL waits for the lease to expire
    assert until(lambda: queue.recover(jw.VAULT), "the job to be recovered") == [first]
    requeued = queue.job(jw.VAULT, first)
    assert requeued is not None and requeued.status == "queued"
    assert requeued.events[-1] == "requeued"

    other = start(procs, jw.drain, where.main, "other", 30.0, str(other_log))
    assert finished(other) == 0
    job = queue.job(jw.VAULT, first)
    assert job is not None
    assert (job.status, job.attempts, job.fence) == ("done", 2, 2)
    assert job.result == {"by": "other", "fence": 2}
    assert job.events.count("started") == 2 and job.events.count("done") == 1
    assert jw.lines(killed_log) == [["claimed", first, "1"]]
    done = queue.job(jw.VAULT, second)
    assert done is not None and done.status == "done"


def test_forged_and_old_claims_are_refused(queue: JobStore) -> None:
    job_id = queue.enqueue(jw.VAULT, LINT, "ann")
    claim = queue.claim(jw.VAULT, "w1", 60.0)
    assert claim is not None and (claim.job_id, claim.fence, claim.attempt) == (job_id, 1, 1)
    assert claim.token not in repr(claim)

    forged = [replace(claim, token=t) for t in ATTACKS]
    forged += [replace(claim, fence=f) for f in (claim.fence + 1, 0, -1, 2**70)]
    forged += [replace(claim, token=claim.token + "\x00"), replace(claim, job_id="job\x00")]
    forged += [replace(claim, job_id=t) for t in ATTACKS]
    for bad in forged:
        for write in _writes(queue, bad):
            with pytest.raises(LeaseLost, match=r"no longer held|no job"):
                write()
    job = queue.job(jw.VAULT, job_id)
    assert job is not None
    assert (job.status, job.fence, job.progress, job.result) == ("running", 1, (0, 0, ""), None)

    queue.progress(claim, 1, 1, "real")
    queue.complete(claim, {"by": "w1"})
    with pytest.raises(LeaseLost, match="is done at fence 1"):
        queue.complete(claim, {"by": "w1 again"})  # a claim ends with its job

    # an old claim: its lease expired and the job was claimed again
    second = queue.enqueue(jw.VAULT, LINT, "ann")
    old = queue.claim(jw.VAULT, "slow", 0.2)
    assert old is not None and old.job_id == second
    new = until(lambda: queue.claim(jw.VAULT, "fast", 60.0), "the expired job to be claimed")
    assert (new.job_id, new.fence, new.attempt) == (second, 2, 2)
    for write in _writes(queue, old):
        with pytest.raises(LeaseLost, match="fence 1; the job is running at fence 2"):
            write()
    queue.complete(new, {"by": "fast"})
    done = queue.job(jw.VAULT, second)
    assert done is not None and (done.status, done.result) == ("done", {"by": "fast"})


def test_what_a_worker_or_submitter_gives_is_checked(queue: JobStore) -> None:
    from affidavit.jobs import JobPayloadError

    for payload in ({"kind": "nosuch"}, {"kind": "lint", "extra": 1}, {}):
        with pytest.raises(JobPayloadError):
            queue.enqueue(jw.VAULT, payload, "ann")
    for attempts in (0, -1):
        with pytest.raises(ConflictError, match="max_attempts"):
            queue.enqueue(jw.VAULT, LINT, "ann", max_attempts=attempts)
    with pytest.raises(ConflictError, match="NUL"):
        queue.enqueue(jw.VAULT, LINT, "ann\x00")
    assert queue.jobs(jw.VAULT) == []
    job_id = queue.enqueue(jw.VAULT, LINT, ATTACKS[0])
    for seconds in (0, -1.0, float("nan"), 1e12):
        with pytest.raises(ConflictError, match="lease"):
            queue.claim(jw.VAULT, "w", seconds)
    claim = queue.claim(jw.VAULT, ATTACKS[1], 60.0)
    assert claim is not None and claim.job_id == job_id
    with pytest.raises(ConflictError, match="lease"):
        queue.renew(claim, 0)
    queue.progress(claim, 1, 3, ATTACKS[3])
    queue.complete(claim, {"text": ATTACKS[0], "n": [1, 2]})
    job = queue.job(jw.VAULT, job_id)
    assert job is not None and job.payload == {"kind": "lint", "propose": False}
    assert job.progress == (1, 3, ATTACKS[3])
    assert job.result == {"text": ATTACKS[0], "n": [1, 2]}


def _writes(queue: JobStore, claim: Claim) -> list[Callable[[], None]]:
    return [
        lambda: queue.renew(claim, 60.0),
        lambda: queue.progress(claim, 9, 9, "forged"),
        lambda: queue.complete(claim, {"by": "forger"}),
        lambda: queue.fail(claim, "forged"),
    ]


def test_a_claim_is_good_in_its_own_vault_only(where: Where, queue: JobStore) -> None:
    if where.backend == "sqlite":  # a second vault: a second folder, its own database
        init_vault(Path(where.other))[0].close()
    other = jw.queue_at(where.other) if where.other != where.main else queue
    try:
        mine = queue.enqueue(jw.VAULT, LINT, "ann")
        theirs = other.enqueue(where.other_vault, LINT, "bob")
        assert mine != theirs
        their = other.claim(where.other_vault, "w", 60.0)
        assert their is not None and their.job_id == theirs
        assert other.claim(where.other_vault, "w", 60.0) is None  # my job is not theirs to claim
        claim = queue.claim(jw.VAULT, "w", 60.0)
        assert claim is not None and claim.job_id == mine and claim.fence == 1

        attacks = [
            (other, replace(claim, vault=where.other_vault)),  # my job id in their vault
            (other, replace(claim, vault=where.other_vault, job_id=theirs)),  # my secret on theirs
            (queue, replace(claim, job_id=theirs)),  # their job id in my vault
        ]
        for store, bad in attacks:
            for write in _writes(store, bad):
                with pytest.raises(LeaseLost):
                    write()
        with pytest.raises(ConflictError, match="vault"):
            queue.complete(replace(claim, vault="nosuch"), {"by": "forger"})
        with pytest.raises(ConflictError, match="vault"):
            queue.claim("nosuch", "w", 60.0)

        queue.complete(claim, {"by": "w"})
        theirs_now = other.job(where.other_vault, theirs)
        assert theirs_now is not None and theirs_now.status == "running"
        assert theirs_now.result is None and theirs_now.progress == (0, 0, "")
        other.complete(their, {"by": "w"})
    finally:
        if other is not queue:
            other.close()


def test_a_job_whose_leases_keep_expiring_is_failed_after_its_attempts(queue: JobStore) -> None:
    job_id = queue.enqueue(jw.VAULT, LINT, "ann", max_attempts=2)
    first = queue.claim(jw.VAULT, "w", 0.2)
    assert first is not None
    second = until(lambda: queue.claim(jw.VAULT, "w", 0.2), "the job to be claimed again")
    assert (second.job_id, second.fence) == (job_id, 2)
    until(
        lambda: (
            queue.claim(jw.VAULT, "w", 0.2) is None
            and getattr(queue.job(jw.VAULT, job_id), "status", "") == "failed"
        ),
        "the job to be failed",
    )
    job = queue.job(jw.VAULT, job_id)
    assert job is not None and job.attempts == 2 and "gave up after 2 attempt(s)" in job.error
    with pytest.raises(LeaseLost):
        queue.complete(second, {"by": "late"})
    assert queue.job(jw.VAULT, job_id) == job


def test_postgres_claims_skip_locked_rows_and_run_side_by_side(where: Where, queue: JobStore) -> None:  # fmt: skip
    if where.backend != "postgresql":
        pytest.skip("SQLite's queue runs one job per vault at a time (docs/storage.md)")
    import psycopg

    ids = [queue.enqueue(jw.VAULT, LINT, "ann") for _ in range(3)]
    with psycopg.connect(where.main) as conn:  # a claim in flight elsewhere holds the oldest row
        locked = conn.execute("SELECT id FROM v_main.jobs ORDER BY n LIMIT 1 FOR UPDATE").fetchone()
        assert locked is not None and locked[0] == ids[0]
        a = queue.claim(jw.VAULT, "a", 60.0)  # skips it, waits for nothing
        b = queue.claim(jw.VAULT, "b", 60.0)  # a second job runs beside the first
        assert (a and a.job_id, b and b.job_id) == (ids[1], ids[2])
        assert queue.claim(jw.VAULT, "c", 60.0) is None
        conn.rollback()
    c = queue.claim(jw.VAULT, "c", 60.0)
    assert c is not None and c.job_id == ids[0]
    running = [j for j in queue.jobs(jw.VAULT) if j.status == "running"]
    assert sorted((j.id, j.owner) for j in running) == sorted(
        [(ids[0], "c"), (ids[1], "a"), (ids[2], "b")]
    )
