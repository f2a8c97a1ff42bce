"""Lint's false alarms on real documents: the 40 Python-docs pages, ingested and linted.

The 40 documents of ``bench/pydocs_corpus.py`` are ingested with the extractive engine (trusted,
every plan applied, as a new user with no API key would), then ``run_lint`` runs once. Reported:
the number of ``contradiction`` and ``stale`` findings (the two kinds that say two claims disagree
on a fact), and a reproducible sample of them (``--sample``, seeded) written as JSON lines to
``--out`` with both claims' texts, the subject the finder matched them on and the fact it saw
differ, for a person to judge. The judgement is kept beside it (``bench/lint_pydocs_judged.md``:
one line per sampled finding, ``true`` / ``false`` and why), so the false-finding rate can be
checked by anyone.

``--keep DIR`` keeps the ingested vault; ``--vault DIR`` lints a copy of a kept vault instead of
ingesting again (lint changes don't change what ingest wrote).

    .venv/bin/python bench/bench_lint_pydocs.py [--sample 50] [--out FILE] [--keep DIR | --vault DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydocs_corpus import build_corpus

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault

KINDS = ("contradiction", "stale")


def _claims(vault: Any, ids: list[str]) -> list[dict[str, str]]:
    out = []
    for cid in ids:
        row = vault.db.execute(
            "SELECT c.text, c.page_slug, s.origin FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "JOIN sources s ON s.id = e.source_id WHERE c.id = ? ORDER BY e.idx LIMIT 1",
            (cid,),
        ).fetchone()
        out.append(
            {"id": cid, "text": row[0], "page": row[1], "source": Path(row[2]).name}
            if row
            else {"id": cid, "text": "", "page": "", "source": ""}
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None, help="write the sample here (JSONL)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the ingested vault here")
    parser.add_argument("--vault", type=Path, default=None, help="lint a copy of this vault")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-lint-pydocs-"))
    result: dict[str, Any] = {}
    try:
        root = work / "vault"
        if args.vault is not None:
            shutil.copytree(args.vault, root)
            vault = open_vault(root)
            result["ingest_seconds"] = None
        else:
            files = build_corpus(work / "docs")
            vault, _ = init_vault(root)
            started = time.perf_counter()
            Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
                [str(f) for f in files], trust="trusted"
            )
            result["ingest_seconds"] = round(time.perf_counter() - started, 1)
            result["documents"] = len(files)
        result["active_claims"] = vault.db.execute(
            "SELECT count(*) FROM claims WHERE status = 'active'"
        ).fetchone()[0]
        started = time.perf_counter()
        report = run_lint(vault)
        result["lint_seconds"] = round(time.perf_counter() - started, 2)
        result["counts"] = report.counts()
        chosen = [f for f in report.findings if f.finding.kind in KINDS]
        result["disagreement_findings"] = len(chosen)
        rng = random.Random(args.seed)
        sample = sorted(rng.sample(chosen, min(args.sample, len(chosen))), key=lambda s: s.id)
        result["sampled"] = len(sample)
        if args.out is not None:
            with args.out.open("w", encoding="utf-8") as handle:
                for stored in sample:
                    f = stored.finding
                    row = {
                        "id": stored.id,
                        "kind": f.kind,
                        "message": f.message,
                        "why": f.why,
                        "claims": _claims(vault, f.claims),
                    }
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        vault.close()
        if args.keep is not None and args.vault is None:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(root, args.keep)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
