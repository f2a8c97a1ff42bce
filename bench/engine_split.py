"""CPU of the extractive engine's two halves over a real ingest's chunks: analyse vs plan_from.

Ingests the first ``--speeches`` State of the Union addresses into a fresh vault on a fixed clock
(trusted, every plan applied), keeping every task the engine was given and the plan it returned.
Then, over those tasks in the same order: ``analyse`` (the chunk alone: what a host may run ahead
of time in a worker process), the analysis pickled and unpickled (what crossing to the host
costs), and ``plan_from`` (what depends on the wiki's pages), each timed with
``time.process_time``; every plan must equal the one the ingest got, byte for byte.

    .venv/bin/python bench/engine_split.py [--speeches 233] [--json]
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile
import time
from pathlib import Path
from typing import ClassVar

from bench_ingest import write_speeches
from engine_same import FIXED

from affidavit.extractive import analyse, plan_from
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import Completion, IngestTask, ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault


class Keeping(ExtractiveProvider):
    """The extractive provider, keeping every task and the plan's text."""

    name: ClassVar[str] = "extractive"
    ahead: ClassVar[str] = ""  # no worker: every call is made (and seen) in this process

    def __init__(self) -> None:
        self.tasks: list[IngestTask] = []
        self.texts: list[str] = []

    def complete(self, request: ModelRequest) -> Completion:
        completion = super().complete(request)
        assert request.task is not None
        self.tasks.append(request.task)
        self.texts.append(completion.text)
        return completion


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--speeches", type=int, default=233)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engine-split-"))
    write_speeches(work / "speeches", args.speeches)
    provider = Keeping()
    vault, _ = init_vault(work / "vault", clock=lambda: FIXED)
    Ingestor(vault, provider, apply_now=True).run([str(work / "speeches")], "trusted")
    vault.close()
    tasks = provider.tasks
    started = time.process_time()
    analyses = [analyse(task) for task in tasks]
    analyse_cpu = time.process_time() - started
    started = time.process_time()
    blobs = [pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL) for a in analyses]
    pickle_cpu = time.process_time() - started
    started = time.process_time()
    shipped = [pickle.loads(blob) for blob in blobs]
    unpickle_cpu = time.process_time() - started
    started = time.process_time()
    plans = [plan_from(a, task) for a, task in zip(shipped, tasks, strict=True)]
    plan_cpu = time.process_time() - started
    texts = [json.dumps(plan, ensure_ascii=False) for plan in plans]
    differ = sum(text != kept for text, kept in zip(texts, provider.texts, strict=True))
    result = {
        "speeches": args.speeches,
        "chunks": len(tasks),
        "analyse_cpu": round(analyse_cpu, 2),
        "pickle_cpu": round(pickle_cpu, 2),
        "unpickle_cpu": round(unpickle_cpu, 2),
        "plan_from_cpu": round(plan_cpu, 2),
        "analysis_kb": round(sum(map(len, blobs)) / max(1, len(blobs)) / 1000, 1),
        "plans_differ": differ,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{len(tasks)} chunks: analyse {analyse_cpu:.2f} s, plan_from {plan_cpu:.2f} s, "
            f"pickle {pickle_cpu:.2f} s, unpickle {unpickle_cpu:.2f} s CPU; "
            f"{result['analysis_kb']} kB an analysis; {differ} plans differ"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
