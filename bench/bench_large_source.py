"""Cost per MB as one source grows: store + the first chunks of an extractive ingest.

A synthetic plain-text source is built from the State of the Union speeches, repeated with
variation (each copy gets its own heading and some words and numbers changed, so copies are not
byte-identical), at each requested size (by default 1 MB and 50 MB). For each size the script
times, in a fresh vault:

- **store**: ``SourceStore.add_file`` (read, extract, sanitize, hash, write, git commit);
- **ingest**: the first ``--chunks`` chunks of ``Ingestor.run`` with the extractive engine and
  ``--yes`` semantics (each plan admitted by the gate and applied), stopped after that many.

Sizes are in MiB (50 MiB is 52.4 M characters, over the 50 M-character bounds of the text
caches). It reports MB/s for the store; for the ingest, the first two chunks (which pay the
one-time costs that are linear in the source: normalising it, numbering its sentences, its suffix
array) as MB/s of source, and the median seconds per chunk after them (the chunk size is the
same at every size, so a cost linear in the source's size keeps that flat). The floor is reading
the file and hashing it (SHA-256), measured in the same run.

    .venv/bin/python bench/bench_large_source.py [--mb 1 50] [--chunks 20] [--json]
        [--profile OUT.prof]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import hashlib
import json
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault

ROOT = Path(__file__).resolve().parents[1]
CORPUS = next(
    (
        path
        for path in (
            ROOT.parent / "shared" / "data" / "corpus" / "sotu.jsonl",
            ROOT.parents[1] / "shared" / "data" / "corpus" / "sotu.jsonl",  # from a worktree
        )
        if path.is_file()
    ),
    ROOT.parent / "shared" / "data" / "corpus" / "sotu.jsonl",
)
_WORD = re.compile(r"\b(the|of|and|to|in|a|that|our|is|for)\b")
_SWAPS = ["this", "their", "with", "on", "by", "an", "those", "your", "as", "from"]


def synthetic_text(megabytes: float, corpus: Path, seed: int = 1) -> str:
    """About ``megabytes`` million characters: the speeches in turn, each copy varied."""
    with corpus.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    rng = random.Random(seed)
    target = int(megabytes * (1 << 20))
    parts: list[str] = []
    total = 0
    copy = 0
    while total < target:
        copy += 1
        for row in rows:
            if total >= target:
                break
            text = row["text"].strip()
            if copy > 1:  # vary later copies: swap some common words, shift the numbers
                text = _WORD.sub(
                    lambda m: rng.choice(_SWAPS) if rng.random() < 0.05 else m[0], text
                )
                shift = copy
                text = re.sub(r"\d+", lambda m, shift=shift: str(int(m[0]) + shift), text)
            part = f"State of the Union {row['year']} ({row['name']}), copy {copy}.\n\n{text}\n\n"
            parts.append(part)
            total += len(part)
    return "".join(parts)[:target]


@dataclass
class Result:
    mb: float
    chars: int
    floor_s: float
    floor_mb_per_s: float
    store_s: float
    store_mb_per_s: float
    chunks: int
    chunk_chars: int
    ingest_s: float
    first_two_s: float
    first_two_mb_per_s: float
    steady_s_per_chunk: float
    applied: int
    outcomes: dict[str, int]


class _Stop(Exception):
    pass


def run(megabytes: float, chunks: int, corpus: Path, work: Path) -> Result:
    text = synthetic_text(megabytes, corpus)
    folder = work / f"size-{megabytes:g}"
    folder.mkdir()
    path = folder / "speeches.txt"  # same name at every size: the engine titles pages by it
    path.write_text(text, encoding="utf-8")

    started = time.perf_counter()
    hashlib.sha256(path.read_bytes()).hexdigest()
    floor_s = time.perf_counter() - started

    vault, _ = init_vault(work / f"vault-{megabytes:g}")
    store = SourceStore(vault)
    started = time.perf_counter()
    store.add_file(path, "trusted")
    store_s = time.perf_counter() - started

    provider = provider_from_config(vault.config, "extractive")
    seen = 0

    def checkpoint() -> None:
        nonlocal seen
        if seen >= chunks:
            raise _Stop
        seen += 1

    marks: list[float] = []

    def progress(_name: str, _number: int, _total: int) -> None:
        marks.append(time.perf_counter())

    ingestor = Ingestor(
        vault, provider, store=store, apply_now=True, checkpoint=checkpoint, progress=progress
    )
    started = time.perf_counter()
    with contextlib.suppress(_Stop):
        ingestor.run([str(path)], "trusted")
    ingest_s = time.perf_counter() - started
    applied = vault.db.execute(
        "SELECT count(*) FROM ingested_chunks WHERE outcome = 'applied'"
    ).fetchone()[0]
    reasons = [
        str([(o.get("check"), o.get("reason")) for o in json.loads(row[0])["ops"]])[:1500]
        for row in vault.db.execute("SELECT admission FROM plans WHERE status = 'rejected' LIMIT 1")
    ]
    if reasons:
        print(f"{megabytes:g} MiB: rejected plans: {reasons}", file=sys.stderr)
    outcomes = dict(
        vault.db.execute(
            "SELECT outcome, count(*) FROM ingested_chunks GROUP BY outcome"
        ).fetchall()
    )
    chunk_chars = ingestor.chunk_chars
    vault.close()
    times = [b - a for a, b in zip([started, *marks], marks, strict=False)]
    first_two = sum(times[:2])
    steady = sorted(times[2:])
    mb = len(text) / 1e6
    return Result(
        mb=megabytes,
        chars=len(text),
        floor_s=round(floor_s, 4),
        floor_mb_per_s=round(mb / floor_s, 1),
        store_s=round(store_s, 3),
        store_mb_per_s=round(mb / store_s, 2),
        chunks=len(times),
        chunk_chars=chunk_chars,
        ingest_s=round(ingest_s, 3),
        first_two_s=round(first_two, 3),
        first_two_mb_per_s=round(mb / first_two, 2) if first_two else 0.0,
        steady_s_per_chunk=round(steady[len(steady) // 2], 4) if steady else 0.0,
        applied=int(applied),
        outcomes={str(k): int(v) for k, v in outcomes.items()},
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1.0, 50.0])
    parser.add_argument("--chunks", type=int, default=20, help="chunks ingested per size")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the last size here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-large-"))
    results = []
    try:
        for index, megabytes in enumerate(args.mb):
            profile = cProfile.Profile() if args.profile and index == len(args.mb) - 1 else None
            if profile:
                profile.enable()
            results.append(run(megabytes, args.chunks, args.corpus, work))
            if profile:
                profile.disable()
                profile.dump_stats(str(args.profile))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(
            f"{'MiB':>5} {'chars':>11} {'floor MB/s':>10} {'store s':>8} {'store MB/s':>10} "
            f"{'chunks':>6} {'ingest s':>9} {'first 2 s':>9} {'first 2 MB/s':>12} "
            f"{'steady s/chunk':>14} {'applied':>7}"
        )
        for r in results:
            print(
                f"{r.mb:>5g} {r.chars:>11,} {r.floor_mb_per_s:>10.1f} {r.store_s:>8.2f} "
                f"{r.store_mb_per_s:>10.2f} {r.chunks:>6} {r.ingest_s:>9.2f} "
                f"{r.first_two_s:>9.2f} {r.first_two_mb_per_s:>12.2f} "
                f"{r.steady_s_per_chunk:>14.3f} {r.applied:>7} {r.outcomes}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
