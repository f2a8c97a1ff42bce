"""Search through the daemon over PostgreSQL (issue 26: ``serve --database``), 1 and 3 daemons over
one database, beside the daemon over the same wiki in a SQLite vault.

Builds the wiki as bench_pgmirror.py does (``--articles`` SQuADShifts articles ingested into a
SQLite vault with the extractive engine, then carried into a PostgreSQL vault through its door),
starts real daemons (``affidavit serve`` subprocesses on loopback TCP, one worker process each,
no job workers) and runs ``--clients`` client threads that each send ``GET …/search?q=<question>``
with a read token, round robin over the daemons of the setup, for ``--seconds``; the setups are
run in turn, ``--rounds`` times, alternating their order. Prints p50/p99 latency and requests per
second of each setup. Starts its own PostgreSQL cluster (tests/pg_cluster.py).

    PYTHONPATH=src .venv/bin/python bench/bench_pg_serve.py [--articles 12] [--clients 32]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pgmirror import articles, carry
from tests import pg_cluster

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.service import tokens as token_store
from affidavit.service.pg_vaults import PgVault
from affidavit.storage import open_storage
from affidavit.storage.postgres import PostgresStorage
from affidavit.vault import init_vault

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def daemon(
    work: Path, name: str, *args: str, workers: int = 1
) -> tuple[subprocess.Popen[bytes], int]:
    run = work / f"run-{name}"
    run.mkdir(mode=0o700)
    port = free_port()
    argv = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    argv += ["--socket", str(run / "s.sock"), "--tcp", f"127.0.0.1:{port}"]
    argv += ["--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "AFFIDAVIT_DATABASE": ""}
    log = (work / f"{name}.log").open("wb")
    proc = subprocess.Popen([*argv, *args], stdout=subprocess.DEVNULL, stderr=log, env=env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
                if c.get("/v1/health").status_code == 200:
                    return proc, port
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"daemon {name} did not start: {(work / f'{name}.log').read_text()}")


def load(ports: list[int], path: str, token: str, questions: list[str], clients: int,
         seconds: float) -> dict[str, Any]:  # fmt: skip
    times: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    start = threading.Barrier(clients)

    def client(n: int) -> None:
        mine: list[float] = []
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            start.wait()
            i = n
            while time.monotonic() < stop:
                port = ports[i % len(ports)]
                q = questions[i % len(questions)]
                began = time.perf_counter()
                got = http.get(f"http://127.0.0.1:{port}{path}", params={"q": q, "k": 10})
                mine.append(time.perf_counter() - began)
                if got.status_code != 200:
                    with lock:
                        errors[0] += 1
                i += clients
        with lock:
            times.extend(mine)

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - began
    ms = sorted(t * 1000 for t in times)
    return {
        "requests": len(ms), "errors": errors[0], "rps": round(len(ms) / took, 1),
        "p50_ms": round(statistics.median(ms), 1), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 1),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pg-serve-"))
    cluster = pg_cluster.cluster()
    url = cluster.create_database("bench_pg_serve")
    procs: list[subprocess.Popen[bytes]] = []
    result: dict[str, Any] = {"articles": args.articles, "clients": args.clients}
    try:
        docs, qas = articles(args.articles, work)
        questions = [q for q, _ in qas]
        vault, _ = init_vault(work / "vault")
        Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
        storage = open_storage(url)
        assert isinstance(storage, PostgresStorage)
        storage.create_vault("main", "bench")
        carry(vault, storage)
        result["claims"] = vault.db.execute(
            "SELECT count(*) FROM claims WHERE status = 'active' AND page_slug != ''"
        ).fetchone()[0]
        _, sqlite_token = token_store.create_token(
            vault.db, vault.clock, "read", timedelta(days=1), "bench", "bench"
        )
        _, pg_token = PgVault(storage, "main").create_token(
            "read", timedelta(days=1), "bench", "bench"
        )
        vault.close()
        storage.close()
        ports: dict[str, int] = {}
        for name, args_, workers in [
            ("sqlite", ("--vault", str(work / "vault"), "--no-workers"), 1),
            ("sqlite-w2", ("--vault", str(work / "vault"), "--no-workers"), 2),
            ("pg0", ("--database", url), 1),
            ("pg1", ("--database", url), 1),
            ("pg2", ("--database", url), 1),
            ("pg-w2", ("--database", url), 2),
        ]:
            proc, ports[name] = daemon(work, name, *args_, workers=workers)
            procs.append(proc)
        sq, pg = "/v1/vaults/vault/search", "/v1/vaults/main/search"
        setups = {
            "sqlite, 1 daemon": ([ports["sqlite"]], sq, sqlite_token),
            "sqlite, 1 daemon, --workers 2": ([ports["sqlite-w2"]], sq, sqlite_token),
            "postgresql, 1 daemon": ([ports["pg0"]], pg, pg_token),
            "postgresql, 1 daemon, --workers 2": ([ports["pg-w2"]], pg, pg_token),
            "postgresql, 3 daemons": ([ports["pg0"], ports["pg1"], ports["pg2"]], pg, pg_token),
        }
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in setups}
        for r in range(args.rounds):
            order = list(setups) if r % 2 == 0 else list(reversed(setups))
            for name in order:
                ports, path, token = setups[name]
                runs[name].append(
                    load(ports, path, token, questions, args.clients, args.seconds)
                    | {"load": round(os.getloadavg()[0], 1)}
                )
        result["runs"] = runs
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)
        cluster.drop_database(url)
        pg_cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
