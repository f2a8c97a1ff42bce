"""Build a vault with the extractive engine from real text, to read its pages as a user would.

    .venv/bin/python bench/extractive_preview.py [VAULT_DIR] [--speeches 1790,1910,1941,1962,2021]
        [--articles Andes,Manhattan,Tin] [--chunk 6000] [--speed]

Adds the chosen State of the Union speeches (``../shared/data/corpus/sotu.jsonl``) and SQuAD
articles (``../shared/data/qa/squadshifts_new_wiki_v1.0.json``) as sources, chunks them at
paragraph or sentence boundaries, proposes each chunk's plan and approves it, then prints what
the gate decided and the pages written. ``--speed`` instead runs the engine alone over the whole
SOTU corpus and prints characters per second.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from affidavit.extractive import is_empty_plan, propose_plan
from affidavit.inbox import approve, propose
from affidavit.plan.nonce import issue_nonce
from affidavit.providers.base import IngestTask, PageBrief
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SOTU = DATA / "corpus" / "sotu.jsonl"
SQUAD = DATA / "qa" / "squadshifts_new_wiki_v1.0.json"
_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"[.!?][\"')\]]*\s+"), re.compile(r"\s+"))


def chunks(text: str, size: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` pieces of at most ``size`` chars, cut at natural boundaries."""
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            for pattern in _BREAKS:
                found = [m.end() for m in pattern.finditer(text, start + size * 6 // 10, end)]
                if found:
                    end = found[-1]
                    break
        out.append((start, end))
        start = end
    return out


def speeches(years: list[int]) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in SOTU.read_text(encoding="utf-8").splitlines()]
    by_year = {r["year"]: r for r in rows}
    return [(f"{y} {by_year[y]['name']}.txt", by_year[y]["text"]) for y in years]


def articles(titles: list[str]) -> list[tuple[str, str]]:
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    by_title = {a["title"]: a for a in data}
    out = []
    for title in titles:
        paragraphs = [p["context"].strip() for p in by_title[title]["paragraphs"]]
        out.append((f"{title}.md", "\n\n".join(paragraphs) + "\n"))
    return out


def task_for(
    vault: Vault,
    source_id: str,
    name: str,
    text: str,
    piece: tuple[int, int],
    index: int,
    count: int,
) -> IngestTask:
    """The task the ingest pipeline would build: every page shown, reserved slugs pending."""
    pages = tuple(
        PageBrief(r["slug"], r["title"], r["summary"])
        for r in vault.db.execute("SELECT slug, title, summary FROM pages ORDER BY slug")
    )
    shown = {p.slug for p in pages}
    pending = sorted({r[0] for r in vault.db.execute("SELECT slug FROM slug_reservations")} - shown)
    return IngestTask(
        nonce=issue_nonce(vault.db, vault.clock, "preview"),
        source_id=source_id,
        source_name=name,
        chunk=text[piece[0] : piece[1]],
        chunk_start=piece[0],
        chunk_index=index,
        chunk_count=count,
        pages=pages,
        pending_slugs=tuple(pending),
    )


def ingest(vault: Vault, name: str, text: str, size: int, tally: Counter[str]) -> None:
    store = SourceStore(vault)
    record = store.add_bytes(text.encode(), origin=f"/preview/{name}", name=name).record
    stored = store.text(record.id)
    pieces = chunks(stored, size)
    for index, piece in enumerate(pieces):
        plan = propose_plan(task_for(vault, record.id, name, stored, piece, index, len(pieces)))
        if is_empty_plan(plan):
            tally["empty plans"] += 1
            continue
        tally["operations"] += len(plan["operations"])
        proposal = propose(vault, plan, "model:extractive", f"preview:{name}#{index + 1}")
        for op in proposal.admission.ops:
            tally[f"op {op.status}" + (f" ({op.check})" if op.check else "")] += 1
            for claim in op.claims:
                tally[f"claim {claim.status}" + (f" ({claim.check})" if claim.check else "")] += 1
        if proposal.status == "pending":
            approve(vault, proposal.plan_id, None, "preview")


def speed() -> None:
    rows = [json.loads(line) for line in SOTU.read_text(encoding="utf-8").splitlines()]
    total = 0
    started = time.perf_counter()
    for row in rows:
        text = row["text"]
        pieces = chunks(text, 6000)
        for index, (a, b) in enumerate(pieces):
            task = IngestTask(
                "n" * 16, "0" * 64, f"{row['year']}.txt", text[a:b], a, index, len(pieces)
            )
            propose_plan(task)
        total += len(text)
    elapsed = time.perf_counter() - started
    print(f"{total:,} chars in {elapsed:.1f} s: {total / elapsed:,.0f} chars/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", nargs="?", default="/tmp/affidavit-preview")
    parser.add_argument("--speeches", default="1790,1863,1910,1941,2021")
    parser.add_argument("--articles", default="Armenian_Apostolic_Church,Manhattan,Tin")
    parser.add_argument("--chunk", type=int, default=6000)
    parser.add_argument("--speed", action="store_true")
    args = parser.parse_args()
    if args.speed:
        speed()
        return
    root = Path(args.vault)
    if root.exists():
        shutil.rmtree(root)
    vault, _ = init_vault(root)
    tally: Counter[str] = Counter()
    started = time.perf_counter()
    sources = speeches([int(y) for y in args.speeches.split(",") if y])
    sources += articles([t for t in args.articles.split(",") if t])
    for name, text in sources:
        ingest(vault, name, text, args.chunk, tally)
    elapsed = time.perf_counter() - started
    pages = vault.db.execute("SELECT slug, title, category FROM pages ORDER BY category, slug")
    rows = pages.fetchall()
    for key in sorted(tally):
        print(f"{tally[key]:6d}  {key}")
    print(
        f"{len(rows)} pages from {len(sources)} sources in {elapsed:.1f} s; wiki at {root / 'wiki'}"
    )
    for row in rows:
        claims = vault.db.execute(
            "SELECT count(*) FROM claims WHERE page_slug = ? AND status = 'active'", (row["slug"],)
        ).fetchone()[0]
        print(f"  {row['category']:8} {row['slug']:40} {claims:3d}  {row['title']}")
    vault.close()


if __name__ == "__main__":
    sys.exit(main())
