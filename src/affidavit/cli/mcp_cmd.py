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
from .database import chosen, database_options, database_vault

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
@database_options
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --database: an affidavit.toml whose settings apply ([mcp] source_dirs and "
    "quotas, [sources] limits, [trust] rules).",
)  # fmt: skip
@click.pass_context
@user_errors
def mcp(
    ctx: click.Context,
    client: str | None,
    db_url: str | None,
    db_vault: str | None,
    config_path: Path | None,
) -> None:
    """Serve the vault to an agent over MCP (stdio): it reads and proposes; you approve.

    \b
    The agent's plans wait in `affidavit inbox` for you, whatever policy.auto_apply says.
    With --database URL --vault NAME, serve that vault of a PostgreSQL database instead (the
    same tools, add_source storing the source in the database; --config names the
    affidavit.toml whose settings apply, e.g. mcp.source_dirs).

    \b
    Examples:
      affidavit mcp --print-config claude-code   # register it, then let the agent work
      affidavit inbox && affidavit approve PLAN  # you decide what it proposed
      affidavit mcp --database postgresql://wiki@db/wiki --vault handbook
    """
    db_url, db_vault = chosen(ctx, db_url, db_vault)
    if db_vault is not None:
        _serve_database(client, db_url, db_vault, config_path)
        return
    if config_path is not None:
        raise click.UsageError("--config is for --database URL --vault NAME: a folder has its own.")
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


def database_snippet(
    client: str, command: str, url: str, name: str, config: Path | None = None
) -> str:
    """The text that registers vault ``name`` of the database at ``url`` with ``client``."""
    from ..storage.url import redact

    if redact(url) != url:
        raise click.UsageError(
            "the database URL holds a password, which the snippet would write into the agent's "
            "configuration: keep it in ~/.pgpass or $PGPASSWORD and give the URL without it."
        )
    args = ["mcp", "--database", url, "--vault", name]
    if config is not None:
        args += ["--config", str(config.resolve())]
    if client == "claude-code":
        return f"claude mcp add --scope user affidavit -- {shlex.join([command, *args])}"
    if client == "codex":
        listed = ", ".join(_toml(a) for a in args)
        return f"[mcp_servers.affidavit]\ncommand = {_toml(command)}\nargs = [{listed}]"
    return json.dumps({"mcpServers": {"affidavit": {"command": command, "args": args}}}, indent=2)


def _serve_database(
    client: str | None, url: str | None, name: str, config_path: Path | None = None
) -> None:
    """``mcp --database URL --vault NAME``: the snippet, or the stdio server over that vault as
    the local user (whose plans are an agent's: they wait for a person)."""
    if client is not None:
        if not url:
            raise click.UsageError("--vault names a vault of a database: give --database URL too.")
        click.echo(database_snippet(client, _command(), url, name, config_path))
        return
    try:
        from ..mcp.pg import opened
        from ..mcp.server import Door, build_server
    except ImportError as exc:
        raise click.ClickException(f"the MCP server needs the [mcp] extra: {INSTALL}") from exc
    from ..config import Config, load_config

    config = load_config(config_path) if config_path else Config()
    with database_vault(url, name, config) as pg:
        build_server(Door(lambda: opened(pg), local_actor())).run("stdio")


COMMANDS = [mcp]
