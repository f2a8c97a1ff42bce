"""Search through MCP vs through the API: p50/p95 latency of one client, on the daemon's Unix socket.

The same wiki as ``bench_server.py`` (synthetic claims written into the tables), the same daemon
(``affidavit serve --no-workers``), the same selective queries. One keep-alive connection sends N
requests back to back: ``GET /v1/vaults/vault/search?q=…`` against a JSON-RPC ``tools/call`` of
``search_claims`` on ``POST /mcp/vault`` (stateless streamable HTTP, JSON answers). The difference
is what MCP costs on top of the service call. It also prints the tool list's size in tokens.

    .venv/bin/python bench/bench_mcp.py [--claims 20000] [--requests 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import PER_PAGE, UnixConnection, build, start

from affidavit.retrieval.tokens import count_tokens

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "mcp-protocol-version": "2025-03-26",
}


def _timed(conn: UnixConnection, method: str, path: str, body: bytes | None) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    conn.request(method, path, body=body, headers=HEADERS if body else {})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:200]!r}")
    return time.perf_counter() - t0, data


def _stats(latencies: list[float]) -> dict[str, float]:
    latencies = sorted(latencies)
    return {
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claims", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="afd-bench-mcp-"))
    (work / "run").mkdir(mode=0o700)
    proc = None
    try:
        build(args.claims, work / "vault", rng)
        proc, sock, _ = start(work / "vault", work)
        conn = UnixConnection(str(sock))
        claims = (args.claims // PER_PAGE) * PER_PAGE
        queries = [str(rng.randrange(2000, claims)) for _ in range(args.requests)]
        deadline = time.monotonic() + 60
        while True:  # the socket exists before the daemon answers
            try:
                _timed(conn, "GET", "/v1/health", None)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                conn.close()
                time.sleep(0.1)
        listed = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}
        _, data = _timed(conn, "POST", "/mcp/vault", json.dumps(listed).encode())
        tools = json.loads(data)["result"]["tools"]
        api: list[float] = []
        mcp: list[float] = []
        for n, query in enumerate(queries):
            took, _ = _timed(conn, "GET", f"/v1/vaults/vault/search?q={query}&k=10", None)
            api.append(took)
            call = {
                "jsonrpc": "2.0",
                "id": n + 1,
                "method": "tools/call",
                "params": {"name": "search_claims", "arguments": {"query": query, "limit": 10}},
            }
            took, data = _timed(conn, "POST", "/mcp/vault", json.dumps(call).encode())
            if json.loads(data)["result"].get("isError"):
                raise RuntimeError(data[:300])
            mcp.append(took)
        out: dict[str, Any] = {
            "claims": claims,
            "requests": args.requests,
            "tools": len(tools),
            "tool_list_tokens": count_tokens(json.dumps(tools)),
            "api_search": _stats(api),
            "mcp_search": _stats(mcp),
        }
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['claims']} claims, {out['requests']} searches each, one client, Unix socket")
        print(f"tool list: {out['tools']} tools, {out['tool_list_tokens']} tokens")
        for name in ("api_search", "mcp_search"):
            s = out[name]
            print(f"{name:11} p50 {s['p50_ms']:7.2f} ms  p95 {s['p95_ms']:7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
