"""``affidavit doctor``: check the vault end to end; optionally turn hand edits into a plan."""

from __future__ import annotations

import click

from ..doctor import run_doctor
from ._common import echo_json, json_option, opened_vault, user_errors


@click.command("doctor")
@click.option(
    "--propose",
    is_flag=True,
    help="Turn hand edits of wiki/ into a plan in the inbox instead of discarding them.",
)
@json_option
@click.pass_context
@user_errors
def doctor(ctx: click.Context, propose: bool, as_json: bool) -> None:
    """Re-hash sources, re-verify every quote, compare wiki/ with the database, check the
    audit chain and git. Exits 1 when anything is wrong.

    \b
    Examples:
      affidavit doctor
      affidavit doctor --json
      affidavit doctor --propose     # hand edits become a plan awaiting approval
    """
    with opened_vault(ctx) as vault:
        proposals = []
        if propose:
            from ..handedits import propose_hand_edits

            proposals = propose_hand_edits(vault)
        report = run_doctor(vault)
        if as_json:
            data = report.to_json()
            data["proposals"] = [p.to_json() for p in proposals]
            echo_json(data)
        else:
            for proposal in proposals:
                click.echo(proposal.message)
            counts = ", ".join(
                f"{v} {k.replace('_', ' ')}" for k, v in sorted(report.counts.items())
            )
            click.echo(f"doctor checked {counts}")
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


COMMANDS = [doctor]
