"""Answers on real documentation: the Python-docs corpus (and SQuADShifts) through the extractive
engine and the extractive answerer, beside plain BM25 over all source sentences.

Pydocs mode (default): builds the 40-document corpus (``bench/pydocs_corpus.py``), ingests it
with the extractive engine (every plan approved), and asks the 40 questions of
``bench/pydocs_questions.json``. A question is answered right when the printed answer (short
answer and sentences) matches its pattern and a cited claim quotes the question's document. It
also reports how many source sentences some claim quotes (coverage), whether a claim holds each
answer at all, and the baseline: SQLite FTS5 BM25 over every sentence of every source, top 3.

``--squad N`` does the same on N articles of SQuADShifts "new Wikipedia" (the first N, or from
``--first M``: articles 24 on were held out, never looked at while changing the engine)
(``../shared/data/qa``): gold answer inside the printed answer, EM/F1 of the short answer (or
the sentences; ``f1_first_sentence``: of the short answer or the first sentence), recall@10, and the baseline's top 1 / top 3 in the same run.

    .venv/bin/python bench/bench_pydocs.py [--questions 40] [--json]
    .venv/bin/python bench/bench_pydocs.py --squad 12 [--questions 500] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.ask import Asker
from affidavit.extractive.segment import segment
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import Retriever, query_terms
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault, open_vault

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_qa import DATA, f1, normalize_answer
from pydocs_corpus import build_corpus

QUESTIONS = Path(__file__).resolve().parent / "pydocs_questions.json"
QA = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", str(DATA.parent))) / "qa"
"""SQuADShifts: ``../shared/data/qa`` beside the checkout, or under ``$AFFIDAVIT_SHARED_DATA``."""
WORDS = re.compile(r"\w+")


@dataclass
class Sentence:
    source: str  # file name
    start: int
    end: int
    text: str


def source_texts(vault: Vault) -> dict[str, tuple[str, str]]:
    """source id -> (file name, extracted text)."""
    store = SourceStore(vault)
    rows = vault.db.execute("SELECT id, origin FROM sources").fetchall()
    return {r["id"]: (Path(r["origin"]).name, store.text(r["id"])) for r in rows}


def all_sentences(texts: dict[str, tuple[str, str]]) -> dict[str, list[Sentence]]:
    """Every sentence of every source (the engine's segmenter: headings and fences left out) of
    four words or more."""
    out: dict[str, list[Sentence]] = {}
    for sid, (name, text) in texts.items():
        seg = segment(text)
        out[sid] = [
            Sentence(name, s.start, s.end, " ".join(text[s.start : s.end].split()))
            for s in seg.sentences
            if len(WORDS.findall(text[s.start : s.end])) >= 4
        ]
    return out


def coverage(vault: Vault, sentences: dict[str, list[Sentence]]) -> dict[str, Any]:
    """Share of source sentences that an active claim's evidence overlaps."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for r in vault.db.execute(
        'SELECT e.source_id, e.start, e."end" FROM evidence e JOIN claims c ON c.id = e.claim_id '
        "WHERE c.status = 'active'"
    ):
        spans.setdefault(r[0], []).append((r[1], r[2]))
    total = covered = 0
    for sid, items in sentences.items():
        marks = sorted(spans.get(sid, []))
        for s in items:
            total += 1
            covered += any(a < s.end and s.start < b for a, b in marks)
    return {"sentences": total, "covered": covered, "share": round(covered / max(1, total), 3)}


class SentenceBaseline:
    """SQLite FTS5 BM25 over every source sentence (no wiki): the floor the answers must beat."""

    def __init__(self, sentences: dict[str, list[Sentence]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE s USING fts5(text, tokenize='porter unicode61')")
        self.rows: list[Sentence] = [s for items in sentences.values() for s in items]
        self.db.executemany(
            "INSERT INTO s (rowid, text) VALUES (?, ?)",
            [(i + 1, s.text) for i, s in enumerate(self.rows)],
        )

    def top(self, question: str, k: int = 3) -> list[Sentence]:
        terms = query_terms(question)
        if not terms:
            return []
        query = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        found = self.db.execute(
            "SELECT rowid FROM s WHERE s MATCH ? ORDER BY bm25(s) LIMIT ?", (query, k)
        ).fetchall()
        return [self.rows[r[0] - 1] for r in found]


def printed(answer: Any) -> str:
    parts = [answer.short_answer.text] if answer.short_answer else []
    return " ".join(parts + [s.text for s in answer.sentences])


def ingest(folder: Path, work: Path, keep: Path | None = None) -> tuple[Vault, float]:
    """A vault with ``folder`` ingested (approved); ``keep``: reuse that vault, or ingest into
    it and keep it (to ask again after changing the answerer)."""
    if keep is not None and (keep / ".affidavit").exists():
        return open_vault(keep), 0.0
    vault, _ = init_vault(keep or work / "vault")
    started = time.perf_counter()
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    return vault, time.perf_counter() - started


def claims_of(vault: Vault) -> list[tuple[str, str]]:
    """(claim text, source file name) of every active claim, one row per evidence source."""
    names = {r[0]: Path(r[1]).name for r in vault.db.execute("SELECT id, origin FROM sources")}
    rows = vault.db.execute(
        "SELECT DISTINCT c.text, e.source_id FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.status = 'active'"
    ).fetchall()
    return [(r[0], names[r[1]]) for r in rows]


def _why(held: bool, rank: int | None, given: bool, shown: int) -> str:
    """A miss's class: the answer is in no claim; no claim holding it is retrieved (first 100);
    one is retrieved but ranked below what the answerer is given; or it was given and the
    answerer printed another claim (or the span is wrong)."""
    if not held:
        return "not a claim"
    if rank is None:
        return "not retrieved"
    if not given:
        return f"ranked low ({rank}, {shown} given)"
    return "given, answer picked another"


def run_pydocs(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    if args.questions:
        questions = questions[: args.questions]
    folder = work / "pydocs"
    build_corpus(folder)
    vault, seconds = ingest(folder, work, args.vault)
    texts = source_texts(vault)
    sentences = all_sentences(texts)
    cov = coverage(vault, sentences)
    baseline = SentenceBaseline(sentences)
    claims = claims_of(vault)
    retriever = Retriever(vault.db)
    asker = Asker(vault, None, retriever)
    source_of = {sid: name for sid, (name, _) in texts.items()}
    right = in_claim = base3 = base1 = 0
    rows = []
    text_of = {name: " ".join(WORDS.findall(text.lower())) for name, text in texts.values()}
    unseen = [
        q["question"]
        for q in questions
        if " ".join(WORDS.findall(q["sentence"].lower())) not in text_of.get(q["document"], "")
    ]
    for q in questions:
        pattern = re.compile(q["pattern"], re.IGNORECASE)
        answer = asker.ask(q["question"])
        text = printed(answer) if answer.verdict == "answered" else ""
        cited = {source_of[e.source_id] for h in answer.cited() for e in h.evidence}
        ok = bool(text) and bool(pattern.search(text)) and q["document"] in cited
        right += ok
        held = any(n == q["document"] and pattern.search(t) for t, n in claims)
        in_claim += held
        top = baseline.top(q["question"])
        base1 += any(pattern.search(s.text) for s in top[:1])
        base3 += any(pattern.search(s.text) for s in top[:3])
        given = any(pattern.search(h.text) for h in answer.given)
        wide = retriever.search(q["question"], k=100)
        rank = next(
            (
                i + 1
                for i, h in enumerate(wide)
                if pattern.search(h.text)
                and any(source_of[e.source_id] == q["document"] for e in h.evidence)
            ),
            None,
        )
        rows.append(
            {
                "question": q["question"],
                "right": ok,
                "in_a_claim": held,
                "given": given,
                "rank_in_100": rank,
                "why": "" if ok else _why(held, rank, given, len(answer.given)),
                "answer": text[:300],
            }
        )
    n = len(questions)
    vault.close()
    return {
        "documents": len(texts),
        "questions": n,
        "ingest_seconds": round(seconds, 1),
        "active_claims": len({t for t, _ in claims}),
        "coverage_of_source_sentences": cov,
        "answered_right_with_citation": round(right / n, 3),
        "answer_in_some_claim": round(in_claim / n, 3),
        "baseline_bm25_sentences_top1": round(base1 / n, 3),
        "baseline_bm25_sentences_top3": round(base3 / n, 3),
        "answer_sentence_not_in_extracted_text": unseen,
        "per_question": rows if args.verbose else [r for r in rows if not r["right"]],
    }


def run_squad(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    data = json.loads((QA / "squadshifts_new_wiki_v1.0.json").read_text())["data"]
    squad = data[args.first : args.first + args.squad]
    folder = work / "articles"
    folder.mkdir()
    ranges: dict[str, list[tuple[int, int]]] = {}
    questions = []
    for n, article in enumerate(squad):
        name = f"{n:02d}-{article['title'][:40]}.txt".replace("/", "_")
        text, spans = "", []
        for p, paragraph in enumerate(article["paragraphs"]):
            if p:
                text += "\n\n"
            spans.append((len(text), len(text) + len(paragraph["context"])))
            text += paragraph["context"]
            for qa in paragraph["qas"]:
                questions.append((name, p, qa["question"], [a["text"] for a in qa["answers"]]))
        (folder / name).write_text(text + "\n", encoding="utf-8")
        ranges[name] = spans
    if args.questions:
        step = max(1, len(questions) // args.questions)  # spread over every article
        questions = questions[::step][: args.questions]
    vault, seconds = ingest(folder, work, args.vault)
    texts = source_texts(vault)
    sentences = all_sentences(texts)
    cov = coverage(vault, sentences)
    baseline = SentenceBaseline(sentences)
    retriever = Retriever(vault.db)
    asker = Asker(vault, None, retriever)
    source_of = {sid: name for sid, (name, _) in texts.items()}
    claims = claims_of(vault)
    by_source: dict[str, list[str]] = {}
    for t, name in claims:
        by_source.setdefault(name, []).append(normalize_answer(t))
    gold_in = em = f1_sum = f1_first = answered = recall10 = in_claim = base1 = base3 = 0.0
    lengths: list[int] = []
    rows: list[dict[str, Any]] = []
    for name, paragraph, question, golds in questions:
        norm = [normalize_answer(g) for g in golds]
        answer = asker.ask(question)
        gold_range = ranges[name][paragraph]
        hits = retriever.search(question, k=10)
        recall10 += any(
            source_of[e.source_id] == name and e.start < gold_range[1] and gold_range[0] < e.end
            for h in hits
            for e in h.evidence
        )
        in_claim += any(g and g in t for t in by_source.get(name, []) for g in norm)
        top = [normalize_answer(s.text) for s in baseline.top(question)]
        base1 += any(g and g in t for t in top[:1] for g in norm)
        base3 += any(g and g in t for t in top[:3] for g in norm)
        if answer.verdict != "answered":
            continue
        answered += 1
        whole = normalize_answer(printed(answer))
        found = any(g and g in whole for g in norm)
        gold_in += found
        lengths.append(len(printed(answer).split()))
        rows.append({"question": question, "gold": golds, "in": found, "answer": printed(answer)})
        prediction = (
            answer.short_answer.text
            if answer.short_answer
            else " ".join(s.text for s in answer.sentences)
        )
        em += max(float(normalize_answer(prediction) == g) for g in norm)
        f1_sum += max(f1(prediction, g) for g in golds)
        lead = answer.short_answer.text if answer.short_answer else answer.sentences[0].text
        f1_first += max(f1(lead, g) for g in golds)
    n = len(questions)
    vault.close()
    return {
        "articles": f"{args.first}-{args.first + len(squad) - 1}",
        "questions": n,
        "ingest_seconds": round(seconds, 1),
        "active_claims": len({t for t, _ in claims}),
        "coverage_of_source_sentences": cov,
        "gold_in_printed_answer": round(gold_in / n, 3),
        "exact_match": round(100 * em / n, 2),
        "f1": round(100 * f1_sum / n, 2),
        "f1_first_sentence": round(100 * f1_first / n, 2),
        "abstention_rate": round(1 - answered / n, 3),
        "median_answer_words": statistics.median(lengths) if lengths else 0,
        "recall_at_10": round(recall10 / n, 3),
        "gold_in_some_claim": round(in_claim / n, 3),
        "baseline_bm25_sentences_top1": round(base1 / n, 3),
        "baseline_bm25_sentences_top3": round(base3 / n, 3),
        **({"per_question": rows} if args.verbose else {}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--squad", type=int, default=0, help="articles of SQuADShifts instead")
    parser.add_argument(
        "--first", type=int, default=0, help="SQuAD: start at this article (held-out: 24)"
    )
    parser.add_argument("--questions", type=int, default=0, help="0: every question")
    parser.add_argument("--verbose", action="store_true", help="every question, not only misses")
    parser.add_argument("--vault", type=Path, help="keep the vault here; reuse it if it exists")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pydocs-"))
    try:
        result = run_squad(args, work) if args.squad else run_pydocs(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            if key == "per_question":
                for row in value:
                    if "right" not in row:  # SQuAD: the gold answers, whether the answer has one
                        print(f"  {'ok ' if row['in'] else 'NO '} {row['question']}")
                        print(f"       gold: {row['gold']}")
                        print(f"       {row['answer'][:160]}")
                        continue
                    print(f"  {'ok ' if row['right'] else 'NO '} {row['question']}")
                    print(
                        f"       in a claim: {row['in_a_claim']}, given: {row['given']}, {row['why']}"
                    )
                    print(f"       {row['answer'][:160]}")
            else:
                print(f"{key:>32}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
