"""Evidence read by source: main's ``evidence`` table beside the lean view (m021), interleaved.

    .venv/bin/python bench/bench_evidence_by_source.py --main MAIN_VAULT --lean LEAN_VAULT

``MAIN_VAULT`` is a vault written by main (evidence a table indexed by ``source_id``);
``LEAN_VAULT`` a copy of it opened once by this branch (migrated: ``evidence_rows`` and the view).
For each of ``--sources`` sources (seeded sample), each round times four query shapes on three
sides, one after the other: main by ``source_id``; the lean view by its computed ``source_id``
(the first round's queries: a scan of ``evidence_rows``); the lean view by ``source_key`` (this
round's queries: an index search). Every side must return the same rows. Prints the median and
90th percentile per shape and side, in milliseconds, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

from affidavit.db import connect  # noqa: E402

BY_ID = "e.source_id = ?"
BY_KEY = "e.source_key = (SELECT key FROM source_keys WHERE source_id = ?)"
SHAPES = {
    "ids": 'SELECT e.claim_id, e.start, e."end" FROM evidence e WHERE {}',
    "quote": "SELECT e.claim_id, e.quote FROM evidence e WHERE {}",
    "claims": "SELECT DISTINCT c.id, c.page_slug FROM claims c JOIN evidence e "
    "ON e.claim_id = c.id WHERE {} AND c.status IN ('active', 'disputed') "
    "ORDER BY c.page_slug, c.position, c.id",
    "in5": "SELECT count(DISTINCT c.id) FROM claims c JOIN evidence e ON e.claim_id = c.id "
    "WHERE c.status = 'active' AND {}",
}
"""Read one source's evidence: ids and offsets; with the quote; its claims joined (store/blast);
the claims of five sources counted (watch/changes, lint/since: an IN list)."""


def _condition(shape: str, by_key: bool, count: int) -> str:
    if shape != "in5":
        return BY_KEY if by_key else BY_ID
    marks = ",".join("?" * count)
    if by_key:
        return f"e.source_key IN (SELECT key FROM source_keys WHERE source_id IN ({marks}))"
    return f"e.source_id IN ({marks})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--main", type=Path, required=True, help="a vault written by main")
    parser.add_argument("--lean", type=Path, required=True, help="its copy, migrated (m021)")
    parser.add_argument("--sources", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    old = sqlite3.connect(args.main / ".affidavit" / "db.sqlite")
    lean = connect(args.lean / ".affidavit" / "db.sqlite")
    ids = [str(r[0]) for r in old.execute("SELECT DISTINCT source_id FROM evidence")]
    pick = random.Random(7).sample(sorted(ids), min(args.sources, len(ids)))
    sides = {"main": (old, False), "lean by id": (lean, False), "lean by key": (lean, True)}
    times: dict[tuple[str, str], list[float]] = {(s, n): [] for s in sides for n in SHAPES}
    print("load before", [round(x, 1) for x in os.getloadavg()])
    for _ in range(args.rounds):
        for i, source in enumerate(pick):
            group = pick[i : i + 5]
            for shape, sql in SHAPES.items():
                params = group if shape == "in5" else [source]
                seen = None
                for side, (db, by_key) in sides.items():
                    query = sql.format(_condition(shape, by_key, len(params)))
                    began = time.perf_counter()
                    rows = sorted(tuple(r) for r in db.execute(query, params))
                    times[(side, shape)].append(time.perf_counter() - began)
                    if seen is not None and rows != seen:
                        raise SystemExit(f"{side} differs from main on {shape} for {source}")
                    seen = rows
    print("load after", [round(x, 1) for x in os.getloadavg()])
    evidence = lean.execute("SELECT count(*) FROM evidence_rows").fetchone()[0]
    print(f"{len(pick)} sources x {args.rounds} rounds; {evidence} evidence rows")
    for shape in SHAPES:
        cells = []
        for side in sides:
            got = times[(side, shape)]
            p90 = statistics.quantiles(got, n=10)[-1]
            cells.append(f"{side} {statistics.median(got) * 1e3:.2f} / {p90 * 1e3:.2f} ms")
        print(f"{shape:7}", " | ".join(cells))


if __name__ == "__main__":
    main()
