"""Quotas on an agent's writing calls: an agent in a loop can't fill the inbox or the disk.

Each caller (a token, or the local user on stdio) may call propose_plan and add_source so many
times an hour and have so many plans waiting; over that the call is refused with the limit, the
setting and when the next call is allowed, and nothing is written. A new connection resets
nothing (the calls are counted in the vault), another caller has its own quota.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from affidavit.clock import iso
from affidavit.inbox import reject
from affidavit.mcp.server import Door, build_server
from affidavit.vault import Vault, open_vault

from .conftest import FakeClock, add_text, claim


def _reopen(vault: Vault, config: str) -> Vault:
    vault.config_path.write_text(config + "\n", encoding="utf-8")
    root, clock = vault.root, vault.clock
    vault.close()
    return open_vault(root, clock=clock)


def _call(vault: Vault, actor: str, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    """One tool call in a fresh session (a reconnecting agent) as the token caller ``actor``."""
    door = Door(lambda: nullcontext(vault), "owner", caller=lambda _request: ("propose", actor))
    server = build_server(door)
    out: list[tuple[bool, str]] = []

    async def go() -> None:
        async with create_connected_server_and_client_session(server) as client:
            result = await client.call_tool(name, args)
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            out.append((bool(result.isError), text))

    anyio.run(go)
    return out[0]


def _page(source: str, n: int) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": f"bridge-{n}",
        "title": "The bridge",
        "summary": "The bridge opened in 1932.",
        "claims": [claim("The bridge opened in 1932.", source, "The bridge opened in 1932")],
    }


def _plans(vault: Vault) -> int:
    return int(vault.db.execute("SELECT count(*) FROM plans").fetchone()[0])


def test_propose_plan_per_hour_per_caller(vault: Vault, clock: FakeClock) -> None:
    vault = _reopen(vault, "[mcp]\npropose_per_hour = 2")
    try:
        source = add_text(vault, "n.md", "The bridge opened in 1932 after six years.")
        start = clock()
        for n in range(2):
            error, text = _call(
                vault, "token:aaa", "propose_plan", {"operations": [_page(source, n)]}
            )
            assert not error and "status pending" in text, text
            clock.advance(minutes=10)
        error, text = _call(vault, "token:aaa", "propose_plan", {"operations": [_page(source, 2)]})
        assert error
        assert "propose_plan is limited to 2 call(s) an hour" in text
        assert "mcp.propose_per_hour" in text
        assert f"allowed at {iso(start.replace(hour=start.hour + 1))} (in 40 min)" in text
        assert _plans(vault) == 2  # nothing recorded, no nonce spent
        # another token has its own quota
        error, text = _call(vault, "token:bbb", "propose_plan", {"operations": [_page(source, 3)]})
        assert not error, text
        # the window slides: an hour after the first call, one more is allowed
        clock.advance(minutes=40)
        error, text = _call(vault, "token:aaa", "propose_plan", {"operations": [_page(source, 4)]})
        assert not error, text
        error, text = _call(vault, "token:aaa", "propose_plan", {"operations": [_page(source, 5)]})
        assert error and "in 10 min" in text, text
    finally:
        vault.close()


def test_an_agent_cannot_keep_more_plans_waiting_than_its_cap(vault: Vault) -> None:
    vault = _reopen(vault, "[mcp]\npending_per_caller = 2")
    try:
        source = add_text(vault, "n.md", "The bridge opened in 1932 after six years.")
        ids = []
        for n in range(2):
            error, text = _call(
                vault, "token:aaa", "propose_plan", {"operations": [_page(source, n)]}
            )
            assert not error, text
            ids.append(text.splitlines()[0].split()[1])
        error, text = _call(vault, "token:aaa", "propose_plan", {"operations": [_page(source, 2)]})
        assert error and "2 plan(s) waiting in the inbox" in text, text
        assert "mcp.pending_per_caller" in text
        assert _plans(vault) == 2
        reject(vault, ids[0], "not now", "ann")  # a person decides one: room for another
        error, text = _call(vault, "token:aaa", "propose_plan", {"operations": [_page(source, 3)]})
        assert not error, text
    finally:
        vault.close()


def test_add_source_per_hour(vault: Vault, clock: FakeClock, tmp_path: Path) -> None:
    allowed = tmp_path / "papers"
    allowed.mkdir()
    for n in range(3):
        (allowed / f"{n}.md").write_text(f"Paper {n} says the bridge opened in 1932.\n")
    vault = _reopen(
        vault, f"[mcp]\nadd_source_per_hour = 2\nsource_dirs = [{json.dumps(str(allowed))}]"
    )
    try:
        for n in range(2):
            error, text = _call(
                vault, "token:aaa", "add_source", {"location": str(allowed / f"{n}.md")}
            )
            assert not error and "added" in text, text
        error, text = _call(vault, "token:aaa", "add_source", {"location": str(allowed / "2.md")})
        assert error and "add_source is limited to 2 call(s) an hour" in text, text
        assert "mcp.add_source_per_hour" in text and "allowed at" in text
        stored = vault.db.execute("SELECT count(*) FROM sources").fetchone()[0]
        assert stored == 2
        clock.advance(hours=1)
        error, text = _call(vault, "token:aaa", "add_source", {"location": str(allowed / "2.md")})
        assert not error, text
    finally:
        vault.close()
