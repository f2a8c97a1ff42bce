"""The MCP tools over streamable HTTP in a real daemon on loopback: `/mcp/{vault}` behind the Guard.

No token: 401 before anything runs. A read token reads but can't propose; a propose token
proposes, and its plan waits for a person. A foreign Host (DNS rebinding) is refused. The socket's
owner reaches the same tools by peer credentials.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from affidavit.service import tokens as token_store
from affidavit.vault import init_vault, open_vault
from tests.conftest import sample_plan_text
from tests.test_server_authz import Daemon, private_dir, start_daemon

from .conftest import FakeClock, add_samples

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="runs daemons as root")]

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Path, Daemon, dict[str, str]]]:
    base = private_dir("afd-mcp-")
    root = base / "alpha"
    vault, _ = init_vault(root)
    add_samples(vault)
    tokens = {}
    for role in ("read", "propose"):
        _, tokens[role] = token_store.create_token(
            vault.db, vault.clock, role, timedelta(days=1), role, "root"
        )
    tokens["plan"] = sample_plan_text(vault)
    then = FakeClock(datetime.now(UTC) - timedelta(days=3))  # a day's token, three days ago
    _, tokens["expired"] = token_store.create_token(
        vault.db, then, "propose", timedelta(days=1), "old", "root"
    )
    revoked, tokens["revoked"] = token_store.create_token(
        vault.db, vault.clock, "propose", timedelta(days=1), "gone", "root"
    )
    token_store.revoke_token(vault.db, vault.clock, revoked.id, "root")
    vault.close()
    other, _ = init_vault(base / "beta")
    _, tokens["beta"] = token_store.create_token(
        other.db, other.clock, "propose", timedelta(days=1), "beta", "root"
    )
    other.close()
    daemon = start_daemon([root, base / "beta"], base)
    try:
        yield root, daemon, tokens
    finally:
        assert daemon.stop() == 0


def _session(daemon: Daemon, token: str, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    url = f"http://127.0.0.1:{daemon.port}/mcp/alpha"
    out: list[Any] = []

    async def go() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=600) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            out.append(init.instructions)
            out.append([t.name for t in (await client.list_tools()).tools])
            for name, args in calls:
                result = await client.call_tool(name, args)
                text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
                out.append((bool(result.isError), text))

    anyio.run(go)
    return out


def test_a_propose_token_proposes_and_the_plan_waits(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    root, daemon, tokens = served
    ops = json.loads(tokens["plan"])["operations"]
    instructions, names, pages, proposed = _session(
        daemon, tokens["propose"], ("list_pages", {}), ("propose_plan", {"operations": ops})
    )
    assert "a person approves" in instructions and "propose_plan" in names
    assert pages == (False, "no pages yet; create one with propose_plan (op create_page).")
    assert not proposed[0] and "status pending" in proposed[1], proposed
    with open_vault(root) as vault:
        row = vault.db.execute("SELECT author, origin, status FROM plans").fetchone()
        assert row["status"] == "pending" and row["origin"] == "mcp-http"
        assert row["author"].startswith("token:")
        assert vault.db.execute("SELECT count(*) FROM pages").fetchone()[0] == 0


def test_a_read_token_reads_but_cannot_propose_or_add(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    _, daemon, tokens = served
    ops = json.loads(tokens["plan"])["operations"]
    *_, sources, proposed, added = _session(
        daemon,
        tokens["read"],
        ("list_sources", {}),
        ("propose_plan", {"operations": ops}),
        ("add_source", {"location": "https://example.org/"}),
    )
    assert not sources[0] and "trusted" in sources[1]
    for error, text in (proposed, added):
        assert error and "needs the propose role; yours is read" in text


def test_no_token_a_bad_token_and_a_foreign_host_are_refused(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    _, daemon, tokens = served
    with daemon.tcp() as client:
        assert client.post("/mcp/alpha", json=INIT, headers=ACCEPT).status_code == 401
    with daemon.tcp("afd_" + "x" * 40) as client:
        assert client.post("/mcp/alpha", json=INIT, headers=ACCEPT).status_code == 401
    with daemon.tcp(tokens["read"]) as client:
        ok = client.post("/mcp/alpha", json=INIT, headers=ACCEPT)
        assert ok.status_code == 200, ok.text
        rebound = {**ACCEPT, "Host": "evil.example:80"}
        assert client.post("/mcp/alpha", json=INIT, headers=rebound).status_code == 421
        origin = {**ACCEPT, "Origin": "http://evil.example"}
        assert client.post("/mcp/alpha", json=INIT, headers=origin).status_code == 403
        assert client.post("/mcp/gamma", json=INIT, headers=ACCEPT).status_code == 404
        assert client.post("/mcp/beta", json=INIT, headers=ACCEPT).status_code == 403


def test_the_socket_owner_reaches_the_tools(served: tuple[Path, Daemon, dict[str, str]]) -> None:
    _, daemon, _ = served
    with daemon.unix() as client:
        response = client.post("/mcp/alpha", json=INIT, headers=ACCEPT)
        assert response.status_code == 200, response.text
        assert "a person approves" in response.json()["result"]["instructions"]
        listed = client.post(
            "/mcp/alpha",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            headers={**ACCEPT, "mcp-protocol-version": "2025-03-26"},
        )
        assert listed.status_code == 200, listed.text
        assert len(listed.json()["result"]["tools"]) == 12
    with httpx.Client(base_url=f"http://127.0.0.1:{daemon.port}") as anonymous:
        assert anonymous.get("/mcp/alpha").status_code == 401


def test_expired_revoked_and_another_vaults_tokens_are_refused(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    """A token works on its own vault only, while it lives: nothing runs for the others."""
    root, daemon, tokens = served
    ops = json.loads(tokens["plan"])["operations"]
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "propose_plan", "arguments": {"operations": ops}},
    }
    headers = {**ACCEPT, "mcp-protocol-version": "2025-03-26"}
    with open_vault(root) as vault:
        plans = vault.db.execute("SELECT count(*) FROM plans").fetchone()[0]
    for name in ("expired", "revoked"):
        with daemon.tcp(tokens[name]) as client:
            refused = client.post("/mcp/alpha", json=call, headers=headers)
            assert refused.status_code == 401 and name in refused.text, refused.text
    with daemon.tcp(tokens["beta"]) as client:
        assert client.post("/mcp/beta", json=INIT, headers=ACCEPT).status_code == 200
        assert client.post("/mcp/alpha", json=INIT, headers=ACCEPT).status_code == 403
        assert client.post("/mcp/alpha", json=call, headers=headers).status_code == 403
        for path in ("/mcp/alpha/", "/mcp/alpha%2F..%2Fbeta", "/mcp/beta/../alpha", "/mcp/ALPHA"):
            sent = client.post(path, json=call, headers=headers, follow_redirects=True)
            assert sent.status_code in (403, 404), (path, sent.status_code)
    with open_vault(root) as vault:
        assert vault.db.execute("SELECT count(*) FROM plans").fetchone()[0] == plans


def test_rebinding_hosts_and_origins_are_refused(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    _, daemon, tokens = served
    with daemon.tcp(tokens["propose"]) as client:
        for host in ("localhost.evil.example", "127.0.0.1.nip.io:80", "evil.example:8765", ""):
            sent = client.post("/mcp/alpha", json=INIT, headers={**ACCEPT, "Host": host})
            assert sent.status_code in (400, 421), (host, sent.status_code)
        for origin in ("null", "http://localhost.evil.example", "https://evil.example", "file://"):
            sent = client.post("/mcp/alpha", json=INIT, headers={**ACCEPT, "Origin": origin})
            assert sent.status_code == 403, (origin, sent.status_code)
        plain = {**ACCEPT, "Content-Type": "text/plain"}  # a browser's "simple" cross-site POST
        assert client.post("/mcp/alpha", json=INIT, headers=plain).status_code in (400, 415)


def test_an_oversized_request_is_refused_before_it_is_read(
    served: tuple[Path, Daemon, dict[str, str]],
) -> None:
    """A propose token sending a 3 MB tool call (server.max_body_bytes is 2 MB): 413, no plan."""
    root, daemon, tokens = served
    huge = [{"op": "create_page", "slug": "x", "title": "T" * 3_000_000, "summary": "S"}]
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "propose_plan", "arguments": {"operations": huge}},
    }
    with open_vault(root) as vault:
        plans = vault.db.execute("SELECT count(*) FROM plans").fetchone()[0]
    with daemon.tcp(tokens["propose"]) as client:
        sent = client.post(
            "/mcp/alpha", json=call, headers={**ACCEPT, "mcp-protocol-version": "2025-03-26"}
        )
        assert sent.status_code == 413, sent.text
    with open_vault(root) as vault:
        assert vault.db.execute("SELECT count(*) FROM plans").fetchone()[0] == plans


def test_no_stream_is_held_open(served: tuple[Path, Daemon, dict[str, str]]) -> None:
    """Stateless JSON answers only: a GET (the SSE stream the SDK would keep open forever,
    one per request a token holder cares to send) or a DELETE is refused at once."""
    _, daemon, tokens = served
    with daemon.tcp(tokens["read"]) as client:
        for method in ("GET", "DELETE"):
            sent = client.request(
                method, "/mcp/alpha", headers={"Accept": "text/event-stream"}, timeout=30
            )
            assert sent.status_code == 405, (method, sent.status_code)
