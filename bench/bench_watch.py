"""``affidavit watch`` on a 1,000-file folder: change → in the inbox latency, and a restart.

Builds a folder of N markdown files from the public State of the Union corpus
(../shared/data/corpus/sotu.jsonl: runs of five consecutive sentences, two runs per file,
about 2 KB), ingests
it once (``watch --once``: the first look, timed), then starts ``affidavit watch --json`` as a
user would (its own process, default debounce) and, E times, appends a new sentence to one file
and times the save until a pending plan of that file is in the inbox (a second connection polls
the database every 5 ms). Then the watch is stopped, files are edited, deleted and added while
it is down, and ``watch --once`` is timed finding exactly those. The automatic lint the saves
make due runs when the watch is quiet: its duration (what a save landing during it would wait)
is reported too.

    .venv/bin/python bench/bench_watch.py [--files 1000] [--edits 30] [--json]

With ``--daemon`` the same is measured on the daemon's path instead (issue 27 item 2): ``affidavit
serve`` runs the vault's worker and watch feeder, the folder is registered with ``affidavit watch
add`` (no watch process of ours), its first look is the daemon's catch-up job (timed until it is
done), and each save is timed until its pending plan is in the inbox — feeder, queue, worker, job
process and all (``--gap S``: each save S seconds after the last one's jobs ended, as a
person's saves are spaced). Then the daemon is stopped, files are edited, deleted and added, and the
restarted daemon's catch-up is timed until exactly those changes are handled. The CPU seconds of
the daemon's whole process tree (its workers, fork servers and job processes) are reported for
the first look and for the saves.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
CORPUS = SHARED / "corpus" / "sotu.jsonl"
CLI = [sys.executable, "-c", "from affidavit.cli import main; main()"]
PLACES = ["Ohio", "Hudson", "Missouri", "Potomac", "Delaware", "Susquehanna", "Wabash"]


def paragraphs() -> list[str]:
    """The speeches (one line each in the corpus) cut into runs of 5 sentences (~1 KB)."""
    found = []
    with CORPUS.open(encoding="utf-8") as handle:
        for line in handle:
            sentences = re.split(r"(?<=[.!?]) +(?=[A-Z])", json.loads(line)["text"])
            found += [" ".join(sentences[i : i + 5]) for i in range(0, len(sentences) - 4, 5)]
    return found


def make_folder(folder: Path, count: int) -> list[Path]:
    texts = paragraphs()
    folder.mkdir(parents=True)
    files = []
    for n in range(count):
        sub = folder / f"part-{n // 100:02d}"
        sub.mkdir(exist_ok=True)
        path = sub / f"note-{n:04d}.md"
        body = "\n\n".join(texts[(2 * n) % len(texts) : (2 * n) % len(texts) + 2])
        path.write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")
        files.append(path)
    (folder / ".gitignore").write_text("drafts/\n")
    return files


def cli(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "--vault", str(vault), *args], capture_output=True, text=True, check=True
    )


def pending_plans(db: sqlite3.Connection, name: str) -> int:
    row = db.execute(
        "SELECT count(*) FROM plans WHERE status = 'pending' AND origin LIKE ?",
        (f"ingest:{name}#%",),
    ).fetchone()
    return int(row[0])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _daemon(vault: Path, run: Path, log: Any) -> subprocess.Popen[str]:
    sock = run / "affidavit.sock"
    proc = subprocess.Popen(
        [*CLI, "serve", "--socket", str(sock), "--vault", str(vault)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    while not sock.exists():
        if proc.poll() is not None:
            raise SystemExit("the daemon exited; see its log")
        time.sleep(0.05)
    return proc


def tree_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` and every process below it so far: each live process's
    own time plus that of its children it reaped (which are no longer in the tree)."""
    kids: dict[int, list[int]] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(entry))
        times[int(entry)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    total, todo = 0, [pid]
    while todo:
        here = todo.pop()
        total += times.get(here, 0)
        todo += kids.get(here, [])
    return total / os.sysconf("SC_CLK_TCK")


def _watch_jobs(db: sqlite3.Connection, watch: str) -> list[tuple[str, str, str]]:
    return db.execute(
        "SELECT id, status, payload FROM jobs WHERE requested_by = ? ORDER BY rowid",
        (f"watch:{watch}",),
    ).fetchall()


def _until_idle(db: sqlite3.Connection, watch: str, count: int, timeout: float) -> None:
    """Until the watch queued more than ``count`` jobs and all of them ended."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        jobs = _watch_jobs(db, watch)
        if len(jobs) > count and all(j[1] in ("done", "failed", "cancelled") for j in jobs):
            return
        time.sleep(0.02)
    raise SystemExit("the watch's jobs did not end")


def daemon_path(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The daemon's continuous watch: first look, save → inbox, restart."""
    result: dict[str, Any] = {"files": args.files, "path": "daemon"}
    vault = work / "vault"
    cli(work, "init", str(vault))
    folder = work / "notes"
    files = make_folder(folder, args.files)
    run = work / "run"
    run.mkdir(mode=0o700)
    log = (work / "serve.log").open("w")
    proc = _daemon(vault, run, log)
    db = sqlite3.connect(vault / ".affidavit" / "db.sqlite", timeout=30)
    try:
        started, cpu_start = time.perf_counter(), tree_cpu(proc.pid)
        watch = json.loads(cli(vault, "watch", "add", str(folder), "--json").stdout)[0]["id"]
        _until_idle(db, watch, 0, args.timeout * 20)
        result["first_look_seconds"] = round(time.perf_counter() - started, 2)
        result["first_look_daemon_cpu_seconds"] = round(tree_cpu(proc.pid) - cpu_start, 2)
        rng = random.Random(27)
        latencies: list[float] = []
        missed = 0
        cpu_before = tree_cpu(proc.pid)
        for n, path in enumerate(rng.sample(files, args.edits)):
            if n and args.gap:  # a person's saves are seconds apart
                _until_idle(db, watch, 0, args.timeout)
                time.sleep(args.gap)
            before = pending_plans(db, path.name)
            sentence = (
                f"In {1900 + n} the engineers finished {n + 3} new bridges over the "
                f"{PLACES[n % len(PLACES)]} river at a cost of {n + 2} million dollars.\n"
            )
            t0 = time.perf_counter()
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n" + sentence)
            while pending_plans(db, path.name) == before:
                if time.perf_counter() - t0 > args.timeout:
                    missed += 1
                    break
                time.sleep(0.005)
            else:
                latencies.append(time.perf_counter() - t0)
        result["edits"] = args.edits
        result["gap_seconds"] = args.gap
        result["in_inbox"] = len(latencies)
        result["missed"] = missed
        if latencies:
            result["latency_p50_seconds"] = round(percentile(latencies, 0.5), 3)
            result["latency_p95_seconds"] = round(percentile(latencies, 0.95), 3)
            result["latency_max_seconds"] = round(max(latencies), 3)
            result["latencies_seconds"] = [round(x, 3) for x in latencies]
        _until_idle(db, watch, 0, args.timeout)
        result["saves_daemon_cpu_seconds"] = round(tree_cpu(proc.pid) - cpu_before, 2)
        result["jobs_queued_by_the_watch"] = len(_watch_jobs(db, watch))

        # down: 10 edited, 2 deleted, 3 added; up again: the restart's catch-up job
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=args.timeout)
        count = len(_watch_jobs(db, watch))
        rest = [f for f in files if f.exists()]
        for path in rest[:10]:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\nThe canal opened to barges in the spring of that year.\n")
        for path in rest[10:12]:
            path.unlink()
        for n in range(3):
            (folder / f"added-{n}.md").write_text(
                f"The new harbour office {n} opened in {1950 + n} beside the customs house.\n"
            )
        started = time.perf_counter()
        proc = _daemon(vault, run, log)
        _until_idle(db, watch, count, args.timeout * 5)
        result["restart_look_seconds"] = round(time.perf_counter() - started, 2)
        job = _watch_jobs(db, watch)[count][0]
        events = json.loads(
            db.execute("SELECT result FROM jobs WHERE id = ?", (job,)).fetchone()[0]
        )["events"]
        ingested = {e["path"] for e in events if e["event"] == "ingested"}
        deleted = {e["path"] for e in events if e["event"] == "deleted"}
        result["restart_found"] = {
            "ingested": len(ingested),
            "deleted": len(deleted),
            "exactly_the_changes": ingested
            == {str(p) for p in rest[:10]} | {str(folder / f"added-{n}.md") for n in range(3)}
            and deleted == {str(p) for p in rest[10:12]},
        }
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=args.timeout)
        db.close()
        log.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--daemon", action="store_true", help="Measure the daemon's watch (watch add) instead."
    )
    parser.add_argument(
        "--gap",
        type=float,
        default=0.0,
        help="With --daemon: seconds between one save's jobs ending and the next save "
        "(0: the next save as soon as the last is in the inbox).",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    result: dict[str, Any] = {"files": args.files}
    try:
        if args.daemon:
            result = daemon_path(args, work)
            return
        vault = work / "vault"
        cli(work, "init", str(vault))
        folder = work / "notes"
        files = make_folder(folder, args.files)
        started = time.perf_counter()
        cli(vault, "watch", str(folder), "--once", "--json")
        result["first_look_seconds"] = round(time.perf_counter() - started, 2)

        log = (work / "watch.log").open("w")
        proc = subprocess.Popen(
            [*CLI, "--vault", str(vault), "watch", str(folder), "--json"],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        ready = threading.Event()
        linted: list[dict[str, Any]] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                event = json.loads(line)
                if event["event"] == "ready":
                    ready.set()
                elif event["event"] == "lint":
                    linted.append(event)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        started = time.perf_counter()
        if not ready.wait(args.timeout):
            raise SystemExit("the watch never became ready")
        result["restart_ready_seconds"] = round(time.perf_counter() - started, 2)
        db = sqlite3.connect(vault / ".affidavit" / "db.sqlite", timeout=30)
        rng = random.Random(27)
        latencies: list[float] = []
        missed = 0
        for n, path in enumerate(rng.sample(files, args.edits)):
            before = pending_plans(db, path.name)
            sentence = (
                f"In {1900 + n} the engineers finished {n + 3} new bridges over the "
                f"{PLACES[n % len(PLACES)]} river at a cost of {n + 2} million dollars.\n"
            )
            t0 = time.perf_counter()
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n" + sentence)
            while pending_plans(db, path.name) == before:
                if time.perf_counter() - t0 > args.timeout:
                    missed += 1
                    break
                time.sleep(0.005)
            else:
                latencies.append(time.perf_counter() - t0)
        during = len(linted)
        result["lint_runs_during_saves"] = during
        # quiet now: the lint the saves made due runs (lint.every_ingests = 10); a save
        # landing while it runs would wait this long
        deadline = time.perf_counter() + args.timeout
        while len(linted) == during and time.perf_counter() < deadline:
            time.sleep(0.05)
        if len(linted) > during:
            result["lint_when_quiet_seconds"] = linted[-1]["seconds"]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=args.timeout)
        reader.join(timeout=10)
        log.close()
        result["edits"] = args.edits
        result["in_inbox"] = len(latencies)
        result["missed"] = missed
        if latencies:
            result["latency_p50_seconds"] = round(percentile(latencies, 0.5), 3)
            result["latency_p95_seconds"] = round(percentile(latencies, 0.95), 3)
            result["latency_max_seconds"] = round(max(latencies), 3)
            result["latencies_seconds"] = [round(x, 3) for x in latencies]

        # while the watch is down: 10 edited, 2 deleted, 3 added, 5 touched (same bytes)
        rest = [f for f in files if f.exists()]
        for path in rest[:10]:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\nThe canal opened to barges in the spring of that year.\n")
        for path in rest[10:12]:
            path.unlink()
        for path in rest[12:17]:
            os.utime(path, ns=(1, 1))
        for n in range(3):
            (folder / f"added-{n}.md").write_text(
                f"The new harbour office {n} opened in {1950 + n} beside the customs house.\n"
            )
        (folder / "drafts").mkdir()
        (folder / "drafts" / "ignored.md").write_text("An ignored draft about the canal.\n")
        started = time.perf_counter()
        out = cli(vault, "watch", str(folder), "--once", "--json").stdout
        result["restart_look_seconds"] = round(time.perf_counter() - started, 2)
        events = [json.loads(line) for line in out.splitlines()]
        ingested = {e["path"] for e in events if e["event"] == "ingested"}
        deleted = {e["path"] for e in events if e["event"] == "deleted"}
        expected_in = {str(p) for p in rest[:10]} | {
            str(folder / f"added-{n}.md") for n in range(3)
        }
        result["restart_found"] = {
            "ingested": len(ingested),
            "deleted": len(deleted),
            "exactly_the_changes": ingested == expected_in
            and deleted == {str(p) for p in rest[10:12]},
        }
        db.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        _show(result, args.json)


def _show(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
