"""Ingest jobs on PostgreSQL drained by 1, 2 and 4 workers (issue 26 item 3).

Queues ``--jobs`` ingest jobs of ``--sources`` small text sources each (one chunk a source) in a
fresh vault per round, then starts W worker processes (``PgWorker``, as ``affidavit worker
--database`` runs it) and times the queue draining. The model is the extractive engine behind a
provider that sleeps ``--delay`` seconds per call (a slow language model): what more workers buy
is the model's time overlapped, while every plan still goes through the one door (the vault's
advisory lock). Reports chunks per second, the speed-up over one worker, and the workers' CPU
seconds per chunk, start-up included (time the machine's load does not inflate as much as wall
time). The clock starts once every worker process is up and connected.

Run against a PostgreSQL URL (``--url``), or with none: a throwaway cluster as the tests start
theirs (tests/pg_cluster.py).

    .venv/bin/python bench/bench_pg_jobs.py [--jobs 8] [--sources 2] [--delay 1.0]
        [--workers 1,2,4] [--url postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import time
import uuid
from pathlib import Path
from typing import Any

TEXT = (
    "# Beacon {n}\n\n"
    "The beacon number {n} was painted red and white in the year {year}. "
    "Keepers climbed its {steps} steps every evening to light the lamp. "
    "Ships from the northern ports relied on its beam during the winter storms.\n"
)


def _work(url: str, vault: str, delay: float, ready: Any, go: Any) -> None:
    """One worker process: drain the vault's queue with a model that sleeps per call, once
    every worker is started (``go``: process start-up and imports are not timed)."""
    from affidavit.config import Config
    from affidavit.jobs.pg_worker import PgWorker
    from affidavit.providers.base import Completion, ModelRequest, Provider
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.storage.postgres import PostgresStorage

    class Sleepy(Provider):
        name = "extractive"
        supports_schema = True
        reads_prompt = False

        def complete(self, request: ModelRequest) -> Completion:
            time.sleep(delay)
            return ExtractiveProvider().complete(request)

    storage = PostgresStorage(url, max_connections=3)
    storage.vaults()  # connected before the clock starts
    ready.release()
    go.wait()
    try:
        PgWorker(
            storage, vaults=[vault], config=Config({"policy.auto_apply": "trusted"}),
            provider_for=lambda model: Sleepy(), log=lambda event: None, poll_seconds=0.05,
        ).run(drain=True)  # fmt: skip
    finally:
        storage.close()


def _round(url: str, storage: Any, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    from affidavit.jobs.payloads import StoredIngestPayload
    from affidavit.storage.postgres_jobs import PostgresJobStore

    vault = f"bench_{workers}_{uuid.uuid4().hex[:6]}"
    storage.create_vault(vault, "ann")
    jobs = PostgresJobStore(storage)
    n = 0
    for _ in range(args.jobs):
        ids = []
        for _ in range(args.sources):
            text = TEXT.format(n=n, year=1700 + n, steps=100 + n)
            ids.append(storage.add_source(
                vault, text.encode(), origin=f"/b/{n}.md", name=f"beacon-{n}.md",
                added_at="2026-12-07T00:00:00Z", trust="trusted",
            ))  # fmt: skip
            n += 1
        jobs.enqueue(vault, StoredIngestPayload(sources=ids).model_dump(mode="json"), "ann")
    spawn = multiprocessing.get_context("spawn")
    ready, go = spawn.Semaphore(0), spawn.Event()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = [
        spawn.Process(target=_work, args=(url, vault, args.delay, ready, go))
        for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.acquire()
    started = time.perf_counter()
    go.set()
    for proc in procs:
        proc.join()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = jobs.jobs(vault)
    applied = sum(1 for e in storage.audit(vault) if e.action == "applied")
    batches = storage.batches(vault)
    assert all(r.status == "done" for r in rows), [r.status for r in rows]
    assert applied == n and [b.seq for b in batches] == list(range(1, n + 1))
    return {"workers": workers, "chunks": n, "wall_s": round(wall, 2),
            "chunks_per_s": round(n / wall, 2), "cpu_s_per_chunk": round(cpu / n, 3)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--sources", type=int, default=2)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--url", help="a PostgreSQL database (default: a throwaway cluster)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cluster = None
    url = args.url
    if url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests import pg_cluster

        cluster = pg_cluster.cluster()
        url = cluster.create_database(f"bench_{uuid.uuid4().hex[:8]}")
    from affidavit.storage.postgres import PostgresStorage

    storage = PostgresStorage(url)
    try:
        rounds = [_round(url, storage, int(w), args) for w in args.workers.split(",")]
    finally:
        storage.close()
        if cluster is not None:
            cluster.drop_database(url)
            pg_cluster.stop()
    base = rounds[0]["chunks_per_s"]
    for r in rounds:
        r["speedup"] = round(r["chunks_per_s"] / base, 2)
    if args.json:
        print(json.dumps({"delay_s": args.delay, "rounds": rounds}, indent=2))
    else:
        print(f"model delay {args.delay}s per call, {rounds[0]['chunks']} chunks per round")
        for r in rounds:
            print(f"{r['workers']} worker(s): {r['wall_s']:7.2f} s  {r['chunks_per_s']:6.2f} "
                  f"chunks/s  x{r['speedup']:.2f}  {r['cpu_s_per_chunk']:.3f} CPU s/chunk")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
