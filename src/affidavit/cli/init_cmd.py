"""``affidavit init``: create a vault (idempotent)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from ..vault import init_vault
from ._common import echo_json, json_option, user_errors


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--shared-group",
    metavar="GROUP",
    default="",
    help="Let GROUP read the pages and the sources whose originals it could read (the folder "
    "becomes 2750, owned by GROUP). Without it the vault is yours alone (0700).",
)
@json_option
@user_errors
def init(directory: Path, shared_group: str, as_json: bool) -> None:
    """Create a vault in DIRECTORY (default: the current directory).

    Writes affidavit.toml (every setting documented), wiki/, sources/, the database under
    .affidavit/ and a git repository. The vault is yours alone (its folder 0700, whatever your
    umask) unless --shared-group names a group that may read it. Running it again on a vault
    changes nothing.

    \b
    Examples:
      affidavit init ~/notes-vault
      affidavit init /srv/team-wiki --shared-group research
    """
    vault, created = init_vault(directory, shared_group=shared_group)
    with vault:
        mode = stat.S_IMODE(os.stat(vault.root).st_mode)
        if as_json:
            echo_json(
                {
                    "vault": str(vault.root),
                    "created": created,
                    "mode": f"{mode:04o}",
                    "shared_group": vault.config.get("privacy.shared_group"),
                }
            )
        elif created:
            click.echo(f"Created vault at {vault.root}")
            click.echo(
                f"Shared with group {shared_group} (mode {mode:04o}): it reads the pages and the "
                "sources it could read anyway."
                if shared_group
                else f"Private: only you can read it (mode {mode:04o})."
            )
            click.echo("Next: affidavit sources add PATH   (then propose a plan; see README)")
        else:
            click.echo(f"{vault.root} is already a vault; nothing changed.")


COMMANDS = [init]
