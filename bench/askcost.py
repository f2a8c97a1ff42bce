"""Issue 25 item 4 (askcost): the answerer's named-entity recogniser on BLIS vs numpy's OpenBLAS.

Builds a vault from SQuADShifts articles with the extractive engine (bench/extractive_preview.py's
ingest), then, in one process and alternating round by round, answers the articles' questions with
the extractive answerer (``Asker(vault, None)``) once with the recogniser as spaCy loads it (BLIS)
and once as :mod:`affidavit.ask.entities` loads it (OpenBLAS, one thread). The recogniser's cache is
emptied before every question (the daemon meets new hits); the support parser's cache is warmed
first and kept, so the rows differ only by the recogniser. Reports CPU (process_time) per question
and asserts the rendered answers identical; then compares the entities of every text of
tests/data/support_verdicts.jsonl and of ``--contexts`` SQuADShifts paragraphs (and the CPU)
between the two.

    AFFIDAVIT_SHARED_DATA=/work/shared/data PYTHONPATH=src .venv/bin/python bench/askcost.py \\
        [--articles Andes,Baltic_Sea,Australian_Senate] [--questions 200] [--rounds 3] \\
        [--answers FILE]

``--answers FILE`` compares the rendered answers with another tree's: the first run writes them
to FILE, a run with FILE present counts how many are identical (and fails unless all are).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import extractive_preview  # noqa: E402
import spacy  # noqa: E402
from extractive_preview import articles, ingest  # noqa: E402

from affidavit.ask import Asker, entities, render_answer  # noqa: E402
from affidavit.support import blas  # noqa: E402
from affidavit.support.parse import MODEL  # noqa: E402
from affidavit.vault import Vault, init_vault  # noqa: E402

if os.environ.get("AFFIDAVIT_SHARED_DATA"):  # a worktree is not beside shared/
    extractive_preview.SQUAD = (
        Path(os.environ["AFFIDAVIT_SHARED_DATA"]) / "qa" / "squadshifts_new_wiki_v1.0.json"
    )
SQUAD = extractive_preview.SQUAD
FIXTURE = HERE.parent / "tests" / "data" / "support_verdicts.jsonl"


def questions(titles: list[str], count: int) -> list[str]:
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    by_title = {a["title"]: a for a in data}
    out = [q["question"] for t in titles for p in by_title[t]["paragraphs"] for q in p["qas"]]
    return list(dict.fromkeys(out))[:count]


def run(vault: Vault, nlp: Any, asked: list[str]) -> tuple[list[float], list[str], list[bool]]:
    """Per question: CPU (ms), the rendered answer, whether the recogniser ran."""
    entities._NLP[:] = [nlp]
    shown: list[str] = []
    cpu: list[float] = []
    used: list[bool] = []
    for question in asked:
        entities._CACHE.clear()
        start = time.process_time()
        answer = Asker(vault, None).ask(question)
        cpu.append((time.process_time() - start) * 1000)
        used.append(bool(entities._CACHE))
        shown.append(render_answer(answer))
    return cpu, shown, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", default="Andes,Baltic_Sea,Australian_Senate")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--contexts", type=int, default=3000, help="SQuADShifts paragraphs added")
    parser.add_argument("--answers", type=Path, help="the answers of another tree (see above)")
    args = parser.parse_args()
    titles = args.articles.split(",")
    root = Path(tempfile.mkdtemp(prefix="askcost-"))
    try:
        vault, _ = init_vault(root / "vault")
        tally: Counter[str] = Counter()
        for name, text in articles(titles):
            ingest(vault, name, text, 6000, tally)
        asked = questions(titles, args.questions)
        oblas = entities._nlp()
        blis = spacy.load(MODEL, exclude=list(entities.OTHERS))
        run(vault, oblas, asked)  # warm the support parser's cache and the retriever
        cpu: dict[str, list[float]] = {"blis": [], "openblas": []}
        ner: dict[str, list[float]] = {"blis": [], "openblas": []}
        answers: dict[str, list[str]] = {}
        for _ in range(args.rounds):
            for name, nlp in (("blis", blis), ("openblas", oblas)):
                each, shown, used = run(vault, nlp, asked)
                cpu[name].append(sum(each) / len(each))
                ner[name].append(sum(c for c, u in zip(each, used, strict=True) if u) / sum(used))
                assert answers.setdefault(name, shown) == shown
        same = sum(a == b for a, b in zip(answers["blis"], answers["openblas"], strict=True))
        answered = sum(not a.startswith("Not in the wiki") for a in answers["openblas"])
        print(f"vault: {', '.join(titles)}; {len(asked)} questions, {answered} answered")
        print(f"the recogniser ran for {sum(used)} of them")
        for name in cpu:
            print(
                f"ask CPU/question {name}: median {statistics.median(cpu[name]):.2f} ms "
                f"(rounds {', '.join(f'{c:.2f}' for c in cpu[name])}); where the recogniser ran: "
                f"median {statistics.median(ner[name]):.2f} ms "
                f"(rounds {', '.join(f'{c:.2f}' for c in ner[name])})"
            )
        print(f"identical rendered answers: {same}/{len(asked)}")
        if args.answers is not None and args.answers.exists():
            theirs = json.loads(args.answers.read_text(encoding="utf-8"))
            alike = sum(a == b for a, b in zip(theirs, answers["openblas"], strict=True))
            print(f"identical to {args.answers}: {alike}/{len(asked)}")
            same -= len(asked) - alike
        elif args.answers is not None:
            args.answers.write_text(json.dumps(answers["openblas"]), encoding="utf-8")
        rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
        texts = list(
            dict.fromkeys(t for r in rows for t in (r["text"], *r["quotes"], *r["context"]))
        )
        data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
        paragraphs = [p["context"] for a in data for p in a["paragraphs"]]
        texts += list(dict.fromkeys(paragraphs))[: args.contexts]
        found: dict[str, list[Any]] = {}
        for name, nlp in (("blis", blis), ("openblas", oblas)):
            start = time.process_time()
            with blas.one_thread():
                found[name] = [
                    tuple((e.start_char, e.end_char, e.label_) for e in doc.ents)
                    for doc in nlp.pipe(texts, batch_size=64)
                ]
            spent = time.process_time() - start
            print(f"recogniser {name}: {len(texts)} texts, {spent:.2f} s CPU")
        agree = sum(a == b for a, b in zip(found["blis"], found["openblas"], strict=True))
        print(
            f"identical entities: {agree}/{len(texts)} texts, "
            f"{sum(map(len, found['openblas']))} entities"
        )
        return 0 if same == len(asked) and agree == len(texts) else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
