"""A lint job on PostgreSQL (issue 26) with and without the integrity checks pg32 added
(``source_tampered``, ``evidence_unverified``, ``unsupported_claim``), measured: the job's seconds
and CPU seconds over a vault of ``--speeches`` State of the Union addresses (bench_lineage.py's
corpus) ingested by an in-process worker with the extractive engine under a trusting policy, and
``affidavit doctor --database``'s run over the same vault (which re-derives the same three).
Run it once with each tree's ``src`` on ``PYTHONPATH``; reported: active claims, the lint job's
seconds (``--runs`` times, each a whole-vault run), its checks, its open findings by kind and the
doctor's seconds.

    PYTHONPATH=SRC .venv/bin/python bench/bench_pg_lint_checks.py [--speeches 5] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


_COLD = """
import json, resource, sys, time
from affidavit.config import Config
from affidavit.jobs.pg_worker import PgWorker
from affidavit.storage.postgres import PostgresStorage
storage = PostgresStorage(sys.argv[1])
config = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0"})
worker = PgWorker(storage, vaults=["bench"], config=config, log=lambda e: None)
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
wall, used = time.perf_counter(), cpu()
worker.run(drain=True)
print(json.dumps({"seconds": round(time.perf_counter() - wall, 2),
                  "cpu_seconds": round(cpu() - used, 2)}))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(speeches: int, runs: int) -> dict[str, Any]:
    from bench_lineage import speeches as corpus
    from tests import pg_cluster

    from affidavit.config import Config
    from affidavit.doctor_pg import run_pg_doctor
    from affidavit.jobs.payloads import StoredIngestPayload
    from affidavit.jobs.pg_worker import PgWorker
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.storage.postgres import PostgresStorage
    from affidavit.storage.postgres_jobs import PostgresJobStore

    cluster = pg_cluster.private("bench-pglintchecks")
    try:
        url = cluster.create_database("bench")
        storage = PostgresStorage(url)
        storage.create_vault("bench", "ann")
        jobs = PostgresJobStore(storage)
        config = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0"})
        model = ExtractiveProvider()

        def work(payload: dict[str, Any]) -> tuple[float, float, dict[str, Any]]:
            job = jobs.enqueue("bench", payload, "ann")
            worker = PgWorker(
                storage, vaults=["bench"], config=config, log=lambda e: None,
                provider_for=lambda _: model,
            )  # fmt: skip
            wall, cpu = time.perf_counter(), _cpu()
            worker.run(drain=True)
            took = (round(time.perf_counter() - wall, 2), round(_cpu() - cpu, 2))
            (row,) = jobs.rows("bench", job)
            result = row["result"]
            return *took, dict(json.loads(result) if isinstance(result, str) else result or {})

        ids = [
            storage.add_source(
                "bench", text.encode(), origin=f"/docs/{name}", name=name,
                added_at="2026-12-08T00:00:00Z", media_type="text/markdown", trust="trusted",
            )
            for name, text in corpus(speeches)
        ]  # fmt: skip
        work(StoredIngestPayload(sources=ids).model_dump(mode="json"))
        with storage.pool.connection() as conn:
            row = conn.execute(
                "SELECT count(*) AS n FROM v_bench.claims WHERE status = 'active'"
            ).fetchone()
        assert row is not None
        lint: list[dict[str, Any]] = []
        result: dict[str, Any] = {}
        for _ in range(runs):
            seconds, cpu, result = work({"kind": "lint"})
            lint.append({"seconds": seconds, "cpu_seconds": cpu})
        cold = []  # a fresh process's worker: no parse or text cache of the ingest's
        for _ in range(runs):
            jobs.enqueue("bench", {"kind": "lint"}, "ann")
            out = subprocess.run(
                [sys.executable, "-c", _COLD, url], capture_output=True, text=True, check=True
            )
            cold.append(json.loads(out.stdout.strip().splitlines()[-1]))
        wall = time.perf_counter()
        report = run_pg_doctor(storage, "bench", config)
        doctor = round(time.perf_counter() - wall, 2)
        storage.close()
        return {
            "speeches": speeches, "active_claims": int(row["n"]), "lint_jobs": lint,
            "lint_jobs_fresh_process": cold,
            "checks": result.get("checks"), "open_by_kind": result.get("counts"),
            "doctor_seconds": doctor, "doctor_findings": len(report.findings),
        }  # fmt: skip
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeches", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(json.dumps(run(args.speeches, args.runs), indent=None if args.json else 2))


if __name__ == "__main__":
    main()
