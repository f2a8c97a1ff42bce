"""``affidavit init``: create a vault (idempotent)."""

from __future__ import annotations

from pathlib import Path

import click

from ..vault import init_vault
from ._common import echo_json, json_option, user_errors


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@json_option
@user_errors
def init(directory: Path, as_json: bool) -> None:
    """Create a vault in DIRECTORY (default: the current directory).

    Writes affidavit.toml (every setting documented), wiki/, sources/, the database under
    .affidavit/ and a git repository. Running it again on a vault changes nothing.

    \b
    Example:
      affidavit init ~/notes-vault
    """
    vault, created = init_vault(directory)
    with vault:
        if as_json:
            echo_json({"vault": str(vault.root), "created": created})
        elif created:
            click.echo(f"Created vault at {vault.root}")
            click.echo("Next: affidavit sources add PATH   (then propose a plan; see README)")
        else:
            click.echo(f"{vault.root} is already a vault; nothing changed.")


COMMANDS = [init]
