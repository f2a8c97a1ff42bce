"""The daemon under load: requests/s and p50/p99 latency of search and page reads, with 1, 8 and 64
concurrent clients, on the Unix socket and on loopback TCP (bearer token), on a 100k-claim wiki.

The wiki is written straight into a vault's tables (as ``bench_scale.py`` does: synthetic sentences
from a fixed vocabulary, FTS5 kept in sync by the triggers), spread over pages of 100 claims each.
The daemon runs as a subprocess (``affidavit serve --no-workers``). The load comes from N client
processes, each with one keep-alive connection sending requests back to back (``http.client``:
wrk can't speak to a Unix socket, and one client for both transports keeps them comparable; an
asyncio httpx client was tried first and was itself the bottleneck past ~8 connections). Each cell
runs for ``--seconds`` after a short warm-up.

The floor is measured in the same run with the same load generator and clients: a bare ASGI app
(one fixed JSON body, no framework) under uvicorn on a Unix socket, with h11 on asyncio and with
httptools on uvloop — what any request costs before the daemon does anything.

    .venv/bin/python bench/bench_server.py [--claims 100000] [--seconds 8] [--json]
    .venv/bin/python bench/bench_server.py --only unix:search:8 --floor --vault /tmp/v  # quick
    .venv/bin/python bench/bench_server.py --only unix:search:8 --floor --workers 1,2,4

``--workers`` starts one daemon per count (``serve --workers N``); the floor is then also measured
with uvicorn's own worker processes for each count. The server's CPU per request sums the daemon's
processes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import WORDS, sentence

from affidavit.server.registry import vault_name
from affidavit.service import tokens as token_store
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault, open_vault

ROOT = Path(__file__).resolve().parent.parent
PER_PAGE = 100


def build(size: int, root: Path, rng: random.Random) -> list[str]:
    vault, _ = init_vault(root)
    source = (
        SourceStore(vault)
        .add_bytes(
            b"synthetic benchmark source text " * 4, "/bench", "bench.txt", "text/plain", "trusted"
        )
        .record.id
    )
    db = vault.db
    slugs = [f"page-{p:05d}" for p in range((size + PER_PAGE - 1) // PER_PAGE)]
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, plan_id) "
        "VALUES (?, ?, 'Synthetic claims.', 'bench', 'x', 'x', 'bench')",
        [(slug, f"Page {n} " + " ".join(rng.choices(WORDS, k=3))) for n, slug in enumerate(slugs)],
    )
    batch: list[tuple[str, str, str, int]] = []
    for n in range(size):
        batch.append((f"c-{n:016x}", slugs[n // PER_PAGE], sentence(rng, n), n % PER_PAGE))
        if len(batch) == 10_000 or n == size - 1:
            db.executemany(
                "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES (?, ?, 'Bench', ?, ?, 'active', 'trusted', 'bench', 'x')",
                [(cid, slug, pos, text) for cid, slug, text, pos in batch],
            )
            db.executemany(
                'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
                "VALUES (?, 0, ?, 'synthetic benchmark source', 0, 26, 'line 1')",
                [(cid, source) for cid, _, _, _ in batch],
            )
            batch = []
    db.execute("COMMIT")
    vault.close()
    return slugs


def serve_floor(path: str, http: str, loop: str, workers: int = 1) -> None:
    import uvicorn
    from floor_app import bare_app

    uvicorn.run(
        "floor_app:bare_app" if workers > 1 else bare_app,
        app_dir=str(Path(__file__).resolve().parent),
        uds=path,
        http=http,
        loop=loop,
        lifespan="off",
        log_level="warning",
        access_log=False,
        workers=workers,
        # its supervisor pings each worker and replaces one that is slow to answer: on a loaded
        # machine that is a restart in the middle of a cell
        timeout_worker_healthcheck=600,
    )


def start_floor(
    work: Path, http: str, loop: str, workers: int = 1
) -> tuple[subprocess.Popen[bytes], Path]:
    sock = work / f"floor-{http}-{workers}.sock"
    sock.unlink(missing_ok=True)  # an earlier round's
    args = [sys.executable, str(Path(__file__).resolve()), "--serve-floor", str(sock)]
    args += ["--http", http, "--loop", loop, "--floor-workers", str(workers)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not _answers(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the floor server ({http}) did not start")
        time.sleep(0.05)
    return proc, sock


def _answers(sock: Path) -> bool:
    try:
        conn = UnixConnection(str(sock))
        conn.request("GET", "/floor")
        conn.getresponse().read()
        conn.close()
        return True
    except OSError:
        return False


def run_floor(
    work: Path, seconds: float, clients: list[int], workers: list[int]
) -> list[dict[str, Any]]:
    """The bare ASGI app's requests/s on the Unix socket: h11 on asyncio in one process, and
    httptools on uvloop with each number of worker processes (uvicorn's own ``--workers``)."""
    out = []
    kinds = [("h11", "asyncio", 1)] + [("httptools", "uvloop", n) for n in workers]
    for parser, loop, count in kinds:
        proc, sock = start_floor(work, parser, loop, count)
        time.sleep(2 * count if count > 1 else 0)  # the rest of uvicorn's workers start
        try:
            for concurrency in clients:
                target = ("unix", str(sock))
                load(target, {}, ["/floor"], concurrency, min(1.0, seconds / 4))
                cell = load(target, {}, ["/floor"], concurrency, seconds, proc.pid)
                row = {
                    "transport": "unix",
                    "request": f"floor ({parser}, {loop}, {count} proc)",
                    "clients": concurrency,
                    **cell,
                }
                print(json.dumps(row), file=sys.stderr)
                out.append(row)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    return out


def reuse(root: Path, size: int) -> list[str] | None:
    """The page slugs of a wiki built by an earlier run with ``--vault`` (None: build it)."""
    if not (root / ".affidavit" / "db.sqlite").exists():
        return None
    with open_vault(root) as vault:
        count = vault.db.execute("SELECT count(*) FROM claims").fetchone()[0]
        if count != size:
            raise SystemExit(f"{root} holds {count} claims, not {size}: remove it or pass another")
        return [r[0] for r in vault.db.execute("SELECT slug FROM pages ORDER BY slug")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(
    vault: Path, work: Path, threads: int = 16, src: Path = ROOT / "src", workers: int = 1
) -> tuple[subprocess.Popen[bytes], Path, int]:
    sock, port = work / "run" / "d.sock", free_port()
    work.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    args += [
        "--vault",
        str(vault),
        "--socket",
        str(sock),
        "--tcp",
        f"127.0.0.1:{port}",
        "--no-workers",
        "--threads",
        str(threads),
    ]
    if workers:  # 0: the daemon's default (a baseline without --workers)
        args += ["--workers", str(workers)]
    log = (work / "daemon.log").open("wb")
    proc = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    deadline = time.monotonic() + 120
    while not sock.exists() or (workers > 1 and _ready(work / "daemon.log") < workers):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((work / "daemon.log").read_text())
        time.sleep(0.1)
    return proc, sock, port


def _ready(log: Path) -> int:
    """Worker processes of a daemon that are ready (its ``worker_ready`` log lines)."""
    return log.read_text(errors="replace").count('"event": "worker_ready"')


class UnixConnection(http.client.HTTPConnection):
    """http.client over a Unix socket: a client light enough not to be what is measured."""

    def __init__(self, path: str) -> None:
        super().__init__("affidavit", timeout=120)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(120)
        sock.connect(self.unix_path)
        self.sock = sock


def _client(
    target: tuple[str, Any],
    headers: dict[str, str],
    paths: list[str],
    seed: int,
    seconds: float,
    barrier: Any,
    results: Any,
) -> None:
    """One client process: one keep-alive connection, requests back to back until time is up."""
    kind, where = target
    if kind == "unix":
        conn: http.client.HTTPConnection = UnixConnection(where)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", where, timeout=120)
    rng = random.Random(seed)
    latencies: list[float] = []
    errors = 0
    barrier.wait()
    stop_at = time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        t0 = time.perf_counter()
        try:
            conn.request("GET", rng.choice(paths), headers=headers)
            response = conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            continue
        latencies.append(time.perf_counter() - t0)
        errors += response.status != 200
    conn.close()
    results.put((latencies, errors))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time so far of process ``pid`` (all its threads) and its children (the
    worker processes; those that exited already are in its own ``cutime``)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def load(
    target: tuple[str, Any],
    headers: dict[str, str],
    paths: list[str],
    clients: int,
    seconds: float,
    server_pid: int | None = None,
) -> dict[str, Any]:
    """``clients`` processes in parallel, each with its own connection, for ``seconds``; with
    ``server_pid``, also the server's CPU time per request (what the machine's load can't skew:
    the requests/s one core could serve is a million over it)."""
    cpu_before = cpu_seconds(server_pid) if server_pid else 0.0
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(clients), ctx.Queue()
    procs = [
        ctx.Process(target=_client, args=(target, headers, paths, n, seconds, barrier, results))
        for n in range(clients)
    ]
    for proc in procs:
        proc.start()
    latencies: list[float] = []
    errors = 0
    for _ in procs:
        got, bad = results.get(timeout=seconds + 300)
        latencies += got
        errors += bad
    for proc in procs:
        proc.join()
    cpu = cpu_seconds(server_pid) - cpu_before if server_pid else 0.0
    latencies.sort()
    if not latencies:
        raise RuntimeError(f"no request of {target} succeeded ({errors} errors)")
    return {
        "server_cpu_us": round(1e6 * cpu / len(latencies)) if server_pid else None,
        "requests": len(latencies),
        "rps": round(len(latencies) / seconds, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 1),
        "errors": errors,
    }


def run_cells(
    sock: Path,
    port: int,
    token: str,
    slugs: list[str],
    seconds: float,
    rng: random.Random,
    only: str = "",
    label: str = "",
    pid: int | None = None,
    name: str = "vault",
) -> list[dict[str, Any]]:
    claims = len(slugs) * PER_PAGE
    base = f"/v1/vaults/{name}"
    # selective queries (a record number: one claim has it): this measures the daemon, not BM25
    # over a fifth of the wiki (common-word queries: see "Retrieval at scale" in benchmarks.md)
    searches = [f"{base}/search?q={rng.randrange(2000, claims)}" for _ in range(500)]
    pages = [f"{base}/pages/{rng.choice(slugs)}" for _ in range(500)]
    targets = {
        "unix": (("unix", str(sock)), {}),
        "tcp": (("tcp", port), {"Authorization": f"Bearer {token}"}),
    }
    out = []
    for transport_name, (target, headers) in targets.items():
        for kind, paths in (("search", searches), ("page", pages)):
            for concurrency in (1, 8, 64):
                if only and f"{transport_name}:{kind}:{concurrency}" not in only.split(","):
                    continue
                load(target, headers, paths, concurrency, min(1.0, seconds / 4))  # warm-up
                cell = load(target, headers, paths, concurrency, seconds, pid)
                request = f"{kind} ({label})" if label else kind
                row = {"transport": transport_name, "request": request, "clients": concurrency}
                row.update(cell)
                print(json.dumps(row), file=sys.stderr)
                out.append(row)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--threads", type=int, default=16, help="the daemon's --threads")
    parser.add_argument(
        "--workers", default="1", help="the daemon's --workers, one daemon each: e.g. 1,2,4"
    )
    parser.add_argument(
        "--only", default="", help="cells, e.g. unix:search:8,unix:page:8 (quick experiments)"
    )
    parser.add_argument(
        "--baseline", type=Path, help="also run the daemon from this src/ (e.g. main's) first"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--floor", action="store_true", help="also measure the bare-ASGI floor")
    parser.add_argument("--vault", type=Path, help="build the wiki here once and reuse it")
    parser.add_argument("--rounds", type=int, default=1, help="repeat, interleaving the servers")
    parser.add_argument("--serve-floor", help=argparse.SUPPRESS)
    parser.add_argument("--http", default="h11", help=argparse.SUPPRESS)
    parser.add_argument("--loop", default="asyncio", help=argparse.SUPPRESS)
    parser.add_argument("--floor-workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        serve_floor(args.serve_floor, args.http, args.loop, args.floor_workers)
        return 0
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="bench-server-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        rows: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        root = args.vault or work / "vault"
        slugs = reuse(root, args.claims) or build(args.claims, root, rng)
        print(
            json.dumps(
                {"built_claims": args.claims, "seconds": round(time.perf_counter() - t0, 1)}
            ),
            file=sys.stderr,
        )
        name = vault_name(root.resolve())
        with open_vault(root) as vault:
            _, token = token_store.create_token(
                vault.db, vault.clock, "read", timedelta(hours=2), "bench", "bench"
            )
        # every server is started first and the rounds interleave them, so that each round
        # measures the floor, the baseline and the daemon under the same load on the machine
        daemons: list[tuple[str, Path, int, int]] = []
        counts = [int(n) for n in args.workers.split(",")]
        if args.baseline:  # with the largest worker count measured (the same processes)
            proc, sock, port = start(
                root, work / "baseline", args.threads, args.baseline, max(counts)
            )
            procs.append(proc)
            daemons.append((f"baseline, {max(counts)} proc", sock, port, proc.pid))
        for count in counts:
            proc, sock, port = start(root, work / f"daemon-{count}", args.threads, workers=count)
            procs.append(proc)
            daemons.append((f"{count} proc", sock, port, proc.pid))
        cells = args.only.split(",") if args.only else []
        clients = sorted({int(c.split(":")[2]) for c in cells}) if cells else [1, 8, 64]
        for _ in range(args.rounds):
            if args.floor:
                rows += run_floor(work, args.seconds, clients, counts)
            for label, sock, port, pid in daemons:
                rows += run_cells(
                    sock, port, token, slugs, args.seconds, rng, args.only, label, pid, name
                )
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            "| transport | request | clients | requests/s | p50 ms | p99 ms | errors "
            "| server CPU µs/request |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['transport']} | {r['request']} | {r['clients']} | {r['rps']} | {r['p50_ms']} | "
                f"{r['p99_ms']} | {r['errors']} | {r['server_cpu_us']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
