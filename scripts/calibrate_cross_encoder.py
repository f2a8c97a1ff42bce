"""Calibrate the cross-encoder's acceptance threshold on the tuning split (issue 22 item 3).

The model layer only sees texts the support check's rules leave *uncertain* with no changed
fact, role or scope (``Support.model_may_settle``). This runs the rules over the tuning split —
the writer set's tuning articles (claims, titles and summaries as ``bench_support_writer`` checks
them) and VitaminC's calibration pages (not trained on, not held out:
``scripts/train_cross_encoder.py``) — scores every text that would reach the model, and picks the
lowest threshold at which at most 1 % of the *wrong* texts reaching it would be accepted. It
writes the threshold to ``src/affidavit/support/data/cross_encoder.json``; ``--split held`` only
reports what a threshold does on the held-out split (never used to pick it).

    .venv/bin/python scripts/calibrate_cross_encoder.py [--split tune|held] [--budget 0.01]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench"), str(ROOT / "scripts")]

import bench_support_writer as writer  # noqa: E402
from train_cross_encoder import vitaminc_split  # noqa: E402

from affidavit.retrieval.embeddings import file_sha256  # noqa: E402
from affidavit.support import SupportChecker  # noqa: E402
from affidavit.support.cross import CARD_PATH, MODEL_PATH, CrossEncoder  # noqa: E402

VITAMINC = writer.SHARED / "contradictions" / "vitaminc_pairs_public.jsonl"


def reaching(split: str) -> list[tuple[str, int, str, str]]:
    """(source, label, premise, text) of every tuning/held text the rules leave to the model."""
    rules = SupportChecker(None)
    out: list[tuple[str, int, str, str]] = []
    for _what, label, text, quotes, context, share in writer.items(writer.load(split)):
        verdict = rules.check(text, quotes, share=share, context=context)
        if verdict.verdict == "uncertain" and verdict.model_may_settle and quotes:
            premise = " ".join(q.strip() for q in quotes)
            out.append(("writer", int(label.startswith("faithful:")), premise, text))
    wanted = "calibrate" if split == "tune" else "held"
    for line in VITAMINC.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if vitaminc_split(row["page"]) != wanted:
            continue
        title = row["page"].replace("-LRB-", "(").replace("-RRB-", ")")
        for revision in row["revisions"]:
            verdict = rules.check(row["claim"], [revision["evidence"]], context=[title])
            if verdict.verdict == "uncertain" and verdict.model_may_settle:
                label = int(revision["label"] == "True")
                out.append(("vitaminc", label, revision["evidence"].strip(), row["claim"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--split", choices=("tune", "held"), default="tune")
    parser.add_argument("--budget", type=float, default=0.01, help="share of wrong texts accepted")
    args = parser.parse_args()
    items = reaching(args.split)
    model = CrossEncoder()
    model.entailment("The tower was finished in 1900.", "The tower was built in 1900.")  # warm
    scores, times, cpu = [], [], []
    for _source, _label, premise, text in items:
        started, started_cpu = time.perf_counter(), time.process_time()
        scores.append(model.entailment(premise, text))
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    wrong = sorted((s for s, it in zip(scores, items, strict=True) if it[1] == 0), reverse=True)
    allowed = int(args.budget * len(wrong))  # wrong texts that may score at or above it
    threshold = wrong[allowed] + 1e-6 if len(wrong) > allowed else 0.5
    threshold = max(threshold, 0.5)
    if args.split == "held":  # measured at the tuning split's threshold, never picked here
        threshold = float(json.loads(CARD_PATH.read_text(encoding="utf-8"))["threshold"])
    report: dict[str, object] = {"split": args.split, "reaching_model": len(items)}
    for source in ("writer", "vitaminc", "all"):
        pick = [(s, it) for s, it in zip(scores, items, strict=True) if source in ("all", it[0])]
        pos = [s for s, it in pick if it[1] == 1]
        neg = [s for s, it in pick if it[1] == 0]
        report[source] = {
            "faithful": len(pos),
            "faithful_accepted": sum(s >= threshold for s in pos),
            "wrong": len(neg),
            "wrong_accepted": sum(s >= threshold for s in neg),
        }
    report["threshold"] = round(threshold, 6)
    report["model_ms_p50"] = round(1000 * statistics.median(times), 2) if times else 0.0
    report["model_cpu_ms_p50"] = round(1000 * statistics.median(cpu), 2) if cpu else 0.0
    print(json.dumps(report, indent=2))
    if args.split == "tune":
        card = {
            "name": "minilm-cross-encoder",
            "model_sha256": file_sha256(MODEL_PATH),
            "threshold": round(threshold, 6),
            "false_accept_budget": args.budget,
            "calibrated_on": "writer set tuning articles + VitaminC calibration pages, texts the rules leave to the model",
            "tuning": {k: report[k] for k in ("writer", "vitaminc", "all")},
        }
        CARD_PATH.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"-> {CARD_PATH}")


if __name__ == "__main__":
    main()
