"""How long a request waits for its answer while the daemon's PostgreSQL is down, and what a busy
pool costs (issue 26, pg29): ``serve --database`` on a cluster of its own, the vault's owner on
the Unix socket (no token to look up: the request waits on the vault's pool itself).

Down: the cluster is stopped as in a crash (``pg_ctl stop -m immediate``) under the live daemon,
then ``--requests`` sequential ``GET …/pages`` are timed to their answer (503 expected; a client
timeout of 120 s); the cluster restarted, the seconds until the same request is 200 again.
Busy: the cluster up, ``--clients`` threads send ``GET …/pages`` for ``--seconds`` (p50/p99 and
any non-200) — a daemon that took a busy pool for a database down would answer 503 there.

    cd TREE && PYTHONPATH=src .venv/bin/python bench/bench_pg_down.py [--requests 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import pg_cluster
from tests.test_pg_serve_cli import Daemon, cli


def owner(daemon: Daemon, timeout: float) -> httpx.Client:
    transport = httpx.HTTPTransport(uds=str(daemon.sock))
    return httpx.Client(transport=transport, base_url="http://affidavit", timeout=timeout)


def busy(daemon: Daemon, clients: int, seconds: float) -> dict[str, object]:
    times: list[float] = []
    codes: dict[int, int] = {}
    lock = threading.Lock()
    made = [owner(daemon, 120) for _ in range(clients)]  # (slow to make under load: first)
    start = threading.Barrier(clients + 1)
    stop = [0.0]

    def run(client: httpx.Client) -> None:
        start.wait()
        with client:
            while time.monotonic() < stop[0]:
                t0 = time.perf_counter()
                code = client.get("/v1/vaults/bench/pages").status_code
                with lock:
                    times.append(time.perf_counter() - t0)
                    codes[code] = codes.get(code, 0) + 1

    threads = [threading.Thread(target=run, args=(c,)) for c in made]
    for t in threads:
        t.start()
    stop[0] = time.monotonic() + seconds
    start.wait()
    for t in threads:
        t.join()
    q = statistics.quantiles(times, n=100) if len(times) > 1 else times * 99
    return {"requests": len(times), "p50_ms": round(q[49] * 1000, 1),
            "p99_ms": round(q[98] * 1000, 1), "codes": codes}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    own = pg_cluster.private("bench-down")
    try:
        env = {"AFFIDAVIT_DATABASE": own.create_database("down")}
        me = pwd.getpwuid(os.geteuid()).pw_name
        assert cli("team", "create", "bench", "--owner", me, env=env).returncode == 0
        base = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-down-{os.getpid()}"
        base.mkdir()
        daemon = Daemon(base, env=env)
        try:
            out: dict[str, object] = {"busy": busy(daemon, args.clients, args.seconds)}
            own.stop_immediate()
            waits = []
            with owner(daemon, 120) as client:
                for _ in range(args.requests):
                    t0 = time.perf_counter()
                    code = client.get("/v1/vaults/bench/pages").status_code
                    waits.append((code, round(time.perf_counter() - t0, 2)))
            out["down"] = waits
            own.restart()
            t0 = time.perf_counter()
            with owner(daemon, 120) as client:
                while client.get("/v1/vaults/bench/pages").status_code != 200:
                    time.sleep(0.1)
            out["back_after_s"] = round(time.perf_counter() - t0, 2)
            out["load"] = os.getloadavg()
            print(json.dumps(out))
        finally:
            daemon.stop()
    finally:
        own.stop()


if __name__ == "__main__":
    main()
