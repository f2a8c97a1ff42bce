"""The daemon under load: requests/s and p50/p99 latency of search and page reads, with 1, 8 and 64
concurrent clients, on the Unix socket and on loopback TCP (bearer token), on a 100k-claim wiki.

The wiki is written straight into a vault's tables (as ``bench_scale.py`` does: synthetic sentences
from a fixed vocabulary, FTS5 kept in sync by the triggers), spread over pages of 100 claims each.
The daemon runs as a subprocess (``affidavit serve --no-workers``); the load comes from a bounded
asyncio httpx client in this process (wrk can't speak to a Unix socket, and one client for both
transports keeps them comparable). Each cell runs for ``--seconds`` after a short warm-up.

    .venv/bin/python bench/bench_server.py [--claims 100000] [--seconds 8] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import WORDS, sentence

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(vault: Path, work: Path) -> tuple[subprocess.Popen[bytes], Path, int]:
    sock, port = work / "run" / "d.sock", free_port()
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    args += [
        "--vault",
        str(vault),
        "--socket",
        str(sock),
        "--tcp",
        f"127.0.0.1:{port}",
        "--no-workers",
    ]
    log = (work / "daemon.log").open("wb")
    proc = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    deadline = time.monotonic() + 120
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((work / "daemon.log").read_text())
        time.sleep(0.1)
    return proc, sock, port


async def load(
    client: httpx.AsyncClient, paths: list[str], concurrency: int, seconds: float
) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds
    rng = random.Random(concurrency)

    async def worker() -> None:
        nonlocal errors
        while time.perf_counter() < stop_at:
            path = rng.choice(paths)
            t0 = time.perf_counter()
            response = await client.get(path)
            latencies.append(time.perf_counter() - t0)
            if response.status_code != 200:
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 1),
        "errors": errors,
    }


async def run_cells(
    sock: Path, port: int, token: str, slugs: list[str], seconds: float, rng: random.Random
) -> list[dict[str, Any]]:
    base = "/v1/vaults/vault"
    searches = [f"{base}/search?q=" + "+".join(rng.choices(WORDS, k=3)) for _ in range(500)]
    pages = [f"{base}/pages/{rng.choice(slugs)}" for _ in range(500)]
    out = []
    for transport_name in ("unix", "tcp"):
        for kind, paths in (("search", searches), ("page", pages)):
            for concurrency in (1, 8, 64):
                limits = httpx.Limits(
                    max_connections=concurrency, max_keepalive_connections=concurrency
                )
                if transport_name == "unix":
                    transport = httpx.AsyncHTTPTransport(uds=str(sock), limits=limits)
                    client = httpx.AsyncClient(
                        transport=transport, base_url="http://affidavit", timeout=120
                    )
                else:
                    client = httpx.AsyncClient(
                        base_url=f"http://127.0.0.1:{port}",
                        headers={"Authorization": f"Bearer {token}"},
                        limits=limits,
                        timeout=120,
                    )
                async with client:
                    await load(client, paths, concurrency, min(1.0, seconds / 4))  # warm-up
                    cell = await load(client, paths, concurrency, seconds)
                row = {"transport": transport_name, "request": kind, "clients": concurrency, **cell}
                print(json.dumps(row), file=sys.stderr)
                out.append(row)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="bench-server-"))
    proc = None
    try:
        t0 = time.perf_counter()
        slugs = build(args.claims, work / "vault", rng)
        print(
            json.dumps(
                {"built_claims": args.claims, "seconds": round(time.perf_counter() - t0, 1)}
            ),
            file=sys.stderr,
        )
        with open_vault(work / "vault") as vault:
            _, token = token_store.create_token(
                vault.db, vault.clock, "read", timedelta(hours=2), "bench", "bench"
            )
        proc, sock, port = start(work / "vault", work)
        rows = asyncio.run(run_cells(sock, port, token, slugs, args.seconds, rng))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| transport | request | clients | requests/s | p50 ms | p99 ms | errors |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['transport']} | {r['request']} | {r['clients']} | {r['rps']} | {r['p50_ms']} | "
                f"{r['p99_ms']} | {r['errors']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
