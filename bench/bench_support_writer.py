"""The support check's rules on the public writer set: each claim against its quotes, by kind.

``../shared/data/writer/llm_claims_public.jsonl`` holds, per paragraph, three faithful claims
(``kind``) and three wrong ones (``error_type``), each with its verbatim quotes, and a faithful
and a wrong title and summary. Every claim is checked as the gate checks it —
``SupportChecker.check(text, quotes, context=[article title])``, the title standing for the
heading the stored paragraph is under — and counted as admitted outright (``supported``), sent
to a person (``uncertain``) or rejected (``unsupported``). Titles and summaries are checked
against the quotes of the paragraph's faithful claims with the gate's shares.

The split is by article (``--split``): ``held`` = SHA-256 of the article's first byte < 102
(about a third of the articles, never tuned on), ``tune`` = the others, ``all`` = both. This
calls the check directly, not the gate: ``bench/bench_writer.py`` proposes the set as plans.

    .venv/bin/python bench/bench_support_writer.py [--split tune|held|all] [--json]
        [--examples KIND] [--model NAME]

The writer set carries BIG-bench's canary: never train on it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from affidavit.config import Config
from affidavit.support import SupportChecker, load_model

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
DATA = SHARED / "writer" / "llm_claims_public.jsonl"
TITLE_SHARE, SUMMARY_SHARE = 0.5, 0.75  # the gate's (gate/admission.py)


def held_out(article: str) -> bool:
    """The writer set's held-out articles (never tuned on)."""
    return hashlib.sha256(article.encode()).digest()[0] < 102


def load(split: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    if split == "all":
        return rows
    return [r for r in rows if held_out(r["article"]) == (split == "held")]


def _title(article: str) -> str:
    return article.replace("_", " ")


def items(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, list[str], list[str], float]]:
    """(what, label, text, quotes, context, share): label is 'faithful:<kind>' or
    'wrong:<error type>'; what is claim | title | summary."""
    out: list[tuple[str, str, str, list[str], list[str], float]] = []
    for row in rows:
        context = [_title(row["article"])]
        faithful_quotes: list[str] = []
        for claim in row["claims"]:
            label = (
                f"faithful:{claim['kind']}" if claim["faithful"] else f"wrong:{claim['error_type']}"
            )
            out.append(("claim", label, claim["text"], claim["quotes"], context, 0.0))
            if claim["faithful"]:
                faithful_quotes += claim["quotes"]
        for what, share in (("title", TITLE_SHARE), ("summary", SUMMARY_SHARE)):
            out.append((what, "faithful:" + what, row[f"page_{what}"], faithful_quotes, [], share))
            wrong = row[f"wrong_{what}"]
            out.append(
                (what, f"wrong:{wrong['error_type']}", wrong["text"], faithful_quotes, [], share)
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--split", choices=("tune", "held", "all"), default="tune")
    parser.add_argument("--model", default="none")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--examples", default="", help="print the misjudged items whose label contains this"
    )
    args = parser.parse_args()
    rows = load(args.split)
    checker = SupportChecker(load_model(Config({"support.model": args.model})))
    work = items(rows)
    # warm the parser once (its load is not a claim's cost)
    checker.check("The tower was built in 1900.", ["The tower was finished in 1900."])
    counts: dict[str, dict[str, Counter[str]]] = {"claim": {}, "title": {}, "summary": {}}
    times: list[float] = []
    bad: list[tuple[str, str, str, list[str], str, str]] = []
    for what, label, text, quotes, context, share in work:
        started = time.perf_counter()
        verdict = checker.check(text, quotes, share=share, context=context)
        if what == "claim":
            times.append(time.perf_counter() - started)
        counts[what].setdefault(label, Counter())[verdict.verdict] += 1
        wrong_way = (label.startswith("wrong:") and verdict.verdict == "supported") or (
            label.startswith("faithful:") and verdict.verdict != "supported"
        )
        if wrong_way:
            bad.append((label, what, text, quotes, verdict.verdict, verdict.reason))

    def pct(counter: Counter[str], verdict: str) -> float:
        total = sum(counter.values())
        return round(100 * counter[verdict] / total, 1) if total else 0.0

    report: dict[str, Any] = {"split": args.split, "articles": len({r["article"] for r in rows})}
    for what, by_label in counts.items():
        faithful, wrong = Counter[str](), Counter[str]()
        for label, c in by_label.items():
            (faithful if label.startswith("faithful:") else wrong).update(c)
        report[what] = {
            "faithful": sum(faithful.values()),
            "faithful_admitted_pct": pct(faithful, "supported"),
            "faithful_rejected_pct": pct(faithful, "unsupported"),
            "wrong": sum(wrong.values()),
            "wrong_admitted_pct": pct(wrong, "supported"),
            "wrong_rejected_pct": pct(wrong, "unsupported"),
            "by_label": {
                label: {
                    "n": sum(c.values()),
                    "supported": c["supported"],
                    "uncertain": c["uncertain"],
                    "unsupported": c["unsupported"],
                }
                for label, c in sorted(by_label.items())
            },
        }
    report["claim_ms_p50"] = round(1000 * statistics.median(times), 3) if times else 0.0
    report["claim_ms_mean"] = round(1000 * statistics.fmean(times), 3) if times else 0.0
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"writer set, split {args.split}: {report['articles']} articles")
        for what in ("claim", "title", "summary"):
            r = report[what]
            print(
                f"{what:8} faithful {r['faithful']:4}: admitted {r['faithful_admitted_pct']:5} % "
                f"rejected {r['faithful_rejected_pct']:5} %   wrong {r['wrong']:4}: admitted "
                f"{r['wrong_admitted_pct']:5} % rejected {r['wrong_rejected_pct']:5} %"
            )
            for label, c in r["by_label"].items():
                print(
                    f"    {label:28} n={c['n']:3}  supported {c['supported']:3}  "
                    f"uncertain {c['uncertain']:3}  unsupported {c['unsupported']:3}"
                )
        print(f"cost per claim: p50 {report['claim_ms_p50']} ms, mean {report['claim_ms_mean']} ms")
    if args.examples:
        for label, what, text, quotes, verdict, reason in bad:
            if args.examples in label:
                print(f"\n[{label} {what}] {verdict}: {text}", file=sys.stderr)
                for q in quotes:
                    print(f"    quote: {q}", file=sys.stderr)
                print(f"    why: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
