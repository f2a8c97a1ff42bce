"""The MCP tools on a PostgreSQL vault (issue 26): ``affidavit serve --database URL`` serves
``/mcp/{vault}`` for each vault of the database, through the PostgreSQL services, behind the same
Guard as its REST API. A real daemon over a real PostgreSQL, a real MCP client session over HTTP
on loopback.

Each read tool answers as it does on a SQLite vault holding the same sources and the same applied
plan; an agent's plan waits for a person even under ``policy.auto_apply = "trusted"``, recorded as
the agent's and charged to its quota (REST and MCP together); a read token can't propose; a token
of another vault, no token and an unknown vault are refused; add_source: tests/test_mcp_pg_add.py.
"""

from __future__ import annotations

import json
import os
import pwd
import re
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from affidavit.clock import iso, utc_now
from affidavit.config import Config
from affidavit.mcp.server import TOOLS, Door, build_server
from affidavit.service import vaults as svc
from affidavit.service.pg_vaults import PgVault
from affidavit.storage.postgres import PostgresStorage
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import SAMPLES, add_samples, sample_plan_text
from .pg_cluster import drop_vaults
from .test_pg_serve_cli import Daemon

pytestmark = pytest.mark.xdist_group("postgres")

SOTU = ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md")
Result = tuple[bool, str]
PER_HOUR = 3


@dataclass
class Team:
    """PostgreSQL vaults ``team`` (only read here) and ``other`` (the writes' tests), each with
    the sample sources and plan applied, a SQLite vault with the same, the daemon over the
    database, tokens of ``team`` (read, propose, approve) and of ``other`` (``other-ROLE``)."""

    daemon: Daemon
    url: str
    sqlite: Vault
    tokens: dict[str, str]
    plan_ids: tuple[str, str]  # the sample plan's id on PostgreSQL, on SQLite


def _text(result: Any) -> Result:
    parts = [c.text for c in result.content if isinstance(c, TextContent)]
    return bool(result.isError), "\n".join(parts)


def over_http(
    team: Team, token: str | None, *calls: tuple[str, dict[str, Any]], vault: str = "team"
) -> list[Any]:
    """One MCP client session with the daemon at ``/mcp/{vault}`` over loopback TCP: the tool
    listing, then each call's (is_error, text)."""
    url = f"http://127.0.0.1:{team.daemon.port}/mcp/{vault}"
    out: list[Any] = []

    async def go() -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx.AsyncClient(headers=headers, timeout=600) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            listing = (await client.list_tools()).tools
            out.append([t.model_dump(mode="json", exclude_none=True) for t in listing])
            for name, args in calls:
                out.append(_text(await client.call_tool(name, args)))

    anyio.run(go)
    return out


def sqlite_vault(root: Path) -> tuple[Vault, str]:
    """A SQLite vault trusting the policy, with the samples and the sample plan applied."""
    init_vault(root)[0].close()
    (root / "affidavit.toml").write_text('[policy]\nauto_apply = "trusted"\n', "utf-8")
    vault = open_vault(root)
    add_samples(vault)
    made = svc.propose(vault, sample_plan_text(vault), "me", "test")
    assert svc.approve(vault, made.plan_id, None, "me").applied
    return vault, made.plan_id


def in_process(vault: Vault, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The same session with the SQLite vault's server: the tool listing, then each call."""
    server = build_server(Door(lambda: nullcontext(vault), "daemon", origin="mcp-http"))
    out: list[Any] = []

    async def go() -> None:
        async with create_connected_server_and_client_session(server) as client:
            listing = (await client.list_tools()).tools
            out.append([t.model_dump(mode="json", exclude_none=True) for t in listing])
            for name, args in calls:
                out.append(_text(await client.call_tool(name, args)))

    anyio.run(go)
    return out


def serve(base: Path, url: str) -> Daemon:
    """``affidavit serve`` in a vault folder whose affidavit.toml names the database, a trusting
    policy and a small proposal quota."""
    folder = base / "served"
    init_vault(folder)[0].close()
    (folder / "affidavit.toml").write_text(
        f'[database]\nurl = "{url}"\n\n[policy]\nauto_apply = "trusted"\n\n'
        f"[mcp]\npropose_per_hour = {PER_HOUR}\n",
        encoding="utf-8",
    )
    return Daemon(base, env={"AFFIDAVIT_DATABASE": ""}, cwd=folder)


@pytest.fixture(scope="module")
def team(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    drop_vaults(pg_url)
    base = tmp_path_factory.mktemp("mcp-pg")
    sqlite, sqlite_plan = sqlite_vault(base / "sqlite")
    plan = json.loads(sample_plan_text(sqlite))
    storage = PostgresStorage(pg_url)
    tokens: dict[str, str] = {}
    try:
        for vault_name in ("team", "other"):
            storage.create_vault(vault_name, "nobody-here")
            for name in SOTU:
                path = SAMPLES / "sotu" / name
                storage.add_source(
                    vault_name, path.read_bytes(), origin=str(path), name=name,
                    added_at=iso(utc_now()), media_type="text/markdown", trust="trusted",
                )  # fmt: skip
            vault = PgVault(storage, vault_name)
            nonce = vault.new_nonce(1).nonce
            proposed = vault.propose({**plan, "nonce": nonce}, "me", "test")
            assert vault.approve(proposed.plan_id, None, "me").applied
            prefix = "" if vault_name == "team" else "other-"
            for role in ("read", "propose", "approve"):
                made = vault.create_token(role, timedelta(days=1), role, "test")
                tokens[prefix + role] = made[1]
            if vault_name == "team":
                pg_plan = proposed.plan_id
    finally:
        storage.close()
    daemon = serve(base, pg_url)
    try:
        yield Team(daemon, pg_url, sqlite, tokens, (pg_plan, sqlite_plan))
    finally:
        assert daemon.stop() == 0
        sqlite.close()


def test_every_read_tool_answers_as_on_sqlite(team: Team) -> None:
    pg_plan, sqlite_plan = team.plan_ids
    roosevelt = "80fe4d9fab5f87e51dcc9db90a9e41ab"
    calls = [
        ("list_sources", {}),
        ("read_source", {"source": roosevelt}),
        ("read_source", {"source": roosevelt, "cursor": "s40"}),
        ("find_quote", {"source": roosevelt, "phrase": "freedom from  FEAR"}),
        ("list_pages", {}),
        ("read_page", {"slug": "four-freedoms"}),
        ("search_claims", {"query": "freedom of worship", "limit": 1}),
        ("search_claims", {"query": "zzyzx qqq"}),
        ("ask_wiki", {"question": "What was the second freedom?"}),
        ("get_context", {}),
        ("list_findings", {}),
    ]
    listing, *pg = over_http(
        team, team.tokens["read"], *calls, ("plan_status", {"plan_id": pg_plan})
    )
    local, *sq = in_process(team.sqlite, *calls, ("plan_status", {"plan_id": sqlite_plan}))
    assert [t["name"] for t in listing] == list(TOOLS)
    assert listing == local  # the same tools, descriptions, schemas and annotations
    with team.daemon.tcp(team.tokens["read"]) as rest:  # PostgreSQL audits token creations
        audited = rest.get("/v1/vaults/team/audit", params={"limit": 500}).json()["entries"]
    assert f"audit_entries {len(audited)}]" in pg[9][1]
    pg[9] = (pg[9][0], re.sub(r"audit_entries \d+", "audit_entries N", pg[9][1]))
    sq[9] = (sq[9][0], re.sub(r"audit_entries \d+", "audit_entries N", sq[9][1]))
    for (name, args), mine, theirs in zip(calls, pg, sq, strict=False):
        assert not mine[0], (name, mine)
        differ = [
            (a, b)
            for a, b in zip(mine[1].splitlines(), theirs[1].splitlines(), strict=False)
            if a != b
        ]
        assert mine == theirs, (name, args, differ[:2])
    assert "four-freedoms" in pg[4][1] and "[s" in pg[1][1]
    shown = pg[-1][1].replace(pg_plan[:12], "PLAN")
    assert shown == sq[-1][1].replace(sqlite_plan[:12], "PLAN")
    assert shown.startswith("plan PLAN: applied")


def test_an_agents_plan_waits_under_a_trusting_policy_as_on_sqlite(
    team: Team, tmp_path: Path
) -> None:
    source = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
    claim = {
        "text": "The fourth is freedom from fear.",
        "evidence": [{"source": source, "quote": "The fourth is freedom from fear"}],
    }
    ops = [{"op": "add_claims", "page": "four-freedoms", "section": "Fear", "claims": [claim]}]
    _, proposed, status = over_http(
        team, team.tokens["other-propose"], ("propose_plan", {"operations": ops}),
        ("plan_status", {"plan_id": "0000"}), vault="other",
    )  # fmt: skip
    assert not proposed[0] and "status pending" in proposed[1], proposed
    assert "whatever policy.auto_apply says (W13)" in proposed[1], proposed[1]
    assert "affidavit approve" in proposed[1]
    plan_id = proposed[1].split()[1]
    assert status[0] and "call plan_status with an id propose_plan returned" in status[1]
    sqlite, _ = sqlite_vault(tmp_path / "v")  # the same proposal on SQLite, the same answer
    try:
        local = in_process(sqlite, ("propose_plan", {"operations": ops}))[1]
    finally:
        sqlite.close()
    local_id = local[1].split()[1]
    assert local == (
        False,
        proposed[1].replace(plan_id, local_id).replace(plan_id[:12], local_id[:12]),
    )
    storage = PostgresStorage(team.url)
    try:
        record = storage.plan("other", plan_id)
        assert record is not None and record.status == "pending"
        assert record.author.startswith("token:") and record.author.endswith(" via mcp")
        assert record.origin == "mcp-http"
        # the trusting policy applies a person's plan at once, and not the agent's (W13)
        person = PgVault(storage, "other", Config({"policy.auto_apply": "trusted"}))
        quote = "That is why this Annual Message to the Congress is unique in our history"
        claim2 = {"text": quote + ".", "evidence": [{"source": source, "quote": quote}]}
        mine = person.propose(
            {"nonce": person.new_nonce(1).nonce,
             "operations": [{**ops[0], "claims": [claim2]}]}, "me", "cli",
        )  # fmt: skip
        assert mine.status == "applied"
        again = storage.plan("other", plan_id)
        assert again is not None and again.status == "pending"
    finally:
        storage.close()
    _, shown = over_http(
        team, team.tokens["other-read"], ("plan_status", {"plan_id": plan_id}), vault="other"
    )
    assert not shown[0] and f"plan {plan_id[:12]}: pending" in shown[1]


def test_a_read_token_cant_propose_nor_add_a_source(team: Team) -> None:
    ops = [{"op": "link_pages", "page": "four-freedoms", "to": "four-freedoms"}]
    _, read_propose, read_add = over_http(
        team, team.tokens["read"], ("propose_plan", {"operations": ops}),
        ("add_source", {"location": "https://example.org/"}),
    )  # fmt: skip
    for error, text in (read_propose, read_add):
        assert error and "needs the propose role; yours is read" in text
    # the propose role may: through the daemon, a file only under mcp.source_dirs (none here)
    # and a URL only at a public address (never the daemon's own network)
    _, on_disk, private = over_http(
        team, team.tokens["propose"], ("add_source", {"location": "/etc/hostname"}),
        ("add_source", {"location": "http://127.0.0.1:1/notes.md"}),
    )  # fmt: skip
    assert on_disk[0] and "adding files is off" in on_disk[1]
    assert private[0] and "public" in private[1]


def test_no_token_another_vaults_token_and_an_unknown_vault_are_refused(team: Team) -> None:
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}},
    }  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream"}
    with team.daemon.tcp() as anonymous:
        assert anonymous.post("/mcp/team", json=init, headers=accept).status_code == 401
    with team.daemon.tcp(team.tokens["other-approve"]) as other:
        assert other.post("/mcp/team", json=init, headers=accept).status_code == 403
        assert other.post("/mcp/other", json=init, headers=accept).status_code == 200
    with team.daemon.tcp(team.tokens["approve"]) as approver:
        for path in ("/mcp/nosuch", "/mcp/v_team", "/mcp/team'--"):
            got = approver.post(path, json=init, headers=accept)
            assert got.status_code == 404, (path, got.text)
        ok = approver.post("/mcp/team", json=init, headers=accept)
        assert ok.status_code == 200 and "affidavit" in ok.text
    with team.daemon.tcp(team.tokens["approve"]) as foreign:  # DNS rebinding: a foreign Host
        got = foreign.post("/mcp/team", json=init, headers={**accept, "Host": "evil.example"})
        assert got.status_code in (400, 403, 421), got.text


def test_the_quota_counts_mcp_and_rest_together(team: Team) -> None:
    """``mcp.propose_per_hour`` per caller, across both doors: the token's MCP proposals and
    its REST nonces draw on one allowance; past it, both are refused with when to call again."""
    source = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
    fresh = PgVault(PostgresStorage(team.url), "other")
    try:
        token = fresh.create_token("propose", timedelta(days=1), "quota", "test")[1]
    finally:
        fresh.storage.close()
    results = []
    for n in range(PER_HOUR + 1):
        claim = {
            "text": f"Claim {n}: the first freedom was freedom of speech.",
            "evidence": [{"source": source, "quote": "The first is freedom of speech"}],
        }
        ops = [{"op": "add_claims", "page": "four-freedoms", "section": f"Q{n}",
                "claims": [claim]}]  # fmt: skip
        results += over_http(team, token, ("propose_plan", {"operations": ops}), vault="other")[1:]
    assert [error for error, _ in results] == [False] * PER_HOUR + [True]
    assert "mcp.propose_per_hour" in results[-1][1] and "next call is allowed" in results[-1][1]
    with team.daemon.tcp(token) as rest:
        refused = rest.post("/v1/vaults/other/nonces", json={})
        assert refused.status_code == 429, refused.text


def test_the_sqlite_vaults_path_is_never_read(team: Team, tmp_path: Path) -> None:
    """The daemon runs in a vault folder naming the database: its own SQLite vault (empty) is
    never what the tools read."""
    _, pages = over_http(team, team.tokens["read"], ("list_pages", {}))
    assert not pages[0] and "four-freedoms" in pages[1]


def test_the_owners_own_mcp_client_on_the_socket_is_an_agent(team: Team, tmp_path: Path) -> None:
    """The vault's owner on the Unix socket has every role, yet a plan through MCP is an
    agent's (W13): recorded as ``OWNER via mcp`` and left waiting under a trusting policy."""
    owner = pwd.getpwuid(os.geteuid()).pw_name
    storage = PostgresStorage(team.url)
    try:
        storage.create_vault("mine", owner)
        for name in SOTU:
            path = SAMPLES / "sotu" / name
            storage.add_source(
                "mine", path.read_bytes(), origin=str(path), name=name, added_at=iso(utc_now()),
                media_type="text/markdown", trust="trusted",
            )  # fmt: skip
    finally:
        storage.close()
    # the daemon lists its vaults when it starts: a second one over the same database
    daemon = serve(tmp_path, team.url)
    source = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
    quote = "That is why this Annual Message to the Congress is unique in our history"
    page = {"op": "create_page", "slug": "message", "title": "The message", "summary": quote,
            "claims": [{"text": quote + ".", "evidence": [{"source": source, "quote": quote}]}]}  # fmt: skip
    out: list[Result] = []

    async def go() -> None:
        transport = httpx.AsyncHTTPTransport(uds=str(daemon.sock))
        async with (
            httpx.AsyncClient(transport=transport, timeout=600) as http,
            streamable_http_client("http://affidavit/mcp/mine", http_client=http) as (r, w, _),
            ClientSession(r, w) as client,
        ):
            await client.initialize()
            out.append(_text(await client.call_tool("propose_plan", {"operations": [page]})))

    try:
        anyio.run(go)
    finally:
        assert daemon.stop() == 0
    [(error, text)] = out
    assert not error and "status pending" in text and "(W13)" in text, text
    storage = PostgresStorage(team.url)
    try:
        record = storage.plan("mine", text.split()[1])
        assert record is not None and record.status == "pending"
        assert record.author == f"{owner} via mcp" and record.origin == "mcp-http"
    finally:
        storage.close()


def test_a_plan_nothing_of_which_passes_the_gate_is_recorded_rejected_with_its_reasons(
    team: Team,
) -> None:
    """As on SQLite: the plan is recorded as rejected (the audit log holds every rejection), the
    agent gets the gate's verdicts and the next step, and nothing waits for a person."""
    source = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
    invented = "The fifth is freedom from taxes on Tuesdays"
    claim = {"text": invented + ".", "evidence": [{"source": source, "quote": invented}]}
    ops = [{"op": "add_claims", "page": "four-freedoms", "section": "Made up", "claims": [claim]}]
    storage = PostgresStorage(team.url)
    inbox = PgVault(storage, "other")
    try:
        pending = [p.id for p in inbox.list_plans(("pending",))]
        _, answer = over_http(
            team, team.tokens["other-propose"], ("propose_plan", {"operations": ops}),
            vault="other",
        )  # fmt: skip
        assert not answer[0], answer
        text = answer[1]
        assert "status rejected: plan" in text and "claim 1: rejected" in text, text
        assert "Next: nothing passed the gate" in text
        plan_id = text.split()[1]
        record = storage.plan("other", plan_id)
        assert record is not None and record.status == "rejected"
        assert [p.id for p in inbox.list_plans(("pending",))] == pending
        entries = [e for e in inbox.audit_page(0, 1000).entries if e.plan_id == plan_id]
        assert [e.action for e in entries] == ["rejected"]
    finally:
        storage.close()
