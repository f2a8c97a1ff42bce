"""``ask`` on a PostgreSQL vault against the same wiki on SQLite (issue 26), on SQuADShifts.

Builds the wiki as bench_pgmirror.py does (``--articles`` SQuADShifts "new Wikipedia" articles
ingested into a SQLite vault with the extractive engine, then carried into a PostgreSQL vault
through its door: the same sources, claims and quotes), then asks ``--questions`` questions of
both with the extractive answerer, interleaved question by question:

- SQLite: ``Asker`` over the vault with FTS5 retrieval (``Retriever(engine="fts5")``, the
  fallback engine, as PostgreSQL's full text is there);
- PostgreSQL: the same ``Asker`` over ``PgAskWiki``, holding one pooled connection per answer as
  the daemon does for the extractive answerer (``pg``), and taking a pooled connection per
  query as it did first (``pg_pooled``).

It reports, for each: answered (not "Not in the wiki"), answered with a gold answer in the
answer's text (SQuAD's normalisation), p50/p95 latency; and how many answers are the same on
both (verdict and sentences). Then the cost of the one PostgreSQL read that scans every claim,
``misspelt`` (``ts_stat``), on names no claim holds.

    PYTHONPATH=src .venv/bin/python bench/bench_pg_ask.py [--articles 12] [--questions 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pgmirror import articles, carry
from bench_qa import contains_answer
from tests import pg_cluster

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import Retriever
from affidavit.storage import open_storage
from affidavit.storage.pg_ask import PgAskWiki
from affidavit.storage.postgres import PostgresStorage
from affidavit.vault import init_vault

UNKNOWN = ["Zorblax", "Quenthara", "Mxyzptlk", "Vreeland", "Oglethorpe", "Tarkovsky"]


def _stats(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pgask-"))
    cluster = pg_cluster.cluster()
    url = cluster.create_database("bench_pg_ask")
    result: dict[str, Any] = {"articles": args.articles}
    try:
        docs, questions = articles(args.articles, work)
        step = max(1, len(questions) // args.questions)
        questions = questions[::step][: args.questions]
        vault, _ = init_vault(work / "vault")
        Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
        storage = open_storage(url)
        assert isinstance(storage, PostgresStorage)
        storage.create_vault("main", "bench")
        carry(vault, storage)
        result["claims"] = vault.db.execute(
            "SELECT count(*) FROM claims WHERE status = 'active' AND page_slug != ''"
        ).fetchone()[0]
        pg_wiki = PgAskWiki(storage, "main", vault.config)
        askers = {
            "sqlite_fts5": Asker(vault, None, Retriever(vault.db, engine="fts5")),
            "pg": Asker(pg_wiki, None),
            "pg_pooled": Asker(PgAskWiki(storage, "main", vault.config), None),
        }
        for asker in askers.values():  # the recogniser and parser loaded before timing
            asker.ask("Who was it?")
        times: dict[str, list[float]] = {name: [] for name in askers}
        answered = dict.fromkeys(askers, 0)
        gold = dict.fromkeys(askers, 0)
        same = 0
        for n, (question, golds) in enumerate(questions):
            got = {}
            names = sorted(askers)
            for name in names[n % 3 :] + names[: n % 3]:  # each first a third of the time
                started = time.perf_counter()
                with pg_wiki.held() if name == "pg" else nullcontext():
                    answer = askers[name].ask(question)
                times[name].append((time.perf_counter() - started) * 1000)
                text = " ".join(s.text for s in answer.sentences)
                answered[name] += answer.verdict == "answered"
                gold[name] += answer.verdict == "answered" and contains_answer(text, golds)
                got[name] = (answer.verdict, [s.text for s in answer.sentences])
            same += got["sqlite_fts5"] == got["pg"]
        result["questions"] = len(questions)
        result["same_answer"] = same
        for name in askers:
            result[name] = {"answered": answered[name], "gold_in_answer": gold[name],
                            **_stats(times[name])}  # fmt: skip
        wiki = PgAskWiki(storage, "main")
        ms = []
        for name in UNKNOWN:
            started = time.perf_counter()
            wiki.misspelt(name)
            ms.append((time.perf_counter() - started) * 1000)
        result["pg_misspelt"] = _stats(ms)
        vault.close()
        storage.close()
    finally:
        cluster.drop_database(url)
        pg_cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
