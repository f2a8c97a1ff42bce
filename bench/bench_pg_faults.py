"""Injected faults by the hundred on the multi-host set-up (issue 26, "Measured": 100 faults across
the kinds of item 6 — 0 plans lost or applied twice, 0 mirror divergence).

PostgreSQL on its own host and ``affidavit worker`` on two more, each host a network namespace
joined by veth pairs (tests/netns.py, tests/multihost.py: what tests/test_multihost.py runs once
per kind). The kinds, in turn: kill -9 of a worker at each of the eight steps of a chunk, a lease
holder's link cut past its lease and healed, ``pg_ctl stop -m immediate`` mid-batch and a start,
``pg_terminate_backend`` mid-transaction — each on a new job of ``--sources`` one-chunk sources in
one vault, so the vault, its batch sequence and its mirror grow across all the faults. After each
fault: plans applied twice, chunks never applied, a batch sequence with a gap or a mismatch, the
mirror (brought up to date) unequal to the database — counted; every ``--rebuild-every`` faults
and at the end, the whole of tests/multihost.py's ``sound`` (the audit chain, the sources, a
mirror rebuilt from nothing with the same commits). Needs root (namespaces) and PostgreSQL 15
with the ``affidavit-pg`` user (scripts/setup_postgres.sh).

    sudo .venv/bin/python bench/bench_pg_faults.py [--faults 100] [--sources 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KINDS = [
    *(f"kill:{step}" for step in
      ("nonce", "admitted", "written", "applied", "sealed", "checkpoint", "committed", "done")),
    "cut", "restart", "terminate",
]  # fmt: skip


def run(faults: int, sources: int, rebuild_every: int) -> dict[str, Any]:
    from tests import multihost, netns

    why = netns.unavailable()
    if why:
        raise SystemExit(f"bench_pg_faults: {why}")
    worst: Counter[str] = Counter()  # the most each count reached after any fault
    off = 0  # faults after which any count was not 0
    kinds: Counter[str] = Counter()
    problems: list[str] = []
    with netns.Network("bench", multihost.HOSTS) as net, tempfile.TemporaryDirectory() as tmp:
        db = multihost.start_database(net)
        hosts = multihost.Hosts(net, db, Path(tmp))
        hosts.per_job = sources
        try:
            for host in multihost.WORKERS:
                hosts.start_worker(host)
            vault = hosts.vault("faults")
            chunks = 0
            start = time.monotonic()
            for n in range(faults):
                kind = KINDS[n % len(KINDS)]
                if kind.startswith("kill:"):
                    multihost.kill_at(hosts, vault, kind.split(":", 1)[1])
                elif kind == "cut":
                    multihost.cut_link(hosts, vault)
                elif kind == "restart":
                    multihost.restart_mid_batch(hosts, vault)
                else:
                    multihost.terminate_mid_transaction(hosts, vault)
                kinds[kind] += 1
                chunks += sources
                counts = multihost.tally(hosts, vault, chunks)
                off += any(counts.values())
                for key, value in counts.items():
                    worst[key] = max(worst[key], value)
                if (n + 1) % rebuild_every == 0 or n + 1 == faults:
                    try:
                        multihost.sound(hosts, vault, chunks)
                    except AssertionError:
                        problems.append(f"after fault {n + 1} ({kind}): {traceback.format_exc()}")
                print(f"fault {n + 1}/{faults} {kind}: {counts}", file=sys.stderr)
            wall = time.monotonic() - start
        finally:
            hosts.close()
            db.stop()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "faults": faults,
        "kinds": dict(kinds),
        "chunks": chunks,
        "applied_twice": worst["applied_twice"],
        "lost": worst["lost"],
        "sequence_broken": worst["sequence_broken"],
        "mirror_divergent": worst["mirror_divergent"],
        "faults_followed_by_any": off,
        "full_checks_failed": len(problems),
        "problems": problems,
        "wall_seconds": round(wall, 1),
        "cpu_seconds_bench": round(own.ru_utime + own.ru_stime, 1),
        "cpu_seconds_workers_and_tools": round(children.ru_utime + children.ru_stime, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", type=int, default=100)
    parser.add_argument("--sources", type=int, default=3, help="one-chunk sources per job")
    parser.add_argument("--rebuild-every", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.faults, args.sources, args.rebuild_every)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['faults']} faults ({result['kinds']}), {result['chunks']} chunks")
    for key in ("applied_twice", "lost", "sequence_broken", "mirror_divergent",
                "faults_followed_by_any", "full_checks_failed"):  # fmt: skip
        print(f"  {key}: {result[key]}")
    print(f"  wall {result['wall_seconds']} s; CPU {result['cpu_seconds_bench']} s (bench), "
          f"{result['cpu_seconds_workers_and_tools']} s (workers, PostgreSQL tools)")  # fmt: skip
    for problem in result["problems"]:
        print(problem)


if __name__ == "__main__":
    main()
