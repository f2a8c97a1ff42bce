"""The daemon over a PostgreSQL database (issue 26 item 1, ``serve --database URL``): reads and the
inbox's writes over the REST API, through the PostgreSQL door and its gate, with the same tokens
and roles as over SQLite; and the attacker's tests — a token of another vault of the same
database, a vault name with SQL in it, two daemons approving one plan at once (exactly once),
routes not ported (a clear 501, never SQLite)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from affidavit.config import Config
from affidavit.server.pg_app import create_pg_app
from affidavit.server.pg_registry import PgRegistry
from affidavit.storage.postgres import PostgresStorage

from .pg_cluster import drop_vaults

pytestmark = pytest.mark.xdist_group("postgres")

BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long."
OTHER = "The ferry crossed the strait twice a day until 1950."
NOW = "2026-11-30T09:00:00Z"


class Wiki:
    """Two vaults, team and other, in one database; a daemon (the ASGI app in-process) over it."""

    def __init__(self, url: str, config: Config | None = None) -> None:
        drop_vaults(url)
        self.url = url
        storage = PostgresStorage(url)
        try:
            for name in ("team", "other"):
                storage.create_vault(name, "nobody-here")
            self.source = storage.add_source(
                "team", BRIDGE.encode(), origin="/docs/bridge.md", name="bridge.md",
                added_at=NOW, trust="trusted",
            )  # fmt: skip
            storage.add_source(
                "other", OTHER.encode(), origin="/docs/ferry.md", name="ferry.md", added_at=NOW
            )
        finally:
            storage.close()
        self.config = config
        self.registry = PgRegistry.open(url, config)
        self.client = TestClient(create_pg_app(self.registry))
        self.client.__enter__()
        team = self.registry.get("team").service
        other = self.registry.get("other").service
        self.tokens = {
            role: team.create_token(role, timedelta(days=1), role, "test")[1]
            for role in ("read", "propose", "approve")
        }
        self.other_approve = other.create_token("approve", timedelta(days=1), "x", "test")[1]

    def close(self) -> None:
        self.client.__exit__(None, None, None)

    def call(self, method: str, path: str, token: str | None, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.client.request(method, path, headers=headers, **kw)

    def plan(self, slug: str = "bridge", quote: str = "The bridge is 503 metres long") -> dict:
        nonce = self.call("POST", "/v1/vaults/team/nonces", self.tokens["propose"], json={})
        assert nonce.status_code == 200, nonce.text
        text = "The bridge is 503 metres long."
        claim = {"text": text, "evidence": [{"source": self.source, "quote": quote}]}
        page = {"op": "create_page", "slug": slug, "title": "The bridge", "summary": text}
        return {"nonce": nonce.json()["nonce"], "operations": [{**page, "claims": [claim]}]}


def race(clients: list[TestClient], path: str, token: str) -> list[tuple[int, Any]]:
    """POST ``path`` from every client at once (one thread each); the statuses, each with the
    reply's ``applied``."""
    results: list[tuple[int, Any]] = []
    start = threading.Barrier(len(clients))
    headers = {"Authorization": f"Bearer {token}"}

    def approve(client: TestClient) -> None:
        start.wait()
        got = client.post(path, headers=headers, json={})
        results.append((got.status_code, got.json().get("applied")))

    threads = [threading.Thread(target=approve, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.fixture
def wiki(pg_url: str) -> Iterator[Wiki]:
    made = Wiki(pg_url)
    yield made
    made.close()


def test_propose_list_approve_read_search(wiki: Wiki) -> None:
    done = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": wiki.plan()}
    )
    assert done.status_code == 200, done.text
    plan_id = done.json()["plan_id"]
    assert done.json()["status"] == "pending"
    inbox = wiki.call("GET", "/v1/vaults/team/plans", wiki.tokens["read"])
    assert [p["id"] for p in inbox.json()] == [plan_id]
    assert inbox.json()[0]["proposer"] == "agent" and inbox.json()[0]["counts"]["admitted"] == 1
    assert wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).status_code == 404
    detail = wiki.call("GET", f"/v1/vaults/team/plans/{plan_id[:10]}", wiki.tokens["read"]).json()
    (quote,) = detail["quotes"]
    assert quote["quote"] == "The bridge is 503 metres long" and quote["source_name"] == "bridge.md"
    assert quote["before"].endswith("six years of work. ") and quote["location"]
    assert detail["status"] == "pending" and detail["applied_ops"] == []
    ok = wiki.call(
        "POST", f"/v1/vaults/team/plans/{plan_id}/approve", wiki.tokens["approve"], json={}
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["applied"] and len(ok.json()["claims"]) == 1
    page = wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).json()
    (claim,) = page["claims"]
    assert claim["text"] == "The bridge is 503 metres long."
    assert claim["evidence"][0]["quote"] == "The bridge is 503 metres long"
    hits = wiki.call("GET", "/v1/vaults/team/search?q=bridge+metres", wiki.tokens["read"]).json()
    assert [h["claim_id"] for h in hits["hits"]] == [claim["id"]]
    got = wiki.call("GET", f"/v1/vaults/team/claims/{claim['id']}", wiki.tokens["read"]).json()
    assert got["evidence"] == claim["evidence"]
    assert wiki.call("GET", "/v1/vaults/team/plans", wiki.tokens["read"]).json() == []
    applied = wiki.call("GET", "/v1/vaults/team/plans?status=applied", wiki.tokens["read"])
    assert [p["id"] for p in applied.json()] == [plan_id]
    done = wiki.call("GET", f"/v1/vaults/team/plans/{plan_id}", wiki.tokens["read"]).json()
    assert done["status"] == "applied" and done["applied_ops"] == [1]
    info = wiki.call("GET", "/v1/vaults/team", wiki.tokens["read"]).json()
    assert info["counts"]["claims"] == 1 and info["counts"]["pending_plans"] == 0


def test_a_quote_the_source_never_had_is_rejected_by_the_gate(wiki: Wiki) -> None:
    plan = wiki.plan(quote="The bridge is 900 metres long")
    done = wiki.call("POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": plan})
    # recorded rejected, with its verdicts and an audit entry, as on SQLite; nothing waits
    assert done.status_code in (200, 201) and done.json()["status"] == "rejected", done.text
    plan_id = done.json()["plan_id"]
    listed = wiki.call("GET", "/v1/vaults/team/plans?status=all", wiki.tokens["read"]).json()
    assert [(p["id"], p["status"]) for p in listed] == [(plan_id, "rejected")]
    audit = wiki.call("GET", "/v1/vaults/team/audit", wiki.tokens["read"]).json()
    assert [e["action"] for e in audit["entries"] if e["plan_id"] == plan_id] == ["rejected"]


def test_a_nonce_is_needed_and_used_once(wiki: Wiki) -> None:
    plan = wiki.plan()
    forged = {**plan, "nonce": "A" * 24}
    bad = wiki.call("POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": forged})
    assert bad.status_code == 422 and "never issued" in bad.json()["error"]["message"]
    first = wiki.call("POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": plan})
    assert first.status_code == 200
    again = dict(plan, operations=wiki.plan("bridge-two")["operations"])
    reused = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": again}
    )
    assert reused.status_code == 422 and "already used" in reused.json()["error"]["message"]


def test_roles_and_a_token_of_another_vault_of_the_same_database(wiki: Wiki) -> None:
    plan = wiki.plan()
    read = wiki.call("POST", "/v1/vaults/team/plans", wiki.tokens["read"], json={"plan": plan})
    assert read.status_code == 403
    done = wiki.call("POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": plan})
    plan_id = done.json()["plan_id"]
    path = f"/v1/vaults/team/plans/{plan_id}/approve"
    assert wiki.call("POST", path, wiki.tokens["propose"], json={}).status_code == 403
    # the other vault's approver: a valid token of the same database, no role on this vault
    for method, where, body in [
        ("POST", path, {}),
        ("GET", "/v1/vaults/team/pages", None),
        ("GET", "/v1/vaults/team/search?q=bridge", None),
        ("GET", f"/v1/vaults/team/plans/{plan_id}", None),
        ("POST", f"/v1/vaults/team/plans/{plan_id}/reject", {"reason": "mine now"}),
        ("GET", "/v1/vaults/team/tokens", None),
        ("GET", "/v1/vaults/team/ask", None),  # no such route, and still not for this caller
        ("POST", "/v1/vaults/team/ask", {"question": "How long is the bridge?"}),
    ]:
        got = wiki.call(method, where, wiki.other_approve, json=body)
        assert got.status_code == 403, (where, got.text)
    mine = wiki.call("GET", "/v1/whoami", wiki.other_approve).json()
    assert [v["name"] for v in mine["vaults"]] == ["other"]
    # tokens are the owner's only: no token, whatever its role, manages them
    made = wiki.call(
        "POST", "/v1/vaults/team/tokens", wiki.tokens["approve"], json={"role": "approve"}
    )
    assert made.status_code == 403
    assert wiki.call("GET", "/v1/vaults/team/plans", wiki.tokens["read"]).json()[0]["id"] == plan_id
    assert wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).status_code == 404
    assert wiki.call("GET", "/v1/vaults/team/pages", None).status_code == 401
    forged = wiki.tokens["approve"][:-4] + "AAAA"
    assert wiki.call("GET", "/v1/vaults/team/pages", forged).status_code == 401


def test_revoked_and_expired_tokens_are_refused(wiki: Wiki) -> None:
    team = wiki.registry.get("team").service
    info, token = team.create_token("read", timedelta(days=1), "laptop", "test")
    assert wiki.call("GET", "/v1/vaults/team/pages", token).status_code == 200
    team.revoke_token(info.id, "test")
    refused = wiki.call("GET", "/v1/vaults/team/pages", token)
    assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]
    actions = [e.action for e in wiki.registry.storage.audit("team")]
    assert actions.count("token_created") == 4 and "token_revoked" in actions
    assert wiki.registry.storage.verify_audit("team") == []


@pytest.mark.parametrize(
    "name",
    [
        "team'; DROP SCHEMA affidavit CASCADE; --",
        "team%27%3B%20DROP%20SCHEMA%20affidavit%20CASCADE%3B--",
        "v_team",
        "TEAM",
        "team_",
        "affidavit",
        "..%2fteam",
    ],
)
def test_a_vault_name_with_sql_in_it(wiki: Wiki, name: str) -> None:
    for path in (f"/v1/vaults/{name}/pages", f"/v1/vaults/{name}/search?q=x"):
        got = wiki.call("GET", path, wiki.tokens["approve"])
        assert got.status_code in (403, 404), (path, got.text)
    done = wiki.call(
        "POST", f"/v1/vaults/{name}/plans", wiki.tokens["propose"], json={"plan": wiki.plan()}
    )
    assert done.status_code in (403, 404)
    assert sorted(wiki.registry.vaults) == ["other", "team"]
    assert PostgresStorage.vaults(wiki.registry.storage) == ["team", "other"]
    assert wiki.call("GET", "/v1/vaults/team/pages", wiki.tokens["read"]).status_code == 200


def test_a_plan_approved_at_once_by_two_daemons_is_applied_exactly_once(
    wiki: Wiki, pg_url: str
) -> None:
    second = PgRegistry.open(pg_url)
    other_daemon = TestClient(create_pg_app(second))
    other_daemon.__enter__()
    try:
        for round_ in range(4):
            done = wiki.call(
                "POST", "/v1/vaults/team/plans", wiki.tokens["propose"],
                json={"plan": wiki.plan(f"bridge-{round_}")},
            )  # fmt: skip
            plan_id = done.json()["plan_id"]
            path = f"/v1/vaults/team/plans/{plan_id}/approve"
            clients = [wiki.client, other_daemon, wiki.client, other_daemon]
            results = race(clients, path, wiki.tokens["approve"])
            # one applies it; the others learn it went in (nothing to do), as on SQLite
            assert sorted(results) == [(200, False)] * 3 + [(200, True)], results
            applied = [
                e for e in wiki.registry.storage.audit("team")
                if e.action == "applied" and e.plan_id == plan_id
            ]  # fmt: skip
            assert len(applied) == 1
        batches = wiki.registry.storage.batches("team")
        assert [b.seq for b in batches] == [1, 2, 3, 4]
        assert wiki.registry.storage.verify_audit("team") == []
    finally:
        other_daemon.__exit__(None, None, None)


def test_reject_releases_the_slug_and_the_plan_is_never_applied(wiki: Wiki) -> None:
    plan = wiki.plan()
    plan_id = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": plan}
    ).json()["plan_id"]
    no = wiki.call(
        "POST", f"/v1/vaults/team/plans/{plan_id[:12]}/reject", wiki.tokens["approve"],
        json={"reason": "not now"},
    )  # fmt: skip
    assert no.status_code == 200 and no.json()["plan_id"] == plan_id
    late = wiki.call(
        "POST", f"/v1/vaults/team/plans/{plan_id}/approve", wiki.tokens["approve"], json={}
    )
    assert late.status_code == 409 and "rejected" in late.json()["error"]["message"]
    again = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": wiki.plan()}
    )
    assert again.json()["status"] == "pending"  # the slug is free again


def test_routes_not_ported_say_what_works(wiki: Wiki) -> None:
    for method, path in [
        ("GET", "/v1/vaults/team/watches"),  # job events are served (test_pg_jobs_cli.py)
        ("POST", "/v1/vaults/team/lint/run"),
    ]:
        got = wiki.call(method, path, wiki.tokens["approve"], json={"question": "x"})
        assert got.status_code in (501, 422), (path, got.text)
        if got.status_code == 501:
            assert "search" in got.json()["error"]["fix"] and "ask" in got.json()["error"]["fix"]
            assert "/mcp/{vault} serves the MCP tools" in got.json()["error"]["fix"]
    # MCP is served (tests/test_mcp_pg.py): its tools answer, not a 501
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    headers = {"Accept": "application/json, text/event-stream", "Host": "127.0.0.1"}
    for token, status in ((wiki.tokens["read"], 200), (wiki.other_approve, 403), (None, 401)):
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        got = wiki.client.post("/mcp/team", json=init, headers={**headers, **auth})
        assert got.status_code == status, got.text
    assert (
        "affidavit"
        in wiki.client.post(
            "/mcp/team",
            json=init,
            headers={**headers, "Authorization": f"Bearer {wiki.tokens['read']}"},
        ).text
    )


def test_some_operations_of_a_plan_approved_the_rest_waits(wiki: Wiki) -> None:
    """A person approves one operation of a two-operation plan over the API: that one is
    written, the plan stays pending with the other, which a second approval applies; an
    operation number outside the plan, zero, or one decided already is refused (409) and
    writes nothing."""
    two = wiki.plan()
    other = {"op": "create_page", "slug": "span", "title": "The span",
             "summary": "The bridge is 503 metres long.",
             "claims": two["operations"][0]["claims"]}  # fmt: skip
    two["operations"].append(other)
    plan_id = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": two}
    ).json()["plan_id"]
    path = f"/v1/vaults/team/plans/{plan_id}/approve"
    for bad in ([3], [0], [-1], []):
        got = wiki.call("POST", path, wiki.tokens["approve"], json={"ops": bad})
        assert got.status_code in (409, 422), (bad, got.text)
    assert wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).status_code == 404
    part = wiki.call("POST", path, wiki.tokens["approve"], json={"ops": [2]})
    assert part.status_code == 200, part.text
    assert part.json()["ops"] == [2] and part.json()["applied"] is True  # as on SQLite
    assert part.json()["message"].endswith(
        f"still pending (`affidavit approve {plan_id[:12]} --ops 1`)"
    )
    assert wiki.call("GET", "/v1/vaults/team/pages/span", wiki.tokens["read"]).status_code == 200
    assert wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).status_code == 404
    detail = wiki.call("GET", f"/v1/vaults/team/plans/{plan_id}", wiki.tokens["read"]).json()
    assert detail["status"] == "pending"
    again = wiki.call("POST", path, wiki.tokens["approve"], json={"ops": [2]})
    assert again.status_code == 409 and "decided already" in again.json()["error"]["message"]
    rest = wiki.call("POST", path, wiki.tokens["approve"], json={"ops": [1]})
    assert rest.status_code == 200 and rest.json()["applied"] is True, rest.text
    assert wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).status_code == 200
    done = wiki.call("GET", f"/v1/vaults/team/plans/{plan_id}", wiki.tokens["read"]).json()
    assert done["status"] == "applied"


def test_an_agents_plan_waits_even_when_the_policy_would_apply_it(pg_url: str) -> None:
    trusted = Config({"policy.auto_apply": "trusted"})
    wiki = Wiki(pg_url, trusted)
    try:
        done = wiki.call(
            "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": wiki.plan()}
        )
        assert done.json()["status"] == "pending"  # a token's plan: an agent's (W13)
        team = wiki.registry.get("team").service
        nonce = team.new_nonce(1).nonce
        mine = team.propose({**wiki.plan("bridge-mine"), "nonce": nonce}, "ann", "cli")
        assert mine.status == "applied"  # a person's trusted plan: the policy applies it
    finally:
        wiki.close()


def test_an_agents_quotas_hold_on_postgresql(pg_url: str) -> None:
    """W13: a token's proposals are held to mcp.pending_per_caller and mcp.propose_per_hour, as
    on SQLite: over either, its next nonce and its next plan are refused (429), nothing recorded."""
    wiki = Wiki(pg_url, Config({"mcp.pending_per_caller": 2, "mcp.propose_per_hour": 3}))
    try:
        propose = wiki.tokens["propose"]
        plans = [wiki.plan(f"bridge-{n}") for n in range(4)]
        for plan in plans[:2]:
            done = wiki.call("POST", "/v1/vaults/team/plans", propose, json={"plan": plan})
            assert done.json()["status"] == "pending"
        full = wiki.call("POST", "/v1/vaults/team/plans", propose, json={"plan": plans[2]})
        assert full.status_code == 429 and "pending_per_caller" in full.json()["error"]["message"]
        nonce = wiki.call("POST", "/v1/vaults/team/nonces", propose, json={})
        assert nonce.status_code == 429
        pending = wiki.call("GET", "/v1/vaults/team/plans", wiki.tokens["read"]).json()
        assert len(pending) == 2
        # a person decides one: room again for one proposal, and then the hour's limit (3)
        first = pending[0]["id"]
        wiki.call("POST", f"/v1/vaults/team/plans/{first}/reject", wiki.tokens["approve"],
                  json={"reason": "no"})  # fmt: skip
        again = wiki.call("POST", "/v1/vaults/team/plans", propose, json={"plan": plans[2]})
        assert again.status_code == 200, again.text
        wiki.call("POST", f"/v1/vaults/team/plans/{again.json()['plan_id']}/reject",
                  wiki.tokens["approve"], json={"reason": "no"})  # fmt: skip
        late = plans[3]
        hour = wiki.call("POST", "/v1/vaults/team/plans", propose, json={"plan": late})
        assert hour.status_code == 429 and "propose_per_hour" in hour.json()["error"]["message"]
        # a person is never held to an agent's quota
        team = wiki.registry.get("team").service
        mine = team.propose({**late, "nonce": team.new_nonce(1).nonce}, "ann", "cli")
        assert mine.status == "pending"
    finally:
        wiki.close()


def test_several_plans_approved_together_are_one_batch_all_or_nothing(wiki: Wiki) -> None:
    propose = wiki.tokens["propose"]
    ids = [
        wiki.call("POST", "/v1/vaults/team/plans", propose, json={"plan": wiki.plan(s)}).json()[
            "plan_id"
        ]
        for s in ("bridge-a", "bridge-b", "bridge-c")
    ]
    # one of them decided meanwhile: the whole batch is refused, nothing applied, no number
    wiki.call("POST", f"/v1/vaults/team/plans/{ids[2]}/reject", wiki.tokens["approve"],
              json={"reason": "no"})  # fmt: skip
    many = "/v1/vaults/team/plans/approve"
    refused = wiki.call("POST", many, wiki.tokens["approve"], json={"plans": ids})
    assert refused.status_code == 409, refused.text
    assert wiki.call("GET", "/v1/vaults/team/pages", wiki.tokens["read"]).json() == []
    assert wiki.registry.storage.batches("team") == []
    assert (
        wiki.call("POST", many, wiki.tokens["propose"], json={"plans": ids[:2]}).status_code == 403
    )
    dry = wiki.call("POST", many, wiki.tokens["approve"], json={"plans": ids[:2], "dry_run": True})
    assert dry.status_code == 200, dry.text  # a preview, as on SQLite: nothing applied
    assert [p["plan_id"] for p in dry.json()["preview"]] == ids[:2] and not dry.json()["results"]
    assert dry.json()["preview"][0]["lines"] == [
        "1. create_page: bridge-a (The bridge), 1 claim(s)"
    ]
    assert wiki.registry.storage.batches("team") == []
    done = wiki.call(
        "POST", many, wiki.tokens["approve"], json={"plans": [i[:10] for i in ids[:2]]}
    )
    assert done.status_code == 200, done.text
    assert [r["plan_id"] for r in done.json()["results"]] == ids[:2]
    (batch,) = wiki.registry.storage.batches("team")
    assert list(batch.plans) == ids[:2]
    pages = wiki.call("GET", "/v1/vaults/team/pages", wiki.tokens["read"]).json()
    assert [p["slug"] for p in pages] == ["bridge-a", "bridge-b"]


def test_sources_and_the_audit_log_are_read_checked(wiki: Wiki) -> None:
    read = wiki.tokens["read"]
    (source,) = wiki.call("GET", "/v1/vaults/team/sources", read).json()
    assert source["id"] == wiki.source and source["trust"] == "trusted"
    assert source["flags"] == [] and source["text_chars"] == len(BRIDGE)
    one = wiki.call("GET", f"/v1/vaults/team/sources/{wiki.source[:6]}", read)
    assert one.json() == source
    for ref in ("zzzz", "0000", "%27%20OR%201%3D1--", wiki.source[:3]):
        got = wiki.call("GET", f"/v1/vaults/team/sources/{ref}", read)
        assert got.status_code in (404, 422), (ref, got.text)
    # the other vault's source is not this vault's
    other = wiki.call("GET", "/v1/vaults/team/sources", wiki.other_approve)
    assert other.status_code == 403
    plan_id = wiki.call(
        "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": wiki.plan()}
    ).json()["plan_id"]
    wiki.call("POST", f"/v1/vaults/team/plans/{plan_id}/approve", wiki.tokens["approve"], json={})
    log = wiki.call("GET", "/v1/vaults/team/audit?limit=2", read).json()
    assert [e["action"] for e in log["entries"]] == ["token_created", "token_created"]
    rest = wiki.call("GET", f"/v1/vaults/team/audit?after={log['next_after']}", read).json()
    assert [e["action"] for e in rest["entries"]] == ["token_created", "applied"]
    assert rest["entries"][-1]["plan_id"] == plan_id and rest["next_after"] is None


def test_a_pages_markdown_is_the_mirrors_file(wiki: Wiki, tmp_path: Path) -> None:
    """The page route renders one page from its own rows; the bytes equal the page's file in a
    mirror of the whole vault (links both ways, a superseded and a retracted claim included)."""
    from affidavit.mirror import mirror
    from affidavit.store.paths import page_relpath

    def approved(plan: dict[str, Any]) -> list[str]:
        done = wiki.call(
            "POST", "/v1/vaults/team/plans", wiki.tokens["propose"], json={"plan": plan}
        )
        assert done.status_code == 200, done.text
        path = f"/v1/vaults/team/plans/{done.json()['plan_id']}/approve"
        ok = wiki.call("POST", path, wiki.tokens["approve"], json={})
        assert ok.status_code == 200, ok.text
        return list(ok.json()["claims"])

    (first,) = approved(wiki.plan("bridge"))
    approved(wiki.plan("span", quote="The bridge is 503 metres long"))
    nonce = lambda: wiki.call(  # noqa: E731
        "POST", "/v1/vaults/team/nonces", wiki.tokens["propose"], json={}
    ).json()["nonce"]
    opened = {"text": "The bridge opened in 1932.",
              "evidence": [{"source": wiki.source, "quote": "The bridge opened in 1932"}]}  # fmt: skip
    (second,) = approved({"nonce": nonce(), "operations": [
        {"op": "add_claims", "page": "bridge", "section": "History", "claims": [opened]},
        {"op": "link_pages", "page": "span", "to": "bridge"},
    ]})  # fmt: skip
    approved({"nonce": nonce(), "operations": [
        {"op": "retract_claim", "claim": second, "reason": "checking the year"},
    ]})  # fmt: skip
    long = {"text": "The bridge is 503 metres long, after six years of work.",
            "evidence": [{"source": wiki.source, "quote": "six years of work"},
                         {"source": wiki.source, "quote": "The bridge is 503 metres long"}]}  # fmt: skip
    approved({"nonce": nonce(), "operations": [
        {"op": "supersede_claim", "claim": first, "by": long, "reason": "a fuller claim"},
    ]})  # fmt: skip
    folder = tmp_path / "mirror"
    mirror(wiki.registry.storage, "team", folder)
    for slug in ("bridge", "span"):
        page = wiki.call("GET", f"/v1/vaults/team/pages/{slug}", wiki.tokens["read"]).json()
        on_disk = (folder / page_relpath(slug)).read_text(encoding="utf-8")
        assert page["markdown"] == on_disk, slug
    bridge = wiki.call("GET", "/v1/vaults/team/pages/bridge", wiki.tokens["read"]).json()
    assert "~~The bridge is 503 metres long.~~" in bridge["markdown"]
    assert "## Linked from" in bridge["markdown"] and bridge["linked_from"] == ["span"]
    statuses = {c["id"]: c["status"] for c in bridge["claims"]}
    assert statuses[first] == "superseded" and statuses[second] == "retracted"


def test_sql_in_a_plan_id_a_claim_id_a_slug_or_a_query_is_plain_text(wiki: Wiki) -> None:
    read, approve = wiki.tokens["read"], wiki.tokens["approve"]
    evil = "x'; DROP SCHEMA v_team CASCADE; --"
    for method, path, body in [
        ("POST", f"/v1/vaults/team/plans/{evil}/approve", {}),
        ("POST", f"/v1/vaults/team/plans/{evil}/reject", {"reason": "x"}),
        ("GET", f"/v1/vaults/team/plans/{evil}", None),
        ("GET", f"/v1/vaults/team/claims/{evil}", None),
        ("GET", f"/v1/vaults/team/pages/{evil}", None),
        ("GET", f"/v1/vaults/team/sources/{evil}", None),
        ("GET", "/v1/vaults/team/search?q=" + evil.replace(" ", "+") + "+%26+!bridge+%3A*", None),
    ]:
        got = wiki.call(method, path, approve if method == "POST" else read, json=body)
        assert got.status_code in (200, 404, 422), (path, got.text)
    assert wiki.call("GET", "/v1/vaults/team/sources", read).json()[0]["id"] == wiki.source


def test_a_vault_row_written_by_hand_with_sql_in_its_name_is_not_served(pg_url: str) -> None:
    import psycopg

    wiki = Wiki(pg_url)
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO affidavit.vaults (name, owner) VALUES (%s, 'x')",
                ("team; DROP SCHEMA affidavit CASCADE",),
            )
        again = PgRegistry.open(pg_url)
        try:
            assert sorted(again.vaults) == ["other", "team"]
        finally:
            again.close()
        assert PostgresStorage.vaults(wiki.registry.storage)[:2] == ["team", "other"]
    finally:
        wiki.close()
