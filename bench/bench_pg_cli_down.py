"""The CLI's own commands against a PostgreSQL database that doesn't answer (issue 26, pg30):
seconds from start to exit, with the exit code and whether a traceback was printed, of each
``--database`` command run against a cluster stopped as in a crash (``pg_ctl stop -m
immediate``); of ``chat`` whose database is stopped after its first answer (the second question
to the exit); and of ``worker`` started while the database is down, from the restart to its
``ready`` line. The tree measured is the one whose ``src`` is ``--src`` (a frozen main, or this
branch): run both in one sitting, alternated.

    PYTHONPATH=src .venv/bin/python bench/bench_pg_cli_down.py --src /tmp/base/src --json
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import pg_cluster

COMMANDS = {
    "inbox": ["inbox", "--vault", "team"],
    "lint": ["lint", "--vault", "team"],
    "ask": ["ask", "How long is the bridge?", "--vault", "team"],
    "findings": ["findings", "--vault", "team"],
    "jobs": ["jobs", "--vault", "team"],
    "team token": ["team", "token", "team", "--role", "read"],
    "mirror": ["mirror", "--vault", "team", "{tmp}/mirror"],
}
CAP = 180.0


def argv(*args: str) -> list[str]:
    return [sys.executable, "-c", "from affidavit.cli import main; main()", *args]


def timed(src: str, env: dict[str, str], args: list[str]) -> dict[str, object]:
    full = {**os.environ, "PYTHONPATH": src, **env}
    start = time.monotonic()
    try:
        run = subprocess.run(argv(*args), capture_output=True, text=True, env=full, timeout=CAP)
    except subprocess.TimeoutExpired:
        return {"seconds": CAP, "code": None, "traceback": False}
    return {
        "seconds": round(time.monotonic() - start, 2),
        "code": run.returncode,
        "traceback": "Traceback" in run.stderr,
    }


def chat(src: str, env: dict[str, str], cluster: pg_cluster.Cluster) -> dict[str, object]:
    full = {**os.environ, "PYTHONPATH": src, **env}
    proc = subprocess.Popen(
        argv("chat", "--vault", "team", "--json"), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("How long is the bridge?\n")
    proc.stdin.flush()
    proc.stdout.readline()
    cluster.stop_immediate()
    start = time.monotonic()
    try:
        _, err = proc.communicate("When did it open?\n", timeout=CAP)
        out = {"seconds": round(time.monotonic() - start, 2), "code": proc.returncode,
               "traceback": "Traceback" in err}  # fmt: skip
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        out = {"seconds": CAP, "code": None, "traceback": False}
    cluster.restart()
    return out


def worker(src: str, env: dict[str, str], cluster: pg_cluster.Cluster, tmp: Path) -> object:
    full = {**os.environ, "PYTHONPATH": src, **env}
    log = tmp / "worker.log"
    cluster.stop_immediate()
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv("worker", "--vault", "team"), stdout=subprocess.DEVNULL,
                                stderr=sink, env=full)  # fmt: skip
    start = time.monotonic()  # until it has tried the database once: exited, or said so
    while proc.poll() is None and time.monotonic() - start < CAP:
        if '"database_error"' in log.read_text():
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        cluster.restart()
        return {"exited": proc.returncode, "ready_after_restart": None}
    cluster.restart()
    start = time.monotonic()
    while time.monotonic() - start < CAP and '"ready"' not in log.read_text():
        time.sleep(0.05)
    ready = round(time.monotonic() - start, 2) if '"ready"' in log.read_text() else None
    proc.terminate()
    proc.wait(timeout=60)
    return {"exited": None, "ready_after_restart": ready}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, help="The src folder of the tree to measure.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cluster = pg_cluster.private("clibench")
    tmp = cluster.root
    try:
        url = cluster.create_database("clibench").replace(
            "postgresql://postgres@", "postgresql://postgres:pw@", 1
        )
        env = {"AFFIDAVIT_DATABASE": url}
        me = pwd.getpwuid(os.geteuid()).pw_name
        assert timed(args.src, env, ["team", "create", "team", "--owner", me])["code"] == 0
        results: dict[str, object] = {}
        cluster.stop_immediate()
        for name, command in COMMANDS.items():
            results[name] = timed(args.src, env, [a.format(tmp=tmp) for a in command])
        cluster.restart()
        results["chat (stopped mid-way)"] = chat(args.src, env, cluster)
        results["worker (started while down)"] = worker(args.src, env, cluster, Path(tmp))
        results["load"] = os.getloadavg()[0]
    finally:
        cluster.stop()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, value in results.items():
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
