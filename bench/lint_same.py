"""Same findings and plans from an ingest's after-passes before and after a change: record, compare.

Ingests into a fresh vault on a fixed clock, every plan applied: the first ``--speeches`` State of
the Union addresses in ``--steps`` ingests of consecutive speeches (1, the bench's shape: one
ingest whose supersession pass and automatic lint share one pair search; more: each ingest's
supersession pass searches its new claims, and ``lint.every_ingests`` (``--every``) decides which
ingests lint), then any ``--docs DIR`` folder, then with ``--vitaminc N`` the first revisions of N
VitaminC claims and, a second later, their revisions of another verdict (changed facts: stale and
contradiction findings, supersede proposals); ``--manual`` ends with ``lint --propose``.

Writes to ``--save FILE`` one line per recorded thing: each ingest's report of supersessions and
lint, the wiki's digest, every finding (every column, in the order they were recorded), every
lint run, the counters, every plan that is not a chunk's (the fix and supersede proposals) and a
hash of every chunk's plan (``--full``: the plan), with the host's nonces blanked and plan ids
(which hash them) numbered by their order. ``--compare FILE`` fails on the first line that
differs. Prints the CPU time of the passes after the chunks (``Ingestor._auto_lint``, and the
manual lint) and how the support check's verdict cache served them.

    .venv/bin/python bench/lint_same.py --save before.txt [--speeches 40] [--steps 3] [--manual]
        [--vitaminc 300] [--every 10] [--docs DIR] [--full]
    .venv/bin/python bench/lint_same.py --compare before.txt [same options]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_ingest import write_speeches
from same import save_or_compare

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.support.rules import _check
from affidavit.vault import Vault, init_vault, open_vault

FIXED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
_NONCE = re.compile(r'("nonce": ?)"[^"]*"')
_HEX = re.compile(r"[0-9a-f]{12,}")
"""A plan id, or the 12 characters of one a message shows."""


class Timed(Ingestor):
    """The ingest, with the CPU time of its passes after the chunks and the support check's
    verdict cache hits and misses during them."""

    cpu = 0.0
    hits = misses = 0

    def _auto_lint(self) -> None:
        with passes():
            super()._auto_lint()


@contextmanager
def passes() -> Iterator[None]:
    before, started = _check.cache_info(), time.process_time()
    yield
    after = _check.cache_info()
    Timed.cpu += time.process_time() - started
    Timed.hits += after.hits - before.hits
    Timed.misses += after.misses - before.misses


def _digest(vault: Vault) -> str:
    digest = hashlib.sha256()
    for path in sorted(vault.wiki_dir.glob("*.md")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class Dump:
    """Rows as lines, plan ids numbered in the order the plans were recorded (a plan's id hashes
    its random nonce)."""

    def __init__(self, vault: Vault, full: bool = False) -> None:
        self.vault = vault
        self.full = full
        self.ids: dict[str, str] = {}
        self.count = 0

    def number(self, text: str) -> str:
        count = self.vault.db.execute("SELECT count(*) FROM plans").fetchone()[0]
        if count != self.count:
            rows = self.vault.db.execute("SELECT id FROM plans ORDER BY rowid")
            self.ids = {str(row[0]): f"plan#{n}" for n, row in enumerate(rows)}
            self.ids |= {plan_id[:12]: name for plan_id, name in self.ids.items()}
            self.count = count
        text = _HEX.sub(lambda m: self.ids.get(m.group(), m.group()), text)
        return _NONCE.sub(r'\1""', text)

    def rows(self, table: str, order: str = "rowid") -> list[str]:
        cursor = self.vault.db.execute(f"SELECT * FROM {table} ORDER BY {order}")
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        return [
            f"{table} "
            + json.dumps(
                {
                    name: self.number(value) if isinstance(value, str) else value
                    for name, value in zip(names, row, strict=True)
                }
            )
            for row in rows
        ]

    def report(self, n: int, report: Any) -> str:
        body = {"supersessions": report.supersessions, "lint": report.lint}
        return self.number(f"ingest {n} " + json.dumps(body, sort_keys=True))

    def plans(self) -> list[str]:
        out = []
        for row in self.rows("plans"):
            if '"origin": "ingest:' in row:
                out.append("chunk plan " + hashlib.sha256(row.encode()).hexdigest()[:16])
                if self.full:
                    out.append(row)
            else:
                out.append(row)
        return out


def vitaminc(work: Path, pairs: int) -> list[Path]:
    """Two folders: the first revision of ``pairs`` VitaminC claims whose revisions differ in
    verdict, and the differing revision (ingested later: stale and contradiction findings)."""
    from bench_contradictions import load

    differ, _ = load(pairs)
    folders = [work / "vitaminc-old", work / "vitaminc-new"]
    for folder in folders:
        folder.mkdir()
    for pid, older, newer in differ:
        (folders[0] / f"{pid}.txt").write_text(older + "\n", encoding="utf-8")
        (folders[1] / f"{pid}.txt").write_text(newer + "\n", encoding="utf-8")
    return folders


def run(folders: list[Path], later: list[Path], work: Path, args: argparse.Namespace) -> list[str]:
    """Ingest ``folders`` on the fixed clock, then each of ``later`` a second after the last."""
    every, manual = args.every, args.manual
    now = [FIXED]
    vault, _ = init_vault(work, clock=lambda: now[0])
    if every != 10:
        config = vault.config_path.read_text(encoding="utf-8")
        vault.config_path.write_text(
            config.replace("every_ingests = 10", f"every_ingests = {every}"), encoding="utf-8"
        )
        vault.close()
        vault = open_vault(work, clock=lambda: now[0])
    provider = provider_from_config(vault.config, "extractive")
    dump = Dump(vault, args.full)
    lines = []
    for n, folder in enumerate([*folders, *later]):
        if n >= len(folders):
            now[0] += timedelta(seconds=1)
        report = Timed(vault, provider, apply_now=True).run([str(folder)], "trusted")
        lines.append(dump.report(n, report))
    if manual:
        from affidavit.lint.runner import run_lint

        with passes():
            report = run_lint(vault, propose=True, actor="lint-same")
        lines.append(dump.number("manual " + json.dumps(report.to_json(), sort_keys=True)))
    lines.append(f"wiki {_digest(vault)}")
    lines += dump.rows("findings")
    lines += dump.rows("lint_runs")
    lines += dump.rows("counters", "name")
    lines += dump.plans()
    vault.close()
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--save", type=Path)
    side.add_argument("--compare", type=Path)
    parser.add_argument("--speeches", type=int, default=40)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--docs", type=Path, action="append", default=[])
    parser.add_argument("--manual", action="store_true", help="end with `lint --propose`")
    parser.add_argument(
        "--vitaminc", type=int, default=0, help="then N VitaminC revision pairs, older first"
    )
    parser.add_argument("--every", type=int, default=10, help="lint.every_ingests")
    parser.add_argument("--full", action="store_true", help="chunk plans in full, not hashed")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lint-same-"))
    speeches = work / "speeches"
    write_speeches(speeches, args.speeches)
    files = sorted(speeches.iterdir())
    folders = []
    for step in range(args.steps if files else 0):
        part = files[step * len(files) // args.steps : (step + 1) * len(files) // args.steps]
        folder = work / f"step-{step}"
        folder.mkdir()
        for path in part:
            shutil.copy(path, folder / path.name)
        folders.append(folder)
    later = vitaminc(work, args.vitaminc) if args.vitaminc else []
    lines = run([*folders, *args.docs], later, work / "vault", args)
    wiki = next(line for line in lines if line.startswith("wiki "))
    print(
        f"{len(lines)} lines, {wiki}, after the chunks {Timed.cpu:.2f} s CPU, support verdicts "
        f"{Timed.hits} from the cache, {Timed.misses} checked"
    )
    shutil.rmtree(work, ignore_errors=True)
    return save_or_compare(
        lines, args.save, args.compare, lambda n: f"line {n}", "every line identical"
    )


if __name__ == "__main__":
    raise SystemExit(main())
