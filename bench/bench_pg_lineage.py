"""A re-ingest of edited files on PostgreSQL (issue 26, issue 27 item 1), measured: what a worker's
job of the new versions puts in the wiki at once, what it carries and proposes, and what it costs.

``--speeches`` State of the Union addresses (bench_lineage.py's corpus and edits) are stored in a
throwaway cluster's vault (as ``team add`` stores files: origin ``/docs/NAME``) and ingested by an
in-process worker with the extractive engine under a trusting policy (``auto_apply = trusted``);
then ``--share`` of each speech's sentences are edited (two in three changed, one in three
deleted), the files stored again (new versions of the same origins) and ingested by one job.
Reported: model calls and seconds of each job, active claims before and after the re-ingest (the
edits change or delete sentences only: every claim the re-ingest adds states a changed fact beside
the old one), claims carried, lineage proposals waiting, and the evidence rows citing the new
versions.

    PYTHONPATH=SRC .venv/bin/python bench/bench_pg_lineage.py [--speeches 5] [--share 0.1] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(speeches: int, share: float, seed: int) -> dict[str, Any]:
    from bench_lineage import edit
    from bench_lineage import speeches as corpus
    from tests import pg_cluster

    from affidavit.config import Config
    from affidavit.jobs.payloads import StoredIngestPayload
    from affidavit.jobs.pg_worker import PgWorker
    from affidavit.providers.base import Completion, ModelRequest, Provider
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.storage.postgres import PostgresStorage
    from affidavit.storage.postgres_jobs import PostgresJobStore

    class Counting(Provider):
        name = "extractive"
        supports_schema = True
        reads_prompt = False

        def __init__(self) -> None:
            self.inner = ExtractiveProvider()
            self.calls = 0

        def complete(self, request: ModelRequest) -> Completion:
            self.calls += 1
            return self.inner.complete(request)

    cluster = pg_cluster.private("bench-pglineage")
    try:
        url = cluster.create_database("bench")
        storage = PostgresStorage(url)
        storage.create_vault("bench", "ann")
        jobs = PostgresJobStore(storage)
        config = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0"})

        def q(text: str) -> Any:
            with storage.pool.connection() as conn:
                row = conn.execute(text.replace("{s}", "v_bench")).fetchone()
                return list(row.values())

        def job(texts: list[tuple[str, str]]) -> dict[str, Any]:
            ids = []
            for name, text in texts:
                ids.append(storage.add_source(
                    "bench", text.encode(), origin=f"/docs/{name}", name=name,
                    added_at="2026-12-08T00:00:00Z", media_type="text/markdown", trust="trusted",
                ))  # fmt: skip
            payload = StoredIngestPayload(sources=ids).model_dump(mode="json")
            jobs.enqueue("bench", payload, "ann")
            model = Counting()
            worker = PgWorker(
                storage, vaults=["bench"], config=config, log=lambda e: None,
                provider_for=lambda _: model,
            )  # fmt: skip
            wall, cpu = time.perf_counter(), _cpu()
            worker.run(drain=True)
            return {"seconds": round(time.perf_counter() - wall, 2),
                    "cpu_seconds": round(_cpu() - cpu, 2), "model_calls": model.calls}  # fmt: skip

        docs = corpus(speeches)
        first = job(docs)
        before = int(q("SELECT count(*) FROM {s}.claims WHERE status = 'active'")[0])
        rng = random.Random(seed)
        edited = []
        broken = 0
        for name, text in docs:
            new, edits = edit(text, share, rng)
            edited.append((name, new))
            broken += len(edits)
        second = job(edited)
        after = int(q("SELECT count(*) FROM {s}.claims WHERE status = 'active'")[0])
        carried = int(q("SELECT count(DISTINCT claim_id) FROM {s}.evidence_carried")[0])
        waiting = int(
            q(
                "SELECT count(*) FROM {s}.plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
            )[0]
        )
        on_new = int(
            q("SELECT count(*) FROM {s}.evidence e JOIN {s}.sources s ON s.id = e.source_id "
              "WHERE s.version = 2")[0]
        )  # fmt: skip
        return {
            "speeches": speeches, "share": share, "sentences_edited": broken,
            "first_ingest": first, "re_ingest": second,
            "active_claims_before": before, "active_claims_after": after,
            "claims_added_at_once": after - before, "claims_carried": carried,
            "lineage_plans_waiting": waiting, "evidence_rows_on_new_versions": on_new,
        }  # fmt: skip
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeches", type=int, default=5)
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.speeches, args.share, args.seed)
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
