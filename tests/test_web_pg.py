"""The web desk over a vault of a PostgreSQL database (``serve --database URL --web``, issue 26):
the same sign-in, screens and decisions as over a SQLite vault, every approval through the
PostgreSQL door; and the attacker's requests — a token of another vault of the same database, a
read token posting an approval, a missing or forged CSRF token, a cross-origin post, a stale
screen — each refused with the plan still pending. Retracting a source: tests/test_web_pg_retract.py."""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from affidavit.config import Config
from tests.conftest import claim
from tests.web import BASE, form_values

pytestmark = pytest.mark.xdist_group("postgres")

psycopg = pytest.importorskip("psycopg")

from affidavit.server.pg_app import create_pg_app  # noqa: E402
from affidavit.server.pg_registry import PgRegistry  # noqa: E402
from affidavit.service.pg_vaults import PgVault  # noqa: E402
from affidavit.storage.postgres import PostgresStorage  # noqa: E402
from affidavit.web.desk import WebDesk  # noqa: E402

from .pg_cluster import drop_vaults  # noqa: E402

NOW = "2026-11-30T09:00:00Z"
LIGHTHOUSE = (
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    "The present tower was designed by James Douglass and lit in 1882.\n"
    "Its light can be seen 17 nautical miles away.\n"
    "The first lighthouse on the rocks was built by Henry Winstanley in 1698.\n"
    "The second tower was built by John Rudyard and burned down in 1755.\n"
    "John Smeaton built the third tower from granite blocks.\n"
)
FERRY = "The ferry crossed the strait twice a day until 1950.\n"


class Desk:
    """Vaults ``team`` (owned by the user running the tests) and ``other`` in one database,
    served with the desk in-process."""

    def __init__(self, url: str) -> None:
        drop_vaults(url)
        me = pwd.getpwuid(os.geteuid()).pw_name
        storage = PostgresStorage(url)
        try:
            storage.create_vault("team", me)
            storage.create_vault("other", "nobody-here")
            self.source = storage.add_source(
                "team", LIGHTHOUSE.encode(), origin="/test/lighthouse.md", name="lighthouse.md",
                added_at=NOW, media_type="text/markdown", trust="trusted",
            )  # fmt: skip
            ferry = storage.add_source("other", FERRY.encode(), origin="/f", name="ferry.md",
                                       added_at=NOW)  # fmt: skip
        finally:
            storage.close()
        self.registry = PgRegistry.open(url, Config())
        self.app = create_pg_app(self.registry, web=True)
        self.web: WebDesk = self.app.state.web
        self.web.base_url = BASE
        self.team: PgVault = self.registry.get("team").service
        self.other: PgVault = self.registry.get("other").service
        applied = self.propose(self.page("eddystone", "Eddystone Lighthouse", 0, 1, 2))
        self.team.approve(applied, None, "ann")
        self.other_plan = self.other.propose(
            {
                "nonce": self.other.new_nonce(1).nonce,
                "operations": [{"op": "create_page", "slug": "ferry", "title": "Ferry",
                                "summary": "The ferry", "claims": [claim(
                                    "The ferry crossed the strait until 1950.", ferry,
                                    "The ferry crossed the strait twice a day until 1950")]}],
            },
            "ann", "cli",
        ).plan_id  # fmt: skip
        self.tokens = {
            role: self.team.create_token(role, timedelta(days=1), role, "test")[1]
            for role in ("read", "propose", "approve")
        }
        self.other_approve = self.other.create_token("approve", timedelta(days=1), "x", "t")[1]

    def page(self, slug: str, title: str, *lines: int) -> dict[str, Any]:
        """A create_page of ``lines`` of the lighthouse text, each its own claim."""
        texts = LIGHTHOUSE.splitlines()
        return {
            "op": "create_page",
            "slug": slug,
            "title": title,
            "summary": texts[lines[0]],
            "claims": [claim(texts[n], self.source, texts[n].rstrip(".")) for n in lines],
        }

    def propose(self, *ops: dict[str, Any], author: str = "ann") -> str:
        plan = {"nonce": self.team.new_nonce(1).nonce, "operations": list(ops)}
        out = self.team.propose(plan, author, "cli")
        assert out.status == "pending", out
        return out.plan_id

    def client(self, token: str | None = None) -> TestClient:
        """A browser: the owner's (a login link) or a token's (the login form)."""
        client = TestClient(self.app, base_url=BASE)
        if token is None:
            url = self.web.login_url(os.geteuid()).removeprefix(BASE)
            assert client.get(url, follow_redirects=False).status_code == 303
        else:
            login = client.post("/web/login", data={"token": token}, follow_redirects=False)
            assert login.status_code == 303, login.text
        return client

    def status(self, plan_id: str) -> str:
        with self.team.storage.pool.connection() as conn:
            row = conn.execute("SELECT status FROM v_team.plans WHERE id = %s", (plan_id,))
            return str(row.fetchone()["status"])  # type: ignore[index]

    def audit(self) -> list[tuple[str, str]]:
        with self.team.storage.pool.connection() as conn:
            found = conn.execute("SELECT action, plan_id FROM v_team.audit ORDER BY seq")
            return [(str(r["action"]), str(r["plan_id"])) for r in found.fetchall()]


@pytest.fixture(scope="module")
def desk(pg_url: str) -> Iterator[Desk]:
    made = Desk(pg_url)
    with TestClient(made.app, base_url=BASE):  # the app's lifespan: the pool closes after
        yield made


def _get(client: TestClient, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, response.text
    return response.text


def test_the_owner_reads_pages_sources_search_and_the_audit_log(desk: Desk) -> None:
    owner = desk.client()
    home = _get(owner, "/web/")
    assert '<a href="/web/team/inbox">team</a> (role: owner)' in home
    pages = _get(owner, "/web/team/pages")
    assert "Eddystone Lighthouse" in pages
    page = _get(owner, "/web/team/pages/eddystone")
    assert "designed by James Douglass" in page and "lighthouse.md" in page
    quote = "The present tower was designed by James Douglass and lit in 1882"
    assert f"“{quote}”" in page  # the footnote: the source's own words
    assert "by ann" in page  # its history: the plans that wrote it
    span = re.search(r"/web/team/sources/([0-9a-f]{64})\?start=(\d+)&amp;end=(\d+)", page)
    assert span is not None
    source = _get(owner, f"/web/team/sources/{span[1]}?start={span[2]}&end={span[3]}")
    assert re.search(r'<mark id="span"[^>]*>The Eddystone Lighthouse stands', source)
    assert "lighthouse.md" in _get(owner, "/web/team/sources")
    found = _get(owner, "/web/team/search?q=Douglass")
    assert "designed by James Douglass" in found and "No claim matches" not in found
    audit = _get(owner, "/web/team/audit")
    assert "The hash chain verifies" in audit and "applied" in audit


def test_ask_answers_from_the_claims_and_saving_needs_propose(desk: Desk) -> None:
    reader = desk.client(desk.tokens["read"])
    html = _get(reader, "/web/team/search")
    csrf = form_values(html, "ask-form")["csrf"]
    asked = reader.post(
        "/web/team/ask", data={"csrf": csrf, "question": "Who designed the present tower?"}
    )
    assert asked.status_code == 200, asked.text
    assert "Answer to" in asked.text and "Douglass" in asked.text
    saved = reader.post(
        "/web/team/ask", data={"csrf": csrf, "question": "Who designed it?", "save": "1"}
    )
    assert saved.status_code == 403 and "needs the propose role" in saved.text


def test_the_owner_approves_a_plan_through_the_door_once(desk: Desk) -> None:
    plan_id = desk.propose(desk.page("douglass", "James Douglass", 1))
    owner = desk.client()
    inbox = _get(owner, "/web/team/inbox")
    assert plan_id[:12] in inbox and "creates douglass (+1)" in inbox
    html = _get(owner, f"/web/team/plans/{plan_id}")
    assert "The present tower was designed by James Douglass" in html
    assert '<mark class="span">' in html  # the verified quote in its source's context
    fields = form_values(html, "approve-form")
    url = f"/web/team/plans/{plan_id}/approve"
    done = owner.post(url, data={**fields, "action": "all"}, follow_redirects=False)
    assert done.status_code == 303, done.text
    assert desk.status(plan_id) == "applied"
    assert "James Douglass" in _get(owner, "/web/team/pages/douglass")
    again = owner.post(url, data={**fields, "action": "all"}, follow_redirects=False)
    assert again.status_code == 409 and "changed since you opened it" in again.text
    assert [a for a in desk.audit() if a[1] == plan_id].count(("applied", plan_id)) == 1


def test_approving_selected_operations_leaves_the_rest_pending(desk: Desk) -> None:
    plan_id = desk.propose(
        desk.page("winstanley", "Henry Winstanley", 3), desk.page("rudyard", "John Rudyard", 4)
    )
    owner = desk.client()
    fields = form_values(_get(owner, f"/web/team/plans/{plan_id}"), "approve-form")
    done = owner.post(
        f"/web/team/plans/{plan_id}/approve",
        data={**fields, "action": "selected", "op": "1"},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    assert desk.status(plan_id) == "pending"
    assert "Henry Winstanley" in _get(owner, "/web/team/pages/winstanley")
    html = _get(owner, f"/web/team/plans/{plan_id}")
    assert 'id="tick-1"' not in html and 'id="tick-2"' in html  # only op 2 is left to decide
    fields = form_values(html, "reject-form")
    rejected = owner.post(
        f"/web/team/plans/{plan_id}/reject",
        data={**fields, "reason": "not this one"},
        follow_redirects=False,
    )
    assert rejected.status_code == 303, rejected.text
    assert desk.status(plan_id) == "rejected"
    assert owner.get("/web/team/pages/rudyard").status_code == 404


def test_approve_what_is_supported_in_the_inbox(desk: Desk) -> None:
    plan_id = desk.propose(desk.page("smeaton", "John Smeaton", 5))
    owner = desk.client()
    preview = _get(owner, "/web/team/approve-supported")
    assert plan_id[:12] in preview
    fields = form_values(preview, "supported-form")
    ids = re.findall(r'name="plan" value="([0-9a-f]+)"', preview)
    assert plan_id in ids
    done = owner.post(
        "/web/team/approve-supported",
        data={**fields, "plan": ids},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    assert desk.status(plan_id) == "applied"


def test_the_attackers_requests_change_nothing(desk: Desk) -> None:
    plan_id = desk.propose(desk.page("rocks", "The Eddystone Rocks", 0))
    owner = desk.client()
    fields = form_values(_get(owner, f"/web/team/plans/{plan_id}"), "approve-form")
    url = f"/web/team/plans/{plan_id}/approve"
    attacks = [
        ({"Origin": "http://evil.example"}, {**fields, "action": "all"}),
        ({"Sec-Fetch-Site": "cross-site"}, {**fields, "action": "all"}),
        ({}, {"seen": fields["seen"], "action": "all"}),  # no CSRF token
        ({}, {**fields, "csrf": "guessed", "action": "all"}),
    ]
    for headers, body in attacks:
        response = owner.post(url, data=body, headers=headers, follow_redirects=False)
        assert response.status_code == 403, (headers, response.text)
        assert "refused" in response.text
    stale = owner.post(url, data={**fields, "seen": "0" * 24, "action": "all"})
    assert stale.status_code == 409 and "changed since you opened it" in stale.text
    # a read token: it reads the plan, sees no buttons, and its posts are refused
    reader = desk.client(desk.tokens["read"])
    html = _get(reader, f"/web/team/plans/{plan_id}")
    assert "approve-form" not in html and "Your role on this vault is read" in html
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    for action in ("approve", "reject"):
        response = reader.post(
            f"/web/team/plans/{plan_id}/{action}",
            data={"csrf": csrf[1], "seen": fields["seen"], "action": "all", "reason": "no"},
        )
        assert response.status_code == 403 and "needs the approve role" in response.text
    # an approve token of another vault of the same database: this vault is not there for it
    stranger = desk.client(desk.other_approve)
    assert stranger.get(f"/web/team/plans/{plan_id}").status_code == 404
    assert stranger.get("/web/team/inbox").status_code == 404
    theirs = form_values(_get(stranger, f"/web/other/plans/{desk.other_plan}"), "approve-form")
    response = stranger.post(url, data={**theirs, "action": "all"})
    assert response.status_code == 404 and "you have no vault" in response.text
    # no session at all
    anonymous = TestClient(desk.app, base_url=BASE)
    assert anonymous.post(url, data={**fields, "action": "all"}).status_code == 401
    assert desk.status(plan_id) == "pending"
    assert all(entry[1] != plan_id for entry in desk.audit())


def test_the_graph(desk: Desk) -> None:
    owner = desk.client()
    assert "Graph" in _get(owner, "/web/team/graph")
    graph = owner.get("/web/team/graph.json?sources=1").json()
    kinds = {(n["data"]["kind"], n["data"]["label"]) for n in graph["nodes"]}
    assert ("page", "Eddystone Lighthouse") in kinds and ("source", "lighthouse.md") in kinds
    assert "eddystone" in graph["orphans"]


def test_lint_findings_are_decided_and_jobs_listed(desk: Desk) -> None:
    from affidavit.lint.findings import Finding, FindingStore
    from affidavit.service.pg_jobs import LintRequest, PgJobs
    from affidavit.storage.pg_sql import PgSql

    with desk.team._locked() as conn:  # a finding as a lint run records it
        store = FindingStore(PgSql(conn, "v_team"))
        run = store.start_run(NOW, "test", "none")
        fid, _ = store.record(run, NOW, Finding(kind="orphan_page", subject="eddystone",
                                                message="no page links to eddystone",
                                                pages=["eddystone"]))  # fmt: skip
    job = PgJobs(desk.team).submit_lint(LintRequest(kind="lint"), "ann")
    reader = desk.client(desk.tokens["read"])
    lint = _get(reader, "/web/team/lint")
    assert "no page links to eddystone" in lint and f"/lint/{fid}/decide" not in lint
    csrf = re.search(r'name="csrf" value="([^"]+)"', lint)
    assert csrf is not None
    refused = reader.post(f"/web/team/lint/{fid}/decide", data={"csrf": csrf[1],
                                                                "decision": "dismiss"})  # fmt: skip
    assert refused.status_code == 403 and "needs the approve role" in refused.text
    owner = desk.client()
    lint = _get(owner, "/web/team/lint")
    csrf = re.search(r'name="csrf" value="([^"]+)"', lint)
    assert csrf is not None and f"/lint/{fid}/decide" in lint
    done = owner.post(
        f"/web/team/lint/{fid}/decide",
        data={"csrf": csrf[1], "decision": "dismiss", "note": "on purpose"},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    with desk.team.storage.pool.connection() as conn:
        row = conn.execute("SELECT status FROM v_team.findings WHERE id = %s", (fid,)).fetchone()
    assert row is not None and row["status"] == "dismissed"
    assert "no page links to eddystone" in _get(owner, "/web/team/lint?status=dismissed")
    jobs = _get(owner, "/web/team/jobs")
    assert job.id in jobs and "waiting for a worker" in jobs


def test_a_waiting_text_is_decided_on_its_screen_never_unseen(desk: Desk) -> None:
    """An "approve what is supported" of a plan of nothing but a waiting text writes nothing
    and says so (the text stays for a person, as on SQLite); a person's "no" to its only
    operation rejects the plan with that text as the reason."""
    text = "The present tower was designed by James Douglass in Plymouth."  # a place never named
    quote = "The present tower was designed by James Douglass and lit in 1882"
    plan_id = desk.propose(
        {"op": "create_page", "slug": "plymouth", "title": "Plymouth tower",
         "summary": "The present tower", "claims": [claim(text, desk.source, quote)]}
    )  # fmt: skip
    owner = desk.client()
    html = _get(owner, f"/web/team/plans/{plan_id}")
    assert "Waits for a person" in html and 'id="approve-supported"' in html
    fields = form_values(html, "approve-form")
    url = f"/web/team/plans/{plan_id}/approve"
    unseen = owner.post(url, data={**fields, "action": "supported"})
    assert unseen.status_code == 200 and "nothing of it goes in without a person" in unseen.text
    assert desk.status(plan_id) == "pending"
    fields = form_values(_get(owner, f"/web/team/plans/{plan_id}"), "approve-form")
    said_no = owner.post(url, data={**fields, "action": "selected", "no": "1"})
    assert said_no.status_code == 200 and "Rejected the rest of plan" in said_no.text
    assert desk.status(plan_id) == "rejected"
    assert owner.get("/web/team/pages/plymouth").status_code == 404


def test_a_plan_and_the_plan_it_needs_are_approved_together(desk: Desk) -> None:
    first = desk.propose(desk.page("builders", "The builders", 3))
    second = desk.propose({"op": "add_claims", "page": "builders", "claims": [
        claim(LIGHTHOUSE.splitlines()[5], desk.source, LIGHTHOUSE.splitlines()[5].rstrip("."))]})  # fmt: skip
    owner = desk.client()
    inbox = _get(owner, "/web/team/inbox")
    assert inbox.index(first[:12]) < inbox.index(second[:12])  # dependencies first
    html = _get(owner, f"/web/team/plans/{second}")
    assert "Goes after 1 other plan(s)" in html
    fields = form_values(html, "together-form")
    alone = owner.post(
        f"/web/team/plans/{second}/approve",
        data={**form_values(html, "approve-form"), "action": "all"},
    )
    assert alone.status_code == 409  # refused by the door, with the offer to do both
    assert f"/web/team/plans/{second}/approve-together" in alone.text
    assert desk.status(first) == desk.status(second) == "pending"
    done = owner.post(
        f"/web/team/plans/{second}/approve-together", data=fields, follow_redirects=False
    )
    assert done.status_code == 303, done.text
    assert desk.status(first) == desk.status(second) == "applied"
    page = _get(owner, "/web/team/pages/builders")
    assert "Henry Winstanley" in page and "John Smeaton" in page


def test_a_revoked_token_ends_its_session_and_tokens_get_no_login_links(desk: Desk) -> None:
    (secret,) = [desk.team.create_token("approve", timedelta(hours=1), "gone", "test")[1]]
    browser = desk.client(secret)
    assert browser.get("/web/team/inbox").status_code == 200
    desk.team.revoke_token(secret.split("_")[1], "test")
    assert browser.get("/web/team/inbox").status_code == 401  # checked again on every request
    api = TestClient(desk.app, base_url=BASE)
    refused = api.post(
        "/v1/web/login-link", headers={"Authorization": f"Bearer {desk.tokens['approve']}"}
    )
    assert refused.status_code == 403 and "Unix socket only" in refused.text


def test_the_database_gone_is_a_page_saying_so(desk: Desk, monkeypatch: pytest.MonkeyPatch) -> None:
    owner = desk.client()

    def down(*_: Any, **__: Any) -> Any:
        raise psycopg.OperationalError(f"connection to {desk.team.storage.pool.conninfo} failed")

    monkeypatch.setattr(PgVault, "list_pages", down)
    response = owner.get("/web/team/pages")
    assert response.status_code == 503 and "did not answer" in response.text
    assert response.headers["retry-after"].isdigit()
    assert "postgresql://" not in response.text and "Traceback" not in response.text
