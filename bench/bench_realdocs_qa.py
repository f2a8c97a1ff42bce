"""Answers on real documentation: the public real-docs set (SQLite 3.40.1's manual, 59 HTML pages,
40 questions with gold key phrases and 10 the pages don't answer), or a second corpus.

Copies the pages from ``doc_root`` (Debian ``sqlite3-doc``) into a folder, ingests it with the
extractive engine as a user would (``ingest DIR --trust trusted --yes``), asks every question with
the extractive answerer and scores it as the set's README says: right when the answer's text (the
short answer and the sentences, not the footnotes) holds a gold phrase, case-insensitively, with
whitespace collapsed, curly quotes straight, and a phrase that starts or ends with a letter or
digit not matched inside a longer word; an absent question is right only when the verdict is
``not_in_wiki``. Also: the median answer length in words (short answer and sentences, answered
questions only), and for a wrong answer whether the gold was in any claim and among those given.

``--split`` scores the tuning half (even-numbered questions) and the held-out half (odd-numbered)
apart: tune on ``tune``, report ``held_out``.

``--set FILE`` reads another question set of the same shape (``doc_root``, ``files``,
``questions``, ``absent``); ``bench/realdocs_git.json`` is the second corpus (git's HTML manual),
``bench/realdocs_valgrind.json`` a held-out third (10 pages of valgrind's HTML manual, 24 + 6
questions written before any answer was seen; never tuned on).

    .venv/bin/python bench/bench_realdocs_qa.py [--vault DIR] [--verbose] [--json]
    .venv/bin/python bench/bench_realdocs_qa.py --set bench/realdocs_git.json --vault DIR
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault, open_vault

SET = next(
    (
        p / "shared" / "data" / "realdocs" / "sqlite3-doc.json"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "data" / "realdocs").is_dir()
    ),
    Path("/work/shared/data/realdocs/sqlite3-doc.json"),
)


def _plain(text: str) -> str:
    text = text.replace("\u2018", "'").replace("\u2019", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split()).casefold()


def holds(answer: str, gold: str) -> bool:
    """The README's rule: ``gold`` in ``answer``, not inside a longer word at a word edge."""
    body, phrase = _plain(answer), _plain(gold)
    left = r"(?<![\w])" if phrase[:1].isalnum() else ""
    right = r"(?![\w])" if phrase[-1:].isalnum() else ""
    return re.search(left + re.escape(phrase) + right, body) is not None


def answer_text(answer: Any) -> str:
    parts = [answer.short_answer.text] if answer.short_answer else []
    return " ".join([*parts, *(s.text for s in answer.sentences)])


def build(vault_dir: Path, qset: dict[str, Any], work: Path) -> tuple[Vault, float]:
    if (vault_dir / "affidavit.toml").exists():
        return open_vault(vault_dir), 0.0
    docs = work / "docs"
    docs.mkdir(parents=True)
    root = Path(qset["doc_root"])
    for name in qset["files"]:
        target = docs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / name, target)
    vault, _ = init_vault(vault_dir)
    started = time.perf_counter()
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    return vault, time.perf_counter() - started


def run(vault: Vault, qset: dict[str, Any]) -> dict[str, Any]:
    asker = Asker(vault, None)
    claims = [
        r[0] for r in vault.db.execute("SELECT text FROM claims WHERE status = 'active'").fetchall()
    ]
    rows: list[dict[str, Any]] = []
    for n, item in enumerate(qset["questions"]):
        answer = asker.ask(item["q"])
        text = answer_text(answer)
        right = answer.verdict == "answered" and any(holds(text, g) for g in item["gold"])
        given = " ".join(h.text for h in answer.given)
        rows.append(
            {
                "n": n,
                "question": item["q"],
                "kind": "answerable",
                "right": right,
                "words": len(text.split()) if answer.verdict == "answered" else 0,
                "verdict": answer.verdict,
                "in_a_claim": any(holds(c, g) for c in claims for g in item["gold"]),
                "given": any(holds(given, g) for g in item["gold"]),
                "answer": text,
            }
        )
    for n, item in enumerate(qset["absent"]):
        answer = asker.ask(item["q"])
        rows.append(
            {
                "n": n,
                "question": item["q"],
                "kind": "absent",
                "right": answer.verdict == "not_in_wiki",
                "words": 0,
                "verdict": answer.verdict,
                "answer": answer_text(answer),
            }
        )
    return {"rows": rows}


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["kind"] == "answerable"]
    absent = [r for r in rows if r["kind"] == "absent"]
    lengths = [r["words"] for r in answerable if r["verdict"] == "answered"]
    return {
        "right": f"{sum(r['right'] for r in answerable)}/{len(answerable)}",
        "right_share": round(sum(r["right"] for r in answerable) / max(1, len(answerable)), 3),
        "abstentions_right": f"{sum(r['right'] for r in absent)}/{len(absent)}",
        "abstentions_share": round(sum(r["right"] for r in absent) / max(1, len(absent)), 3),
        "median_answer_words": statistics.median(lengths) if lengths else 0,
        "wrong_but_in_a_claim": sum(
            1 for r in answerable if not r["right"] and r.get("in_a_claim")
        ),
        "wrong_but_given": sum(1 for r in answerable if not r["right"] and r.get("given")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--set", type=Path, default=SET, help="the question set (JSON)")
    parser.add_argument("--vault", type=Path, help="keep the vault here; reuse it if it exists")
    parser.add_argument("--split", action="store_true", help="tuning / held-out halves apart")
    parser.add_argument("--verbose", action="store_true", help="every question's answer")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    qset = json.loads(args.set.read_text())
    work = Path(tempfile.mkdtemp(prefix="bench-realdocs-"))
    try:
        vault, seconds = build(args.vault or work / "vault", qset, work)
        sources = vault.db.execute("SELECT count(*) FROM sources").fetchone()[0]
        active = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[
            0
        ]
        started = time.perf_counter()
        rows = run(vault, qset)["rows"]
        asked = time.perf_counter() - started
        vault.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {
        "set": args.set.name,
        "sources": sources,
        "active_claims": active,
        "ingest_seconds": round(seconds, 1),
        "ask_seconds_per_question": round(asked / max(1, len(rows)), 2),
        "all": score(rows),
    }
    if args.split:
        result["tune"] = score([r for r in rows if r["n"] % 2 == 0])
        result["held_out"] = score([r for r in rows if r["n"] % 2 == 1])
    if args.verbose:
        result["per_question"] = rows
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            if key != "per_question":
                print(f"{key:>26}: {value}")
        for row in result.get("per_question", []):
            mark = "ok " if row["right"] else "NO "
            extra = f" claim={row.get('in_a_claim')} given={row.get('given')}"
            print(f"{mark}{row['kind'][:3]} {row['question']}{extra if not row['right'] else ''}")
            print(f"      {row['words']}w {row['answer'][:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
