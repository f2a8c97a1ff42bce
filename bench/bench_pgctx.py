"""A source's blast radius on SQLite, main's code beside this branch's (pgctx moved its queries
behind ``SourceReads``), interleaved; and the PostgreSQL door's context plans.

    .venv/bin/python bench/bench_pgctx.py --claims 1000 --rounds 5 [--pg URL|cluster]

Builds a vault (``--claims`` claims on pages of 20, each quoting one sentence of one source,
through the door), then each round runs main's ``blast_radius`` (``/work/main/src``, or
``--main-src``) and this branch's in fresh processes, one after the other, each timing
``--calls`` radii of the source on the same database; prints the median per side in
milliseconds, and the load average before and after. With ``--pg``, it also times
``apply_plan`` of a one-entry ``update_context`` plan (snapshot and, past the cap, the spill)
beside a one-claim ``add_claims`` plan on PostgreSQL (``cluster``: a throwaway cluster, as
``bench/bench_pg_door.py`` starts one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

TIMER = """
import sys, time, statistics
sys.path[:0] = [{src!r}]
from pathlib import Path
from affidavit.store.blast import blast_radius
from affidavit.vault import open_vault
db = open_vault(Path({db!r})).db
source = {source!r}
times = []
for _ in range({calls}):
    start = time.perf_counter()
    radius = blast_radius(db, source)
    times.append(time.perf_counter() - start)
print(statistics.median(times) * 1000, len(radius.retracted))
"""


def crate(i: int) -> str:
    return f"Crate {i} holds {i + 3} apples."


def build(root: Path, claims: int) -> tuple[Path, str]:
    from affidavit.inbox import approve, propose
    from affidavit.plan.nonce import issue_nonce
    from affidavit.sources.store import SourceStore
    from affidavit.vault import init_vault

    vault, _ = init_vault(root)
    text = " ".join(crate(i) for i in range(claims))
    source = SourceStore(vault).add_bytes(text.encode(), "/bench/crates.md", "crates.md",
                                          media_type="text/markdown", trust="trusted")  # fmt: skip
    sid = source.record.id
    for start in range(0, claims, 20):
        op = {
            "op": "create_page", "slug": f"crates-{start}", "title": f"Crate {start}",
            "summary": f"Crate {start} holds {start + 3} apples.",
            "claims": [{"text": crate(i), "evidence": [{"source": sid, "quote": crate(i)[:-1]}]}
                       for i in range(start, min(start + 20, claims))],
        }  # fmt: skip
        plan = {"nonce": issue_nonce(vault.db, vault.clock, "bench"), "operations": [op]}
        done = propose(vault, plan, "bench", "bench")
        if done.status == "pending":
            approve(vault, done.plan_id, None, "bench")
    vault.close()
    return root, sid


def side(src: str, db: Path, source: str, calls: int) -> tuple[float, int]:
    code = TIMER.format(src=src, db=str(db), source=source, calls=calls)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ms, retracted = out.stdout.split()
    return float(ms), int(retracted)


def pg_context(url: str, rounds: int) -> dict[str, float]:
    from affidavit.config import Config
    from affidavit.storage import open_storage

    storage = open_storage(url)
    name = f"bench_{os.getpid()}"
    storage.create_vault(name, "bench")
    text = " ".join(crate(i) for i in range(4 * rounds + 10))
    sid = storage.add_source(name, text.encode(), origin="/bench/c.md", name="c.md",
                             added_at="2026-12-07T00:00:00Z", trust="trusted")  # fmt: skip
    config = Config({"context.max_lines": 40})
    n = 0

    def run(op: dict[str, object]) -> float:
        nonlocal n
        n += 1
        plan_id = f"p{n}"
        storage.propose(name, plan_id, author="bench", origin="bench", plan_json=json.dumps(
            {"nonce": f"nonce-{plan_id}-0123456789abcdef", "operations": [op]}),
            created_at="2026-12-07T00:00:00Z", expires_at="2099-01-01T00:00:00Z")  # fmt: skip
        start = time.perf_counter()
        with storage.door(name, f"b-{n}") as door:
            door.apply_plan(plan_id, now="2026-12-07T00:00:00Z", actor="bench", config=config)
        return (time.perf_counter() - start) * 1000

    def claim(i: int) -> dict[str, object]:
        return {"text": crate(i), "evidence": [{"source": sid, "quote": crate(i)[:-1]}]}

    run({"op": "create_page", "slug": "crates", "title": "Crate 0",
         "summary": "Crate 0 holds 3 apples.", "claims": [claim(0)]})  # fmt: skip
    times: dict[str, list[float]] = {"add_claims": [], "update_context": []}
    for r in range(rounds):
        times["add_claims"].append(run({"op": "add_claims", "page": "crates",
                                        "claims": [claim(1 + 2 * r)]}))  # fmt: skip
        times["update_context"].append(run({"op": "update_context",
                                            "entries": [claim(2 + 2 * r)]}))  # fmt: skip
    archive = storage.page(name, "context-archive")
    storage.close()
    out = {k: statistics.median(v) for k, v in times.items()}
    out["archived"] = float(len(archive.claims) if archive else 0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--main-src", default="/work/main/src")
    parser.add_argument("--pg", default="")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        db, source = build(Path(tmp) / "v", args.claims)
        print(f"built {args.claims} claims in {time.perf_counter() - started:.1f} s")
        sides: dict[str, list[float]] = {"main": [], "pgctx": []}
        for _ in range(args.rounds):
            for label, src in (("main", args.main_src), ("pgctx", str(ROOT / "src"))):
                ms, retracted = side(src, db, source, args.calls)
                assert retracted == args.claims, (label, retracted)
                sides[label].append(ms)
        for label, values in sides.items():
            print(f"blast_radius, {label}: median {statistics.median(values):.2f} ms "
                  f"(rounds: {', '.join(f'{v:.2f}' for v in values)})")  # fmt: skip
    if args.pg:
        cluster = None
        url = args.pg
        if url == "cluster":  # a throwaway cluster, as bench_pg_door.py starts one
            sys.path.insert(0, str(ROOT))
            from tests import pg_cluster

            cluster = pg_cluster.cluster()
            url = cluster.create_database(f"bench_{os.getpid()}")
        try:
            print("PostgreSQL door, median ms per plan:", pg_context(url, args.rounds))
        finally:
            if cluster is not None:
                cluster.drop_database(url)
                pg_cluster.stop()
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
