"""Lint time on wikis of 1k, 10k and 100k claims: each deterministic check, the checks together, and
the whole ``run_lint`` (checks + the extractive finders + recording the findings).

A wiki is written straight into a vault's tables (as bench_scale.py does; this measures lint, not
ingest), but with everything lint re-derives made real: sources of 100 synthetic sentences each
stored as files named by their hash, every claim quoting one sentence verbatim at its recorded
offsets, 20 claims per page, every page linked from the previous one (no orphans), context.md
entries, audit entries for log.md, every wiki file rendered to disk, and one vector per claim in
the installed embedder's lineage (zero vectors; only their lineage is checked). Then one byte of
one source is flipped and one page is edited by hand, so the run has something to report.

Each measurement runs in a fresh child process, so peak RSS is lint's own (interpreter and imports
included, building excluded).

    .venv/bin/python bench/bench_lint.py [--sizes 1000,10000,100000] [--no-runner] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_scale import sentence

from affidavit.hashing import sha256_hex
from affidavit.lint.findings import CHECK_KINDS
from affidavit.retrieval.vectors import text_sha256
from affidavit.sources.extract import extract, locator
from affidavit.sources.store import write_readonly
from affidavit.store import audit
from affidavit.store.apply import render_all_files
from affidavit.vault import init_vault, open_vault

CLAIMS_PER_SOURCE = 100
CLAIMS_PER_PAGE = 20
CONTEXT_ENTRIES = 10
NOW = "2026-11-30T09:00:00Z"


def _source(n: int, rng: random.Random) -> tuple[bytes, list[str]]:
    lines = [sentence(rng, n * CLAIMS_PER_SOURCE + k) for k in range(CLAIMS_PER_SOURCE)]
    text = "".join(s + ("\n" if k % 5 == 4 else " ") for k, s in enumerate(lines))
    return text.encode(), lines


def build(size: int, root: Path, vectors: bool) -> dict[str, Any]:
    """Write a wiki of ``size`` claims into a new vault at ``root``; returns build facts."""
    started = time.perf_counter()
    rng = random.Random(size)
    vault, _ = init_vault(root)
    db = vault.db
    pages = max(2, size // CLAIMS_PER_PAGE)
    lineage = None
    blob = b""
    if vectors:
        from affidavit.retrieval.embeddings import DIM, load_embedder

        embedder = load_embedder()
        lineage = (embedder.name, embedder.version) if embedder else ("minilm", "bench")
        blob = bytes(4 * DIM)
    db.execute("BEGIN")
    for p in range(pages):
        db.execute(
            "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, plan_id) "
            "VALUES (?, ?, ?, ?, ?, ?, 'bench')",
            (f"page-{p:06d}", f"Page {p}", f"Synthetic page {p}.", f"cat-{p % 7}", NOW, NOW),
        )
        for dst in {(p + 1) % pages, rng.randrange(pages)} - {p}:
            db.execute(
                "INSERT INTO links (src, dst, plan_id) VALUES (?, ?, 'bench')",
                (f"page-{p:06d}", f"page-{dst:06d}"),
            )
    claim_no = 0
    total = size + CONTEXT_ENTRIES
    for s in range((total + CLAIMS_PER_SOURCE - 1) // CLAIMS_PER_SOURCE):
        data, lines = _source(s, rng)
        extracted = extract(data, "text/plain")
        text = extracted.text
        source_id = sha256_hex(data)
        original, text_file = f"sources/{source_id}.txt", f"sources/{source_id}.extracted.txt"
        write_readonly(root / original, data)
        write_readonly(root / text_file, text.encode())
        db.execute(
            "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
            "text_sha256, size_bytes, text_chars, trust, status, added_at, text_map) "
            "VALUES (?, ?, ?, 'text/plain', ?, ?, ?, ?, ?, 'trusted', 'active', ?, ?)",
            (
                source_id,
                f"/bench/{s}.txt",
                f"{s}.txt",
                original,
                text_file,
                sha256_hex(text.encode()),
                len(data),
                len(text),
                NOW,
                json.dumps(extracted.text_map),
            ),
        )
        where = locator(text, extracted.text_map)
        claims, evidence, vecs = [], [], []
        for line in lines:
            if claim_no >= total:
                break
            cid = f"c-{claim_no:016x}"
            context = claim_no >= size
            page = "" if context else f"page-{claim_no // CLAIMS_PER_PAGE:06d}"
            start = text.index(line)
            claims.append((cid, page, claim_no, line))
            evidence.append((cid, source_id, line, start, start + len(line), where(start)))
            if lineage is not None:
                vecs.append((cid, *lineage, text_sha256(line), blob))
            claim_no += 1
        db.executemany(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
            "created_at) VALUES (?, ?, 'Overview', ?, ?, 'active', 'trusted', 'bench', '"
            + NOW
            + "')",
            claims,
        )
        db.executemany(
            'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
            "VALUES (?, 0, ?, ?, ?, ?, ?)",
            evidence,
        )
        db.executemany(
            "INSERT INTO vectors (claim_id, model, model_version, text_sha256, dim, vector, "
            f"created_at) VALUES (?, ?, ?, ?, {len(blob) // 4 if vectors else 0}, ?, '{NOW}')",
            vecs,
        )
    for first in range(0, pages, 100):
        ops = [
            {"index": i, "kind": "create_page", "title": f"Page {p}"}
            for i, p in enumerate(range(first, min(pages, first + 100)))
        ]
        audit.append(db, NOW, "applied", f"bench-{first}", "bench", {"ops": ops})
    db.execute("COMMIT")
    render_all_files(vault)
    vault.close()
    tamper(root)
    return {
        "build_seconds": round(time.perf_counter() - started, 1),
        "pages": pages,
        "sources": (total + CLAIMS_PER_SOURCE - 1) // CLAIMS_PER_SOURCE,
        "db_mb": round(sum(p.stat().st_size for p in root.glob(".affidavit/db.sqlite*")) / 1e6),
    }


def tamper(root: Path) -> None:
    """Flip one byte of one source's text (one quote stops verifying) and hand-edit one page."""
    text = sorted(root.glob("sources/*.extracted.txt"))[0]
    os.chmod(text, 0o644)
    data = bytearray(text.read_bytes())
    data[data.index(b" ", 40) + 1] ^= 0x01
    text.write_bytes(bytes(data))
    page = root / "wiki" / "page-000000.md"
    page.write_text(page.read_text().replace("Synthetic page 0.", "Hand-edited page 0."))


def measure(root: Path, what: str) -> dict[str, Any]:
    """In this (fresh) process: time lint over the vault at ``root``."""
    vault = open_vault(root)
    marks: list[tuple[str, int, int, float]] = []

    def progress(step: str, done: int, total: int) -> None:
        marks.append((step, done, total, time.perf_counter()))

    started = time.perf_counter()
    if what == "checks":
        from affidavit.lint.checks import run_checks

        found = len(run_checks(vault, progress=progress))
    else:
        from affidavit.lint.runner import run_lint

        report = run_lint(vault, progress=progress)
        found = len(report.findings)
    ended = time.perf_counter()
    seconds = ended - started
    vault.close()
    per_step: dict[str, float] = {}
    ends = [mark[3] for mark in marks[1:]] + [ended]
    for (step, done, total, at), end in zip(marks, ends, strict=True):
        name = "rest" if step not in CHECK_KINDS or done == total else step
        per_step[name] = per_step.get(name, 0.0) + end - at
    return {
        "load_average": round(os.getloadavg()[0], 1),
        "seconds": round(seconds, 2),
        "findings": found,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "per_check": {k: round(v, 2) for k, v in per_step.items()},
    }


def child(root: Path, what: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(root), "--what", what],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--no-runner", action="store_true", help="time the checks only")
    parser.add_argument("--no-vectors", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--what", default="checks", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.what)))
        return 0
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        work = Path(tempfile.mkdtemp(prefix=f"bench-lint-{size}-"))
        try:
            row: dict[str, Any] = {
                "claims": size,
                **build(size, work / "vault", not args.no_vectors),
            }
            row["checks"] = child(work / "vault", "checks")
            if not args.no_runner:
                row["run_lint"] = child(work / "vault", "lint")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        results.append(row)
        print(json.dumps(row), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0

    def row(label: str, cells: list[str]) -> None:
        print(f"| {label} | " + " | ".join(cells) + " |")

    row("check", [f"{r['claims']:,} claims" for r in results])
    print("|---|" + "---:|" * len(results))
    labels = {
        "broken_link": "broken_link (renders and reads every wiki file: shared by the drift checks)",
        "evidence_unverified": "evidence_unverified (re-finds every quote)",
    }
    for kind in CHECK_KINDS:
        row(
            labels.get(kind, kind),
            [f"{r['checks']['per_check'].get(kind, 0):.2f}" for r in results],
        )
    row("**all checks**", [f"**{r['checks']['seconds']:.2f}**" for r in results])
    row("peak RSS, checks (MB)", [str(r["checks"]["peak_rss_mb"]) for r in results])
    if not args.no_runner:
        row(
            "**run_lint** (checks, extractive finders, recording)",
            [f"**{r['run_lint']['seconds']:.2f}**" for r in results],
        )
        row(
            "of which after the checks",
            [f"{r['run_lint']['per_check'].get('rest', 0):.2f}" for r in results],
        )
        row("peak RSS, run_lint (MB)", [str(r["run_lint"]["peak_rss_mb"]) for r in results])
    row(
        "findings (checks / open after run_lint)",
        [
            f"{r['checks']['findings']} / {r.get('run_lint', {}).get('findings', '-')}"
            for r in results
        ],
    )
    row(
        "load average (1 min) during the checks",
        [str(r["checks"]["load_average"]) for r in results],
    )
    row(
        "pages, sources, database MB, build s",
        [f"{r['pages']:,}, {r['sources']:,}, {r['db_mb']}, {r['build_seconds']}" for r in results],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
