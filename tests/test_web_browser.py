"""The web desk in a real browser: Debian's chromium driven by Playwright, against a real daemon
(``affidavit serve --web`` on loopback TCP) over real vaults (SQLite, git, files).

Nothing waits on time: every step waits on the page's state (Playwright's auto-waiting
``expect``, with a long timeout; keys are pressed once the page's keyboard is listening). Screenshots go to ``tmp/artifacts/web/``. ``scripts/setup_browser.sh`` installs
chromium (apt) and axe-core (npm, into ``.cache/axe``).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from affidavit import inbox
from affidavit.service import tokens as token_store
from affidavit.sources.store import SourceStore
from affidavit.vault import open_vault
from tests.test_server_authz import ROOT, Daemon, private_dir, start_daemon
from tests.web import make_vault

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect
expect.set_options(timeout=120_000)  # a wait on an event, however loaded the machine

CHROMIUM = Path("/usr/bin/chromium")
AXE = ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = ROOT / "tmp" / "artifacts" / "web"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FF, MONROE, WASH = "four-freedoms", "monroe-doctrine", "washington-1790"
VAULTS: dict[str, list[list[str]]] = {
    "approve": [[FF, MONROE, WASH]],
    "reject": [[FF]],
    "expired": [[FF]],
    "keys": [[FF, MONROE], [WASH, f"{FF}:ff-two"], [f"{MONROE}:monroe-two", f"{WASH}:wash-two"]],
    "readers": [[FF]],
    "csrf": [[FF]],
    "cited": [[FF, MONROE, WASH], [f"{FF}:freedoms-again"]],
}


@dataclass
class Desk:
    daemon: Daemon
    roots: dict[str, Path]
    plans: dict[str, list[str]]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.daemon.port}"

    def login_url(self) -> str:
        with self.daemon.unix() as client:
            response = client.post("/v1/web/login-link")
        assert response.status_code == 200, response.text
        url: str = response.json()["url"]
        return url

    def status(self, name: str, plan_id: str) -> tuple[str, str]:
        db = sqlite3.connect(self.roots[name] / ".affidavit" / "db.sqlite")
        try:
            row = db.execute("SELECT status, reason FROM plans WHERE id = ?", (plan_id,)).fetchone()
        finally:
            db.close()
        return row[0], row[1]

    def wiki(self, name: str) -> list[str]:
        """The pages in the vault's database, each with its file under wiki/."""
        db = sqlite3.connect(self.roots[name] / ".affidavit" / "db.sqlite")
        try:
            slugs = [r[0] for r in db.execute("SELECT slug FROM pages ORDER BY slug")]
        finally:
            db.close()
        assert all((self.roots[name] / "wiki" / f"{s}.md").is_file() for s in slugs)
        return slugs

    def inbox_order(self, name: str) -> list[str]:
        """The vault's plans in the inbox's order (oldest first, then in the order made)."""
        db = sqlite3.connect(self.roots[name] / ".affidavit" / "db.sqlite")
        try:
            return [r[0] for r in db.execute("SELECT id FROM plans ORDER BY created_at, rowid")]
        finally:
            db.close()


@pytest.fixture(scope="module")
def desk() -> Iterator[Desk]:
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run scripts/setup_browser.sh"
    base = private_dir("afd-web-")
    roots, plans = {}, {}
    for name, spec in VAULTS.items():
        roots[name] = base / name
        plans[name] = make_vault(roots[name], spec)
    with open_vault(roots["cited"]) as vault:  # a vault with pages to read
        inbox.approve(vault, plans["cited"][0], None, "tester")
    daemon = start_daemon(list(roots.values()), base, "--web")
    try:
        yield Desk(daemon, roots, plans)
    finally:
        assert daemon.stop() == 0


@contextmanager
def browser(profile: Path, bypass_csp: bool = False) -> Iterator[Any]:
    """A tab of the system chromium with a fresh profile (``bypass_csp`` to inject axe-core)."""
    with playwright_sync.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            bypass_csp=bypass_csp,
        )
        try:
            tab = context.pages[0] if context.pages else context.new_page()
            tab.set_default_timeout(30_000)
            yield tab
        finally:
            context.close()


@pytest.fixture
def page(desk: Desk, tmp_path: Path) -> Iterator[Any]:
    with browser(tmp_path / "profile") as tab:
        yield tab


def login(page: Any, desk: Desk) -> None:
    page.goto(desk.login_url())
    expect(page.get_by_role("heading", name="Your vaults")).to_be_visible()


def shot(page: Any, name: str, full_page: bool = True) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_approving_two_of_three_operations_writes_exactly_those(page: Any, desk: Desk) -> None:
    login(page, desk)
    (plan_id,) = desk.plans["approve"]
    head = git(desk.roots["approve"], "rev-parse", "HEAD").strip()
    page.goto(f"{desk.base}/web/approve/inbox")
    shot(page, "inbox")
    page.get_by_role("link", name=plan_id[:12]).click()
    expect(page.get_by_role("heading", name=f"Plan {plan_id[:12]}")).to_be_visible()
    expect(page.locator("mark.span").first).to_be_visible()
    shot(page, "plan", full_page=False)
    # operations with a text that waits for a person start unticked; the supported one ticked
    expect(page.get_by_label("Approve operation 1")).not_to_be_checked()
    expect(page.get_by_label("Approve operation 3")).to_be_checked()
    page.get_by_label("Approve operation 1").check()
    expect(page.get_by_label("Approve operation 2")).not_to_be_checked()
    page.get_by_role("button", name="Approve selected (a)").click()
    expect(page.locator(".flash")).to_contain_text("Approved operation(s) 1, 3")
    assert desk.wiki("approve") == [FF, WASH]
    assert desk.status("approve", plan_id)[0] == "pending"  # operation 2 still waits
    changed = git(desk.roots["approve"], "diff", "--name-only", head, "HEAD").split()
    shared = {"wiki/index.md", "wiki/log.md", "wiki/context.md"}  # the vault's own pages
    assert sorted(p for p in changed if p.startswith("wiki/") and p not in shared) == [
        f"wiki/{FF}.md",
        f"wiki/{WASH}.md",
    ]
    assert git(desk.roots["approve"], "rev-list", "--count", f"{head}..HEAD").strip() == "1"


def test_rejecting_with_a_reason(page: Any, desk: Desk) -> None:
    login(page, desk)
    (plan_id,) = desk.plans["reject"]
    page.goto(f"{desk.base}/web/reject/plans/{plan_id}")
    page.get_by_label("Reason to reject (r)").fill("the wrong year")
    page.get_by_role("button", name="Reject").click()
    expect(page.get_by_role("status")).to_contain_text("Rejected plan")
    assert desk.status("reject", plan_id) == ("rejected", "the wrong year")
    assert desk.wiki("reject") == []


def test_an_expired_plan_is_refused_from_a_stale_page(page: Any, desk: Desk) -> None:
    login(page, desk)
    (plan_id,) = desk.plans["expired"]
    page.goto(f"{desk.base}/web/expired/plans/{plan_id}")
    expect(page.get_by_role("button", name="Approve all")).to_be_visible()
    db = sqlite3.connect(desk.roots["expired"] / ".affidavit" / "db.sqlite")
    with db:  # the plan's day passes while the page stays open
        db.execute("UPDATE plans SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?", (plan_id,))
    db.close()
    with page.expect_response(re.compile(r"/approve$")) as answer:
        page.get_by_role("button", name="Approve all").click()
    assert answer.value.status == 409
    expect(page.get_by_role("alert")).to_contain_text("changed since you opened it")
    shot(page, "stale")
    assert desk.status("expired", plan_id)[0] == "expired"
    assert desk.wiki("expired") == []


def keys_ready(page: Any) -> None:
    """The page's keyboard listens (desk.js ran): keys pressed before would be lost."""
    expect(page.locator("html[data-keys=ready]")).to_have_count(1)


def answer_every_waiting_text(page: Any, key: str) -> None:
    unanswered = page.locator("li.wait[data-answer='']")
    while unanswered.count():
        page.keyboard.press(key)


def test_keyboard_review_of_three_plans(page: Any, desk: Desk) -> None:
    """Three plans of two operations each, without the mouse: approve the first whole (a yes to
    each text that waits), one operation of the second (its supported one, or operation 1 ticked
    with x when both wait; the other's texts are left for later), and reject the third with a reason. Every step waits on the page's state; the
    plans' ids (content hashes) differ from run to run, so which operation waits is read from the page."""
    login(page, desk)
    spec = dict(zip(desk.plans["keys"], VAULTS["keys"], strict=True))
    first, second, third = desk.inbox_order("keys")
    page.goto(f"{desk.base}/web/keys/inbox")
    keys_ready(page)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=f"Plan {first[:12]}")).to_be_visible()
    keys_ready(page)
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()
    answer_every_waiting_text(page, "y")
    expect(page.get_by_label("Approve operation 1")).to_be_checked()
    expect(page.get_by_label("Approve operation 2")).to_be_checked()
    page.keyboard.press("a")
    expect(page.get_by_role("heading", name=f"Plan {second[:12]}")).to_be_visible()
    keys_ready(page)
    waits = page.locator("li.wait").evaluate_all("els => els.map(e => Number(e.dataset.op))")
    answer_every_waiting_text(page, "d")  # decide later: their operations stay unticked
    approved = [n for n in (1, 2) if n not in waits]
    if not approved:  # both wait: tick operation 1 by hand (j selects it, x ticks it)
        page.keyboard.press("j")
        page.keyboard.press("x")
        approved = [1]
    assert approved in ([1], [2])
    for n in (1, 2):
        box = expect(page.get_by_label(f"Approve operation {n}"))
        box.to_be_checked() if n in approved else box.not_to_be_checked()
    page.keyboard.press("a")
    expect(page.get_by_role("heading", name=f"Plan {third[:12]}")).to_be_visible()
    keys_ready(page)
    page.keyboard.press("r")
    expect(page.get_by_label("Reason to reject (r)")).to_be_focused()
    page.keyboard.type("a duplicate")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").first).to_contain_text("Rejected plan")
    assert desk.status("keys", first)[0] == "applied"
    assert desk.status("keys", second)[0] == "pending"  # its waiting operation stays
    assert desk.status("keys", third) == ("rejected", "a duplicate")
    slugs = [*spec[first], *(e for n, e in enumerate(spec[second], 1) if n in approved)]
    assert desk.wiki("keys") == sorted(e.partition(":")[2] or e for e in slugs)


def test_a_citation_opens_its_quote_in_the_source(page: Any, desk: Desk) -> None:
    login(page, desk)
    page.goto(f"{desk.base}/web/cited/pages/{FF}")
    shot(page, "page")
    cite = page.locator("a.cite").nth(1)
    quote = cite.inner_text().strip("“”")
    cite.click()
    expect(page.locator("mark#span")).to_have_text(quote)
    match = re.search(r"/sources/([0-9a-f]+)\?start=(\d+)&end=(\d+)", page.url)
    assert match is not None
    with open_vault(desk.roots["cited"]) as vault:  # the stored text holds it at those offsets
        body = SourceStore(vault).text(match.group(1))
    assert body[int(match.group(2)) : int(match.group(3))] == quote
    shot(page, "source")


def test_ask_shows_citations(page: Any, desk: Desk) -> None:
    login(page, desk)
    page.goto(f"{desk.base}/web/cited/search")
    page.get_by_label("Ask a question").fill("What was the second freedom?")
    page.get_by_role("button", name="Ask").click()
    expect(page.locator(".citations li").first).to_be_visible()
    expect(page.locator(".citations a.cite").first).to_contain_text("worship")
    shot(page, "ask")


def test_ask_says_what_the_wiki_never_mentions_and_where_to_look(page: Any, desk: Desk) -> None:
    login(page, desk)
    page.goto(f"{desk.base}/web/cited/search")
    page.get_by_label("Ask a question").fill("What did the speech say about freedom in Zanzibar?")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("section.answer")
    expect(answer).to_contain_text("Not in the wiki. It never mentions Zanzibar.")
    expect(answer).to_contain_text("Closest pages:")
    shot(page, "ask-not-in-wiki")


def test_a_read_role_cannot_approve_in_the_ui_or_by_a_raw_post(page: Any, desk: Desk) -> None:
    (plan_id,) = desk.plans["readers"]
    with open_vault(desk.roots["readers"]) as vault:
        _, secret = token_store.create_token(
            vault.db, vault.clock, "read", token_store.parse_duration("1h"), "web", "tester"
        )
    page.goto(f"{desk.base}/web/login")
    page.get_by_label("Token").fill(secret)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Your vaults")).to_be_visible()
    page.goto(f"{desk.base}/web/readers/plans/{plan_id}")
    expect(page.get_by_role("note")).to_contain_text("Your role on this vault is read")
    expect(page.get_by_role("button", name="Approve all")).to_have_count(0)
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    answer = page.request.post(
        f"{desk.base}/web/readers/plans/{plan_id}/approve",
        form={"csrf": csrf, "seen": "x", "action": "all"},
        headers={"Origin": desk.base},
    )
    assert answer.status == 403 and "needs the approve role" in answer.text()
    assert desk.status("readers", plan_id)[0] == "pending"


def test_a_cross_origin_form_post_is_refused(page: Any, desk: Desk) -> None:
    login(page, desk)
    (plan_id,) = desk.plans["csrf"]
    page.goto(f"{desk.base}/web/csrf/plans/{plan_id}")  # the victim is logged in
    target = f"{desk.base}/web/csrf/plans/{plan_id}/approve"
    evil = (
        f'<html lang="en"><body><form id="f" method="post" action="{target}">'
        '<input name="action" value="all"></form>'
        "<script>document.getElementById('f').submit()</script></body></html>"
    )
    page.route(
        "http://evil.test/**", lambda route: route.fulfill(body=evil, content_type="text/html")
    )
    with page.expect_response(target) as answer:
        page.goto("http://evil.test/")
    assert answer.value.status in (401, 403)
    assert desk.status("csrf", plan_id)[0] == "pending"


SCREENS = [
    ["login", "vaults", "inbox", "plan"],
    ["pages", "page", "sources", "source"],
    ["search", "ask", "lint", "jobs", "audit", "missing"],
]
"""Every screen, in three groups (each a test of its own, within the per-test time limit)."""


@pytest.mark.parametrize("screens", SCREENS, ids=["review", "reading", "asking-and-upkeep"])
def test_axe_finds_no_serious_violations_on_any_page(
    desk: Desk, tmp_path: Path, screens: list[str]
) -> None:
    assert AXE.exists(), "axe-core is missing: run scripts/setup_browser.sh"
    pending = desk.plans["cited"][1]
    with open_vault(desk.roots["cited"]) as vault:
        row = vault.db.execute('SELECT source_id, start, "end" FROM evidence LIMIT 1').fetchone()
    urls = {
        "vaults": "/web/",
        "inbox": "/web/cited/inbox",
        "plan": f"/web/cited/plans/{pending}",
        "pages": "/web/cited/pages",
        "page": f"/web/cited/pages/{FF}",
        "sources": "/web/cited/sources",
        "source": f"/web/cited/sources/{row[0]}?start={row[1]}&end={row[2]}",
        "search": "/web/cited/search?q=freedom",
        "lint": "/web/cited/lint",
        "jobs": "/web/cited/jobs",
        "audit": "/web/cited/audit",
        "missing": "/web/cited/pages/no-such-page",
    }
    seen: dict[str, list[str]] = {}
    with browser(tmp_path / "profile", bypass_csp=True) as page:
        if "login" in screens:
            page.goto(f"{desk.base}/web/login")
            seen["login"] = _axe(page)
        login(page, desk)
        for name in screens:
            if name in urls:
                page.goto(desk.base + urls[name])
                seen[name] = _axe(page)
        if "ask" in screens:
            page.goto(f"{desk.base}/web/cited/search")
            page.get_by_label("Ask a question").fill("What was the second freedom?")
            page.get_by_role("button", name="Ask").click()
            expect(page.locator(".answer")).to_be_visible()
            seen["ask"] = _axe(page)
    assert sorted(seen) == sorted(screens)
    serious = {name: found for name, found in seen.items() if found}
    assert serious == {}


def _axe(page: Any) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_the_daemon_prints_a_login_link(desk: Desk) -> None:
    lines = desk.daemon.log.read_text(encoding="utf-8").splitlines()
    printed = [line for line in lines if line.startswith("Web desk: open http://127.0.0.1:")]
    assert printed and "/web/login?token=" in printed[0]
