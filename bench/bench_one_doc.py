"""One document into a big vault against one into an empty vault (issue 25, item 1), for this
tree's code and another tree's (``--base``, e.g. a checkout of main), interleaved, in one run.

Each measurement is a fresh process that opens a copy of the vault (made before it starts) and
ingests one State of the Union speech (``--speech``, 0-based; the default is the last of the
corpus, the one a 232-speech vault lacks) with the extractive engine, ``--yes``; it reports the
CPU seconds of the ingest itself (this process and its read-ahead worker; imports and opening
the vault excluded), the wiki's digest after it (every wiki file's path and bytes, the vault's
clock fixed) and the supersession findings and plans it raised, so both trees' results compare.
``lint_due``: the same with the automatic lint due at this ingest (``lint.every_ingests``).

Before the timer the child migrates the copy and, where the tree has it, brings the claim-word
index up to date (what this tree's ingests leave behind; on a vault built by another tree's code
the first search reads every claim once), and re-bases the lint checkpoint's file stats on the
copy (a copy has new inodes and ctimes; its bytes are what the last lint saw) and on the
schema the tree's migrations left (a vault linted again after an upgrade; the first lint after
a migration is a full one). Run
``affidavit lint`` once on the big vault first so that it has a checkpoint, as a vault that has
been linted has; without one the lint-due ingest makes a full run.

    AFFIDAVIT_SHARED_DATA=/work/shared/data .venv/bin/python bench/bench_one_doc.py \\
        --big /tmp/sotu232 --base /path/to/main [--rounds 3] [--rows plain,lint_due] [--json]

Build the big vault once: ``bench/bench_ingest.py --speeches 232 --vault /tmp/sotu232``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r"""
import hashlib, json, os, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from bench_ingest import FIXED
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import init_vault, open_vault
vault_dir, doc, due = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if (vault_dir / "affidavit.toml").exists():
    vault = open_vault(vault_dir, clock=lambda: FIXED)
else:
    vault, _ = init_vault(vault_dir, clock=lambda: FIXED)
try:
    from affidavit.lint.nearby import index_claims
    index_claims(vault.db)
except ImportError:
    pass
try:  # the copy's files have new inodes and ctimes: its last lint saw these same bytes; a
    # migration of this tree's (run above, by open_vault) changed the schema, not the rows
    from affidavit.lint.since import load, save, take
    point = load(vault)
    if point is not None:
        now = take(vault)
        point.files, point.schema = now.files, now.schema
        save(vault, point)
except ImportError:
    pass
every = int(vault.config.get("lint.every_ingests"))
with vault.db:
    vault.db.execute("DELETE FROM counters WHERE name = 'ingests_since_lint'")
    if due:
        vault.db.execute(
            "INSERT INTO counters (name, value) VALUES ('ingests_since_lint', ?)", (every - 1,)
        )
provider = provider_from_config(vault.config, "extractive")
before, cpu = os.times(), time.process_time()
report = Ingestor(vault, provider, apply_now=True).run([doc], "trusted")
cpu, after = time.process_time() - cpu, os.times()
worker = (after.children_user + after.children_system) - (
    before.children_user + before.children_system
)
digest = hashlib.sha256()
for path in sorted(vault.wiki_dir.glob("*.md")):
    digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
found = vault.db.execute(
    "SELECT id, kind, status FROM findings ORDER BY id"
).fetchall()
print(json.dumps({
    "cpu": cpu + worker,
    "claims": report.totals()["claims"],
    "wiki": digest.hexdigest()[:16],
    "supersessions": report.supersessions,
    "lint": report.lint and {k: report.lint[k] for k in ("open", "counts")},
    "findings": [list(r) for r in found],
}))
"""


def speech(index: int, folder: Path) -> Path:
    from bench_ingest import CORPUS

    with CORPUS.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n == index or (index < 0 and n == 232 + index + 1):
                row = json.loads(line)
                break
    text = f"# State of the Union, {row['year']}: {row['name']}\n\n{row['text'].strip()}\n"
    path = folder / f"{row['year']}-{n:03d}.md"
    path.write_text(text, encoding="utf-8")
    return path


def once(tree: Path, vault: Path | None, doc: Path, due: bool, work: Path) -> dict[str, Any]:
    target = work / "vault"
    if target.exists():
        shutil.rmtree(target)
    if vault is not None:
        shutil.copytree(vault, target)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(target), str(doc), "1" if due else "0", str(HERE)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree / "src")},
    )
    shutil.rmtree(target)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--big", type=Path, required=True)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--speech", type=int, default=232)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", default="plain,lint_due")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    work = Path(tempfile.mkdtemp(prefix="bench-one-doc-"))
    doc = speech(args.speech, work)
    trees = {"base": args.base.resolve(), "this": ROOT}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _ in range(args.rounds):
        for row in args.rows.split(","):
            for name, tree in trees.items():
                for size, vault in (("empty", None), ("big", args.big)):
                    got = once(tree, vault, doc, row == "lint_due", work)
                    cpu.setdefault((row, name, size), []).append(got["cpu"])
                    results[(row, name, size)] = got
    shutil.rmtree(work, ignore_errors=True)
    table = []
    for row in args.rows.split(","):
        for name in trees:
            empty = statistics.median(cpu[(row, name, "empty")])
            big = statistics.median(cpu[(row, name, "big")])
            table.append(
                {
                    "row": row,
                    "tree": name,
                    "empty_cpu": round(empty, 2),
                    "big_cpu": round(big, 2),
                    "ratio": round(big / empty, 2),
                    "all_empty": [round(x, 2) for x in cpu[(row, name, "empty")]],
                    "all_big": [round(x, 2) for x in cpu[(row, name, "big")]],
                    "wiki_big": results[(row, name, "big")]["wiki"],
                }
            )
        same = all(
            results[(row, "base", size)] | {"cpu": 0} == results[(row, "this", size)] | {"cpu": 0}
            for size in ("empty", "big")
        )
        table.append({"row": row, "same_results_both_trees": same})
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        for line in table:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
