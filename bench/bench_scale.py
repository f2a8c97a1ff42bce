"""Retrieval at scale: latency and tokens sent per question on wikis of 1k to 1M claims, against the
peers' approach of putting every eligible claim into the prompt.

Synthetic claims (sentences built from a fixed vocabulary with a seeded RNG) are written straight
into a vault's tables — this measures retrieval and packing, not ingest — with FTS5 kept in sync by
the database's own triggers. For each size it reports the build time, the database size, the
search index's build time and size, p50/p95 retrieval + packing latency over 200 questions for
each engine (``tantivy``: the vault's search index; ``fts5``: SQLite FTS5, the floor it replaces,
over the same questions in the same run, on ``--floor-questions`` of them), the tokens sent per
question (within ``ask.context_tokens``), and the tokens that sending every eligible claim would
take. The questions are the worst case for a term index: 4 words of a 70-word vocabulary, so an OR
query matches most claims.

    .venv/bin/python bench/bench_scale.py [--sizes 1000,10000,100000,1000000] [--json]
    .venv/bin/python bench/bench_scale.py --sizes 1000000 --keep /tmp/scale --ids before.json
    .venv/bin/python bench/bench_scale.py --sizes 1000000 --keep /tmp/scale --expect-ids before.json

``--keep DIR`` builds each size's wiki (and its index) under DIR once and reuses it. ``--ids``
writes the ranked claim ids every engine returned for every question; ``--expect-ids`` fails the
run unless they are the same as in that file (a change that is only meant to be faster must not
change a single result).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from affidavit.ask.packing import pack
from affidavit.retrieval.search import Retriever
from affidavit.retrieval.tantivy_index import DIRNAME, rebuild_search_index
from affidavit.retrieval.tokens import count_tokens
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault

WORDS = [
    "river",
    "harbour",
    "bridge",
    "tower",
    "castle",
    "railway",
    "canal",
    "market",
    "council",
    "treaty",
    "bishop",
    "charter",
    "festival",
    "mine",
    "forest",
    "island",
    "valley",
    "church",
    "school",
    "museum",
    "library",
    "factory",
    "port",
    "fleet",
    "regiment",
    "parish",
    "mill",
    "quarry",
    "dam",
    "reservoir",
    "lighthouse",
    "abbey",
    "college",
    "hospital",
    "station",
    "governor",
    "mayor",
    "duke",
    "king",
    "queen",
    "merchant",
    "engineer",
    "architect",
    "poet",
    "painter",
    "scholar",
    "farmer",
    "built",
    "opened",
    "founded",
    "destroyed",
    "restored",
    "expanded",
    "renamed",
    "visited",
    "owned",
    "designed",
    "north",
    "south",
    "east",
    "west",
    "old",
    "new",
    "great",
    "little",
    "upper",
    "lower",
    "royal",
    "central",
]


def sentence(rng: random.Random, n: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(10, 18))
    return f"The {' '.join(words)} in {1500 + n % 500} (record {n})."


def build(size: int, root: Path, rng: random.Random) -> tuple[float, int]:
    vault, _ = init_vault(root)
    source = (
        SourceStore(vault)
        .add_bytes(
            b"synthetic benchmark source text " * 4, "/bench", "bench.txt", "text/plain", "trusted"
        )
        .record.id
    )
    started = time.perf_counter()
    db = vault.db
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, plan_id) "
        "VALUES ('bench', 'Bench', 'Synthetic claims.', 'bench', 'x', 'x', 'bench')"
    )
    batch = []
    for n in range(size):
        batch.append((f"c-{n:016x}", sentence(rng, n), n))
        if len(batch) == 10_000 or n == size - 1:
            db.executemany(
                "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES (?, 'bench', 'Bench', ?, ?, 'active', 'trusted', "
                "'bench', 'x')",
                [(cid, pos, text) for cid, text, pos in batch],
            )
            db.executemany(
                'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
                "VALUES (?, 0, ?, 'synthetic benchmark source', 0, 26, 'line 1')",
                [(cid, source) for cid, _, _ in batch],
            )
            batch = []
    db.execute("COMMIT")
    seconds = time.perf_counter() - started
    vault.close()
    size_bytes = sum(p.stat().st_size for p in (root / ".affidavit").glob("db.sqlite*"))
    return seconds, size_bytes


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engines", default="tantivy,fts5")
    parser.add_argument(
        "--floor-questions", type=int, default=50, help="questions for fts5 (slow at 1M)"
    )
    parser.add_argument("--keep", type=Path, help="build each wiki here once and reuse it")
    parser.add_argument("--ids", type=Path, help="write every question's ranked claim ids here")
    parser.add_argument("--expect-ids", type=Path, help="fail unless the ids equal this file's")
    parser.add_argument("--profile", type=Path, help="cProfile the tantivy questions into FILE")
    args = parser.parse_args()
    results = []
    ids: dict[str, list[list[str]]] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        work = args.keep / str(size) if args.keep else Path(tempfile.mkdtemp(prefix="bench-scale-"))
        rng = random.Random(size)
        built = args.keep is not None and (work / "vault" / ".affidavit" / "built").exists()
        build_s, db_bytes = (0.0, 0) if built else build(size, work / "vault", rng)
        from affidavit.vault import open_vault

        vault = open_vault(work / "vault")
        t0 = time.perf_counter()
        if not built:
            rebuild_search_index(vault.db)
            (vault.state_dir / "built").write_text("bench_scale\n")
        index_s = time.perf_counter() - t0
        if built:  # the same questions as a fresh build's: the generator where build left it
            for n in range(size):
                sentence(rng, n)
        folder = vault.state_dir / DIRNAME
        index_bytes = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        questions = [
            "What " + " ".join(rng.choices(WORDS, k=4)) + " was built?"
            for _ in range(args.questions)
        ]
        row: dict[str, object] = {
            "claims": size,
            "build_seconds": round(build_s, 1),
            "db_mb": round(db_bytes / 1e6, 1),
            "index_build_seconds": round(index_s, 1),
            "index_mb": round(index_bytes / 1e6, 1),
        }
        sent = []
        for engine in args.engines.split(","):
            retriever = Retriever(vault.db, engine="auto" if engine == "tantivy" else "fts5")
            asked = questions if engine == "tantivy" else questions[: args.floor_questions]
            latencies = []
            ranked = ids.setdefault(f"{size}:{engine}", [])
            profiler = None
            if args.profile and engine == "tantivy":
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            cpu = []
            for question in asked:
                t0, c0 = time.perf_counter(), time.thread_time()
                packed = pack(retriever.search(question, k=30), args.budget, "n" * 24)
                latencies.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
                assert retriever.used == engine, (retriever.used, engine)
                sent.append(packed.tokens)
                ranked.append([hit.claim_id for hit in packed.hits])
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(str(args.profile))
            latencies.sort()
            row[f"{engine}_questions"] = len(asked)
            row[f"{engine}_p50_ms"] = round(1000 * statistics.median(latencies), 1)
            row[f"{engine}_p95_ms"] = round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1)
            # CPU time of the asking thread (tantivy searches in it): what the load can't stretch
            cpu.sort()
            row[f"{engine}_cpu_p50_ms"] = round(1000 * statistics.median(cpu), 1)
            row[f"{engine}_cpu_p95_ms"] = round(1000 * cpu[int(0.95 * (len(cpu) - 1))], 1)
        # every eligible claim in the prompt: exact for up to 100k, extrapolated from 100k above
        sample = vault.db.execute("SELECT c.id, c.text FROM claims c LIMIT 100000").fetchall()
        all_tokens = sum(count_tokens(f"[{cid}] (Bench) {text}\n") for cid, text in sample)
        all_tokens = int(all_tokens * size / max(1, len(sample)))
        vault.close()
        row["tokens_sent_per_question"] = round(statistics.mean(sent))
        row["tokens_all_eligible_claims"] = all_tokens
        row["ratio"] = round(all_tokens / max(1, statistics.mean(sent)))
        results.append(row)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(results[-1]), file=sys.stderr)
    if args.ids:
        args.ids.write_text(json.dumps(ids))
    if args.expect_ids:
        expected = json.loads(args.expect_ids.read_text())
        for key, got in ids.items():
            want = expected.get(key)
            n = min(len(got), len(want or []))
            if want is not None and want[:n] != got[:n]:
                bad = next(n for n, (a, b) in enumerate(zip(want, got, strict=False)) if a != b)
                raise SystemExit(f"{key}: question {bad} ranked {got[bad]}, expected {want[bad]}")
        print(json.dumps({"same_ids_as": str(args.expect_ids)}), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        keys = list(results[0])
        print(" | ".join(keys))
        for row in results:
            print(" | ".join(str(row[k]) for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
