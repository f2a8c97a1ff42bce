"""The ``affidavit`` command line: one module per command group, imported when it runs.

The ``--version`` flag imports no command; every command imports only its own module: the group
knows each command's name and where it lives (:data:`COMMANDS`), and loads a module the first time
one of its commands is asked for. ``ask``, ``search`` and ``inbox`` through a running daemon never
import the engine, the gate, numpy, bs4 or pygit2 (``tests/test_cli_light.py`` holds them to it).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from .. import __version__

COMMANDS: dict[str, str] = {
    "init": "init_cmd",
    "sources": "sources_cmd",
    "ingest": "ingest_cmd",
    "watch": "watch_cmd",
    "nonce": "plans_cmd",
    "schema": "plans_cmd",
    "propose": "plans_cmd",
    "inbox": "plans_cmd",
    "approve": "plans_cmd",
    "reject": "plans_cmd",
    "search": "ask_cmd",
    "ask": "ask_cmd",
    "chat": "ask_cmd",
    "reindex": "ask_cmd",
    "doctor": "doctor_cmd",
    "lint": "lint_cmd",
    "findings": "lint_cmd",
    "jobs": "jobs_cmd",
    "serve": "serve_cmd",
    "web": "web_cmd",
    "tokens": "tokens_cmd",
    "mcp": "mcp_cmd",
    "mirror": "mirror_cmd",
    "team": "team_cmd",
    "worker": "worker_cmd",
}
"""Every command, in the order ``--help`` lists them, and the module (in this package) whose
``COMMANDS`` list holds it."""


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: dict[str, click.Command] = {}

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        """Every command, each module imported (what the docs' tests walk)."""
        return {name: self._load(name) for name in COMMANDS}

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._loaded = dict(value)

    def _load(self, name: str) -> click.Command:
        found = self._loaded.get(name)
        if found is None:
            module = importlib.import_module(f"{__name__}.{COMMANDS[name]}")
            for command in module.COMMANDS:
                self._loaded[command.name] = command
            found = self._loaded[name]
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load(cmd_name) if cmd_name in COMMANDS else None

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        raise TypeError("commands are listed in affidavit.cli.COMMANDS")


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="affidavit")
@click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    envvar="AFFIDAVIT_VAULT",
    help="The vault to use (default: the one enclosing the current directory).",
)
def main(vault: str | None) -> None:
    """Affidavit: an LLM-maintained wiki where every sentence is a verified, quoted claim.

    \b
    Quick tour:
      affidavit init my-vault && cd my-vault
      affidavit sources add ~/papers/
      affidavit nonce                      # a fresh nonce for a hand-written plan
      affidavit propose plan.json          # checked (schema, nonce, quotes), then in the inbox
      affidavit inbox && affidavit inbox show PLAN
      affidavit approve PLAN --ops 1,2
      affidavit doctor
    """
