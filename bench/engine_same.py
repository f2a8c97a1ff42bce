"""Same plans before and after a change to the extractive engine: record, then compare.

Ingests the first ``--speeches`` State of the Union addresses and, with ``--docs DIR``, the
documents of a folder (e.g. the Python docs ``bench/pydocs_corpus.py DIR`` writes), each into a
fresh vault on a fixed clock with every plan applied, and writes every plan the engine returned,
as its JSON text, to ``--save FILE``; ``--compare FILE`` does the same and fails on the first
plan that differs by a byte (the host's random nonce blanked). Also prints the engine's CPU time (``time.process_time`` around
each ``propose_plan``).

    .venv/bin/python bench/engine_same.py --save before.jsonl [--speeches 40] [--docs DIR]
    .venv/bin/python bench/engine_same.py --compare before.jsonl [--speeches 40] [--docs DIR]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from bench_ingest import write_speeches
from same import save_or_compare

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import Completion, ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault

FIXED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
_NONCE = re.compile(r'"nonce": "[^"]*"')
"""The host's nonce for the plan, random per request: blanked, every other byte compared."""


class Recording(ExtractiveProvider):
    """The extractive provider, keeping each plan it returns and the CPU time it took."""

    name: ClassVar[str] = "extractive"
    ahead: ClassVar[str] = ""  # no worker: every call is made (and seen) in this process

    def __init__(self) -> None:
        self.plans: list[str] = []
        self.cpu = 0.0

    def complete(self, request: ModelRequest) -> Completion:
        started = time.process_time()
        completion = super().complete(request)
        self.cpu += time.process_time() - started
        self.plans.append(_NONCE.sub('"nonce": ""', completion.text, count=1))
        return completion


def _ingest(folder: Path, work: Path, provider: Recording) -> None:
    vault, _ = init_vault(work, clock=lambda: FIXED)
    Ingestor(vault, provider, apply_now=True).run([str(folder)], "trusted")
    vault.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--save", type=Path)
    side.add_argument("--compare", type=Path)
    parser.add_argument("--speeches", type=int, default=40)
    parser.add_argument("--docs", type=Path, action="append", default=[])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engine-same-"))
    speeches = work / "speeches"
    write_speeches(speeches, args.speeches)
    provider = Recording()
    for n, folder in enumerate([speeches, *args.docs]):
        _ingest(folder, work / f"vault-{n}", provider)
    plans = provider.plans
    print(f"{len(plans)} plans, engine {provider.cpu:.2f} s CPU")
    return save_or_compare(
        plans, args.save, args.compare, lambda n: f"plan {n}", "every plan identical, byte for byte"
    )


if __name__ == "__main__":
    raise SystemExit(main())
