"""CPU seconds of the ingest alone, for comparing code versions whose benchmarks differ.

Writes the first N State of the Union addresses as ``bench/bench_ingest.py`` does, ingests them
into a fresh vault on a fixed clock with the extractive engine (trusted, every plan applied), and
prints one JSON line: MB, wall and CPU seconds (``time.process_time``) of ``Ingestor.run``, MB per
CPU second and the active claims. Only APIs that exist since 47a2584 are used, so the same script
runs against an old worktree (``PYTHONPATH=/tmp/old/src``) and this one, alternately.

    PYTHONPATH=OLD/src .venv/bin/python bench/ingest_cpu.py 12 [CORPUS]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import init_vault

FIXED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    corpus = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if corpus is None:
        from bench_ingest import CORPUS

        corpus = CORPUS
    work = Path(tempfile.mkdtemp(prefix="ingest-cpu-"))
    docs = work / "speeches"
    docs.mkdir()
    chars = 0
    with corpus.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n >= count:
                break
            row = json.loads(line)
            text = f"# State of the Union, {row['year']}: {row['name']}\n\n{row['text'].strip()}\n"
            (docs / f"{row['year']}-{n:03d}.md").write_text(text, encoding="utf-8")
            chars += len(text)
    vault, _ = init_vault(work / "vault", clock=lambda: FIXED)
    provider = provider_from_config(vault.config, "extractive")
    started, cpu = time.perf_counter(), time.process_time()
    Ingestor(vault, provider, apply_now=True).run([str(docs)], "trusted")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    claims = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    vault.close()
    result = {"mb": round(chars / 1e6, 3), "seconds": round(seconds, 1), "cpu": round(cpu, 2)}
    result |= {"mb_per_cpu_s": round(chars / 1e6 / cpu, 4), "claims": claims}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
