"""The support check (W11) on real labelled data: VitaminC revision pairs as (claim, quote) items.

Every revision of every VitaminC claim is one item: the claim's text resting on that revision's
evidence sentence as its only quote. An item labelled ``True`` (the evidence supports the claim)
should pass: admitted outright (``supported``) or sent to a person (``uncertain``). An item
labelled ``False`` or ``Neither`` should not be admitted: goal ≤ 2 % ``supported``. Reported per
label, with the cost of the deterministic check per claim (cold: caches cleared first; the check
caches by text, so a repeated text is free).

``--model NAME`` adds the model layer: the entailment model an installed package registers under
that name (see docs/configuration.md, ``support.model``); without it the deterministic layer runs
alone. ``--title`` gives each item its article's title as host-known context (as the gate gives a
claim the headings its quote stands under); ``--share`` overrides the claim's content-word share.

    .venv/bin/python bench/bench_support.py [--items 0] [--model NAME] [--title]
        [--held-out | --tuning] [--share 0.0] [--json] [--examples 0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from affidavit.config import Config
from affidavit.support import SupportChecker, load_model
from affidavit.support import rules as support

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
DATA = SHARED / "contradictions"


def load(limit: int) -> list[tuple[str, str, str, str]]:
    """(label, claim, evidence, article title) for every revision, in file order (``limit`` 0:
    all)."""
    items: list[tuple[str, str, str, str]] = []
    with (DATA / "vitaminc_pairs_public.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            for revision in row["revisions"]:
                title = row["page"].replace("-LRB-", "(").replace("-RRB-", ")")
                items.append((revision["label"], row["claim"], revision["evidence"], title))
                if limit and len(items) >= limit:
                    return items
    return items


def _held_out(page: str) -> bool:
    """The training script's split: 40 % of pages, by SHA-256 of the title, never trained on."""
    raw = page.replace("(", "-LRB-").replace(")", "-RRB-")  # the data set's own spelling
    return hashlib.sha256(raw.encode()).digest()[0] < 102


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--items", type=int, default=0, help="0: every item")
    parser.add_argument("--model", default="none")
    parser.add_argument("--examples", type=int, default=0, help="print N misjudged items per kind")
    parser.add_argument(
        "--title",
        action="store_true",
        help="give the item's Wikipedia article title as host-known context (the source's own "
        "title, as the gate gives a claim its cited sources' titles): what only the title "
        "states makes the item uncertain, never supported",
    )
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="only the items of the pages the shipped entailment model never saw in training "
        "(scripts/train_entailment.py's split): use it whenever --model vitaminc is measured",
    )
    parser.add_argument(
        "--tuning",
        action="store_true",
        help="only the items of the other pages (the 60 %% the support check's rules may be tuned on)",
    )
    parser.add_argument(
        "--share",
        type=float,
        default=support.CLAIM_SHARE,
        help="the content-word share a claim needs to be uncertain rather than unsupported",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items = load(args.items)
    if args.held_out:
        items = [item for item in items if _held_out(item[3])]
    elif args.tuning:
        items = [item for item in items if not _held_out(item[3])]
    checker = SupportChecker(load_model(Config({"support.model": args.model})))
    support._read.cache_clear()
    support._check.cache_clear()
    checker.check(
        "The tower was built in 1900.", ["The tower was finished in 1900."]
    )  # load the parser
    verdicts: dict[str, Counter[str]] = {}
    wrong: dict[str, list[tuple[str, str, str]]] = {"false_admitted": [], "true_lost": []}
    started = time.perf_counter()
    results = [
        (
            label,
            claim,
            quote,
            checker.check(claim, [quote], share=args.share, context=[title] if args.title else []),
        )
        for label, claim, quote, title in items
    ]
    seconds = time.perf_counter() - started
    for label, claim, quote, verdict in results:
        verdicts.setdefault(label, Counter())[verdict.verdict] += 1
        if label != "True" and verdict.verdict == "supported":
            wrong["false_admitted"].append((claim, quote, verdict.reason))
        if label == "True" and verdict.verdict == "unsupported":
            wrong["true_lost"].append((claim, quote, verdict.reason))

    def share(label: str, *kinds: str) -> float:
        counts = verdicts.get(label, Counter())
        total = sum(counts.values())
        return 100 * sum(counts[k] for k in kinds) / total if total else 0.0

    bad = Counter[str]()
    for label in ("False", "Neither"):
        bad.update(verdicts.get(label, Counter()))
    bad_total = sum(bad.values())
    report = {
        "items": len(items),
        "model": args.model,
        "title_as_context": args.title,
        "held_out_only": args.held_out,
        "by_label": {label: dict(counts) for label, counts in sorted(verdicts.items())},
        "false_or_neither_admitted_pct": round(100 * bad["supported"] / bad_total, 2)
        if bad_total
        else 0.0,
        "false_or_neither_to_person_pct": round(100 * bad["uncertain"] / bad_total, 2)
        if bad_total
        else 0.0,
        "false_admitted_pct": round(share("False", "supported"), 2),
        "neither_admitted_pct": round(share("Neither", "supported"), 2),
        "true_admitted_or_person_pct": round(share("True", "supported", "uncertain"), 2),
        "true_admitted_pct": round(share("True", "supported"), 2),
        "ms_per_claim": round(1000 * seconds / max(len(items), 1), 4),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"VitaminC items: {report['items']} (model layer: {args.model})")
        for label, counts in report["by_label"].items():
            print(f"  {label:<8} {counts}")
        print(
            f"False/Neither admitted: {report['false_or_neither_admitted_pct']} % "
            f"(False {report['false_admitted_pct']} %, Neither {report['neither_admitted_pct']} %;"
            " goal ≤ 2 %)"
        )
        print(f"False/Neither sent to a person: {report['false_or_neither_to_person_pct']} %")
        print(
            f"True admitted or sent to a person: {report['true_admitted_or_person_pct']} % "
            f"(goal ≥ 90 %); admitted outright: {report['true_admitted_pct']} %"
        )
        print(f"cost: {report['ms_per_claim']} ms per claim (cold caches)")
    for kind, examples in wrong.items():
        for claim, quote, reason in examples[: args.examples]:
            print(f"\n[{kind}] {claim}\n    quote: {quote}\n    {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
