"""``affidavit mirror``: a vault on PostgreSQL as an Obsidian folder under git (docs/team.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError
from ._common import echo_json, json_option, user_errors


@click.command("mirror")
@click.option(
    "--database", "url", required=True, envvar="AFFIDAVIT_DATABASE",
    help="The PostgreSQL database (postgresql://…; or $AFFIDAVIT_DATABASE).",
)  # fmt: skip
@click.option("--vault", "vault", required=True, help="The vault's name in that database.")
@click.option(
    "--check", is_flag=True,
    help="Only prove the folder equals the database (exit 1 on any difference).",
)  # fmt: skip
@json_option
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@user_errors
def mirror_command(url: str, vault: str, check: bool, as_json: bool, folder: Path) -> None:
    """Render each batch of VAULT above FOLDER's last Affidavit-Batch trailer to markdown and
    commit it, one commit per batch; FOLDER is made (and git-initialised) if missing. Files
    edited by hand in FOLDER are kept and reported, never overwritten.

    \b
    Examples:
      affidavit mirror --database postgresql://wiki@db/wiki --vault team ~/team-wiki
      affidavit mirror --database postgresql://wiki@db/wiki --vault team ~/team-wiki --check
    """
    from .. import mirror as mirroring
    from .team_cmd import _storage

    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"--database takes a postgresql:// URL, not {url.split('://')[0]!r}.")
    with _storage(url) as storage:
        if check:
            report = mirroring.check(storage, vault, folder)
        else:
            done = mirroring.mirror(storage, vault, folder)
    if check:
        if as_json:
            echo_json(report.to_json())
        elif report.ok:
            click.echo(f"{folder} is vault {vault} at batch {report.database_batch}.")
        else:
            click.echo(
                f"{folder} differs from vault {vault} (mirror at batch "
                f"{report.mirror_batch}, database at {report.database_batch}):"
            )
            for problem in report.problems:
                click.echo(f"  {problem}")
        if not report.ok:
            raise SystemExit(1)
        return
    if as_json:
        echo_json(done.to_json())
        return
    if done.commits:
        click.echo(
            f"Mirrored batches {done.before + 1}–{done.after} of vault {vault} into {folder} "
            f"({len(done.commits)} commit(s))."
        )
    else:
        click.echo(f"{folder} is up to date: vault {vault} at batch {done.after}.")
    for path in done.kept:
        click.echo(f"Kept your edit of {path}: the commit has the database's version.")
    if done.hand_edits:
        click.echo(
            f"Hand edits in {folder} (not in the database; `git diff` shows them; propose them "
            "through the vault to keep them):"
        )
        for edit in done.hand_edits:
            click.echo(f"  {edit.kind}: {edit.path}")


COMMANDS = [mirror_command]
