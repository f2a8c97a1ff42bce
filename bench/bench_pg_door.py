"""Cost of the PostgreSQL door per applied plan: ``PostgresDoor.apply_plan`` on plans of
``--claims`` verbatim sentences of State of the Union speeches, one plan per batch (lock,
re-check, admission, writes, audit, seal, commit), timed from the door's opening to its commit.

Run against a PostgreSQL URL (``--url``), or with none: a throwaway cluster is started as the
tests start theirs (tests/pg_cluster.py) and stopped at the end. The same script runs on any
version of the package (``PYTHONPATH`` picks the side), so a before/after comparison runs the
two sides interleaved, each on a database of its own:

    PYTHONPATH=src .venv/bin/python bench/bench_pg_door.py [--speeches 2] [--plans 20]
        [--claims 10] [--url postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

from affidavit.sources.sentences import number_sentences
from affidavit.storage import open_storage

NOW = "2026-12-06T12:00:00Z"
EXPIRES = "2099-01-01T00:00:00Z"


def _corpus() -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_apply import _corpus as corpus

    return corpus()


def _speeches(n: int) -> list[str]:
    out = []
    with _corpus().open(encoding="utf-8") as lines:
        for line in lines:
            out.append(str(json.loads(line)["text"]))
            if len(out) == n:
                break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--speeches", type=int, default=2)
    parser.add_argument("--plans", type=int, default=20)
    parser.add_argument("--claims", type=int, default=10)
    parser.add_argument("--url", help="a PostgreSQL database (default: a throwaway cluster)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cluster = None
    url = args.url
    if url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests import pg_cluster

        cluster = pg_cluster.cluster()
        url = cluster.create_database(f"bench_{uuid.uuid4().hex[:8]}")
    storage = open_storage(url)
    try:
        storage.create_vault("bench", "ann")
        quotes: list[tuple[str, str]] = []
        for text in _speeches(args.speeches):
            source = storage.add_source(
                "bench", text.encode(), origin="sotu", name="sotu.md", added_at=NOW,
                media_type="text/markdown", trust="trusted",
            )  # fmt: skip
            for s in number_sentences(text):
                span = text[s.start : s.end].strip()
                if 60 <= len(span) <= 250 and "\n" not in span and span[0].isupper():
                    quotes.append((source, span))
        quotes = list(dict.fromkeys(quotes))
        need = args.plans * args.claims
        if len(quotes) < need:
            raise SystemExit(f"{len(quotes)} sentences for {need} claims: give more --speeches")
        times = []
        for n in range(args.plans):
            chunk = quotes[n * args.claims : (n + 1) * args.claims]
            claims = [{"text": q, "evidence": [{"source": s, "quote": q}]} for s, q in chunk]
            plan = {"nonce": f"nonce-{n}-0123456789abcdef", "operations": [
                {"op": "create_page", "slug": f"page-{n}", "title": chunk[0][1][:60],
                 "summary": chunk[0][1], "claims": claims}]}  # fmt: skip
            storage.propose(
                "bench", f"p{n}", author="ann", origin="cli", plan_json=json.dumps(plan),
                created_at=NOW, expires_at=EXPIRES,
            )  # fmt: skip
            started = time.perf_counter()
            with storage.door("bench", f"b-{n}") as door:
                door.apply_plan(f"p{n}", now=NOW, actor="ann")
            times.append(time.perf_counter() - started)
        written = sum(len(storage.page("bench", f"page-{n}").claims) for n in range(args.plans))
    finally:
        storage.close()
        if cluster is not None:
            cluster.drop_database(url)
            pg_cluster.stop()
    result = {
        "plans": args.plans,
        "claims_per_plan": args.claims,
        "claims_written": written,
        "first_apply_ms": round(times[0] * 1000, 1),
        "apply_ms_p50": round(statistics.median(times[1:] or times) * 1000, 1),
        "apply_ms_max": round(max(times) * 1000, 1),
        "ms_per_claim_p50": round(statistics.median(times[1:] or times) * 1000 / args.claims, 2),
    }
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
