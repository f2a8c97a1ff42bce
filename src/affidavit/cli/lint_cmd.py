"""``affidavit lint`` and ``affidavit findings``: audited findings, their quotes, and their fixes."""

from __future__ import annotations

from typing import Any

import click

from ..agents import local_actor
from ..lint.findings import ENDS_NOTHING, Status, StoredFinding
from ..lint.fixes import FixReport
from ..lint.runner import LintReport, run_lint
from ..providers.from_config import provider_from_config
from ._common import echo_json, json_option, lint_progress, opened_vault, user_errors
from .database import database_options, database_vault
from .findings_book import FindingBook, finding_actor, finding_book

MARK = {"error": "✗", "warning": "!", "info": "·"}


def _actor() -> str:
    return finding_actor()


def _show(stored: StoredFinding, *, full: bool = False) -> None:
    f = stored.finding
    status = "" if stored.status == "open" else f" [{stored.status}]"
    click.echo(f"{MARK[f.severity]} {stored.id}  {f.kind}{status}: {f.message}")
    shown = f.quotes if full else f.quotes[:3]
    for q in shown:
        ref = f"claim {q.claim_id}" if q.claim_id else f"source {str(q.source_id)[:12]}"
        if q.verified:
            where = f"{str(q.source_id)[:12]} {q.location}".strip()
            click.echo(f"    ✓ {ref} — {where}, verified:")
            click.echo(f"      “{q.context or q.quote}”")
        else:
            click.echo(f"    ✗ {ref}: “{q.quote}” verified: false ({q.reason})")
    if stored.plan_id:
        click.echo(
            f"    fix plan: {stored.plan_id[:12]} — `affidavit inbox show {stored.plan_id[:12]}`"
        )
    elif f.fix:
        click.echo(f"    fix: `affidavit findings fix {stored.id}` proposes {f.fix['op']}")
    elif f.fix_hint:
        click.echo(f"    to fix: {f.fix_hint}")
    if full and stored.note:
        click.echo(f"    note: {stored.note}")


def _fixes(report: FixReport) -> None:
    for plan in report.plans:
        click.echo(
            f"Proposed fix plan {plan[:12]}: `affidavit inbox show {plan[:12]}`, then "
            f"`affidavit approve {plan[:12]}` (or `affidavit findings approve --all`)."
        )
    if report.skipped:
        click.echo(f"{len(report.skipped)} finding(s) got no fix plan; `--json` says why.")
    for message in report.messages:
        if message.startswith("plan rejected"):
            click.echo(message)


def _summary(report: LintReport) -> None:
    counts = ", ".join(f"{n} {kind}" for kind, n in report.counts().items()) or "nothing"
    click.echo(
        f"Lint run {report.run}: {len(report.findings)} open finding(s) ({counts}); "
        f"{len(report.new)} new, {report.resolved} resolved, {report.dismissed} dismissed."
    )
    if report.dropped:
        click.echo(
            f"Dropped {len(report.dropped)} proposed finding(s) that couldn't show verified "
            "quotes; `--json` lists them with their `verified: false` quotes."
        )
    if report.model_calls or report.invalid_replies:
        click.echo(
            f"Model: {report.model_calls} call(s), {len(report.invalid_replies)} unusable reply(ies)."
        )


@click.command("lint")
@click.option("--propose", is_flag=True, help="Propose fix plans for the fixable findings.")
@click.option("--no-model", is_flag=True, help="Don't ask the configured language model.")
@click.option("--limit", type=int, default=50, show_default=True, help="Findings to print.")
@click.option(
    "--async",
    "run_async",
    is_flag=True,
    help="Queue lint as a job and print its id (follow it with `affidavit jobs wait ID`).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Look at everything again, not only what changed since the last run.",
)
@database_options
@json_option
@click.pass_context
@user_errors
def lint(
    ctx: click.Context,
    propose: bool,
    no_model: bool,
    limit: int,
    run_async: bool,
    full: bool,
    db_url: str | None,
    db_vault: str | None,
    as_json: bool,
) -> None:
    """Check the wiki: broken links, drift, tampered sources, unverifiable evidence, and
    contradictions, stale claims and duplicates — each shown with verified quotes.

    Findings are kept between runs (`affidavit findings`); a finding a model proposes is
    dropped unless every quote it cites is found again in the stored sources. A run looks at
    what changed since the last one (new and changed claims, files, sources); --full looks at
    everything again.

    \b
    Example:
      affidavit lint
      affidavit lint --propose          # fix plans go to the inbox
      affidavit findings approve --all  # approve every pending fix plan
      affidavit lint --async            # a background job: affidavit jobs
      affidavit lint --full             # every file, source, quote and pair again
      affidavit lint --database postgresql://wiki@db/wiki --vault handbook   # a job there

    With --database URL --vault NAME, lint a vault of a PostgreSQL database: a lint job is
    queued there (as `POST …/jobs {"kind": "lint"}`), which `affidavit worker --database` runs
    on any host; its findings are then `affidavit findings --database URL --vault NAME`.
    """
    if db_vault is not None:
        _queue_database_lint(ctx, db_url, db_vault, propose, no_model, full, as_json)
        return
    if run_async:
        from ..jobs import parse_payload
        from .jobs_cmd import submit_job

        if no_model:
            raise click.UsageError(
                "--no-model can't be queued; a lint job uses the configured model"
            )
        if full:
            raise click.UsageError(
                "--full can't be queued: a lint job looks at what changed since the last run; "
                "run `affidavit lint --full` in the foreground"
            )
        submit_job(ctx, parse_payload({"kind": "lint", "propose": propose}), as_json)
        return
    with opened_vault(ctx) as vault:
        provider = None if no_model else provider_from_config(vault.config)
        try:
            if as_json:
                report = run_lint(vault, provider, propose=propose, actor=_actor(), full=full)
            else:
                shown = lint_progress()
                try:
                    report = run_lint(
                        vault, provider, propose=propose, actor=_actor(), progress=shown, full=full
                    )
                finally:
                    shown.end()
        finally:
            if provider is not None:
                provider.close()
        if as_json:
            echo_json(report.to_json())
            return
        _summary(report)
        for stored in report.findings[:limit]:
            _show(stored)
        if len(report.findings) > limit:
            click.echo(f"... and {len(report.findings) - limit} more: `affidavit findings`.")
        if report.fixes is not None:
            _fixes(report.fixes)


def _db(command: Any) -> Any:
    """``--database URL --vault NAME``: a vault of a PostgreSQL database's findings."""
    return database_options(command)


def _queue_database_lint(
    ctx: click.Context, db_url: str | None, db_vault: str, propose: bool, no_model: bool,
    full: bool, as_json: bool,
) -> None:  # fmt: skip
    """Queue a lint job of a PostgreSQL vault as the local user (its fix plans are theirs)."""
    from ..service.pg_jobs import LintRequest, PgJobs

    if no_model or full:
        raise click.UsageError(
            f"{'--no-model' if no_model else '--full'} can't be given to a database's lint: it "
            "runs as a job, over every pair of active claims, with the worker's model "
            "(`affidavit worker --config`); leave the option out."
        )
    with database_vault(db_url, db_vault) as pg:
        job = PgJobs(pg).submit_lint(LintRequest(kind="lint", propose=propose), local_actor())
    if as_json:
        echo_json(job.model_dump(mode="json"))
        return
    click.echo(f"Queued lint job {job.id} in vault {db_vault}.")
    click.echo(f"  follow it:  affidavit jobs wait {job.id} --vault {db_vault} --database URL")
    click.echo("  no worker running? run one on any host:  affidavit worker --database URL "
               f"--vault {db_vault} --drain")  # fmt: skip
    click.echo(f"  then:  affidavit findings --vault {db_vault} --database URL")


@click.group("findings", invoke_without_command=True)
@click.option(
    "--status",
    type=click.Choice(["open", "dismissed", "resolved", "all"]),
    default="open",
    show_default=True,
)
@click.option("--kind", "kinds", multiple=True, help="Only findings of this kind (repeatable).")
@_db
@json_option
@click.pass_context
@user_errors
def findings(
    ctx: click.Context, status: str, kinds: tuple[str, ...], db_url: str | None,
    db_vault: str | None, as_json: bool,
) -> None:  # fmt: skip
    """List lint findings, show one, dismiss it, or propose and approve its fix.

    With --database URL --vault NAME, a vault of a PostgreSQL database's findings (options
    after `findings` or after its subcommand).

    \b
    Example:
      affidavit findings --kind contradiction
      affidavit findings show f-1a2b
      affidavit findings fix f-1a2b --keep c-0123456789abcdef
      affidavit findings dismiss f-1a2b --note "both true at their dates"
      affidavit findings --database postgresql://wiki@db/wiki --vault handbook
    """
    if ctx.invoked_subcommand is not None:
        return
    statuses = ("open", "dismissed", "resolved") if status == "all" else (status,)
    with finding_book(ctx, db_url, db_vault) as book:
        listed = book.list(statuses, kinds)
    if as_json:
        echo_json([f.to_json() for f in listed])
        return
    if not listed:
        click.echo(f"No {status} findings. Run `affidavit lint` to look for some.")
    for stored in listed:
        _show(stored)


@findings.command("show")
@click.argument("finding_id")
@_db
@json_option
@click.pass_context
@user_errors
def show(
    ctx: click.Context, finding_id: str, db_url: str | None, db_vault: str | None, as_json: bool
) -> None:
    """Show one finding with every quote in its source context.

    \b
    Example:
      affidavit findings show f-1a2b
    """
    with finding_book(ctx, db_url, db_vault) as book:
        stored = book.get(finding_id)
    if as_json:
        echo_json(stored.to_json())
    else:
        _show(stored, full=True)


def _decide(
    ctx: click.Context, ids: tuple[str, ...], status: Status, note: str,
    db_url: str | None, db_vault: str | None,
) -> None:  # fmt: skip
    """Decide every finding of ``ids`` in one transaction: all or none."""
    with finding_book(ctx, db_url, db_vault) as book:
        decided = book.decide(ids, status, note)
    for stored in decided:
        click.echo(f"{stored.id}: {status}")


@findings.command("dismiss")
@click.argument("finding_ids", nargs=-1, required=True)
@click.option("--note", default="", help="Why (kept in the audit log).")
@_db
@click.pass_context
@user_errors
def dismiss(
    ctx: click.Context, finding_ids: tuple[str, ...], note: str, db_url: str | None,
    db_vault: str | None,
) -> None:  # fmt: skip
    """Dismiss findings: later runs keep them dismissed.

    \b
    Example:
      affidavit findings dismiss f-1a2b f-3c4d --note "both true at their dates"
    """
    _decide(ctx, finding_ids, "dismissed", note, db_url, db_vault)


@findings.command("reopen")
@click.argument("finding_ids", nargs=-1, required=True)
@_db
@click.pass_context
@user_errors
def reopen(
    ctx: click.Context, finding_ids: tuple[str, ...], db_url: str | None, db_vault: str | None
) -> None:
    """Reopen dismissed or resolved findings.

    \b
    Example:
      affidavit findings reopen f-1a2b
    """
    _decide(ctx, finding_ids, "open", "", db_url, db_vault)


def _select(
    book: FindingBook, ids: tuple[str, ...], all_: bool, kinds: tuple[str, ...]
) -> list[StoredFinding]:
    if ids and all_:
        raise click.UsageError("give finding ids or --all, not both")
    if not ids and not all_:
        raise click.UsageError("give finding ids, or --all (optionally with --kind)")
    if all_:
        return book.list(("open",), kinds)
    return [book.get(ref) for ref in ids]


@findings.command("fix")
@click.argument("finding_ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every open finding that has a fix.")
@click.option("--kind", "kinds", multiple=True, help="With --all: only these kinds.")
@click.option(
    "--keep", help="For one contradiction: the claim id to keep (the other is superseded)."
)
@_db
@json_option
@click.pass_context
@user_errors
def fix(
    ctx: click.Context,
    finding_ids: tuple[str, ...],
    all_: bool,
    kinds: tuple[str, ...],
    keep: str | None,
    db_url: str | None,
    db_vault: str | None,
    as_json: bool,
) -> None:
    """Propose fix plans (up to 20 fixes per plan) for findings; they wait in the inbox.

    \b
    Example:
      affidavit findings fix --all --kind stale
      affidavit findings fix f-1a2b --keep c-0123456789abcdef
    """
    with finding_book(ctx, db_url, db_vault) as book:
        chosen = _select(book, finding_ids, all_, kinds)
        keeps: dict[str, str] = {}
        if keep:
            if len(chosen) != 1 or chosen[0].finding.kind != "contradiction":
                raise click.UsageError("--keep applies to exactly one contradiction finding")
            keeps[chosen[0].id] = keep
        report = book.propose(chosen, keeps)
    if as_json:
        echo_json(report.to_json())
        return
    if not report.plans:
        click.echo("No fix plan proposed.")
    _fixes(report)
    for fid, why in report.skipped.items():
        click.echo(f"  {fid}: {why}")


@findings.command("approve")
@click.argument("finding_ids", nargs=-1)
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="The fixes of every open finding of the --kind given (only kinds whose fix ends "
    "nothing: " + ", ".join(ENDS_NOTHING) + ").",
)
@click.option("--kind", "kinds", multiple=True, help="With --all: only these kinds.")
@click.option("--yes", is_flag=True, help="Don't ask before fixes that supersede or retract.")
@_db
@json_option
@click.pass_context
@user_errors
def approve(
    ctx: click.Context,
    finding_ids: tuple[str, ...],
    all_: bool,
    kinds: tuple[str, ...],
    yes: bool,
    db_url: str | None,
    db_vault: str | None,
    as_json: bool,
) -> None:
    """Approve the pending fixes of the findings listed (or of every finding of a kind whose
    fix ends nothing), as one batch. What each fix does is printed first.

    \b
    Examples:
      affidavit findings approve --all --kind missing_link
      affidavit findings approve f-1a2b f-3c4d
    """
    if all_:
        ending = [k for k in kinds if k not in ENDS_NOTHING]
        if not kinds or ending:
            raise click.UsageError(
                "--all takes only --kind " + " / ".join(ENDS_NOTHING) + ": the fixes of the "
                "other kinds supersede or retract a claim, so list those findings by id after "
                "reading them (`affidavit findings show ID`)."
            )
    with finding_book(ctx, db_url, db_vault) as book:
        steps = book.steps(_select(book, finding_ids, all_, kinds))
        if not steps:
            if as_json:
                echo_json([])
            else:
                click.echo("No pending fixes. `affidavit findings fix ID` proposes them.")
            return
        if not as_json:
            click.echo(f"Approving {len(steps)} fix(es):")
            for step in steps:
                mark = "!" if step.ends else "·"
                click.echo(
                    f"  {mark} {step.finding} (plan {step.plan_id[:12]}, op {step.op + 1}): "
                    f"{step.line}"
                )
        if any(s.ends for s in steps) and not yes:
            if as_json:
                raise click.UsageError("some fixes end claims; add --yes to approve with --json")
            if not click.confirm("Supersede or retract the claims marked ! ?", default=False):
                raise click.ClickException("nothing applied.")
        done = book.approve(steps)
    if as_json:
        echo_json([{"plan": p, "applied": a, "message": m} for p, a, m in done])
        return
    for plan_id, _, message in done:
        click.echo(f"{plan_id[:12]}: {message}")
    click.echo("Run `affidavit lint` again to resolve the fixed findings.")


COMMANDS = [lint, findings]
