"""QA on real data: SQuADShifts "new Wikipedia" through ingest (extractive) and ask.

Ingests all 48 articles with the extractive engine (every plan approved), asks every question,
and reports SQuAD exact match and F1 against the gold answers, the share of answers whose cited
quotes lie in the gold article, the abstention rate, p50/p95 latency, and retrieval recall@5/@10
(does a retrieved claim's evidence overlap the gold paragraph).

    .venv/bin/python bench/bench_qa.py [--articles 48] [--questions 0 (=all)] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import Retriever
from affidavit.vault import init_vault

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "qa"
SEPARATOR = "\n\n"


def normalize_answer(text: str) -> str:
    """SQuAD v1.1's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = collections.Counter(pred) & collections.Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--articles", type=int, default=48)
    parser.add_argument("--questions", type=int, default=0, help="0: every question")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    squad = json.loads((DATA / "squadshifts_new_wiki_v1.0.json").read_text())["data"][
        : args.articles
    ]
    work = Path(tempfile.mkdtemp(prefix="bench-qa-"))
    docs = work / "articles"
    docs.mkdir()
    spans: dict[str, list[tuple[int, int]]] = {}  # article file -> paragraph ranges in its text
    questions = []
    for n, article in enumerate(squad):
        name = f"{n:02d}-{article['title'][:40]}.txt".replace("/", "_")
        text, ranges = "", []
        for p, paragraph in enumerate(article["paragraphs"]):
            if p:
                text += SEPARATOR
            ranges.append((len(text), len(text) + len(paragraph["context"])))
            text += paragraph["context"]
            for qa in paragraph["qas"]:
                questions.append((name, p, qa["question"], [a["text"] for a in qa["answers"]]))
        (docs / name).write_text(text + "\n", encoding="utf-8")
        spans[name] = ranges
    if args.questions:
        questions = questions[: args.questions]
    vault, _ = init_vault(work / "vault")
    started = time.perf_counter()
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    ingest_s = time.perf_counter() - started
    source_of = {
        r["id"]: Path(r["origin"]).name for r in vault.db.execute("SELECT id, origin FROM sources")
    }
    retriever = Retriever(vault.db)
    asker = Asker(vault, None, retriever)
    em = f1_sum = answered = in_article = 0.0
    recall5 = recall10 = 0
    latencies = []
    for name, paragraph, question, golds in questions:
        t0 = time.perf_counter()
        answer = asker.ask(question)
        latencies.append(time.perf_counter() - t0)
        gold_range = spans[name][paragraph]
        hits = retriever.search(question, k=10)
        overlaps = [
            any(
                source_of[e.source_id] == name and e.start < gold_range[1] and gold_range[0] < e.end
                for e in hit.evidence
            )
            for hit in hits
        ]
        recall5 += any(overlaps[:5])
        recall10 += any(overlaps[:10])
        if answer.verdict != "answered":
            continue
        answered += 1
        cited = answer.cited()
        in_article += all(source_of[e.source_id] == name for h in cited for e in h.evidence)
        prediction = (
            answer.short_answer.text
            if answer.short_answer
            else " ".join(s.text for s in answer.sentences)
        )
        em += max(float(normalize_answer(prediction) == normalize_answer(g)) for g in golds)
        f1_sum += max(f1(prediction, g) for g in golds)
    total = len(questions)
    claims = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    vault.close()
    latencies.sort()
    result = {
        "articles": len(squad),
        "questions": total,
        "active_claims": claims,
        "ingest_seconds": round(ingest_s, 1),
        "exact_match": round(100 * em / total, 2),
        "f1": round(100 * f1_sum / total, 2),
        "f1_on_answered": round(100 * f1_sum / max(1, answered), 2),
        "abstention_rate": round(1 - answered / total, 3),
        "cited_quotes_in_gold_article": round(in_article / max(1, answered), 3),
        "recall_at_5": round(recall5 / total, 3),
        "recall_at_10": round(recall10 / total, 3),
        "latency_p50_ms": round(1000 * statistics.median(latencies), 1),
        "latency_p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1),
    }
    print(
        json.dumps(result, indent=2)
        if args.json
        else "\n".join(f"{k:>30}: {v}" for k, v in result.items())
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
