"""The review desk for a day's work (issue 28), in a real browser (Debian's chromium through
Playwright) against a real daemon over real vaults: a 50-plan inbox reviewed from the keyboard,
dependent plans approved together, refusals that name their true reason, the graph, and axe.

Every wait is on the page's state (``expect`` with a long timeout, the keyboard's ``data-keys``
flag, the graph's ``data-ready``), never on a timing margin. Screenshots are kept under
``tmp/artifacts/web/desk/``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from affidavit import inbox
from affidavit.lint.runner import run_lint
from affidavit.vault import open_vault
from tests.test_server_authz import ROOT, Daemon, private_dir, start_daemon
from tests.test_web_browser import AXE, CHROMIUM, _axe, browser, git
from tests.web.day import Day, build_day, claim
from tests.web.day import _propose as propose_ops

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect
expect.set_options(timeout=120_000)  # a wait on an event, however loaded the machine

ARTIFACTS = ROOT / "tmp" / "artifacts" / "web" / "desk"


@dataclass
class Desk:
    daemon: Daemon
    day: Day
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

    def statuses(self, name: str) -> dict[str, tuple[str, str]]:
        db = sqlite3.connect(self.roots[name] / ".affidavit" / "db.sqlite")
        try:
            return {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, status, reason FROM plans")}
        finally:
            db.close()

    def query(self, name: str, sql: str, *args: Any) -> list[Any]:
        db = sqlite3.connect(self.roots[name] / ".affidavit" / "db.sqlite")
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()


def _small(root: Path, title: str = "Ledger entry 1") -> list[str]:
    """A ledger vault with two pending plans: part 1 creates a page (titled ``title``), part 2
    extends it."""
    from affidavit.sources.store import SourceStore
    from affidavit.vault import init_vault
    from tests.web.day import sentence

    vault, _ = init_vault(root)
    try:
        text = "# Ledger\n\n" + "\n".join(sentence(i) for i in range(20)) + "\n"
        source = (
            SourceStore(vault)
            .add_bytes(
                text.encode(),
                origin="/day/ledger.md",
                name="ledger.md",
                media_type="text/markdown",
                trust="trusted",
            )
            .record.id
        )
        first = [
            {
                "op": "create_page",
                "slug": "entry-1",
                "title": title,
                "summary": sentence(1),
                "claims": [claim(1, source)],
            },
            {
                "op": "create_page",
                "slug": "entry-2",
                "title": "Ledger entry 2",
                "summary": sentence(2),
                "claims": [claim(2, source)],
            },
        ]
        part1 = propose_ops(vault, first, "model:extractive", "ingest:ledger.md#1")
        second = [{"op": "add_claims", "page": "entry-1", "claims": [claim(3, source)]}]
        part2 = propose_ops(vault, second, "model:extractive", "ingest:ledger.md#2")
        return [part1, part2]
    finally:
        vault.close()


@pytest.fixture(scope="module")
def desk() -> Iterator[Desk]:
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run scripts/setup_browser.sh"
    base = private_dir("afd-desk-")
    roots = {name: base / name for name in ("day", "deps", "stale", "graph", "axe")}
    day = build_day(roots["day"])
    plans = {"deps": _small(roots["deps"]), "stale": _small(roots["stale"])}
    plans["graph"] = _small(roots["graph"])
    plans["axe"] = _small(roots["axe"], "Harbour 1 flour trade")  # the title waits (W11)
    with open_vault(roots["graph"]) as vault:  # pages, a link, an orphan and a broken link
        inbox.approve_many(vault, plans["graph"], None, "tester")
        vault.db.execute(
            "INSERT INTO links (src, dst, plan_id) VALUES ('entry-1', 'entry-2', 'x'), "
            "('entry-1', 'nowhere', 'x')"
        )
        vault.db.commit()
        run_lint(vault)  # a broken link, an orphan, the files' drift from the links put in
    daemon = start_daemon(list(roots.values()), base, "--web")
    try:
        yield Desk(daemon, day, roots, plans)
    finally:
        assert daemon.stop() == 0


@dataclass
class Tab:
    page: Any
    errors: list[str]
    keys: int = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.keys += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.keys += len(text)

    def ready(self) -> None:
        """The page's keyboard is listening (desk.js ran)."""
        expect(self.page.locator("html[data-keys=ready]")).to_have_count(1)


@pytest.fixture
def tab(tmp_path: Path) -> Iterator[Tab]:
    with browser(tmp_path / "profile") as page:
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield Tab(page, errors)


def shot(page: Any, name: str, full_page: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


def login(tab: Tab, desk: Desk) -> None:
    tab.page.goto(desk.login_url())
    expect(tab.page.get_by_role("heading", name="Your vaults")).to_be_visible()


def plan_on_screen(page: Any) -> str | None:
    heading = page.locator("h1").first.inner_text()
    match = re.fullmatch(r"Plan ([0-9a-f]{12})", heading.strip())
    return match.group(1) if match else None


def test_a_days_inbox_reviewed_from_the_keyboard(desk: Desk, tab: Tab) -> None:
    """50 plans: approve what is supported in one batch, then answer each waiting text (y, one
    n), approve an agent's plan and reject the other — keys only, no console error."""
    day, page = desk.day, tab.page
    login(tab, desk)
    head = git(desk.roots["day"], "rev-parse", "HEAD").strip()
    page.goto(f"{desk.base}/web/day/inbox")
    tab.ready()
    expect(page.locator("li.change")).to_have_count(50)
    dependent = page.locator("li.change", has=page.locator("p.depends", has_text="Goes after"))
    expect(dependent).to_have_count(len(day.dependent))
    shot(page, "inbox")
    tab.press("s")
    expect(page.get_by_role("heading", name="Approve what is supported")).to_be_visible()
    shot(page, "supported-preview")
    tab.press("Enter")
    expect(page.get_by_role("status").first).to_contain_text("Approved what is supported of")
    tab.ready()
    left = len(day.waiting) + len(day.agent)
    expect(page.locator("li.change")).to_have_count(left)
    shot(page, "inbox-after-bulk")
    said_no = day.waiting[3]
    tab.press("j")
    tab.press("Enter")
    decided = 0
    while decided < left:
        expect(page.locator("h1")).to_have_text(re.compile(r"^Plan [0-9a-f]{12}$"))
        tab.ready()
        shown = plan_on_screen(page)
        assert shown is not None
        plan_id = next(p for p in day.plans if p.startswith(shown))
        if plan_id == said_no:
            tab.press("n")
        elif plan_id in day.waiting:
            if decided == 0:
                shot(page, "plan-waiting", full_page=True)
            expect(page.locator("li.wait.current")).to_have_count(1)
            expect(page.locator("li.wait mark.unsupported")).to_contain_text("trade")
            tab.press("y")
            expect(page.get_by_label("Approve operation 1")).to_be_checked()
        elif plan_id == day.agent[1]:
            tab.press("r")
            tab.type("not needed")
            tab.press("Enter")
            decided += 1
            expect(page.locator(".flash").first).to_contain_text(f"Rejected plan {shown}")
            continue
        tab.press("a")
        decided += 1
        expect(page.locator(".flash").first).to_contain_text(shown)
    expect(page.get_by_text("Nothing waits for review.")).to_be_visible()
    statuses = desk.statuses("day")
    for plan_id in [*day.supported, *day.dependent, *day.lint, day.agent[0]]:
        assert statuses[plan_id][0] == "applied", plan_id
    for plan_id in day.waiting:
        expected = "rejected" if plan_id == said_no else "applied"
        assert statuses[plan_id][0] == expected, plan_id
    assert statuses[said_no][1].startswith("a person said no to operation(s) 1")
    assert "trade" in statuses[said_no][1]
    assert statuses[day.agent[1]] == ("rejected", "not needed")
    titles = dict(desk.query("day", "SELECT slug, title FROM pages"))
    n_said_no = day.waiting.index(said_no)
    for n in range(len(day.waiting)):
        proposer = f"Harbour {(10 + n) % 37} flour trade"
        assert (titles[f"trade-{n}"] == proposer) is (n != n_said_no), n
    # one commit for the bulk approval, one per plan approved after it; none for a rejection
    commits = git(desk.roots["day"], "rev-list", "--count", f"{head}..HEAD").strip()
    assert int(commits) == 1 + (len(day.waiting) - 1) + 1
    assert tab.errors == []
    sys.stderr.write(f"50-plan review: {tab.keys} keystrokes\n")


def test_dependent_plans_are_refused_with_the_true_reason_and_approved_together(
    desk: Desk, tab: Tab
) -> None:
    part1, part2 = desk.plans["deps"]
    page = tab.page
    login(tab, desk)
    head = git(desk.roots["deps"], "rev-parse", "HEAD").strip()
    page.goto(f"{desk.base}/web/deps/plans/{part2}")
    tab.ready()
    expect(page.get_by_role("heading", name="Goes after 1 other plan(s)")).to_be_visible()
    with page.expect_response(re.compile(r"/approve$")) as answer:
        tab.press("a")
    assert answer.value.status == 409
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Not approved: another plan goes first"
    )
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text(f"which pending plan {part1[:12]} creates")
    expect(alert).not_to_contain_text("changed since you opened it")
    shot(page, "dependency-refusal")
    assert desk.statuses("deps")[part2][0] == "pending"
    expect(page.locator("#offer")).to_be_focused()
    tab.press("Enter")
    expect(page.locator(".flash").first).to_contain_text("together")
    statuses = desk.statuses("deps")
    assert statuses[part1][0] == statuses[part2][0] == "applied"
    assert git(desk.roots["deps"], "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    message = git(desk.roots["deps"], "log", "-1", "--format=%B")
    assert part1 in message and part2 in message
    assert [e for e in tab.errors if "status of 409 (Conflict)" not in e] == []  # the refusal


def test_a_stale_screen_is_refused_as_changed(desk: Desk, tab: Tab) -> None:
    part1, _ = desk.plans["stale"]
    page = tab.page
    login(tab, desk)
    page.goto(f"{desk.base}/web/stale/plans/{part1}")
    tab.ready()
    with open_vault(desk.roots["stale"]) as vault:  # decided elsewhere meanwhile
        inbox.approve(vault, part1, [1], "someone else")
    with page.expect_response(re.compile(r"/approve$")) as answer:
        tab.press("a")
    assert answer.value.status == 409
    expect(page.get_by_role("heading", level=1)).to_have_text("Changed since you opened it")
    expect(page.get_by_role("alert")).to_contain_text("decided elsewhere")
    assert desk.statuses("stale")[part1][0] == "pending"


def test_the_graph_marks_orphans_and_broken_links_and_opens_a_page(desk: Desk, tab: Tab) -> None:
    page = tab.page
    login(tab, desk)
    page.goto(f"{desk.base}/web/graph/graph")
    expect(page.locator("#graph[data-ready]")).to_have_count(1)
    expect(page.locator("ul.orphans")).to_contain_text("entry-1")
    expect(page.locator("ul.broken")).to_contain_text("nowhere")
    expect(page.locator("ul.orphans")).not_to_contain_text("entry-2")  # entry-1 links to it
    shot(page, "graph")
    missing = page.evaluate("() => window.deskGraph.$id('nowhere').hasClass('missing')")
    assert missing is True
    point = page.evaluate("() => window.deskGraph.$id('entry-2').renderedPosition()")
    box = page.locator("#graph").bounding_box()
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])
    expect(page).to_have_url(re.compile(r"/web/graph/pages/entry-2$"))
    expect(page.locator("section", has_text="Backlinks")).to_contain_text("entry-1")
    expect(page.locator("ul.page-sources")).to_contain_text("ledger.md")
    page.goto(f"{desk.base}/web/graph/graph?sources=1")
    expect(page.locator("#graph[data-ready]")).to_have_count(1)
    sources = page.evaluate("() => window.deskGraph.nodes('.source').length")
    assert sources == 1
    assert tab.errors == []


def test_lint_filters_and_audit_newest_first(desk: Desk, tab: Tab) -> None:
    page = tab.page
    login(tab, desk)
    page.goto(f"{desk.base}/web/graph/lint")
    expect(page.locator("#lint-count")).to_contain_text("of 4 open")
    expect(page.locator("section.finding")).to_have_count(4)
    shot(page, "lint", full_page=True)
    page.get_by_label("Kind").select_option("broken_link")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"kind=broken_link"))
    expect(page.locator("section.finding")).to_have_count(1)
    expect(page.locator("section.finding")).to_contain_text("nowhere")
    page.goto(f"{desk.base}/web/graph/lint?kind=broken_link&severity=error")
    expect(page.locator("p.empty")).to_contain_text("of this kind")
    page.goto(f"{desk.base}/web/graph/audit")
    seqs = [int(s) for s in page.locator("tbody tr td:first-child").all_inner_texts()]
    assert seqs == sorted(seqs, reverse=True) and seqs
    assert tab.errors == []


def test_axe_on_the_new_screens(desk: Desk, tmp_path: Path) -> None:
    assert AXE.exists(), "axe-core is missing: run scripts/setup_browser.sh"
    urls = [
        "/web/axe/inbox",
        "/web/axe/approve-supported",
        "/web/graph/graph",
        "/web/graph/graph?sources=1",
        "/web/graph/pages/entry-1",
        "/web/graph/lint",
        "/web/graph/audit",
        "/web/graph/jobs",
    ]
    urls += [f"/web/axe/plans/{p}" for p in desk.plans["axe"]]  # one waits, one depends
    found: dict[str, list[str]] = {}
    with browser(tmp_path / "profile", bypass_csp=True) as page:
        page.goto(desk.login_url())
        expect(page.get_by_role("heading", name="Your vaults")).to_be_visible()
        for url in urls:
            page.goto(desk.base + url)
            if url.split("?")[0].endswith("/graph"):
                expect(page.locator("#graph[data-ready]")).to_have_count(1)
            if url.startswith("/web/axe/plans/"):
                expect(page.locator("li.wait, section.depends").first).to_be_visible()
            found[url] = _axe(page)
    assert {url: v for url, v in found.items() if v} == {}


def test_a_login_link_from_the_command_line_without_xdg_runtime_dir(desk: Desk) -> None:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["AFFIDAVIT_SOCKET"] = str(desk.daemon.socket)
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "web", "login-link"]
    done = subprocess.run([*args, "--json"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        rf'\{{\s*"socket": "{re.escape(str(desk.daemon.socket))}",\s*"url": '
        rf'"{re.escape(desk.base)}/web/login\?token=[^"]+"\s*\}}\s*',
        done.stdout,
    )
    del env["AFFIDAVIT_SOCKET"]
    missing = subprocess.run(
        [*args, "--socket", str(desk.roots["day"] / "no.sock")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert missing.returncode == 1 and "affidavit serve --web" in missing.stderr
