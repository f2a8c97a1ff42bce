"""The web desk over a PostgreSQL database in a real browser: Debian's chromium driven by
Playwright against a real ``affidavit serve --database URL --web``; the owner signs in with the
daemon's one-time login link, reads a pending plan beside its quotes and approves it — applied
once through the database's door. Every wait is on the page's state, never on time."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.config import Config
from tests.conftest import claim

pytestmark = pytest.mark.xdist_group("postgres")

psycopg = pytest.importorskip("psycopg")

from affidavit.service.pg_vaults import PgVault  # noqa: E402
from affidavit.storage.postgres import PostgresStorage  # noqa: E402

from .pg_cluster import drop_vaults  # noqa: E402
from .test_pg_serve_cli import Daemon  # noqa: E402
from .test_web_browser import CHROMIUM, browser, expect, shot  # noqa: E402

BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long.\n"


@pytest.fixture(scope="module")
def served(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str]]:
    """A daemon with the desk over vault ``team`` (owned by this user) holding one pending
    plan; the plan's id."""
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run scripts/setup_browser.sh"
    drop_vaults(pg_url)
    storage = PostgresStorage(pg_url)
    try:
        storage.create_vault("team", pwd.getpwuid(os.geteuid()).pw_name)
        source = storage.add_source(
            "team", BRIDGE.encode(), origin="/docs/bridge.md", name="bridge.md",
            added_at="2026-11-30T09:00:00Z", media_type="text/markdown", trust="trusted",
        )  # fmt: skip
        vault = PgVault(storage, "team", Config())
        page = {
            "op": "create_page", "slug": "bridge", "title": "The bridge",
            "summary": "The bridge opened in 1932",
            "claims": [claim("The bridge is 503 metres long.", source,
                             "The bridge is 503 metres long")],
        }  # fmt: skip
        plan_id = vault.propose(
            {"nonce": vault.new_nonce(1).nonce, "operations": [page]}, "ann", "cli"
        ).plan_id
    finally:
        storage.close()
    daemon = Daemon(tmp_path_factory.mktemp("desk"), "--database", pg_url, "--web", env={})
    try:
        yield daemon, plan_id
    finally:
        assert daemon.stop() == 0


def test_the_owner_signs_in_and_approves_a_plan_in_a_browser(
    served: tuple[Daemon, str], pg_url: str, tmp_path: Path
) -> None:
    daemon, plan_id = served
    with daemon.unix() as client:
        link = client.post("/v1/web/login-link")
    assert link.status_code == 200, link.text
    base = f"http://127.0.0.1:{daemon.port}"
    with browser(tmp_path / "profile") as page:
        page.goto(link.json()["url"])
        expect(page.get_by_role("heading", name="Your vaults")).to_be_visible()
        page.goto(f"{base}/web/team/inbox")
        page.get_by_role("link", name=plan_id[:12]).click()
        expect(page.get_by_role("heading", name=f"Plan {plan_id[:12]}")).to_be_visible()
        expect(page.locator("mark.span").first).to_have_text("The bridge is 503 metres long")
        shot(page, "pg-plan", full_page=False)
        page.get_by_role("button", name="Approve all").click()
        expect(page.locator(".flash")).to_contain_text("Approved operation(s) 1 of plan")
        page.goto(f"{base}/web/team/pages/bridge")
        expect(page.locator(".claim").first).to_contain_text("The bridge is 503 metres long.")
    with psycopg.connect(pg_url) as conn:
        status = conn.execute("SELECT status FROM v_team.plans WHERE id = %s", (plan_id,))
        assert status.fetchone() == ("applied",)
        audit = conn.execute("SELECT action FROM v_team.audit WHERE plan_id = %s", (plan_id,))
        assert [r[0] for r in audit.fetchall()] == ["applied"]  # once, through the door
