"""``mcp``: serve the vault to an agent over MCP on stdio, or print the snippet that registers it."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from contextlib import nullcontext
from pathlib import Path

import click

from ..agents import local_actor
from ..errors import ConfigError
from ..vault import find_vault_root, open_vault
from ._common import user_errors, vault_path

INSTALL = "pip install 'affidavit[mcp]'"
CLIENTS = ("claude-code", "claude-desktop", "cursor", "codex")


def _root(ctx: click.Context) -> Path:
    given = vault_path(ctx)
    root = given.resolve() if given else find_vault_root(Path.cwd())
    if root is None:
        raise ConfigError("no vault here. Pass --vault PATH or run `affidavit init` first.")
    return root


def _toml(value: str) -> str:
    """A TOML basic string: JSON's escapes, minus the ones TOML lacks (surrogate pairs, raw DEL)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def snippet(client: str, command: str, root: Path) -> str:
    """The text that registers this vault's MCP server with ``client``."""
    args = ["--vault", str(root), "mcp"]
    if client == "claude-code":  # user scope: the agent finds it in every project
        return f"claude mcp add --scope user affidavit -- {shlex.join([command, *args])}"
    if client == "codex":  # ~/.codex/config.toml (or a trusted project's .codex/config.toml)
        listed = ", ".join(_toml(a) for a in args)
        return f"[mcp_servers.affidavit]\ncommand = {_toml(command)}\nargs = [{listed}]"
    # claude_desktop_config.json, or ~/.cursor/mcp.json / .cursor/mcp.json
    return json.dumps({"mcpServers": {"affidavit": {"command": command, "args": args}}}, indent=2)


def _command() -> str:
    """The ``affidavit`` executable of this installation, absolute, so an agent finds it."""
    beside = Path(sys.executable).with_name("affidavit")
    if beside.is_file():
        return str(beside)
    return shutil.which("affidavit") or "affidavit"


@click.command("mcp")
@click.option(
    "--print-config",
    "client",
    type=click.Choice(CLIENTS),
    help="Print the snippet that registers this vault with an agent, and exit.",
)
@click.pass_context
@user_errors
def mcp(ctx: click.Context, client: str | None) -> None:
    """Serve the vault to an agent over MCP (stdio): it reads and proposes; you approve.

    \b
    The agent's plans wait in `affidavit inbox` for you, whatever policy.auto_apply says.

    \b
    Examples:
      affidavit mcp --print-config claude-code   # register it, then let the agent work
      affidavit inbox && affidavit approve PLAN  # you decide what it proposed
    """
    root = _root(ctx)
    if client is not None:
        click.echo(snippet(client, _command(), root))
        return
    try:
        from ..mcp.server import Door, build_server
    except ImportError as exc:
        raise click.ClickException(f"the MCP server needs the [mcp] extra: {INSTALL}") from exc
    vault = open_vault(root)
    try:
        build_server(Door(lambda: nullcontext(vault), local_actor())).run("stdio")
    finally:
        vault.close()


COMMANDS = [mcp]
