"""The review desk for a day's work (issue 28): a 50-plan inbox reviewed from the keyboard, and
the server time of the inbox, a 20-operation plan and the graph of a 1,000-page wiki.

Builds the day's vault of the browser test (``tests/web/day.py``: 20 plans whose title waits, 20
supported, 5 dependent, 3 lint fixes, 2 agents' plans) with ``--pages`` applied pages linked in a
ring (every 10th an orphan) and one pending 20-operation plan, starts ``affidavit serve --web`` on
loopback and, in Debian's headless chromium (Playwright):

1. loads the inbox, the 20-operation plan, the graph page and its JSON ``--runs`` times each:
   server time is the daemon's request log ``ms`` (p50/p95); the graph's *interactive* time is
   the page's own ``data-ms`` (fetch + Cytoscape layout, drawn and clickable) plus the load event;
2. reviews the inbox as the test does — ``s`` Enter (approve what is supported, one batch), then
   each waiting title ``y`` (one ``n``) and ``a``, an agent's plan ``a``, the other ``r`` + reason
   — counting keystrokes and wall-clock seconds until the inbox is empty.

    python bench/bench_desk.py --pages 1000 --runs 10
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_web import FLAGS, _login_url, pct  # noqa: E402
from tests.web.day import Day, build_day, claim  # noqa: E402

from affidavit.plan.nonce import issue_nonce  # noqa: E402
from affidavit.vault import open_vault  # noqa: E402


def twenty_ops(root: Path) -> str:
    """A pending plan of 20 create_page operations (one supported claim each)."""
    from affidavit import inbox

    with open_vault(root) as vault:
        source = str(vault.db.execute("SELECT id FROM sources LIMIT 1").fetchone()[0])
        ops = [
            {
                "op": "create_page",
                "slug": f"twenty-{n}",
                "title": f"Ledger entry {100 + n}",
                "summary": claim(100 + n, source)["text"],
                "claims": [claim(100 + n, source)],
            }
            for n in range(20)
        ]
        plan = {"nonce": issue_nonce(vault.db, vault.clock, "bench"), "operations": ops}
        return inbox.propose(vault, json.dumps(plan), "bench", "bench").plan_id


def review(tab: object, origin: str, day: Day, twenty: str) -> tuple[int, float]:
    """The scripted keyboard review; returns (keystrokes, seconds)."""
    from playwright.sync_api import expect

    page: object = tab
    keys = 0

    def press(key: str) -> None:
        nonlocal keys
        page.keyboard.press(key)  # type: ignore[attr-defined]
        keys += 1

    def ready() -> None:
        expect(page.locator("html[data-keys=ready]")).to_have_count(1)  # type: ignore[attr-defined]

    said_no, rejected = day.waiting[3], day.agent[1]
    started = time.monotonic()
    page.goto(f"{origin}/web/bench/inbox")  # type: ignore[attr-defined]
    ready()
    press("s")
    expect(page.locator("#confirm-supported")).to_be_focused()  # type: ignore[attr-defined]
    press("Enter")
    expect(page.locator(".flash").first).to_contain_text("Approved")  # type: ignore[attr-defined]
    ready()
    press("j")
    press("Enter")
    while True:
        heading = page.locator("h1").first  # type: ignore[attr-defined]
        expect(heading).to_have_text(re.compile(r"^(Plan [0-9a-f]{12}|Inbox)$"))
        if heading.inner_text().strip() == "Inbox":
            break
        ready()
        shown = heading.inner_text().split()[1]
        plan_id = next((p for p in [*day.plans, twenty] if p.startswith(shown)), "")
        if plan_id == rejected:
            press("r")
            for ch in "not needed":
                press(ch)
            press("Enter")
        else:
            if plan_id in day.waiting:
                press("n" if plan_id == said_no else "y")
            press("a")
        expect(page.locator(".flash").first).to_contain_text(shown)  # type: ignore[attr-defined]
    return keys, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=300_000)
    base = Path(tempfile.mkdtemp(prefix="afd-bench-desk-"))
    root = base / "bench"
    built = time.monotonic()
    day = build_day(root, extra_pages=args.pages)
    twenty = twenty_ops(root)
    print(f"built in {time.monotonic() - built:.0f} s: {args.pages + 3} pages, 51 pending plans")
    log = base / "daemon.log"
    sock = base / "run" / "affidavit.sock"
    sock.parent.mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    command += ["--vault", str(root), "--socket", str(sock), "--web", "--no-workers"]
    with log.open("wb") as err:
        daemon = subprocess.Popen(command, stderr=err, stdout=subprocess.DEVNULL, env=env)
    screens = {
        "inbox": ("/web/bench/inbox", "/web/{vault}/inbox"),
        "plan20": (f"/web/bench/plans/{twenty}", "/web/{vault}/plans/{plan_id}"),
        "graph": ("/web/bench/graph", "/web/{vault}/graph"),
        "graph.json": (None, "/web/{vault}/graph.json"),
    }
    interactive: list[float] = []
    try:
        url = _login_url(log, daemon)
        origin = url.split("/web/")[0]
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(base / "profile"),
                executable_path="/usr/bin/chromium",
                headless=True,
                args=FLAGS,
            )
            tab = context.pages[0] if context.pages else context.new_page()
            tab.goto(url)
            for name, (path, _) in screens.items():
                if path is None:
                    continue
                for run in range(args.runs + 1):  # the first load warms the daemon's pools
                    tab.goto(origin + path, wait_until="load")
                    if name == "graph":
                        expect(tab.locator("#graph[data-ready]")).to_have_count(1)
                        ms = tab.evaluate(
                            "() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
                            " + Number(document.getElementById('graph').dataset.ms)"
                        )
                        if run:
                            interactive.append(float(ms))
            keys, seconds = review(tab, origin, day, twenty)
            context.close()
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
    server: dict[str, list[float]] = {name: [] for name in screens}
    routes = {route: name for name, (_, route) in screens.items()}
    for line in log.read_text(encoding="utf-8").splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        name = routes.get(entry.get("route", ""))
        if name and entry.get("status") == 200:
            server[name].append(float(entry["ms"]))
    print(f"{args.runs} runs each (after one warm-up); server time from the daemon's request log")
    for name, values in server.items():
        values = values[1 : args.runs + 1]  # the warm-up, then the runs before the review
        if values:
            print(
                f"{name:10} server p50 {statistics.median(values):7.1f} ms  "
                f"p95 {pct(values, 0.95):7.1f} ms"
            )
    if interactive:
        print(
            f"graph interactive (DOMContentLoaded + fetch + layout) p50 "
            f"{statistics.median(interactive):7.1f} ms  p95 {pct(interactive, 0.95):7.1f} ms"
        )
    print(f"50-plan review (+ the 20-op plan): {keys} keystrokes, {seconds:.1f} s scripted")


if __name__ == "__main__":
    main()
