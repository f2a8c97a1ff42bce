"""What the support check costs per claim, two versions of the code side by side in one run.

Each ``--src`` (a ``src`` directory: this tree's and, e.g., main's from ``git archive main src``)
runs in its own process, alternately, ``--rounds`` times, over the public writer set (both
splits, the article title as context, as ``bench_support_writer.py`` checks them).

One by one, each claim's ``check()`` timed alone: with the parser loaded but nothing of the set
cached ("cold"), with their quotes parsed before (as when a quote serves many claims:
"quotes_parsed"), and with every text parsed before (the rules' own cost: "parsed").

As a plan sends them (the writer bench's ``writer`` mode: per paragraph one page with its faithful
title and summary and five claims — the three faithful ones and two wrong ones, rotating which
wrong one is left out — the title and summary checked against the five claims' quotes), nothing
cached at the start: "plan" runs :func:`affidavit.support.batch.prepare` over the plan's seven
texts, then checks each (the gate since branch ``supcost2``); "plan_claims" prepares the five
claims only and checks the title and summary after, one by one (the gate before). A plan's CPU
is charged to its claims: per claim = the plan's CPU / 5.

With the vault's kept parses (:mod:`affidavit.support.kept`, branch ``supcost3``; skipped for a
``src`` without them), "plan" again in a fresh store, every cache in memory cleared before:
"plan_keeping" with nothing kept before (a proposal's gate: it looks up and keeps every parse),
"plan_kept" after every plan was checked once (the re-check at approval, W5, lint, doctor: their
texts kept by the proposal's check), "plan_quotes_kept" after every quote was kept (cited by an
earlier plan, or parsed while an ingest's model wrote: the claims, titles and summaries are new).

Per claim: p50, p90 and p95 milliseconds, wall and CPU (the process's own: on a shared machine
the wall time's tail is other processes'). ``--ingest N`` adds ``bench/ingest_cpu.py N`` (the
extractive ingest of the first N State of the Union addresses: CPU and wall seconds, active
claims) for each version.

    .venv/bin/python bench/bench_support_cost.py --src src --src /tmp/main/src [--rounds 2]
        [--ingest 40] [--modes cold,plan] [--json]

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
ONE_BY_ONE = ("cold", "quotes_parsed", "parsed")
"""Nothing cached; the quotes parsed before (the claim is parsed, then the rules run); every
text parsed before (the rules alone)."""
PLANS = ("plan", "plan_claims")
"""A plan's seven texts batched; its five claims batched, the title and summary one by one."""
KEPT = ("plan_keeping", "plan_kept", "plan_quotes_kept")
""""plan" keeping its parses in an empty store (a proposal's gate on this branch); with every
text of the plans kept before; with every quote kept before."""
MODES = ONE_BY_ONE + PLANS + KEPT
TITLE_SHARE, SUMMARY_SHARE = 0.5, 0.75  # the gate's (gate/texts.py)

Check = tuple[str, tuple[str, ...], float, tuple[str, ...]]
"""text, quotes, share, context."""


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _summary(times: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p90_ms": round(_quantile(times, 0.9), 3),
        "p95_ms": round(_quantile(times, 0.95), 3),
        "cpu_p50_ms": round(statistics.median(cpu), 3),
        "cpu_p90_ms": round(_quantile(cpu, 0.9), 3),
        "cpu_p95_ms": round(_quantile(cpu, 0.95), 3),
        "cpu_mean_ms": round(statistics.fmean(cpu), 3),
    }


def plans(rows: list[dict[str, Any]]) -> list[tuple[list[Check], list[Check]]]:
    """Per paragraph, (claims, texts) as the writer bench's ``writer`` mode sends them."""
    out: list[tuple[list[Check], list[Check]]] = []
    for n, row in enumerate(rows):
        context = (row["article"].replace("_", " "),)
        faithful = [c for c in row["claims"] if c["faithful"]]
        wrong = [c for c in row["claims"] if not c["faithful"]]
        if wrong:
            wrong = [c for k, c in enumerate(wrong) if k != n % len(wrong)][:2]
        sent = (faithful + wrong)[:5]
        claims = [(c["text"], tuple(c["quotes"]), 0.0, context) for c in sent]
        quotes = tuple(q for c in sent for q in c["quotes"])
        texts = [
            (row["page_title"], quotes, TITLE_SHARE, ()),
            (row["page_summary"], quotes, SUMMARY_SHARE, ()),
        ]
        out.append((claims, texts))
    return out


def measure(modes: tuple[str, ...]) -> dict[str, Any]:
    """Run inside the child: the per-claim costs of the code on ``sys.path``."""
    sys.path.insert(0, str(HERE))
    from bench_support_writer import items, load

    from affidavit.support import check, parse, rules, structure
    from affidavit.support.batch import prepare

    rows = load("all")
    claims = [(t, tuple(q), tuple(c)) for what, _, t, q, c, _ in items(rows) if what == "claim"]
    check("The tower was built in 1900.", ["The tower was finished in 1900."])  # load the parser
    out: dict[str, Any] = {"claims": len(claims), "plans": len(rows)}

    def clear(parses: bool = True) -> None:
        rules._check.cache_clear()
        structure._read.cache_clear()
        if parses:
            parse._CACHE.clear()

    for name in [m for m in ONE_BY_ONE if m in modes]:
        clear(parses=name != "parsed")  # "parsed": every text was parsed by the run before
        if name == "parsed" and "quotes_parsed" not in modes:
            parse.parse_many(list(dict.fromkeys(t for c in claims for t in (c[0], *c[1]))))
        if name == "quotes_parsed":
            parse.parse_many(list(dict.fromkeys(q for _, quotes, _ in claims for q in quotes)))
        times, cpu = [], []
        for text, quotes, context in claims:
            started, used = time.perf_counter(), time.process_time()
            check(text, quotes, context=context)
            cpu.append(1000 * (time.process_time() - used))
            times.append(1000 * (time.perf_counter() - started))
        out[name] = _summary(times, cpu)
    for name in [m for m in PLANS if m in modes]:
        clear()
        times, cpu = [], []
        for sent, texts in plans(rows):
            batched = sent + texts if name == "plan" else sent
            started, used = time.perf_counter(), time.process_time()
            prepare([(t, q, share, (), c) for t, q, share, c in batched])
            for text, quotes, share, context in sent + texts:
                check(text, quotes, share=share, context=context)
            cpu.append(1000 * (time.process_time() - used) / len(sent))
            times.append(1000 * (time.perf_counter() - started) / len(sent))
        out[name] = _summary(times, cpu)
    for name in [m for m in KEPT if m in modes]:
        try:
            from affidavit.support.kept import ParseStore
        except ImportError:
            continue  # a src without kept parses
        import tempfile

        store = ParseStore(Path(tempfile.mkdtemp(prefix="bench-kept-")) / "parses.sqlite")
        clear()
        every = plans(rows)
        with parse.keeping(store):
            if name == "plan_kept":
                for sent, texts in every:
                    prepare([(t, q, share, (), c) for t, q, share, c in sent + texts])
            elif name == "plan_quotes_kept":
                quotes = {q: None for sent, _ in every for _, qs, _, _ in sent for q in qs}
                parse.parse_many(list(quotes))
        clear()
        times, cpu = [], []
        with parse.keeping(store):
            for sent, texts in every:
                started, used = time.perf_counter(), time.process_time()
                prepare([(t, q, share, (), c) for t, q, share, c in sent + texts])
                for text, quotes, share, context in sent + texts:
                    check(text, quotes, share=share, context=context)
                cpu.append(1000 * (time.process_time() - used) / len(sent))
                times.append(1000 * (time.perf_counter() - started) / len(sent))
        out[name] = _summary(times, cpu)
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
    parser.add_argument("--modes", default=",".join(MODES), help="of " + ", ".join(MODES))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(tuple(args.modes.split(",")))))
        return 0
    sources = args.src or [str(HERE.parent / "src")]
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in sources}
    for _ in range(args.rounds):
        for src in sources:
            found = _child(
                src, [str(HERE / "bench_support_cost.py"), "--child", "--modes", args.modes]
            )
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
            for name in [m for m in MODES if m in run]:
                r = run[name]
                line += (
                    f"; {name} p50/p95 {r['p50_ms']}/{r['p95_ms']} ms"
                    f" (CPU {r['cpu_p50_ms']}/{r['cpu_p95_ms']}, mean {r['cpu_mean_ms']})"
                )
            if "ingest" in run:
                i = run["ingest"]
                line += f"; ingest {json.dumps(i)}"
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
