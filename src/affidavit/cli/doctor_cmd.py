"""``affidavit doctor``: check the vault end to end; optionally turn hand edits into a plan."""

from __future__ import annotations

import click

from ._common import echo_json, json_option, opened_vault, user_errors


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
@json_option
@click.pass_context
@user_errors
def doctor(ctx: click.Context, propose: bool, full: bool, stats: bool, as_json: bool) -> None:
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
    """
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
            click.echo(_summary(report.counts))
            if report.clean:
                click.echo("clean: sources, quotes, files, audit chain and git all agree")
            for note in report.notes:
                click.echo(f"note: {note}")
            for finding in report.findings:
                click.echo(f"✗ [{finding.check}] {finding.subject}: {finding.message}")
                if finding.fix:
                    click.echo(f"    fix: {finding.fix}")
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
