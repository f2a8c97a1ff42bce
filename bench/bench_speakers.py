"""What did the president say about …? Questions that name a speech's speaker (issue 24 item 4).

One State of the Union address per president (``../shared/data/corpus/sotu.jsonl``, the first of
each, ``--presidents`` of them from ``--from-year``), each written as a markdown file headed "State
of the Union, YEAR: NAME" (as the bundled sample is), ingested with the extractive engine. For
every president and every topic of a fixed list (chosen before any answer was seen) the question
is "What did LASTNAME say about TOPIC?":

- when the president's speech holds the topic's word, the answer is **right** when it is given,
  every claim it cites is on that president's page, and its text holds the word;
- when it doesn't, but another speech in the vault does, the right answer is "Not in the wiki".

Reported: right answers in each group, answers citing another president's page, abstentions.
Tuned on nothing (the rule was written from the bundled three-speech sample's questions).

    PYTHONPATH=src .venv/bin/python bench/bench_speakers.py [--presidents 20] [--vault DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault

CORPUS = next(
    (
        p / "shared" / "data" / "corpus" / "sotu.jsonl"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "data" / "corpus" / "sotu.jsonl").is_file()
    ),
    Path("../shared/data/corpus/sotu.jsonl"),
)
TOPICS = {  # topic as asked → the word a speech must hold
    "France": "France",
    "Spain": "Spain",
    "Mexico": "Mexico",
    "Great Britain": "Britain",
    "the Navy": "navy",
    "the militia": "militia",
    "the tariff": "tariff",
    "slavery": "slavery",
    "education": "education",
    "the public debt": "debt",
    "agriculture": "agriculture",
    "the Indians": "Indians",
    "railroads": "railroad",
    "the Treasury": "Treasury",
    "Cuba": "Cuba",
    "immigration": "immigration",
}


def speeches(first_year: int, count: int) -> list[tuple[str, str, str]]:
    """(file name, last name, markdown) of the first address of ``count`` presidents."""
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: int(r["year"]))
    seen: set[str] = set()
    out = []
    for row in rows:
        name = str(row["name"])
        last = name.split()[-1]
        if int(row["year"]) < first_year or name in seen or last in {n.split()[-1] for n in seen}:
            continue  # one president a surname: "What did Adams say" names one page
        seen.add(name)
        slug = f"{row['year']}-{re.sub(r'[^a-z]+', '-', last.lower()).strip('-')}.md"
        text = f"# State of the Union, {row['year']}: {name}\n\n{row['text'].strip()}\n"
        out.append((slug, last, text))
        if len(out) == count:
            break
    return out


def holds(text: str, word: str) -> bool:
    flags = 0 if word[0].isupper() else re.IGNORECASE
    return re.search(rf"\b{re.escape(word)}", text, flags) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presidents", type=int, default=20)
    parser.add_argument("--from-year", type=int, default=1790)
    parser.add_argument("--vault", type=Path, help="keep the vault here; reuse it if it exists")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    docs = speeches(args.from_year, args.presidents)
    work = Path(tempfile.mkdtemp(prefix="speakers-"))
    root = args.vault or work / "vault"
    started = time.perf_counter()
    if not (root / ".affidavit").exists():
        folder = work / "speeches"
        folder.mkdir()
        for slug, _, text in docs:
            (folder / slug).write_text(text)
        vault, _ = init_vault(root)
        with vault:
            Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    ingest_s = time.perf_counter() - started
    groups: dict[str, dict[str, int]] = {
        "stated": {"asked": 0, "right": 0, "other_page": 0, "abstained": 0},
        "not_stated": {"asked": 0, "right": 0, "other_page": 0},
    }
    misses: list[str] = []
    with open_vault(root) as vault:
        asker = Asker(vault, None)
        for slug, last, text in docs:
            page = slug.removesuffix(".md")
            for topic, word in TOPICS.items():
                stated = holds(text, word)
                if not stated and not any(holds(t, word) for _, _, t in docs):
                    continue
                question = f"What did {last} say about {topic}?"
                answer = asker.ask(question)
                pages = {
                    str(row[0])
                    for s in answer.sentences
                    for c in s.claims
                    for row in vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (c,))
                }
                said = " ".join(s.text for s in answer.sentences)
                group = groups["stated" if stated else "not_stated"]
                group["asked"] += 1
                other = bool(pages - {page})
                group["other_page"] += other
                if stated:
                    group["abstained"] += answer.verdict == "not_in_wiki"
                    ok = answer.verdict != "not_in_wiki" and not other and holds(said, word)
                else:
                    ok = answer.verdict == "not_in_wiki"
                group["right"] += ok
                if not ok:
                    misses.append(f"{question} → {answer.verdict} {sorted(pages)}")
    result: dict[str, Any] = {
        "presidents": len(docs),
        "ingest_seconds": round(ingest_s, 1),
        **groups,
        "misses_sample": misses[:15],
    }
    if args.vault is None:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
