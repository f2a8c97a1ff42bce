"""The web desk under a day's load: an inbox of N pending plans and a page of M claims.

Builds a vault (one source of M+N sentences; one plan of M claims on one page, approved; N
pending plans of one claim each), starts ``affidavit serve --web`` on loopback, and loads each
screen R times in Debian's headless chromium (Playwright). Reports, per screen, the server's own
time for the request (p50/p90 of the daemon's request log ``ms``) and the browser's load time
(``loadEventEnd`` of the navigation, p50/p90).

    python bench/bench_web.py --plans 200 --claims 500 --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from affidavit import inbox
from affidavit.plan.nonce import issue_nonce
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

ROOT = Path(__file__).resolve().parent.parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def sentence(i: int) -> str:
    return f"Ledger entry {i} records {100 + i} barrels of flour shipped from Harbour {i % 37}."


def claim(i: int, source: str) -> dict[str, Any]:
    return {"text": sentence(i), "evidence": [{"source": source, "quote": sentence(i)}]}


def build(root: Path, plans: int, claims: int) -> None:
    vault, _ = init_vault(root)
    try:
        text = "# Ledger\n\n" + "\n".join(sentence(i) for i in range(claims + plans)) + "\n"
        source = (
            SourceStore(vault)
            .add_bytes(
                text.encode(),
                origin="/bench/ledger.md",
                name="ledger.md",
                media_type="text/markdown",
                trust="trusted",
            )
            .record.id
        )
        ops: list[dict[str, Any]] = [
            {
                "op": "create_page",
                "slug": "ledger",
                "title": "The ledger",
                "summary": "Every entry of the ledger.",
                "claims": [claim(i, source) for i in range(min(30, claims))],
            }
        ]
        for start in range(30, claims, 30):
            ops.append(
                {
                    "op": "add_claims",
                    "page": "ledger",
                    "section": f"Entries {start}",
                    "claims": [claim(i, source) for i in range(start, min(start + 30, claims))],
                }
            )
        _apply(vault, ops)
        for n in range(plans):  # title and summary say only what the quote says (support check)
            i = claims + n
            _propose(
                vault,
                [
                    {
                        "op": "create_page",
                        "slug": f"entry-{n}",
                        "title": f"Ledger entry {i}",
                        "summary": sentence(i),
                        "claims": [claim(i, source)],
                    }
                ],
            )
    finally:
        vault.close()


def _propose(vault: Vault, ops: list[dict[str, Any]]) -> str:
    plan = {"nonce": issue_nonce(vault.db, vault.clock, "bench"), "operations": ops}
    return inbox.propose(vault, json.dumps(plan), "bench", "bench").plan_id


def _apply(vault: Vault, ops: list[dict[str, Any]]) -> None:
    inbox.approve(vault, _propose(vault, ops), None, "bench")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    base = Path(tempfile.mkdtemp(prefix="afd-bench-web-"))
    root = base / "bench"
    build(root, args.plans, args.claims)
    log = base / "daemon.log"
    sock = base / "run" / "affidavit.sock"
    sock.parent.mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    command += ["--vault", str(root), "--socket", str(sock), "--web", "--no-workers"]
    with log.open("wb") as err:
        daemon = subprocess.Popen(command, stderr=err, stdout=subprocess.DEVNULL, env=env)
    try:
        url = _login_url(log, daemon)
        origin = url.split("/web/")[0]
        screens = {"inbox": "/web/bench/inbox", "page": "/web/bench/pages/ledger"}
        load: dict[str, list[float]] = {name: [] for name in screens}
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(base / "profile"),
                executable_path="/usr/bin/chromium",
                headless=True,
                args=FLAGS,
            )
            tab = context.pages[0] if context.pages else context.new_page()
            tab.goto(url)
            for name, path in screens.items():
                for _ in range(args.runs + 1):  # the first load warms the daemon's pools
                    tab.goto(origin + path, wait_until="load")
                    ms = tab.evaluate(
                        "() => { const n = performance.getEntriesByType('navigation')[0];"
                        " return n.loadEventEnd - n.startTime; }"
                    )
                    load[name].append(float(ms))
                load[name] = load[name][1:]
            context.close()
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
    server: dict[str, list[float]] = {"inbox": [], "page": []}
    for line in log.read_text(encoding="utf-8").splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        route = entry.get("route", "")
        key = (
            "inbox"
            if route == "/web/{vault}/inbox"
            else ("page" if route == "/web/{vault}/pages/{slug}" else None)
        )
        if key and entry.get("status") == 200:
            server[key].append(float(entry["ms"]))
    for key in server:
        server[key] = server[key][1:]  # drop the warm-up, as for the browser
    print(
        f"N={args.plans} pending plans, M={args.claims} claims on one page, {args.runs} runs each"
    )
    for name in screens:
        s, b = server[name], load[name]
        print(
            f"{name:6} server p50 {statistics.median(s):7.1f} ms  p90 {pct(s, 0.9):7.1f} ms | "
            f"browser load p50 {statistics.median(b):7.1f} ms  p90 {pct(b, 0.9):7.1f} ms"
        )


def _login_url(log: Path, daemon: subprocess.Popen[bytes]) -> str:
    """The login link the daemon prints once it listens (read from its log as it appears)."""
    with log.open(encoding="utf-8") as stream:
        while True:
            line = stream.readline()
            if not line:
                if daemon.poll() is not None:
                    raise RuntimeError(f"the daemon exited: {log.read_text()}")
                time.sleep(0.05)
                continue
            found = re.search(r"Web desk: open (\S+)", line)
            if found:
                return found.group(1)


if __name__ == "__main__":
    main()
