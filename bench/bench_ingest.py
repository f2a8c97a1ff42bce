"""Ingest throughput of the host pipeline with the extractive engine.

Measures MB of source text per second from `add` to applied plan (trusted sources, --yes), and the
peak memory of the process, on the State of the Union corpus (all 233 speeches by default), with
its floor in the same run: SHA-256 of every speech, the host's sentence split of every speech,
and one git commit of the final wiki into a fresh repository. The vault runs on a fixed clock, so
``wiki_sha256`` (every wiki file's path and bytes) compares runs of different code.

    .venv/bin/python bench/bench_ingest.py [--speeches 233] [--vault /tmp/bench-ingest] [--json]
        [--doctor]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.sources.sentences import number_sentences
from affidavit.vault import init_vault

FIXED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _corpus() -> Path:
    """``$AFFIDAVIT_SHARED_DATA/corpus/sotu.jsonl``, else ``shared/data/corpus/sotu.jsonl``
    beside the project (or beside a worktree's parent)."""
    shared = os.environ.get("AFFIDAVIT_SHARED_DATA")
    if shared and (Path(shared) / "corpus" / "sotu.jsonl").exists():
        return Path(shared) / "corpus" / "sotu.jsonl"
    here = Path(__file__).resolve().parent
    for up in here.parents:
        candidate = up / "shared" / "data" / "corpus" / "sotu.jsonl"
        if candidate.exists():
            return candidate
    return here.parent.parent / "shared" / "data" / "corpus" / "sotu.jsonl"


CORPUS = _corpus()


def measure_floor(docs: Path, wiki: Path, work: Path) -> float:
    """What no ingest can skip: hash every source, split it into sentences, and commit the
    final wiki once (``git`` into a fresh repository)."""
    shutil.copytree(wiki, work / "wiki")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    started = time.perf_counter()
    for path in sorted(docs.iterdir()):
        data = path.read_bytes()
        hashlib.sha256(data).hexdigest()
        number_sentences(data.decode("utf-8"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "wiki"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, env=env)
    return time.perf_counter() - started


def write_speeches(folder: Path, count: int) -> int:
    """The first ``count`` speeches of the corpus as markdown files in ``folder`` (made here);
    returns the characters written."""
    folder.mkdir()
    chars = 0
    with CORPUS.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n >= count:
                break
            row = json.loads(line)
            text = f"# State of the Union, {row['year']}: {row['name']}\n\n{row['text'].strip()}\n"
            (folder / f"{row['year']}-{n:03d}.md").write_text(text, encoding="utf-8")
            chars += len(text)
    return chars


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--speeches", type=int, default=233)
    parser.add_argument("--vault", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--doctor", action="store_true", help="run `affidavit doctor` after (not timed)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    vault_dir = args.vault or work / "vault"
    if vault_dir.exists():
        shutil.rmtree(vault_dir)
    docs = work / "speeches"
    chars = write_speeches(docs, args.speeches)
    vault, _ = init_vault(vault_dir, clock=lambda: FIXED)
    provider = provider_from_config(vault.config, "extractive")
    started, cpu, before = time.perf_counter(), time.process_time(), os.times()
    report = Ingestor(vault, provider, apply_now=True).run([str(docs)], "trusted")
    seconds, cpu, after = time.perf_counter() - started, time.process_time() - cpu, os.times()
    # the worker reading chunks ahead (ingest/ahead.py), reaped when the ingest ends
    worker_cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    floor = measure_floor(docs, vault.wiki_dir, work / "floor")
    digest = hashlib.sha256()
    for path in sorted(vault.wiki_dir.glob("*.md")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    totals = report.totals()
    pages = vault.db.execute("SELECT count(*) FROM pages").fetchone()[0]
    claims = vault.db.execute("SELECT count(*) FROM claims WHERE status='active'").fetchone()[0]
    commits = len(vault.git.log_subjects())
    doctor = None
    if args.doctor:
        from affidavit.doctor import run_doctor

        doctor = run_doctor(vault).clean
    vault.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "speeches": args.speeches,
        "source_mb": round(chars / 1e6, 2),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu + worker_cpu, 1),  # this process and its worker
        "worker_cpu_seconds": round(worker_cpu, 1),
        "floor_seconds": round(floor, 2),
        "x_floor": round(seconds / floor, 1),
        "mb_per_second": round(chars / 1e6 / seconds, 3),
        "peak_memory_mb": round(peak_mb),
        "chunks": totals["chunks"],
        "claims": totals["claims"],
        "pages": pages,
        "active_claims": claims,
        "git_commits": commits,
        "wiki_sha256": digest.hexdigest()[:16],
        **({"doctor_clean": doctor} if doctor is not None else {}),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
