"""Every row of issue 14's table in one run, each beside its floor measured by the same bench.

Runs the row's own benchmark as a subprocess (one after the other, never two at once: on a
2-core machine a row measured beside another measures the contention), reads its JSON and prints
one table: the metric, what was measured, the floor from the same run, the goal, and whether it is
met. The load average before and after each row is printed too: a figure measured at a load
above the machine's core count says how much CPU it was given more than what it costs.

    AFFIDAVIT_SHARED_DATA=/work/shared/data .venv/bin/python bench/issue14.py [--json]
        [--only ingest,apply,retrieval,verify,daemon,large] [--work DIR]

``--work DIR`` keeps the 1M-claim and 100k-claim wikis there between runs (building the 1M one
takes about a minute and 640 MB). Rows:

- ingest: ``bench_ingest.py --speeches 233`` (all 233 SOTU speeches, extractive, ``--yes``);
  floor: SHA-256 + sentence split of every speech + one git commit of the final wiki;
- apply: ``bench_apply.py`` (p50 of 20-operation plans); floor: the same files written with
  fsync + one git commit, right after each apply;
- retrieval: ``bench_scale.py --sizes 1000000`` (retrieval + packing, worst-case questions);
  floor: SQLite FTS5 on the same questions (what tantivy replaced);
- verify: ``bench_verify.py`` warm quotes/s, one 10.8 MB source and 233 sources; floor:
  ``str.find`` of the already-normalised quote;
- daemon: ``bench_server.py --only unix:search:8 --floor --workers 1,2,4``; floor: a bare ASGI
  app under uvicorn (httptools + uvloop) with the same clients;
- large: ``bench_large_source.py --mb 1 50``: seconds per chunk after the first two, 1 MiB vs
  50 MiB (the goal: the same MB/s, i.e. a flat cost per chunk); floor: read + SHA-256.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROWS = ("ingest", "apply", "retrieval", "verify", "daemon", "large")


def load() -> float:
    return os.getloadavg()[0]


def run(args: list[str]) -> Any:
    """The bench's JSON (the last JSON document on its stdout)."""
    done = subprocess.run(
        [sys.executable, str(HERE / args[0]), *args[1:]],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    out = done.stdout
    start = min(i for i in (out.find("{"), out.find("[")) if i >= 0)
    return json.loads(out[start:])


def ingest(work: Path) -> dict[str, Any]:
    r = run(["bench_ingest.py", "--speeches", "233", "--json"])
    return {
        "metric": "ingest, 233 SOTU speeches (10.8 MB), extractive, --yes, incl. apply and git",
        "measured": f"{r['seconds']} s wall, {r['cpu_seconds']} s CPU "
        f"({r['claims']['admitted']:,} claims, {r['pages']:,} pages, digest {r['wiki_sha256']})",
        "floor": f"{r['floor_seconds']} s",
        "goal": "≤ 20 s",
        "met": r["seconds"] <= 20,
        "raw": r,
    }


def apply(work: Path) -> dict[str, Any]:
    r = run(["bench_apply.py", "--speeches", "4", "--spare", "12", "--plans", "60", "--json"])
    return {
        "metric": "apply one 20-operation plan incl. fsync + git, p50",
        "measured": f"{r['p50_ms']} ms (p95 {r['p95_ms']} ms, CPU p50 {r['cpu_p50_ms']} ms, "
        f"{r['plans_of_20_ops_applied']} plans)",
        "floor": f"{r['floor_p50_ms']} ms",
        "goal": "≤ 50 ms",
        "met": r["p50_ms"] <= 50,
        "raw": r,
    }


def retrieval(work: Path) -> dict[str, Any]:
    keep = str(work / "scale")
    (r,) = run(
        ["bench_scale.py", "--sizes", "1000000", "--floor-questions", "5", "--keep", keep, "--json"]
    )
    return {
        "metric": "retrieval + packing at 1M claims, p50 / p95 (worst-case questions)",
        "measured": f"{r['tantivy_p50_ms']} / {r['tantivy_p95_ms']} ms "
        f"({r['tantivy_questions']} questions)",
        "floor": f"FTS5 {r['fts5_p50_ms']} / {r['fts5_p95_ms']} ms",
        "goal": "≤ 20 / ≤ 50 ms",
        "met": r["tantivy_p50_ms"] <= 20 and r["tantivy_p95_ms"] <= 50,
        "raw": r,
    }


def verify(work: Path) -> dict[str, Any]:
    r = run(["bench_verify.py", "--quotes", "10000", "--warm-runs", "5", "--json"])
    one, many = r["results"]
    return {
        "metric": "quote verification, warm, 233 sources / one 10.8 MB source",
        "measured": f"{many['warm_quotes_per_s']:,} / {one['warm_quotes_per_s']:,} quotes/s",
        "floor": f"str.find {many['floor_quotes_per_s']:,} / {one['floor_quotes_per_s']:,} /s",
        "goal": "≥ 100k/s / ≥ 30k/s",
        "met": many["warm_quotes_per_s"] >= 100_000 and one["warm_quotes_per_s"] >= 30_000,
        "raw": r,
    }


def daemon(work: Path) -> dict[str, Any]:
    args = ["--claims", "100000", "--vault", str(work / "v100k"), "--only", "unix:search:8"]
    args += ["--floor", "--workers", "1,2,4", "--seconds", "5", "--json"]
    done = subprocess.run(
        [sys.executable, str(HERE / "bench_server.py"), *args],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    rows = json.loads(done.stdout[done.stdout.find("[") :])
    search = [row for row in rows if row["request"].startswith("search")]
    floor = [row for row in rows if row["request"].startswith("floor (httptools")]
    best = max(search, key=lambda row: row["rps"])
    return {
        "metric": "daemon search, 8 clients, Unix socket, 100k claims",
        "measured": ", ".join(
            f"{row['request'][8:-1]}: {row['rps']:,.0f} req/s p99 {row['p99_ms']} ms"
            for row in search
        ),
        "floor": ", ".join(f"{row['rps']:,.0f}" for row in floor) + " req/s (bare ASGI)",
        "goal": "≥ 1,500 req/s, p99 ≤ 50 ms",
        "met": best["rps"] >= 1500 and best["p99_ms"] <= 50,
        "raw": rows,
    }


def large(work: Path) -> dict[str, Any]:
    small, big = run(["bench_large_source.py", "--mb", "1", "50", "--chunks", "12", "--json"])
    per_mb = [r["steady_s_per_chunk"] / (r["chunk_chars"] / 1e6) for r in (small, big)]
    return {
        "metric": "cost per chunk as a source grows: 50 MiB vs 1 MiB",
        "measured": f"{small['steady_s_per_chunk']} s/chunk at 1 MiB, "
        f"{big['steady_s_per_chunk']} s/chunk at 50 MiB "
        f"({1 / per_mb[0]:.2f} vs {1 / per_mb[1]:.2f} MB/s)",
        "floor": f"read + SHA-256 {small['floor_mb_per_s']} / {big['floor_mb_per_s']} MB/s",
        "goal": "same MB/s",
        "met": big["steady_s_per_chunk"] <= small["steady_s_per_chunk"] * 1.2,
        "raw": [small, big],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(ROWS))
    parser.add_argument("--work", type=Path, help="keep the big wikis here between runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="issue14-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.only.split(","):
        before = load()
        row = globals()[name](work)
        row |= {"row": name, "load": f"{before:.1f} → {load():.1f}"}
        results.append(row)
        print(f"{name}: {row['measured']} (floor {row['floor']})", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| metric | measured | floor (same run) | goal | met | load |")
    print("|---|---|---|---|---|---|")
    for row in results:
        met = "**yes**" if row["met"] else "no"
        print(
            f"| {row['metric']} | {row['measured']} | {row['floor']} | {row['goal']} | {met} "
            f"| {row['load']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
