"""A fresh check of the support rules on claims nobody tuned on: ``bench_support_fresh.jsonl``.

29 claims written for issue 22's round 3 (branch ``supfast``) from thirteen sentences of the 1962
State of the Union address (``../shared/data/corpus/sotu.jsonl``) — 15 faithful (paraphrase,
compression, voice change, a number restated, the speaker from the heading) and 14 wrong along
issue 22's error kinds — each labelled when written, before any version of the check ran on
them. Each is checked as the gate checks a claim (the speech's heading as context) and counted
admitted outright, sent to a person or rejected.

``--set fresh2`` reads ``bench_support_fresh2.jsonl`` instead: 40 claims written for branch
``supqual`` from the 1978 State of the Union address (Jimmy Carter) — 20 faithful paraphrases as
an LLM writer words them (paraphrase, voice change, number restated, merge, compression, hedge
kept, the speaker from the heading, a resolved pronoun) and 20 wrong ones (swapped roles,
all→some and some→all, a dropped hedge, a number or unit from elsewhere in the quotes, a reversed
comparison, merged facts, a lost negation) — written and committed before any check ran on them.

    PYTHONPATH=src .venv/bin/python bench/bench_support_fresh.py [--set fresh|fresh2] [--json]
        [--examples]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from affidavit.support import check

SETS = {
    "fresh": Path(__file__).resolve().parent / "bench_support_fresh.jsonl",
    "fresh2": Path(__file__).resolve().parent / "bench_support_fresh2.jsonl",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", choices=sorted(SETS), default="fresh")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--examples", action="store_true", help="print the misjudged claims")
    args = parser.parse_args()
    data = SETS[args.set]
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line]
    counts = {"faithful": Counter[str](), "wrong": Counter[str]()}
    by_kind: dict[str, Counter[str]] = {}
    wrong_way = []
    for row in rows:
        found = check(row["text"], row["quotes"], context=row["context"])
        side = "faithful" if row["faithful"] else "wrong"
        counts[side][found.verdict] += 1
        by_kind.setdefault(f"{side}:{row['kind']}", Counter())[found.verdict] += 1
        if (found.verdict == "supported") != row["faithful"]:
            wrong_way.append((side, row["kind"], row["text"], found.verdict, found.reason))
    report: dict[str, dict[str, int]] = {
        side: dict(c) | {"n": sum(c.values())} for side, c in counts.items()
    }
    kinds = {label: dict(c) | {"n": sum(c.values())} for label, c in sorted(by_kind.items())}
    if args.json:
        print(json.dumps(report | {"by_kind": kinds}))
    else:
        for side, c in report.items():
            print(f"{side}: {c}")
        for label, c in kinds.items():
            print(f"    {label:32} {c}")
    if args.examples:
        for side, kind, text, verdict, reason in wrong_way:
            print(f"[{side}:{kind}] {verdict}: {text}\n    why: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
