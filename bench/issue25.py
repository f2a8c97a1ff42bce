"""Issue 25's rows of the CLI, the daemon, the database and doctor, side by side: this tree's
code beside another tree's (``--base``, e.g. a checkout of main) in the same run, on the same vault.

Rows (each for both trees, interleaved ``--rounds`` times):

- ``version``: client CPU (user + system, the whole process) of ``affidavit --version``;
- ``ask_client``: client CPU of ``affidavit ask QUESTION`` through a running daemon (the daemon
  is this tree's for both: the row measures the client);
- ``search``: the daemon (``serve --workers 1``) under 8 clients sending realistic queries —
  SQuADShifts questions and State of the Union topic words (``--queries``), never one rare term —
  requests/s, p50/p99 and the daemon's CPU per request;
- ``ask_daemon``: the daemon's CPU per ``POST …/ask`` (extractive answerer), the same questions;
- ``search_asking``: the ``search`` row while one more client asks questions at a steady
  ``--ask-rate`` per second (the daemon's answer log commits once a second or per 32 answers):
  the searches' requests/s and p50/p99, the answers given meanwhile, and the daemon's CPU per
  request (searches and answers together).

The two trees' daemons run side by side and the ``search`` and ``ask_daemon`` rows alternate
between them round after round (each cell carries the load average when it ended).

The vault is built once outside the repository (``bench/bench_ingest.py --vault DIR``, 233
speeches) and is only read.

    AFFIDAVIT_SHARED_DATA=/work/shared/data .venv/bin/python bench/issue25.py --vault DIR \\
        --base /path/to/main [--rows version,ask_client,search,ask_daemon] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bench_server import UnixConnection, cpu_seconds, load, start  # noqa: E402

TOPICS = [
    "tariff revenue duties",
    "slavery emancipation",
    "gold standard currency",
    "war with Mexico",
    "Indian tribes treaties",
    "national debt reduction",
    "income tax",
    "social security",
    "civil rights",
    "Panama canal",
    "railroads interstate commerce",
    "immigration laws",
    "foreign trade",
    "army navy appropriations",
    "public lands",
    "banking system",
    "health insurance",
    "energy crisis",
    "terrorism",
    "education schools",
    "farm agriculture prices",
    "inflation unemployment",
    "nuclear weapons",
    "Soviet Union",
    "postal service",
    "Philippines",
    "Cuba Spain",
    "depression relief",
    "veterans pensions",
    "environment pollution",
]


def queries(count: int) -> list[str]:
    """``count`` questions of SQuADShifts (seeded shuffle) and the State of the Union topics."""
    data = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
    squad = json.loads((data / "qa" / "squadshifts_new_wiki_v1.0.json").read_text())
    asked = [q["question"] for a in squad["data"] for p in a["paragraphs"] for q in p["qas"]]
    random.Random(25).shuffle(asked)
    return asked[:count] + TOPICS


def child_cpu(args: list[str], src: Path, env: dict[str, str] | None = None) -> float:
    """User + system CPU seconds of one CLI process run with ``src`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-c", "from affidavit.cli import main; main()", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(src), **(env or {})},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)


def ask_cpu(sock: Path, pid: int, name: str, asked: list[str]) -> dict[str, Any]:
    """The daemon's CPU per ``ask`` over ``asked`` (one client, after one warm-up pass)."""
    conn = UnixConnection(str(sock))

    def one(question: str) -> None:
        body = json.dumps({"question": question})
        conn.request(
            "POST",
            f"/v1/vaults/{name}/ask",
            body=body,
            headers={"content-type": "application/json"},
        )
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"ask failed: {response.status}")

    for question in asked[:10]:
        one(question)
    before = cpu_seconds(pid)
    started = time.perf_counter()
    for question in asked:
        one(question)
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(pid) - before
    conn.close()
    return {
        "cpu_ms": round(1000 * cpu / len(asked), 2),
        "wall_ms": round(1000 * seconds / len(asked), 2),
    }


NONCE_FIELDS = frozenset({"claims_given", "claims_left_out", "context_tokens"})
"""What differs between two runs of the same ``ask`` on the same tree: the claims packed into
the budget depend on the nonce's length in tokens, and the nonce is random."""


def fetch(sock: Path, method: str, path: str, body: str | None = None) -> bytes:
    conn = UnixConnection(str(sock))
    headers = {"content-type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
    return data


def same_answers(
    daemons: dict[str, Any], name: str, paths: list[str], asked: list[str]
) -> dict[str, int]:
    """Every daemon's search bodies are the same bytes for every query, and its answers the same
    (but for :data:`NONCE_FIELDS`); raises otherwise. Asked twice of each daemon: the second
    search of a query is the cached one where the daemon keeps answers."""
    first, *others = daemons
    searches = 0
    for path in paths:
        want = fetch(daemons[first][1], "GET", path)
        for tree in daemons:
            for _ in range(2):
                got = fetch(daemons[tree][1], "GET", path)
                if got != want:
                    raise AssertionError(f"{tree} answers {path} unlike {first}")
        searches += 1
    asks = 0
    for question in asked:
        body = json.dumps({"question": question})
        answers = {
            tree: {
                key: value
                for key, value in json.loads(
                    fetch(daemons[tree][1], "POST", f"/v1/vaults/{name}/ask", body)
                ).items()
                if key not in NONCE_FIELDS
            }
            for tree in daemons
        }
        if any(answers[tree] != answers[first] for tree in others):
            raise AssertionError(f"the trees answer {question!r} differently")
        asks += 1
    return {"searches_compared": searches, "asks_compared": asks}


def _asker(sock: str, name: str, asked: list[str], rate: float, stop: Any, results: Any) -> None:
    """Ask ``asked`` in turn, ``rate`` a second, until ``stop``; put how many were answered."""
    conn = UnixConnection(sock)
    answered, n, due = 0, 0, time.monotonic()
    while not stop.is_set():
        body = json.dumps({"question": asked[n % len(asked)]})
        n += 1
        conn.request("POST", f"/v1/vaults/{name}/ask", body, {"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        answered += response.status == 200
        due += 1.0 / rate
        stop.wait(max(0.0, due - time.monotonic()))
    conn.close()
    results.put(answered)


def search_asking(
    sock: Path, pid: int, name: str, paths: list[str], asked: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    """One ``search_asking`` cell (see the module): the searches' load with the asker beside."""
    ctx = multiprocessing.get_context("fork")
    stop, results = ctx.Event(), ctx.Queue()
    asker = ctx.Process(target=_asker, args=(str(sock), name, asked, args.ask_rate, stop, results))
    asker.start()
    try:
        cell = load(("unix", str(sock)), {}, paths, 8, args.seconds, pid)
    finally:
        stop.set()
        answered = results.get(timeout=300)
        asker.join()
    return cell | {"answers": answered}


def no_cache(toml: str) -> str:
    """``toml`` with ``server.search_cache = 0`` (``affidavit init`` writes the setting)."""
    if re.search(r"(?m)^search_cache\s*=", toml):
        return re.sub(r"(?m)^search_cache\s*=.*$", "search_cache = 0", toml)
    return toml.replace("[server]\n", "[server]\nsearch_cache = 0\n", 1)


def daemon_rows(
    args: argparse.Namespace,
    rows: list[str],
    trees: dict[str, Path],
    asked: list[str],
    work: Path,
    result: dict[str, Any],
) -> None:
    """The ``search`` and ``ask_daemon`` rows: both trees' daemons (``serve --workers N`` for
    each of ``--workers``), and this tree's with ``server.search_cache = 0`` (``this_nocache``:
    every search computed, what a stream of questions never asked before costs), run side by
    side on the same vault and are measured in turn, round after round, so the machine's load
    falls on all alike. Before the rounds every daemon must give the same bodies for every
    query and the same answers (:func:`same_answers`)."""
    name = args.vault.name
    workers = [int(w) for w in args.workers.split(",")]
    daemons: dict[str, Any] = {}
    toml = args.vault / "affidavit.toml"
    original = toml.read_text()
    try:
        for count in workers:
            for tree, src in trees.items():
                daemons[f"{tree}_w{count}"] = start(
                    args.vault, work / f"{tree}{count}", src=src, workers=count
                )
        toml.write_text(no_cache(original))
        try:
            daemons["this_nocache_w1"] = start(
                args.vault, work / "nocache", src=trees["this"], workers=1
            )
        finally:
            toml.write_text(original)
        paths = [f"/v1/vaults/{name}/search?q={quote(q)}" for q in asked]
        result["identical"] = same_answers(
            {t: d for t, d in daemons.items() if t.endswith("_w1")},
            name,
            paths,
            asked[: args.compare_asks],
        )
        for tree, (_proc, sock, _) in daemons.items():
            result[f"search_{tree}"] = []
            result[f"ask_daemon_{tree}"] = []
            result[f"search_asking_{tree}"] = []
            # warm-up: every worker has seen the queries once or more
            if {"search", "search_asking"} & set(rows):
                load(("unix", str(sock)), {}, paths, 8, args.warm)
        # the searches' rounds first, then the answers': an answer's log rows are a commit,
        # which empties the base's search cache (as it would in use: see docs/server.md)
        for _ in range(args.rounds if "search" in rows else 0):
            for tree, (proc, sock, _) in daemons.items():
                cell = load(("unix", str(sock)), {}, paths, 8, args.seconds, proc.pid)
                result[f"search_{tree}"].append(cell | {"load": os.getloadavg()[0]})
        for _ in range(args.rounds if "search_asking" in rows else 0):
            for tree, (proc, sock, _) in daemons.items():
                if tree.endswith("_w1"):
                    cell = search_asking(sock, proc.pid, name, paths, asked, args)
                    result[f"search_asking_{tree}"].append(cell | {"load": os.getloadavg()[0]})
        for _ in range(args.rounds if "ask_daemon" in rows else 0):
            for tree, (proc, sock, _) in daemons.items():
                if tree.endswith("_w1") and "nocache" not in tree:
                    cell = ask_cpu(sock, proc.pid, name, asked[:100])
                    result[f"ask_daemon_{tree}"].append(cell | {"load": os.getloadavg()[0]})
    finally:
        toml.write_text(original)
        for proc, _, _ in daemons.values():
            stop(proc)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument(
        "--base", type=Path, required=True, help="the other tree (its src/ is used)"
    )
    parser.add_argument("--rows", default="version,ask_client,search,ask_daemon")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--workers", default="1,2", help="the daemons' worker counts")
    parser.add_argument("--warm", type=float, default=6.0, help="seconds of warm-up per daemon")
    parser.add_argument(
        "--compare-asks", type=int, default=100, help="answers compared across the trees"
    )
    parser.add_argument(
        "--ask-rate", type=float, default=5.0, help="answers a second beside search_asking"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = args.rows.split(",")
    trees = {"this": ROOT / "src", "base": args.base / "src"}
    asked = queries(args.questions)
    work = Path(tempfile.mkdtemp(prefix="issue25-", dir="/tmp"))
    result: dict[str, Any] = {"load_before": os.getloadavg()[0], "queries": len(asked)}
    try:
        if "version" in rows:
            for tree in trees:
                result[f"version_{tree}_s"] = []
            for _ in range(args.rounds):
                for tree, src in trees.items():
                    result[f"version_{tree}_s"].append(round(child_cpu(["--version"], src), 3))
        if "ask_client" in rows:
            proc, sock, _ = start(args.vault, work / "client", src=trees["this"])
            env = {"AFFIDAVIT_SOCKET": str(sock), "AFFIDAVIT_NO_DAEMON": ""}
            try:
                for tree in trees:
                    result[f"ask_client_{tree}_s"] = []
                for n in range(args.rounds):
                    for tree, src in trees.items():
                        cmd = ["--vault", str(args.vault), "ask", asked[n]]
                        result[f"ask_client_{tree}_s"].append(round(child_cpu(cmd, src, env), 3))
            finally:
                stop(proc)
        if {"search", "ask_daemon", "search_asking"} & set(rows):
            daemon_rows(args, rows, trees, asked, work, result)
        result["load_after"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for key, value in list(result.items()):
        if isinstance(value, list) and value and isinstance(value[0], float):
            result[key.removesuffix("_s") + "_median_s"] = statistics.median(value)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
