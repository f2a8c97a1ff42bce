"""Issue 24 item 5 (branch ``overview``): topic pages that are things, and context.md's overview.

Builds a vault from a corpus with the embedded extractive engine, as a user would (``ingest
--trust trusted --yes``), or reads one already built (``bench/bench_realdocs.py --keep DIR``),
then counts its topic pages against a list of titles judged by hand *before* measuring
(``bench/overview_judged.json``: for each corpus, the titles that are no thing — UI words,
header fields, table headers, example data, cut phrases, generic nouns; ``new_on_branch``
holds the titles first seen on this branch's vault, judged after), and prints the head
and first entries of ``wiki/context.md``. Titles not in the judged list are printed too, so a
person can judge what a change brings in.

    PYTHONPATH=src .venv/bin/python bench/bench_overview.py build sotu /tmp/sotu-vault
    PYTHONPATH=src .venv/bin/python bench/bench_overview.py judge sotu /tmp/sotu-vault

Corpora: ``sample`` (the quick start's three speeches), ``sotu`` (twelve State of the Union
addresses, :data:`SOTU_YEARS`, from ``../shared/data/corpus/sotu.jsonl``), ``sqlite`` and
``git`` (vaults built by ``bench/bench_realdocs.py --keep``), ``valgrind`` (a vault built by
``bench/bench_realdocs_qa.py --set bench/realdocs_valgrind.json --vault DIR``; judged by docs24).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
JUDGED = Path(__file__).with_name("overview_judged.json")
SOTU_YEARS = (1790, 1801, 1823, 1850, 1863, 1885, 1901, 1910, 1934, 1941, 1962, 2001)


def corpus_folder(name: str, into: Path) -> Path:
    if name == "sample":
        return ROOT / "src" / "affidavit" / "samples" / "sotu"
    folder = into / "sotu"
    folder.mkdir(parents=True, exist_ok=True)
    with (SHARED_DATA / "corpus" / "sotu.jsonl").open() as lines:
        for line in lines:
            row = json.loads(line)
            if row["year"] in SOTU_YEARS:
                (folder / f"{row['year']} {row['name']}.txt").write_text(row["text"])
    return folder


def build(name: str, target: Path) -> dict[str, Any]:
    vault, _ = init_vault(target)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = corpus_folder(name, Path(tmp))
            report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
                [str(folder)], "trusted"
            )
        return dict(report.totals())
    finally:
        vault.close()


def judge(name: str, target: Path) -> dict[str, Any]:
    judged = json.loads(JUDGED.read_text())[name]
    later = judged.get("new_on_branch", {})  # titles first seen on this branch's vault
    noise = set(judged["noise"]) | set(later.get("noise", []))
    things = set(judged.get("things", [])) | set(later.get("things", []))
    vault = open_vault(target)
    try:
        titles = sorted(
            str(r[0]) for r in vault.db.execute("SELECT title FROM pages WHERE category = 'topics'")
        )
    finally:
        vault.close()
    context = (target / "wiki" / "context.md").read_text().splitlines()
    shown = [line for line in context if line and not line.startswith(("[^", "# "))]
    return {
        "topic_pages": len(titles),
        "noise": [t for t in titles if t in noise],
        "things": len([t for t in titles if t in things]),
        "unjudged": [t for t in titles if t not in noise and t not in things],
        "context": shown[:8],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("action", choices=["build", "judge"])
    parser.add_argument("corpus", choices=["sample", "sotu", "sqlite", "git", "valgrind"])
    parser.add_argument("vault", type=Path)
    args = parser.parse_args()
    if args.action == "build":
        if args.corpus in ("sqlite", "git", "valgrind"):
            parser.error("build sqlite/git vaults with bench/bench_realdocs.py --keep DIR")
        out = build(args.corpus, args.vault)
    else:
        out = judge(args.corpus, args.vault)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
