"""A fresh check of the support rules on claims nobody tuned on: ``bench_support_fresh.jsonl``.

29 claims written for issue 22's round 3 (branch ``supfast``) from thirteen sentences of the 1962
State of the Union address (``../shared/data/corpus/sotu.jsonl``) — 15 faithful (paraphrase,
compression, voice change, a number restated, the speaker from the heading) and 14 wrong along
issue 22's error kinds — each labelled when written, before any version of the check ran on
them. Each is checked as the gate checks a claim (the speech's heading as context) and counted
admitted outright, sent to a person or rejected.

    PYTHONPATH=src .venv/bin/python bench/bench_support_fresh.py [--json] [--examples]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from affidavit.support import check

DATA = Path(__file__).resolve().parent / "bench_support_fresh.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--examples", action="store_true", help="print the misjudged claims")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    counts = {"faithful": Counter[str](), "wrong": Counter[str]()}
    wrong_way = []
    for row in rows:
        found = check(row["text"], row["quotes"], context=row["context"])
        side = "faithful" if row["faithful"] else "wrong"
        counts[side][found.verdict] += 1
        if (found.verdict == "supported") != row["faithful"]:
            wrong_way.append((side, row["kind"], row["text"], found.verdict, found.reason))
    report = {side: dict(c) | {"n": sum(c.values())} for side, c in counts.items()}
    if args.json:
        print(json.dumps(report))
    else:
        for side, c in report.items():
            print(f"{side}: {c}")
    if args.examples:
        for side, kind, text, verdict, reason in wrong_way:
            print(f"[{side}:{kind}] {verdict}: {text}\n    why: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
