"""A vault made while ``affidavit serve --database URL`` runs is served without a restart (issue 26):
the first request that names it (REST or ``/mcp/{vault}``) finds it in the database, with its own
owner and tokens. The attacker's tests: another vault's token on it (403), and a flood of unknown
names — each asked of the database at most once while it is remembered as absent (counted by the
registry, never timed), names that are no vault name never asked, the memory of absent names
bounded, concurrent requests asking once."""

from __future__ import annotations

import json
import os
import pwd
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from affidavit.server.pg_app import create_pg_app
from affidavit.server.pg_registry import UNKNOWN_NAMES, PgRegistry
from affidavit.storage.postgres import PostgresStorage

from .pg_cluster import drop_vaults
from .test_pg_serve_cli import BRIDGE, Daemon, cli

pytestmark = pytest.mark.xdist_group("postgres")

INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {},
               "clientInfo": {"name": "t", "version": "0"}},
}  # fmt: skip
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _ok(run: Any) -> Any:
    assert run.returncode == 0, run.stderr
    return run


def _token(vault: str, role: str, env: dict[str, str]) -> str:
    run = _ok(cli("team", "token", vault, "--role", role, "--json", env=env))
    return str(json.loads(run.stdout)["token"])


def _mcp_sources(port: int, vault: str, token: str) -> tuple[bool, str]:
    """One MCP session at ``/mcp/{vault}`` over loopback: list_sources' (is_error, text)."""
    out: list[tuple[bool, str]] = []

    async def go() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=600) as http,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp/{vault}", http_client=http) as (
                read,
                write,
                _,
            ),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            result = await client.call_tool("list_sources", {})
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            out.append((bool(result.isError), text))

    anyio.run(go)
    return out[0]


def test_a_vault_made_after_the_daemon_started_is_served_with_its_own_tokens(
    pg_url: str, tmp_path: Path
) -> None:
    drop_vaults(pg_url)
    env = {"AFFIDAVIT_DATABASE": pg_url}
    me = pwd.getpwuid(os.geteuid()).pw_name
    _ok(cli("team", "create", "alpha", "--owner", me, env=env))
    alpha = _token("alpha", "approve", env)
    (tmp_path / "daemon").mkdir()
    daemon = Daemon(tmp_path / "daemon", env=env)
    try:
        note = tmp_path / "bridge.md"
        note.write_text(BRIDGE, encoding="utf-8")
        _ok(cli("team", "create", "beta", "--owner", me, env=env))
        _ok(cli("team", "add", "beta", str(note), "--trust", "trusted", env=env))
        _ok(cli("team", "create", "gamma", "--owner", me, env=env))
        _ok(cli("team", "add", "gamma", str(note), env=env))
        beta = {role: _token("beta", role, env) for role in ("read", "approve")}
        gamma = _token("gamma", "read", env)

        with daemon.tcp(beta["read"]) as reader:  # REST first names beta
            got = reader.get("/v1/vaults/beta")
            assert got.status_code == 200, got.text
            assert (got.json()["name"], got.json()["role"]) == ("beta", "read")
            assert got.json()["counts"]["sources"] == 1
            hits = reader.get("/v1/vaults/beta/search", params={"q": "bridge"})
            assert hits.status_code == 200, hits.text
            assert reader.get("/v1/vaults/alpha").status_code == 403  # beta's token on alpha
            assert reader.post("/v1/vaults/beta/nonces", json={}).status_code == 403  # read only
        with daemon.tcp(alpha) as other:  # alpha's approve token on beta: no access
            assert other.get("/v1/vaults/beta").status_code == 403
            assert other.post("/mcp/beta", json=INIT, headers=ACCEPT).status_code == 403
            assert other.get("/v1/vaults/alpha").status_code == 200
        with daemon.unix() as owner:  # the owner named by team create, on the socket
            assert owner.get("/v1/vaults/beta").json()["role"] == "owner"
            listed = owner.get("/v1/vaults/beta/tokens").json()
            assert sorted(t["role"] for t in listed) == ["approve", "read"]
        error, text = _mcp_sources(daemon.port, "beta", beta["approve"])
        assert not error and "bridge.md" in text, text

        # gamma is first named over MCP: its MCP server starts then, its tokens only
        error, text = _mcp_sources(daemon.port, "gamma", gamma)
        assert not error and "bridge.md" in text, text
        with daemon.tcp(beta["approve"]) as other:
            assert other.post("/mcp/gamma", json=INIT, headers=ACCEPT).status_code == 403
        with daemon.tcp(gamma) as reader:
            assert reader.get("/v1/vaults/gamma").status_code == 200
            for path in ("/v1/vaults/delta", "/v1/vaults/Gamma", "/v1/vaults/delta/pages"):
                got = reader.get(path)
                assert got.status_code == 404, (path, got.text)
            for path in ("/mcp/delta", "/mcp/Gamma", "/mcp/gamma'--"):
                got = reader.post(path, json=INIT, headers=ACCEPT)
                assert got.status_code == 404, (path, got.text)
        with daemon.unix() as owner:
            mine = owner.get("/v1/whoami").json()["vaults"]
            assert sorted(v["name"] for v in mine) == ["alpha", "beta", "gamma"]
    finally:
        assert daemon.stop() == 0
    log = (tmp_path / "daemon" / "daemon.log").read_text()
    added = [json.loads(line) for line in log.splitlines() if '"vault_added"' in line]
    assert sorted(e["vault"] for e in added) == ["beta", "gamma"]


@pytest.fixture
def served(pg_url: str) -> Iterator[tuple[PgRegistry, TestClient, str]]:
    """A daemon (in-process) over a database holding vault alpha, remembering absent names for
    an hour; alpha's approve token."""
    drop_vaults(pg_url)
    storage = PostgresStorage(pg_url)
    try:
        storage.create_vault("alpha", "nobody-here")
    finally:
        storage.close()
    registry = PgRegistry.open(pg_url, absent_for=3600)
    token = registry.get("alpha").service.create_token("approve", timedelta(days=1), "t", "t")[1]
    with TestClient(create_pg_app(registry)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield registry, client, pg_url


def test_an_unknown_name_is_asked_of_the_database_once_while_remembered(
    served: tuple[PgRegistry, TestClient, str],
) -> None:
    registry, client, url = served
    assert registry.lookups == 0
    for _ in range(5):
        assert client.get("/v1/vaults/nosuch").status_code == 404
        assert client.get("/v1/vaults/nosuch/pages").status_code == 404
    assert registry.lookups == 1
    client.headers.pop("Authorization")
    assert client.get("/v1/vaults/nosuch").status_code == 401  # no credentials: nothing told
    assert client.get("/v1/vaults/other").status_code == 401
    assert registry.lookups == 2
    # names that are no vault name are never asked
    for name in ("Alpha", "v_x'--", "a" * 49, "9lives", "x%20y", "%27"):
        got = client.get(f"/v1/vaults/{name}", headers={"Authorization": "Bearer afd_x"})
        assert got.status_code in (401, 404), (name, got.text)
        assert registry.find(name) is None
    assert registry.lookups == 2
    # a vault made while it is remembered as absent waits out the window (5 s by default)
    storage = PostgresStorage(url)
    try:
        storage.create_vault("nosuch", "nobody-here")
    finally:
        storage.close()
    assert registry.find("nosuch") is None and registry.lookups == 2


def test_a_flood_of_names_is_remembered_within_bounds(pg_url: str) -> None:
    drop_vaults(pg_url)
    storage = PostgresStorage(pg_url)
    try:
        storage.create_vault("alpha", "nobody-here")
    finally:
        storage.close()
    registry = PgRegistry.open(pg_url, absent_for=3600)
    try:
        names = [f"n{i}" for i in range(UNKNOWN_NAMES + 10)]
        for name in names:
            assert registry.find(name) is None
        assert registry.lookups == len(names)
        assert registry.find(names[-1]) is None and registry.lookups == len(names)  # remembered
        assert registry.find(names[0]) is None and registry.lookups == len(names) + 1  # forgotten
    finally:
        registry.close()


def test_concurrent_requests_ask_once_and_a_window_of_zero_asks_each_time(pg_url: str) -> None:
    drop_vaults(pg_url)
    storage = PostgresStorage(pg_url)
    try:
        storage.create_vault("alpha", "nobody-here")
        registry = PgRegistry.open(pg_url, absent_for=3600)
        found: list[Any] = []
        start = threading.Barrier(12)

        def ask(name: str) -> None:
            start.wait()
            found.append(registry.find(name))

        def race(name: str) -> None:
            threads = [threading.Thread(target=ask, args=(name,)) for _ in range(12)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        race("ghost")
        assert found == [None] * 12 and registry.lookups == 1
        storage.create_vault("later", "nobody-here")
        found.clear()
        race("later")
        assert registry.lookups == 2 and len({id(v) for v in found}) == 1
        assert found[0].name == "later" and set(registry.vaults) == {"alpha", "later"}
        registry.close()

        eager = PgRegistry.open(pg_url, absent_for=0)
        try:
            assert eager.find("ghost") is None and eager.find("ghost") is None
            assert eager.lookups == 2
            storage.create_vault("ghost", "nobody-here")
            assert eager.find("ghost") is not None and eager.lookups == 3
            assert eager.find("ghost") is not None and eager.lookups == 3  # served: not asked
        finally:
            eager.close()
    finally:
        storage.close()


def test_a_new_vaults_token_is_known_before_its_vault_is_named(
    served: tuple[PgRegistry, TestClient, str],
) -> None:
    """``GET /v1/whoami`` with a token of a vault made after the daemon started: the list of
    vaults is read again, once, and the token is known; unknown tokens read it at most once
    per window."""
    registry, client, url = served
    storage = PostgresStorage(url)
    try:
        storage.create_vault("later", "nobody-here")
    finally:
        storage.close()
    late = PgRegistry.open(url)  # another process's view, to make the token with
    try:
        token = late.get("later").service.create_token("read", timedelta(days=1), "t", "t")[1]
    finally:
        late.close()
    me = client.get("/v1/whoami", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200, me.text
    assert [(v["name"], v["role"]) for v in me.json()["vaults"]] == [("later", "read")]
    assert registry.lookups == 1 and "later" in registry.vaults
    assert client.get("/v1/vaults/later").status_code == 403  # alpha's token: not on later
    for forged in ("afd_0123456789ab_" + "A" * 43, "afd_ba9876543210_" + "B" * 43):
        got = client.get("/v1/whoami", headers={"Authorization": f"Bearer {forged}"})
        assert got.status_code == 401, got.text
    assert registry.lookups == 1  # the list was read within the window: not read again
