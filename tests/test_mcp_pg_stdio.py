"""``affidavit mcp --database URL --vault NAME`` (issue 26): the MCP tools over stdio on a vault of a
PostgreSQL database, as a real agent client spawns them — the same tools as on a folder, the local
user's plans an agent's (they wait for a person whatever the policy), ``add_source`` off for files
until ``--config`` names an affidavit.toml listing ``mcp.source_dirs`` (tests/test_mcp_pg_add.py). ``--print-config`` registers the database vault, and refuses a URL holding a password
(it would be written into the agent's configuration file)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.xdist_group("postgres")
pytest.importorskip("psycopg")
pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.types import TextContent  # noqa: E402

from affidavit.agents import local_actor  # noqa: E402
from affidavit.mcp.server import TOOLS  # noqa: E402

from .test_pg_ask import Team  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def team(pg_url: str) -> Iterator[Team]:
    made = Team(pg_url)
    made.url = pg_url  # type: ignore[attr-defined]
    yield made
    made.close()


def _text(result: Any) -> tuple[bool, str]:
    return bool(result.isError), "\n".join(
        c.text for c in result.content if isinstance(c, TextContent)
    )


def over_stdio(url: str, vault: str, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "from affidavit.cli import main; main()",
            "mcp",
            "--database",
            url,
            "--vault",
            vault,
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "AFFIDAVIT_DATABASE": ""},
    )
    out: list[Any] = []

    async def go() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            out.append([t.name for t in (await client.list_tools()).tools])
            for name, args in calls:
                out.append(_text(await client.call_tool(name, args)))

    anyio.run(go)
    return out


def test_the_tools_over_stdio_on_a_database_vault(team: Team) -> None:
    claim = {
        "text": "The Eddystone Lighthouse stands on the Eddystone Rocks.",
        "evidence": [
            {"source": team.good, "quote": "The Eddystone Lighthouse stands on the Eddystone Rocks"}
        ],
    }
    ops = [{"op": "add_claims", "page": "eddystone", "section": "Place", "claims": [claim]}]
    names, pages, found, proposed, added = over_stdio(
        team.url, "team", ("list_pages", {}), ("search_claims", {"query": "James Douglass"}),
        ("propose_plan", {"operations": ops}), ("add_source", {"location": "/etc/hostname"}),
    )  # fmt: skip
    assert names == list(TOOLS)
    assert not pages[0] and "eddystone" in pages[1] and "harbour" in pages[1]
    assert not found[0] and "James Douglass" in found[1]
    assert not proposed[0] and "status pending" in proposed[1], proposed
    plan_id = proposed[1].split()[1]
    record = team.team.storage.plan("team", plan_id)
    assert record is not None and record.status == "pending"  # an agent's plan waits (W13)
    assert record.author == f"{local_actor()} via mcp" and record.origin == "mcp"
    assert added[0] and "adding files is off" in added[1]  # no --config: no mcp.source_dirs


def test_another_vault_is_its_own(team: Team) -> None:
    ((error, pages),) = over_stdio(team.url, "other", ("list_pages", {}))[1:]
    assert not error and "ferry" in pages and "eddystone" not in pages


def test_an_unknown_vault_is_refused_before_serving(team: Team) -> None:
    from affidavit.cli import main

    result = CliRunner().invoke(
        main, ["mcp", "--database", team.url, "--vault", "nosuch"], env={"AFFIDAVIT_DATABASE": ""}
    )
    assert result.exit_code == 1 and "no vault 'nosuch'" in result.output
    assert "team" in result.output  # the vaults it has, to pick from


@pytest.mark.parametrize("client", ["claude-code", "claude-desktop", "cursor", "codex"])
def test_print_config_registers_the_database_vault(team: Team, client: str) -> None:
    from affidavit.cli import main

    argv = ["mcp", "--database", team.url, "--vault", "team", "--print-config", client]
    result = CliRunner().invoke(main, argv, env={"AFFIDAVIT_DATABASE": ""})
    assert result.exit_code == 0, result.output
    assert team.url in result.output and "--vault" in result.output
    if client in ("claude-desktop", "cursor"):
        args = json.loads(result.output)["mcpServers"]["affidavit"]["args"]
        assert args == ["mcp", "--database", team.url, "--vault", "team"]


def test_print_config_refuses_a_url_holding_a_password(team: Team) -> None:
    from affidavit.cli import main

    url = team.url.replace("postgresql://postgres@", "postgresql://postgres:Hunter2-pw@")
    assert "Hunter2-pw" in url
    argv = ["mcp", "--database", url, "--vault", "team", "--print-config", "claude-code"]
    result = CliRunner().invoke(main, argv, env={"AFFIDAVIT_DATABASE": ""})
    assert result.exit_code == 2 and "~/.pgpass" in result.output
    assert "Hunter2-pw" not in result.output
