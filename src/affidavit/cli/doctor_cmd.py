"""``affidavit doctor``: check the vault end to end; optionally turn hand edits into a plan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._common import echo_json, json_option, opened_vault, user_errors
from .database import chosen, database_options, database_vault

if TYPE_CHECKING:
    from ..doctor import DoctorReport


@click.command("doctor")
@click.option(
    "--propose",
    is_flag=True,
    help="Turn hand edits of wiki/ into a plan in the inbox instead of discarding them.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Check everything, not only what changed since the last clean check.",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Only print where the bytes are: the database by table, its free pages, the sources.",
)
@click.option(
    "--mirror",
    "mirror",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --database: also prove this folder is the vault's mirror (`affidavit mirror`).",
)
@database_options
@json_option
@click.pass_context
@user_errors
def doctor(
    ctx: click.Context,
    propose: bool,
    full: bool,
    stats: bool,
    mirror: Path | None,
    db_url: str | None,
    db_vault: str | None,
    as_json: bool,
) -> None:
    """Re-hash sources, re-verify every quote, compare wiki/ with the database, check the
    audit chain and git. Exits 1 when anything is wrong.

    By default only what changed since the last clean check is checked again (every row and
    file is compared with its fingerprint, and the audit chain since then is verified);
    --full checks everything.

    \b
    Examples:
      affidavit doctor
      affidavit doctor --full        # every source re-hashed, every applied plan replayed
      affidavit doctor --json
      affidavit doctor --propose     # hand edits become a plan awaiting approval
      affidavit doctor --stats       # the database's size by table, beside the sources'
      affidavit doctor --database postgresql://wiki@db/wiki --vault handbook [--mirror DIR]

    With --database URL --vault NAME, check a vault of a PostgreSQL database on one snapshot:
    sources re-hashed, every quote found again, every claim's support, the audit chain and the
    batch sequence (every applied plan in exactly one batch); with --mirror DIR, that folder is
    its mirror. Always a full check.
    """
    db_url, db_vault = chosen(ctx, db_url, db_vault)
    if db_vault is not None or mirror is not None:
        _database_doctor(ctx, db_url, db_vault, mirror, propose=propose, stats=stats,
                         as_json=as_json)  # fmt: skip
        return
    if stats:
        _print_stats(ctx, as_json)
        return
    with opened_vault(ctx) as vault:
        proposals = []
        if propose:
            from ..handedits import propose_hand_edits

            proposals = propose_hand_edits(vault)
        from ..doctor_since import run_doctor_since, run_full

        report = run_full(vault) if full else run_doctor_since(vault)
        if as_json:
            data = report.to_json()
            data["proposals"] = [p.to_json() for p in proposals]
            echo_json(data)
        else:
            for proposal in proposals:
                click.echo(proposal.message)
            _print_report(report, "clean: sources, quotes, files, audit chain and git all agree")
        if not report.clean:
            ctx.exit(1)


def _print_report(report: DoctorReport, clean: str) -> None:
    click.echo(_summary(report.counts))
    if report.clean:
        click.echo(clean)
    for note in report.notes:
        click.echo(f"note: {note}")
    for finding in report.findings:
        click.echo(f"✗ [{finding.check}] {finding.subject}: {finding.message}")
        if finding.fix:
            click.echo(f"    fix: {finding.fix}")


def _database_doctor(
    ctx: click.Context,
    db_url: str | None,
    db_vault: str | None,
    mirror: Path | None,
    *,
    propose: bool,
    stats: bool,
    as_json: bool,
) -> None:
    if db_vault is None:
        raise click.UsageError("--mirror checks a vault of a database: give --database URL "
                               "--vault NAME too.")  # fmt: skip
    if propose:
        raise click.UsageError(
            "--propose turns a vault folder's hand edits into a plan; a database vault's hand "
            "edits come back from its mirror: run `affidavit mirror --database URL --vault NAME "
            "DIR`, which proposes them."
        )
    if stats:
        raise click.UsageError(
            "--stats measures a vault folder's SQLite file; on PostgreSQL ask the database "
            "(`SELECT pg_size_pretty(pg_total_relation_size(...))` per table of the vault's schema)."
        )
    from ..doctor_pg import run_pg_doctor

    with database_vault(db_url, db_vault) as pg:
        report = run_pg_doctor(pg.storage, pg.name, pg.config, mirror)
    if as_json:
        echo_json(report.to_json())
    else:
        _print_report(
            report, "clean: sources, quotes, support, audit chain and batches all agree"
            + (" with the mirror" if mirror is not None else "")
        )  # fmt: skip
    if not report.clean:
        ctx.exit(1)


def _print_stats(ctx: click.Context, as_json: bool) -> None:
    from ..dbstats import vault_stats

    with opened_vault(ctx) as vault:
        data = vault_stats(vault).to_json()
    if as_json:
        echo_json(data)
        return
    mb = 1e6
    click.echo(
        f"database {data['database_bytes'] / mb:.1f} MB ({data['free_bytes'] / mb:.1f} MB free)"
    )
    click.echo(
        f"sources  {data['sources_text_bytes'] / mb:.1f} MB of text "
        f"({data['source_files_bytes'] / mb:.1f} MB of files under sources/)"
    )
    if data["database_per_source_byte"] is not None:
        click.echo(f"         {data['database_per_source_byte']}× the sources' text")
    click.echo(f"{'TABLE':<24} {'MB':>8} {'ROWS':>9}")
    for row in data["tables"]:
        rows = "" if row["rows"] is None else str(row["rows"])
        click.echo(f"{row['table']:<24} {row['bytes'] / mb:>8.2f} {rows:>9}")
    for note in data["notes"]:
        click.echo(f"note: {note}")


COMMANDS = [doctor]


_MODES = ("mode_full", "mode_since_checkpoint", "git_status_skipped")


def _summary(counts: dict[str, int]) -> str:
    """One line: which check ran (everything, or what changed since the last clean one) and what
    it looked at; the mode markers in ``counts`` are for ``--json``, not counts to print."""
    mode = "since the last clean check" if "mode_since_checkpoint" in counts else "in full"
    shown = ", ".join(
        f"{v} {k.replace('_', ' ')}" for k, v in sorted(counts.items()) if k not in _MODES
    )
    return f"doctor checked {mode}: {shown}"
