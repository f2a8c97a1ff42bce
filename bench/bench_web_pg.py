"""The web desk's screens over a SQLite vault and over a PostgreSQL vault holding the same wiki.

Builds the wiki of bench_web.py (one source; a page of ``--claims`` claims, approved; ``--plans``
pending plans of one claim each) in a SQLite vault and, with ``--backend pg`` or ``both``, in a
vault of a fresh PostgreSQL database (tests/pg_cluster.py) through its door; then loads each
screen ``--runs`` times in-process (FastAPI's TestClient, the owner's session: no browser, no
socket) and reports the server's time per screen, p50/p90 in ms. The SQLite half runs on any
tree (``PYTHONPATH=TREE/src``), to compare the desk before and after a change.

    PYTHONPATH=src .venv/bin/python bench/bench_web_pg.py --plans 100 --claims 300 --runs 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_web import build, claim, pct, sentence
from fastapi.testclient import TestClient

BASE = "http://127.0.0.1:8765"


def screens(client: TestClient, vault: str) -> dict[str, str]:
    inbox = client.get(f"/web/{vault}/inbox").text
    start = inbox.index(f'href="/web/{vault}/plans/') + len(f'href="/web/{vault}/plans/')
    plan = inbox[start : inbox.index('"', start)]
    return {
        "inbox": f"/web/{vault}/inbox",
        "plan": f"/web/{vault}/plans/{plan}",
        "page": f"/web/{vault}/pages/ledger",
        "search": f"/web/{vault}/search?q=barrels+of+flour+Harbour+7",
    }


def measure(client: TestClient, vault: str, runs: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, path in screens(client, vault).items():
        times = []
        for _ in range(runs + 1):  # the first warms the caches
            began = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, response.text[:500]
        times = times[1:]
        out[name] = {"p50_ms": round(pct(times, 0.5), 1), "p90_ms": round(pct(times, 0.9), 1)}
    return out


def logged_in(app: Any) -> TestClient:
    desk = app.state.web
    desk.base_url = BASE
    client = TestClient(app, base_url=BASE)
    client.__enter__()
    url = desk.login_url(os.geteuid()).removeprefix(BASE)
    assert client.get(url, follow_redirects=False).status_code == 303
    return client


def sqlite_run(work: Path, plans: int, claims: int, runs: int) -> dict[str, Any]:
    from affidavit.server.app import create_app
    from affidavit.server.registry import Registry

    root = work / "bench"
    build(root, plans, claims)
    client = logged_in(create_app(Registry.open([root]), run_workers=False, web=True))
    try:
        return measure(client, "bench", runs)
    finally:
        client.__exit__(None, None, None)


def pg_build(url: str, plans: int, claims: int) -> None:
    """bench_web.build's wiki in vault ``bench`` of the database at ``url``."""
    import pwd

    from affidavit.config import Config
    from affidavit.service.pg_vaults import PgVault
    from affidavit.storage.postgres import PostgresStorage

    storage = PostgresStorage(url)
    try:
        storage.create_vault("bench", pwd.getpwuid(os.geteuid()).pw_name)
        text = "# Ledger\n\n" + "\n".join(sentence(i) for i in range(claims + plans)) + "\n"
        source = storage.add_source(
            "bench", text.encode(), origin="/bench/ledger.md", name="ledger.md",
            added_at="2026-12-07T09:00:00Z", media_type="text/markdown", trust="trusted",
        )  # fmt: skip
        vault = PgVault(storage, "bench", Config())

        def propose(ops: list[dict[str, Any]]) -> str:
            plan = {"nonce": vault.new_nonce(1).nonce, "operations": ops}
            return vault.propose(plan, "bench", "bench").plan_id

        first = [{"op": "create_page", "slug": "ledger", "title": "The ledger",
                  "summary": "Every entry of the ledger.",
                  "claims": [claim(i, source) for i in range(min(30, claims))]}]  # fmt: skip
        vault.approve(propose(first), None, "bench")
        for start in range(30, claims, 30):
            more = [{"op": "add_claims", "page": "ledger", "section": f"Entries {start}",
                     "claims": [claim(i, source) for i in range(start, min(start + 30, claims))]}]  # fmt: skip
            vault.approve(propose(more), None, "bench")
        for n in range(plans):
            i = claims + n
            propose([{"op": "create_page", "slug": f"entry-{n}", "title": f"Ledger entry {i}",
                      "summary": sentence(i), "claims": [claim(i, source)]}])  # fmt: skip
    finally:
        storage.close()


def pg_run(plans: int, claims: int, runs: int) -> dict[str, Any]:
    from tests import pg_cluster

    from affidavit.config import Config
    from affidavit.server.pg_app import create_pg_app
    from affidavit.server.pg_registry import PgRegistry

    cluster = pg_cluster.cluster()
    url = str(cluster.create_database("bench_web_pg"))
    try:
        pg_build(url, plans, claims)
        registry = PgRegistry.open(url, Config())
        client = logged_in(create_pg_app(registry, web=True))
        try:
            return measure(client, "bench", runs)
        finally:
            client.__exit__(None, None, None)
    finally:
        cluster.drop_database(url)
        pg_cluster.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=100)
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--backend", choices=("sqlite", "pg", "both"), default="both")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="afd-bench-web-pg-"))
    result: dict[str, Any] = {"plans": args.plans, "claims": args.claims, "runs": args.runs}
    try:
        if args.backend in ("sqlite", "both"):
            result["sqlite"] = sqlite_run(work, args.plans, args.claims, args.runs)
        if args.backend in ("pg", "both"):
            result["postgresql"] = pg_run(args.plans, args.claims, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
