"""Latency of the door: approving one recorded 20-operation plan (re-admission, database, render,
fsync, git).

A few State of the Union speeches are ingested with the extractive engine (applied) to make a
wiki, and a few more only stored (``--spare``: the engine claims nearly every sentence of what
it ingests, so the plans cite these); then, ``--plans`` times, a plan of 20 ``add_claims``
operations (one verbatim sentence of the spare speeches each, over five existing pages) is
proposed into the inbox (``auto_apply = "never"``) and approved (`affidavit approve`, timed).
Floor, measured right after each apply in the same run: writing the files that apply changed
(same bytes, temp file + fsync + rename each) and one git commit of them.

    .venv/bin/python bench/bench_apply.py [--speeches 6] [--spare 4] [--plans 30] [--json]

``--vault DIR``: a copy of a vault built by ``bench/bench_ingest.py --speeches N --vault DIR``
is used instead of ingesting (give the same ``--speeches N``; the spare speeches are the next
ones of the corpus, so ``--spare 1`` at 232).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from affidavit.inbox import approve, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.plan.nonce import issue_nonce
from affidavit.providers.from_config import provider_from_config
from affidavit.sources.sentences import number_sentences
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault, open_vault


def _corpus() -> Path:
    shared = os.environ.get("AFFIDAVIT_SHARED_DATA")
    if shared:
        return Path(shared) / "corpus" / "sotu.jsonl"
    here = Path(__file__).resolve().parent
    for up in here.parents:
        candidate = up / "shared" / "data" / "corpus" / "sotu.jsonl"
        if candidate.exists():
            return candidate
    return here.parent.parent / "shared" / "data" / "corpus" / "sotu.jsonl"


def floor(vault: Vault, changed: list[str]) -> float:
    """Rewrite ``changed`` (vault-relative) with fsync and rename, then commit them once."""
    started = time.perf_counter()
    for relpath in changed:
        path = vault.root / relpath
        data = path.read_bytes()
        temp = path.with_name(f".{path.name}.floor")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    fd = os.open(vault.wiki_dir, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    vault.git.commit("floor", changed)
    return time.perf_counter() - started


def changed_files(vault: Vault) -> list[str]:
    out = vault.git.run("show", "--name-only", "--format=", "HEAD")
    return [line for line in out.splitlines() if line]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sentences(vault: Vault) -> list[tuple[str, str]]:
    """(source id, sentence) pairs a claim can quote whole, not yet claims."""
    store = SourceStore(vault)
    taken = {r[0] for r in vault.db.execute("SELECT text FROM claims")}
    out = []
    for (source_id,) in vault.db.execute("SELECT id FROM sources ORDER BY id").fetchall():
        text = store.text(source_id)
        for sentence in number_sentences(text):
            span = text[sentence.start : sentence.end].strip()
            whole = 60 <= len(span) <= 250 and "\n" not in span and span.isascii()
            if whole and span[0].isupper() and span not in taken:
                out.append((source_id, span))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--speeches", type=int, default=6)
    parser.add_argument("--spare", type=int, default=4, help="speeches stored, not ingested")
    parser.add_argument("--plans", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--vault", type=Path, help="copy this built vault instead of ingesting")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-apply-"))
    if args.vault is not None:
        shutil.copytree(args.vault, work / "vault", symlinks=True)
        vault = open_vault(work / "vault")
    else:
        vault, _ = init_vault(work / "vault")
    provider = provider_from_config(vault.config, "extractive")
    docs = work / "speeches"
    docs.mkdir()
    spare = work / "spare"
    spare.mkdir()
    with _corpus().open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n >= args.speeches + args.spare:
                break
            row = json.loads(line)
            doc = (docs if n < args.speeches else spare) / f"{row['year']}-{n:03d}.md"
            doc.write_text(f"# State of the Union, {row['year']}\n\n{row['text'].strip()}\n")
    if args.vault is None:
        Ingestor(vault, provider, apply_now=True).run([str(docs)], "trusted")
    # Stored, not ingested: their sentences are not claims yet (the engine takes nearly every
    # sentence of an ingested speech), so the plans have something new to cite.
    store = SourceStore(vault)
    for path in sorted(spare.iterdir()):
        store.add_file(path, "trusted")
    pages = [r[0] for r in vault.db.execute("SELECT slug FROM pages ORDER BY slug LIMIT 5")]
    pool = sentences(vault)
    timings: list[tuple[float, float, float]] = []  # (apply s, floor s, apply CPU s)
    for n in range(args.plans):
        picked = pool[n * 20 : n * 20 + 20]
        if len(picked) < 20:
            break
        ops = [
            {
                "op": "add_claims",
                "page": pages[i % len(pages)],
                "claims": [{"text": text, "evidence": [{"source": source, "quote": text}]}],
            }
            for i, (source, text) in enumerate(picked)
        ]
        plan = {"nonce": issue_nonce(vault.db, vault.clock, "bench"), "operations": ops}
        proposal = propose(vault, plan, "bench", "bench")
        if proposal.status != "pending" or len(proposal.admission.admitted_ops) != 20:
            continue
        started, cpu = time.perf_counter(), time.process_time()
        result = approve(vault, proposal.plan_id, None, "bench")
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        if result.applied:
            timings.append((seconds, floor(vault, changed_files(vault)), cpu))
    vault.close()
    applies = [t[0] for t in timings]
    floors = [t[1] for t in timings]
    result = {
        "speeches": args.speeches,
        "plans_of_20_ops_applied": len(timings),
        "p50_ms": round(statistics.median(applies) * 1000, 1),
        "p95_ms": round(pct(applies, 0.95) * 1000, 1),
        "cpu_p50_ms": round(statistics.median(t[2] for t in timings) * 1000, 1),
        "floor_p50_ms": round(statistics.median(floors) * 1000, 1),
        "x_floor": round(statistics.median(applies) / statistics.median(floors), 1),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
