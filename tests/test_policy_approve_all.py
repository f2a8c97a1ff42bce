"""`approve --all` is a person's bulk decision on a person's plans: it never sweeps in what agents
queued (through MCP or with a token) unless asked to with --include-agents or --proposer.

Issue 12's rule is that the agent proposes and a person approves; a person typing
`approve --all --yes` must not approve, unseen, every plan an agent in a loop put in the inbox.
"""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.shared.memory import create_connected_server_and_client_session

from affidavit.agents import proposer_of
from affidavit.cli import main
from affidavit.inbox import list_plans
from affidavit.mcp.server import Door, build_server
from affidavit.service import tokens as token_store
from affidavit.service import vaults as svc
from affidavit.vault import Vault, init_vault
from tests.test_server_authz import private_dir, start_daemon

from .conftest import FakeClock, add_text, claim, make_plan


@pytest.fixture
def clock() -> FakeClock:
    """Now: the CLI opens the vault with the real clock, and a plan must not expire meanwhile."""
    return FakeClock(datetime.now(UTC))


def _op(slug: str, source: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": f"The {slug}",
        "summary": f"The {slug} opened in 1932.",
        "claims": [claim(f"The {slug} opened in 1932.", source, f"The {slug} opened in 1932")],
    }


def _source(vault: Vault, *names: str) -> str:
    text = " ".join(f"The {n} opened in 1932 after six years of work." for n in names)
    return add_text(vault, "towns.md", text)


def _propose_through_mcp(vault: Vault, op: dict[str, Any]) -> str:
    server = build_server(Door(lambda: nullcontext(vault), "agent"))
    out: list[str] = []

    async def go() -> None:
        async with create_connected_server_and_client_session(server) as client:
            result = await client.call_tool("propose_plan", {"operations": [op]})
            out.append(result.content[0].text)  # type: ignore[union-attr]

    anyio.run(go)
    return out[0].splitlines()[0].split()[1]


def _cli(vault: Vault, *args: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _pending(vault: Vault) -> set[str]:
    return {r.id for r in list_plans(vault)}


def test_approve_all_yes_leaves_an_agents_plans_pending_and_says_how(
    vault: Vault, tmp_path: Path
) -> None:
    source = _source(vault, "bridge", "tunnel", "ferry", "canal")
    person = svc.propose(vault, make_plan(vault, _op("bridge", source)), "ann", "propose:a.json")
    via_mcp = _propose_through_mcp(vault, _op("tunnel", source))
    # the daemon's API names a token caller token:ID (server/routes/plans.py)
    via_token = svc.propose(vault, make_plan(vault, _op("ferry", source)), "token:9f8e", "api:x")
    assert {person.status, via_token.status} == {"pending"}
    assert _pending(vault) == {person.plan_id, via_mcp, via_token.plan_id}

    listing = _cli(vault, "inbox")
    assert sum("[agent]" in line for line in listing.splitlines()) == 2
    out = _cli(vault, "approve", "--all", "--yes")
    assert (vault.root / "wiki" / "bridge.md").exists()
    assert not (vault.root / "wiki" / "tunnel.md").exists()
    assert not (vault.root / "wiki" / "ferry.md").exists()
    assert _pending(vault) == {via_mcp, via_token.plan_id}
    for plan_id in (via_mcp, via_token.plan_id):
        assert f"Left out: plan {plan_id[:12]} proposed by an agent" in out
        assert f"`affidavit approve {plan_id[:12]}`" in out
    assert "affidavit approve --all --include-agents" in out

    # one agent's plans, by the author `inbox` shows
    listed = json.loads(_cli(vault, "inbox", "--json"))
    assert {p["proposer"] for p in listed} == {"agent"}
    [mcp_author] = [p["author"] for p in listed if p["id"] == via_mcp]
    out = json.loads(_cli(vault, "approve", "--all", "--yes", "--proposer", mcp_author, "--json"))
    assert [r["plan_id"] for r in out["results"]] == [via_mcp]
    assert [p["plan_id"] for p in out["left_out"]] == [via_token.plan_id]
    assert (vault.root / "wiki" / "tunnel.md").exists()

    out = json.loads(_cli(vault, "approve", "--all", "--yes", "--include-agents", "--json"))
    assert [r["plan_id"] for r in out["results"]] == [via_token.plan_id]
    assert out["left_out"] == [] and _pending(vault) == set()


def test_only_agents_plans_pending_approves_nothing_and_lists_them(vault: Vault) -> None:
    source = _source(vault, "bridge")
    via_mcp = _propose_through_mcp(vault, _op("bridge", source))
    before = vault.git.head()
    out = _cli(vault, "approve", "--all", "--yes")
    assert "The inbox is empty" not in out
    assert f"Left out: plan {via_mcp[:12]}" in out
    assert vault.git.head() == before and _pending(vault) == {via_mcp}
    # naming the plan is a person's decision on it: that works as before
    assert "applied" in _cli(vault, "approve", via_mcp[:12])


def test_the_proposer_is_the_hosts_mark_not_the_callers() -> None:
    assert proposer_of("ann", "propose:plan.json") == "person"
    assert proposer_of("affidavit-ingest", "ingest:a.md") == "person"
    assert proposer_of("doctor", "doctor:wiki/x.md") == "person"
    assert proposer_of("lint", "lint") == "person"
    # what an agent controls cannot make its plan a person's: the MCP doors fix the origin, the
    # daemon names every token caller token:ID, and a client's origin comes after "api:"
    assert proposer_of("agent via mcp", "mcp") == "agent"
    assert proposer_of("token:ab12 via mcp", "mcp-http") == "agent"
    assert proposer_of("token:ab12", "api:propose:plan.json") == "agent"


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a daemon as root")
def test_through_the_daemon_a_token_callers_plan_is_an_agents() -> None:
    """The daemon names a token caller token:ID, whatever origin it sends: over the socket,
    `approve --all --yes` applies the owner's plan and leaves the token agent's in the inbox."""
    base = private_dir("afd-policy-")
    root = base / "alpha"
    vault, _ = init_vault(root)
    try:
        source = _source(vault, "bridge", "tunnel")
        _, token = token_store.create_token(
            vault.db, vault.clock, "propose", timedelta(days=1), "agent", "root"
        )
    finally:
        vault.close()
    daemon = start_daemon([root], base)
    try:
        with daemon.tcp(token) as client:
            nonce = client.post("/v1/vaults/alpha/nonces", json={"hours": 1}).json()["nonce"]
            plan = {"nonce": nonce, "operations": [_op("tunnel", source)]}
            sent = client.post(
                "/v1/vaults/alpha/plans", json={"plan": plan, "origin": "propose:mine.json"}
            )
            assert sent.status_code == 200, sent.text
            agents = sent.json()["plan_id"]
            listed = client.get("/v1/vaults/alpha/plans").json()
            assert [p["proposer"] for p in listed] == ["agent"]
        through = {"AFFIDAVIT_SOCKET": str(daemon.socket), "AFFIDAVIT_NO_DAEMON": ""}
        runner = CliRunner()
        nonce = runner.invoke(main, ["--vault", str(root), "nonce"], env=through).output.strip()
        mine = base / "mine.json"
        mine.write_text(json.dumps({"nonce": nonce, "operations": [_op("bridge", source)]}))
        out = runner.invoke(main, ["--vault", str(root), "propose", str(mine)], env=through)
        assert out.exit_code == 0, out.output
        out = runner.invoke(main, ["--vault", str(root), "approve", "--all", "--yes"], env=through)
        assert out.exit_code == 0, out.output
        assert f"Left out: plan {agents[:12]} proposed by an agent (token:" in out.output
        assert (root / "wiki" / "bridge.md").exists() and not (root / "wiki" / "tunnel.md").exists()
    finally:
        assert daemon.stop() == 0


def test_filters_need_all(vault: Vault) -> None:
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "approve", "abc123", "--include-agents"]
    )
    assert result.exit_code != 0 and "--all" in result.output
