"""QA on real data: SQuADShifts "new Wikipedia" through ingest (extractive) and ask.

Ingests all 48 articles with the extractive engine (every plan approved), asks every question,
and reports SQuAD exact match and F1 against the gold answers, the share of answers whose cited
quotes lie in the gold article, the abstention rate, p50/p95 latency, retrieval recall@5/@10
(does a retrieved claim's evidence overlap the gold paragraph) and answer@1/@3 (does the first /
one of the first three retrieved claims contain a gold answer).

Each ``--variants`` entry is one retriever over the same ingested vault, in the same run:
``rrf-fts5`` is the earlier ranking (RRF over the claim, page and neighbour lists, on FTS5),
``bm25-fts5`` / ``bm25-tantivy`` the BM25-led ranking on each engine (on tantivy in a few engine
calls; ``lists-tantivy`` is the same fusion of the three lists, a call per page, as it was before). For the first variant it
also reports each lexical list alone (its answer@1, answer@10 and how often it holds an
answer-bearing claim no other list has), and the baseline every variant must beat: BM25 (FTS5)
over every sentence of the source articles, answer@1 / answer@3.

    .venv/bin/python bench/bench_qa.py [--articles 48] [--every 1] [--variants ...] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import sqlite3
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import Retriever, query_terms
from affidavit.sources.sentences import number_sentences
from affidavit.vault import Vault, init_vault

DATA = next(  # ../shared/data/qa beside the checkout (or beside a worktree's parent)
    (
        p / "shared" / "data" / "qa"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "data" / "qa").is_dir()
    ),
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "qa",
)
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


def contains_answer(text: str, golds: list[str]) -> bool:
    body = f" {normalize_answer(text)} "
    return any(normalize_answer(g) and f" {normalize_answer(g)} " in body for g in golds)


def sentence_baseline(articles: dict[str, str]) -> sqlite3.Connection:
    """Every sentence of every article in an FTS5 table (same tokenizer as the claims')."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE s USING fts5(text, tokenize='porter unicode61')")
    for text in articles.values():
        db.executemany(
            "INSERT INTO s (text) VALUES (?)",
            [(text[n.start : n.end],) for n in number_sentences(text)],
        )
    return db


def baseline_top(db: sqlite3.Connection, question: str, k: int) -> list[str]:
    terms = query_terms(question)
    if not terms:
        return []
    match = " OR ".join(f'"{t}"' for t in terms)
    rows = db.execute(
        "SELECT text FROM s WHERE s MATCH ? ORDER BY bm25(s), rowid LIMIT ?", (match, k)
    )
    return [r[0] for r in rows]


VARIANTS = {
    "rrf-fts5": {"engine": "fts5", "fusion": "rrf"},
    "bm25-fts5": {"engine": "fts5", "fusion": "bm25"},
    "bm25-tantivy": {"engine": "auto", "fusion": "bm25"},
    "lists-tantivy": {"engine": "auto", "fusion": "lists"},
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--articles", type=int, default=48)
    parser.add_argument("--questions", type=int, default=0, help="0: every question")
    parser.add_argument("--every", type=int, default=1, help="ask every n-th question")
    parser.add_argument("--variants", default="rrf-fts5,bm25-fts5,bm25-tantivy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    squad = json.loads((DATA / "squadshifts_new_wiki_v1.0.json").read_text())["data"][
        : args.articles
    ]
    work = Path(tempfile.mkdtemp(prefix="bench-qa-"))
    docs = work / "articles"
    docs.mkdir()
    spans: dict[str, list[tuple[int, int]]] = {}  # article file -> paragraph ranges in its text
    texts: dict[str, str] = {}
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
        texts[name] = text
    questions = questions[:: args.every]
    if args.questions:
        questions = questions[: args.questions]
    vault, _ = init_vault(work / "vault")
    started = time.perf_counter()
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    ingest_s = time.perf_counter() - started
    source_of = {
        r["id"]: Path(r["origin"]).name for r in vault.db.execute("SELECT id, origin FROM sources")
    }
    text_of = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    claims = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    total = len(questions)
    baseline = sentence_baseline(texts)
    base1 = base3 = 0
    for _name, _p, question, golds in questions:
        top = baseline_top(baseline, question, 3)
        base1 += bool(top) and contains_answer(top[0], golds)
        base3 += any(contains_answer(t, golds) for t in top)
    result: dict[str, object] = {
        "articles": len(squad),
        "questions": total,
        "active_claims": claims,
        "ingest_seconds": round(ingest_s, 1),
        "baseline_sentences_answer_at_1": round(base1 / total, 3),
        "baseline_sentences_answer_at_3": round(base3 / total, 3),
    }
    for number, variant in enumerate(args.variants.split(",")):
        retriever = Retriever(vault.db, **VARIANTS[variant])
        if number == 0:
            result["lists"] = list_contributions(retriever, questions, text_of)
        result[variant] = run_variant(vault, retriever, questions, spans, source_of)
    vault.close()
    print(json.dumps(result, indent=2) if args.json else json.dumps(result, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


def list_contributions(
    retriever: Retriever, questions: list[tuple[str, int, str, list[str]]], text_of: dict[str, str]
) -> dict[str, dict[str, float]]:
    """Each lexical list alone: answer@1, answer@10, and questions where only it holds an
    answer-bearing claim (in its first 10)."""
    names = ("claims", "pages", "neighbours")
    at1 = dict.fromkeys(names, 0)
    at10 = dict.fromkeys(names, 0)
    only = dict.fromkeys(names, 0)
    sizes = dict.fromkeys(names, 0)
    for _name, _p, question, golds in questions:
        lists = retriever.lexical_lists(question, k=30)
        found = {}
        for n in names:
            ranked = [cid for cid, _ in lists[n]]
            sizes[n] += len(ranked)
            bearing = [contains_answer(text_of[c], golds) for c in ranked[:10]]
            at1[n] += bool(bearing) and bearing[0]
            found[n] = any(bearing)
            at10[n] += found[n]
        for n in names:
            only[n] += found[n] and not any(found[m] for m in names if m != n)
    total = len(questions)
    return {
        n: {
            "answer_at_1": round(at1[n] / total, 3),
            "answer_at_10": round(at10[n] / total, 3),
            "only_this_list": round(only[n] / total, 3),
            "mean_length": round(sizes[n] / total, 1),
        }
        for n in names
    }


def run_variant(
    vault: Vault,
    retriever: Retriever,
    questions: list[tuple[str, int, str, list[str]]],
    spans: dict[str, list[tuple[int, int]]],
    source_of: dict[str, str],
) -> dict[str, object]:
    asker = Asker(vault, None, retriever)
    em = f1_sum = answered = in_article = 0.0
    recall5 = recall10 = answer1 = answer3 = 0
    latencies, search_latencies = [], []
    for name, paragraph, question, golds in questions:
        t0 = time.perf_counter()
        answer = asker.ask(question)
        latencies.append(time.perf_counter() - t0)
        gold_range = spans[name][paragraph]
        t0 = time.perf_counter()
        hits = retriever.search(question, k=10)
        search_latencies.append(time.perf_counter() - t0)
        overlaps = [
            any(
                source_of[e.source_id] == name and e.start < gold_range[1] and gold_range[0] < e.end
                for e in hit.evidence
            )
            for hit in hits
        ]
        recall5 += any(overlaps[:5])
        recall10 += any(overlaps[:10])
        answer1 += bool(hits) and contains_answer(hits[0].text, golds)
        answer3 += any(contains_answer(h.text, golds) for h in hits[:3])
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
    latencies.sort()
    search_latencies.sort()
    return {
        "engine": retriever.used,
        "exact_match": round(100 * em / total, 2),
        "f1": round(100 * f1_sum / total, 2),
        "f1_on_answered": round(100 * f1_sum / max(1, answered), 2),
        "abstention_rate": round(1 - answered / total, 3),
        "cited_quotes_in_gold_article": round(in_article / max(1, answered), 3),
        "answer_at_1": round(answer1 / total, 3),
        "answer_at_3": round(answer3 / total, 3),
        "recall_at_5": round(recall5 / total, 3),
        "recall_at_10": round(recall10 / total, 3),
        "ask_p50_ms": round(1000 * statistics.median(latencies), 1),
        "ask_p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1),
        "search_p50_ms": round(1000 * statistics.median(search_latencies), 2),
    }


if __name__ == "__main__":
    sys.exit(main())
