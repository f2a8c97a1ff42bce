"""``affidavit worker --database URL`` end to end: real worker processes on one PostgreSQL queue.
Two workers drain jobs side by side; one is killed (SIGKILL) in the middle of a job, and the other
finishes that job once its lease expires — every chunk's plan applied exactly once, the batch
numbers gap-free. A worker stopped (SIGSTOP) past its lease while the other takes its job writes
nothing when it wakes (SIGCONT): its late writes are refused by the fence."""

from __future__ import annotations

import getpass
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.jobs.payloads import StoredIngestPayload
from affidavit.storage.postgres import PostgresStorage
from affidavit.storage.postgres_jobs import PostgresJobStore

from .conftest import ROOT
from .pg_cluster import drop_vaults
from .test_pg_jobs import TEXT, until

pytestmark = pytest.mark.xdist_group("postgres")


class Queue:
    def __init__(self, url: str, tmp: Path) -> None:
        drop_vaults(url)
        self.url = url
        self.tmp = tmp
        self.storage = PostgresStorage(url)
        self.storage.create_vault("team", "ann")
        self.jobs = PostgresJobStore(self.storage)
        self.config = tmp / "affidavit.toml"
        self.config.write_text('[policy]\nauto_apply = "trusted"\n', encoding="utf-8")
        self.workers: list[subprocess.Popen[bytes]] = []
        self.sources = 0

    def submit(self, count: int) -> str:
        ids = []
        for n in range(self.sources, self.sources + count):
            text = TEXT.format(n=n, year=1700 + n, steps=100 + n)
            ids.append(self.storage.add_source(
                "team", text.encode(), origin=f"/notes/light-{n}.md", name=f"light-{n}.md",
                added_at="2026-12-07T00:00:00Z", trust="trusted",
            ))  # fmt: skip
        self.sources += count
        payload = StoredIngestPayload(sources=ids).model_dump(mode="json")
        return self.jobs.enqueue("team", payload, "ann", max_attempts=3)

    def worker(self, name: str, lease: float) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-c", "from affidavit.cli import main; main()", "worker",
                "--database", self.url, "--vault", "team", "--lease", str(lease), "--poll", "0.1",
                "--config", str(self.config)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        with (self.tmp / f"{name}.log").open("wb") as log:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env)
        self.workers.append(proc)
        return proc

    def events(self, name: str) -> list[dict[str, Any]]:
        lines = (self.tmp / f"{name}.log").read_text().splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def q(self, text: str) -> list[dict[str, Any]]:
        with self.storage.pool.connection() as conn:
            return list(conn.execute(text.replace("{s}", "v_team")).fetchall())

    def running_with_progress(self, at_least: int) -> dict[str, Any] | None:
        for row in self.jobs.rows("team"):
            if row["status"] == "running" and at_least <= row["progress_done"] < 15:
                return row
        return None

    def all_done(self) -> bool:
        return all(r["status"] == "done" for r in self.jobs.rows("team"))

    def close(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            proc.wait(timeout=600)
        self.storage.close()


@pytest.fixture
def queue(pg_url: str, tmp_path: Path) -> Iterator[Queue]:
    made = Queue(pg_url, tmp_path)
    yield made
    made.close()


def pid_of(row: dict[str, Any]) -> int:
    return int(str(row["lease_owner"]).rsplit(":", 1)[1])


def assert_each_plan_once(queue: Queue, chunks: int) -> None:
    applied = [e.plan_id for e in queue.storage.audit("team") if e.action == "applied"]
    assert len(applied) == len(set(applied)) == chunks, Counter(applied).most_common(2)
    origins = [r["origin"] for r in queue.q("SELECT origin FROM {s}.plans")]
    assert len(origins) == len(set(origins)) == chunks
    assert [b.seq for b in queue.storage.batches("team")] == list(range(1, chunks + 1))
    outcomes = Counter(r["outcome"] for r in queue.q("SELECT outcome FROM {s}.ingested_chunks"))
    assert outcomes == {"applied": chunks}
    texts = [(r["page_slug"], r["text"]) for r in queue.q("SELECT page_slug, text FROM {s}.claims")]
    assert len(texts) == len(set(texts))


def test_two_workers_one_killed_mid_job_each_plan_applied_once(queue: Queue) -> None:
    jobs = [queue.submit(15) for _ in range(4)]
    a = queue.worker("a", lease=5)
    b = queue.worker("b", lease=5)
    row = until(lambda: queue.running_with_progress(2), "a job in its middle", seconds=600)
    victim = pid_of(row)
    assert victim in (a.pid, b.pid)
    os.kill(victim, signal.SIGKILL)
    survivor, name = (b, "b") if victim == a.pid else (a, "a")
    until(queue.all_done, "every job done by the survivor", seconds=600)
    survivor.send_signal(signal.SIGTERM)
    assert survivor.wait(timeout=600) == 0
    killed = queue.jobs.rows("team", row["id"])[0]
    assert killed["attempts"] == 2 and killed["status"] == "done"
    fences = {r["fence"] for r in queue.q(
        f"SELECT fence FROM {{s}}.ingested_chunks WHERE job_id = '{row['id']}'")}  # fmt: skip
    assert fences == {1, 2}  # chunks of the killed attempt kept, the rest by the survivor's
    assert {e["job"] for e in queue.events(name) if e["event"] == "done"} >= {row["id"]}
    assert sorted(r["id"] for r in queue.jobs.rows("team")) == sorted(jobs)
    assert_each_plan_once(queue, 60)


def test_a_stopped_worker_woken_after_its_job_was_taken_writes_nothing(queue: Queue) -> None:
    job = queue.submit(15)
    a = queue.worker("a", lease=2)
    row = until(lambda: queue.running_with_progress(2), "A in the middle of the job", 600)
    a.send_signal(signal.SIGSTOP)
    applied_by_a = row["progress_done"]
    b = queue.worker("b", lease=30)
    until(queue.all_done, "B to take the job over and finish it", seconds=600)
    a.send_signal(signal.SIGCONT)
    # awake, A finds its claim gone, or its session ended by the server (it idled its lease
    # inside a transaction, holding the vault's door lock): either way it writes nothing
    woke = ("lease_lost", "database_error")
    until(lambda: any(e["event"] in woke for e in queue.events("a")), "A to wake")
    done = queue.jobs.rows("team", job)[0]
    assert done["status"] == "done" and done["attempts"] >= 2
    assert_each_plan_once(queue, 15)
    by_fence = Counter(r["fence"] for r in queue.q("SELECT fence FROM {s}.ingested_chunks"))
    assert len(by_fence) >= 2 and sum(by_fence.values()) == 15  # A's chunks kept, B's added
    assert sum(n for fence, n in by_fence.items() if fence < done["fence"]) >= applied_by_a
    for proc in (a, b):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=600) == 0


def test_the_worker_refuses_what_it_cannot_serve(queue: Queue) -> None:
    from .test_pg_serve_cli import cli

    nope = cli("worker", "--database", queue.url, "--vault", "nope", "--drain")
    assert nope.returncode == 1 and "no vault 'nope'" in nope.stderr and "team" in nope.stderr
    bad = cli("worker", "--database", "sqlite:///tmp/x.db", "--drain")
    assert bad.returncode != 0 and "postgresql://" in bad.stderr
    sql = cli("worker", "--database", queue.url, "--vault", "team; DROP TABLE x", "--drain")
    assert sql.returncode != 0 and "DROP" not in queue.storage.vaults()
    note = queue.tmp / "light.md"
    note.write_text(TEXT.format(n=7, year=1777, steps=177), encoding="utf-8")
    added = cli("team", "add", "team", str(note), "--trust", "trusted", "--ingest", "--json",
                env={"AFFIDAVIT_DATABASE": queue.url})  # fmt: skip
    assert added.returncode == 0, added.stderr
    job = json.loads(added.stdout)["job"]
    assert queue.jobs.rows("team", job)[0]["requested_by"] == getpass.getuser()
    drained = cli("worker", "--database", queue.url, "--vault", "team", "--drain",
                  "--config", str(queue.config))  # fmt: skip
    assert drained.returncode == 0, drained.stderr
    events = [json.loads(line)["event"] for line in drained.stderr.splitlines()]
    assert events == ["ready", "claimed", "done"]
    assert queue.jobs.rows("team", job)[0]["status"] == "done"
