"""Jobs per second through the durable queue, for small ingests (extractive engine).

Submits N tiny text sources as N ingest jobs (one source each, trusted, --yes) to one vault and
times the queue draining them with W workers (run_forever in threads of this process; the
vault still runs one job at a time, so more workers only add contention). Also reports the
time to submit, and the same sources ingested inline by one Ingestor call for comparison, so
the cost of the queue (a process per job, lease, events) shows.

    .venv/bin/python bench/bench_jobs.py [--jobs 50] [--workers 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.jobs import IngestPayload, JobQueue, Worker
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import init_vault

TEXT = (
    "# Note {n}\n\n"
    "The lighthouse number {n} was painted red and white in the year {year}. "
    "Keepers climbed its {steps} steps every evening to light the lamp. "
    "Ships from the northern ports relied on its beam during the winter storms.\n"
)


def make_sources(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True)
    paths = []
    for n in range(count):
        path = folder / f"note-{n:03d}.md"
        path.write_text(TEXT.format(n=n, year=1850 + n, steps=100 + n), encoding="utf-8")
        paths.append(str(path))
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    try:
        sources = make_sources(work / "docs", args.jobs)
        vault, _ = init_vault(work / "vault")
        queue = JobQueue(vault)
        started = time.perf_counter()
        ids = [
            queue.submit(IngestPayload(sources=[s], trust="trusted", yes=True), "bench").id
            for s in sources
        ]
        submit_s = time.perf_counter() - started

        stop = threading.Event()
        workers = [Worker(vault.root, f"bench-{n}") for n in range(args.workers)]
        threads = [threading.Thread(target=w.run_forever, args=(stop, 0.01)) for w in workers]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        while vault.db.execute(
            "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        ).fetchone()[0]:
            time.sleep(0.01)
        drain_s = time.perf_counter() - started
        stop.set()
        for thread in threads:
            thread.join()
        for worker in workers:
            worker.close()
        statuses = [queue.get(i).status for i in ids]
        claims = vault.db.execute("SELECT count(*) FROM claims WHERE status='active'").fetchone()[0]
        vault.close()

        inline_vault, _ = init_vault(work / "inline")
        provider = provider_from_config(inline_vault.config, "extractive")
        started = time.perf_counter()
        Ingestor(inline_vault, provider, apply_now=True).run(sources, "trusted")
        inline_s = time.perf_counter() - started
        inline_vault.close()

        result = {
            "jobs": args.jobs,
            "workers": args.workers,
            "done": statuses.count("done"),
            "active_claims": claims,
            "submit_per_second": round(args.jobs / submit_s, 1),
            "drain_seconds": round(drain_s, 2),
            "jobs_per_second": round(args.jobs / drain_s, 2),
            "ms_per_job": round(drain_s / args.jobs * 1000),
            "inline_sources_per_second": round(args.jobs / inline_s, 1),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>26}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
