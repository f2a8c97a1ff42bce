"""The mirror and full-text search of a vault on PostgreSQL (issue 26 items 4-5), on SQuADShifts.

Ingests ``--articles`` SQuADShifts "new Wikipedia" articles into a SQLite vault with the
extractive engine (every plan approved), then carries the wiki into a PostgreSQL vault through
its door: the same sources (bytes and extracted text), one plan per page (``create_page`` with its
claims and quotes, ``add_claims`` for the rest), one batch per plan. Then it measures:

- ``affidavit mirror`` into an empty folder (every batch, one commit each), a second run with
  nothing to do, ``--check``;
- search, interleaved question by question: SQLite FTS5 (``Retriever(engine="fts5")``, the
  fallback on SQLite, over the SQLite vault) and ``PgFullText`` (over the PostgreSQL vault, the
  same claims): answer@1/@5/@10 (a retrieved claim's text holds a gold answer, SQuAD's
  normalisation) and p50/p95 latency, on ``--questions`` questions spread over the articles.

Starts its own PostgreSQL cluster (tests/pg_cluster.py: Debian's postgresql-15 and the
``affidavit-pg`` user, as the tests do).

    PYTHONPATH=src .venv/bin/python bench/bench_pgmirror.py [--articles 12] [--questions 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_qa import DATA, SEPARATOR, contains_answer
from tests import pg_cluster

from affidavit.ingest.pipeline import Ingestor
from affidavit.mirror import check, mirror
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import Retriever
from affidavit.storage import open_storage
from affidavit.storage.pg_search import PgFullText
from affidavit.storage.postgres import PostgresStorage
from affidavit.vault import Vault, init_vault

NOW = "2026-12-06T12:00:00Z"
EXPIRES = "2099-01-01T00:00:00Z"


def articles(count: int, work: Path) -> tuple[Path, list[tuple[str, list[str]]]]:
    squad = json.loads((DATA / "squadshifts_new_wiki_v1.0.json").read_text())["data"][:count]
    docs = work / "articles"
    docs.mkdir()
    questions = []
    for n, article in enumerate(squad):
        text = SEPARATOR.join(p["context"] for p in article["paragraphs"])
        (docs / f"{n:02d}.txt").write_text(text + "\n", encoding="utf-8")
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                questions.append((qa["question"], [a["text"] for a in qa["answers"]]))
    return docs, questions


def carry(vault: Vault, storage: PostgresStorage) -> int:
    """The SQLite vault's sources and pages into the PostgreSQL vault ``main``, a batch per
    page; returns the number of batches."""
    db = vault.db
    for row in db.execute("SELECT * FROM sources"):
        data = (vault.root / row["original_file"]).read_bytes()
        text = (vault.root / row["text_file"]).read_text(encoding="utf-8")
        storage.add_source(
            "main", data, origin=row["origin"], name=row["name"], added_at=NOW, text=text,
            media_type="text/plain", trust=row["trust"],
        )  # fmt: skip
    batches = 0
    pages = db.execute("SELECT slug, title, summary, category FROM pages ORDER BY created_at, slug")
    for slug, title, summary, category in pages.fetchall():
        claims = []
        for cid, text, section in db.execute(
            "SELECT id, text, section FROM claims WHERE page_slug = ? AND status = 'active' "
            "ORDER BY position",
            (slug,),
        ).fetchall():
            evidence = [
                {"source": source, "quote": quote}
                for source, quote in db.execute(
                    "SELECT source_id, quote FROM evidence WHERE claim_id = ? ORDER BY idx", (cid,)
                )
            ]
            claims.append((section, {"text": text, "evidence": evidence}))
        if not claims:
            continue
        ops: list[dict[str, Any]] = []
        for start in range(0, len(claims), 30):
            part = claims[start : start + 30]
            if start == 0:
                ops.append({
                    "op": "create_page", "slug": slug, "title": title, "summary": summary,
                    "category": category, "section": part[0][0], "claims": [c for _, c in part],
                })  # fmt: skip
            else:
                ops.append({"op": "add_claims", "page": slug, "section": part[0][0],
                            "claims": [c for _, c in part]})  # fmt: skip
        batches += 1
        plan_id = f"{batches:064x}"
        plan = {"nonce": f"nonce-{batches}-0123456789abcdef", "operations": ops[:20]}
        storage.propose(
            "main", plan_id, author="bench", origin="cli", plan_json=json.dumps(plan),
            created_at=NOW, expires_at=EXPIRES,
        )  # fmt: skip
        with storage.door("main", f"b-{batches}") as door:
            door.apply_plan(plan_id, now=NOW, actor="bench")
    return batches


def answer_at(texts: list[str], golds: list[str], k: int) -> bool:
    return any(contains_answer(t, golds) for t in texts[:k])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pgmirror-"))
    cluster = pg_cluster.cluster()
    url = cluster.create_database("bench_pgmirror")
    result: dict[str, Any] = {"articles": args.articles}
    try:
        docs, questions = articles(args.articles, work)
        step = max(1, len(questions) // args.questions)
        questions = questions[::step][: args.questions]
        vault, _ = init_vault(work / "vault")
        started = time.perf_counter()
        Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
        result["ingest_s"] = round(time.perf_counter() - started, 1)
        storage = open_storage(url)
        assert isinstance(storage, PostgresStorage)
        storage.create_vault("main", "bench")
        started = time.perf_counter()
        result["batches"] = carry(vault, storage)
        result["carry_s"] = round(time.perf_counter() - started, 1)
        result["claims"] = vault.db.execute(
            "SELECT count(*) FROM claims WHERE status = 'active' AND page_slug != ''"
        ).fetchone()[0]
        folder = work / "mirror"
        started = time.perf_counter()
        report = mirror(storage, "main", folder)
        result["mirror_all_s"] = round(time.perf_counter() - started, 2)
        result["mirror_commits"] = len(report.commits)
        started = time.perf_counter()
        assert mirror(storage, "main", folder).commits == []
        result["mirror_noop_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        assert check(storage, "main", folder).ok
        result["check_s"] = round(time.perf_counter() - started, 2)

        fts5 = Retriever(vault.db, engine="fts5")
        pg = PgFullText(storage, "main")
        hits: dict[str, list[int]] = {"fts5": [0, 0, 0], "pg": [0, 0, 0]}
        times: dict[str, list[float]] = {"fts5": [], "pg": []}
        for question, golds in questions:
            for name in ("fts5", "pg") if len(times["pg"]) % 2 else ("pg", "fts5"):
                started = time.perf_counter()
                found = (fts5 if name == "fts5" else pg).search(question, k=10)
                times[name].append(time.perf_counter() - started)
                texts = [h.text for h in found]
                for n, k in enumerate((1, 5, 10)):
                    hits[name][n] += answer_at(texts, golds, k)
        result["questions"] = len(questions)
        for name in ("fts5", "pg"):
            ms = sorted(t * 1000 for t in times[name])
            result[name] = {
                "answer_at_1": hits[name][0], "answer_at_5": hits[name][1],
                "answer_at_10": hits[name][2], "p50_ms": round(statistics.median(ms), 2),
                "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
            }  # fmt: skip
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
