"""What the support check costs per claim, two versions of the code side by side in one run.

Each ``--src`` (a ``src`` directory: this tree's and, e.g., main's from ``git archive main src``)
runs in its own process, alternately, ``--rounds`` times: the public writer set's claims (both
splits, the article title as context, as ``bench_support_writer.py`` checks them) one at a time
with the parser loaded but nothing of the set cached ("cold"), with their quotes parsed before
(as when a quote serves many claims: "quotes_parsed"), and with every text parsed before (the
rules' own cost: "parsed"). Per claim: p50 and p90
milliseconds, wall and CPU (the process's own: on a shared machine the wall time's tail is
other processes'). ``--ingest N`` adds ``bench/ingest_cpu.py N`` (the extractive ingest of the
first N State of the Union addresses: CPU and wall seconds, active claims) for each version.

    .venv/bin/python bench/bench_support_cost.py --src src --src /tmp/main/src [--rounds 2]
        [--ingest 40] [--json]

The writer set carries BIG-bench's canary: never train on it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODES = ("cold", "quotes_parsed", "parsed")
"""Nothing cached; the quotes parsed before (the claim is parsed, then the rules run); every
text parsed before (the rules alone)."""


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure() -> dict[str, Any]:
    """Run inside the child: the per-claim costs of the code on ``sys.path``."""
    sys.path.insert(0, str(HERE))
    from bench_support_writer import items, load

    from affidavit.support import check, rules, structure

    claims = [
        (t, tuple(q), tuple(c)) for what, _, t, q, c, _ in items(load("all")) if what == "claim"
    ]
    check("The tower was built in 1900.", ["The tower was finished in 1900."])  # load the parser
    out: dict[str, Any] = {"claims": len(claims)}
    from affidavit.support import parse

    for name in MODES:
        rules._check.cache_clear()
        structure._read.cache_clear()
        if name != "parsed":  # "parsed": every text was parsed by the run before
            parse._CACHE.clear()
        if name == "quotes_parsed":
            parse.parse_many(list(dict.fromkeys(q for _, quotes, _ in claims for q in quotes)))
        times, cpu = [], []
        for text, quotes, context in claims:
            started, used = time.perf_counter(), time.process_time()
            check(text, quotes, context=context)
            cpu.append(1000 * (time.process_time() - used))
            times.append(1000 * (time.perf_counter() - started))
        out[name] = {
            "p50_ms": round(statistics.median(times), 3),
            "p90_ms": round(_quantile(times, 0.9), 3),
            "cpu_p50_ms": round(statistics.median(cpu), 3),
            "cpu_p90_ms": round(_quantile(cpu, 0.9), 3),
        }
    return out


def _child(src: str, args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    done = subprocess.run(
        [sys.executable, *args], env=env, check=True, capture_output=True, text=True, cwd=HERE
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--src", action="append", default=[], help="a src directory (repeat)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ingest", type=int, default=0, help="SOTU speeches to ingest (0: none)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return 0
    sources = args.src or [str(HERE.parent / "src")]
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in sources}
    for _ in range(args.rounds):
        for src in sources:
            found = _child(src, [str(HERE / "bench_support_cost.py"), "--child"])
            if args.ingest:
                found["ingest"] = _child(src, [str(HERE / "ingest_cpu.py"), str(args.ingest)])
            runs[src].append(found)
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    for src, found in runs.items():
        print(f"{src}:")
        for n, run in enumerate(found, 1):
            line = f"  round {n}: {run['claims']} claims"
            for name in MODES:
                r = run[name]
                line += (
                    f"; {name} p50/p90 {r['p50_ms']}/{r['p90_ms']} ms"
                    f" (CPU {r['cpu_p50_ms']}/{r['cpu_p90_ms']})"
                )
            if "ingest" in run:
                i = run["ingest"]
                line += f"; ingest {json.dumps(i)}"
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
