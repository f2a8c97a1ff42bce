"""Plans: ``nonce``, ``schema``, ``propose``, ``inbox``, ``approve``, ``reject`` — of a vault
folder, or with ``--database URL --vault NAME`` of a vault of a PostgreSQL database (through the
daemon's services there, printed the same way)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..client import open_daemon, open_local
from ._common import echo_json, json_option, opened_vault, user_errors, vault_path
from .database import backend as open_front
from .database import database_options

if TYPE_CHECKING:  # imported where a command needs them: `inbox` through a daemon needs none
    from ..gate.admission import OpResult
    from ..service.models import PlanPreview, PlanSummary, QuoteContext, WaitingOut


def _actor() -> str:
    from ..agents import local_actor  # the kernel's uid, never $USER

    return local_actor()


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds >= 3600:
        return f"{sign}{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{sign}{seconds // 60}m"


@click.command("nonce")
@click.option("--hours", default=24, show_default=True, help="How long the nonce stays valid.")
@database_options
@json_option
@click.pass_context
@user_errors
def nonce(
    ctx: click.Context, hours: int, db_url: str | None, db_vault: str | None, as_json: bool
) -> None:
    """Issue a fresh nonce for one hand-written plan (put it in the plan's "nonce" field).

    Put it in the plan's "nonce" field; each nonce admits exactly one plan.

    \b
    Examples:
      affidavit nonce
      affidavit nonce --database postgresql://wiki@db/wiki --vault handbook
    """
    from ..plan.nonce import issue_nonce

    if db_vault is not None:
        with open_front(ctx, db_url, db_vault) as front:
            value = front.new_nonce(hours).nonce
    else:
        with opened_vault(ctx) as vault:
            value = issue_nonce(vault.db, vault.clock, "propose", timedelta(hours=hours))
    if as_json:
        echo_json({"nonce": value, "valid_hours": hours})
    else:
        click.echo(value)


@click.command("schema")
def schema() -> None:
    """Print the JSON Schema of a plan (the closed set of operations).

    \b
    Example:
      affidavit schema > plan.schema.json
    """
    from ..plan.schema import plan_json_schema

    click.echo(json.dumps(plan_json_schema(), indent=2, sort_keys=True))


@click.command("propose")
@click.argument("plan_file", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True))
@click.option("--author", default=None, help="Who wrote the plan (default: your user name).")
@database_options
@json_option
@click.pass_context
@user_errors
def propose(
    ctx: click.Context, plan_file: Path, author: str | None, db_url: str | None,
    db_vault: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Check a plan from a person or an agent (schema, nonce, quotes); it waits in the inbox.

    The plan must carry a nonce from `affidavit nonce`. Use `-` to read it from stdin.

    \b
    Examples:
      affidavit propose plan.json
      affidavit propose plan.json --database postgresql://wiki@db/wiki --vault handbook
    """
    if str(plan_file) == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = plan_file.read_bytes()
        except OSError as exc:
            raise click.ClickException(f"can't read {plan_file}: {exc.strerror}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.ClickException(
            f"{plan_file} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}). "
            "Save the plan as UTF-8 and retry."
        ) from exc
    with open_front(ctx, db_url, db_vault) as front:  # the daemon when it serves the vault
        proposal = front.propose(text, author, f"propose:{plan_file.name}")
    if as_json:
        echo_json(proposal.model_dump())
        return
    click.echo(proposal.message)
    from ..gate.admission import Admission

    _print_verdicts(Admission.from_json(proposal.admission).ops)
    _print_waiting(proposal.waiting)
    if proposal.status in ("pending", "partial"):
        click.echo(f"\nReview: affidavit inbox show {proposal.plan_id[:12]}")


def _print_verdicts(ops: list[OpResult]) -> None:
    for op in ops:
        mark = {"admitted": "✓", "quarantined": "!", "rejected": "✗"}[op.status]
        line = f"  {mark} op {op.index + 1} {op.kind}: {op.status}"
        if op.reason:
            line += f" ({op.check}: {op.reason})"
        click.echo(line)
        for claim in op.claims:
            if claim.status != "admitted":
                click.echo(
                    f"      claim {claim.index + 1} {claim.status} — {claim.check}: {claim.reason}"
                )
        for text in op.texts:
            if text.status == "rejected":
                click.echo(
                    f"      {text.what} rejected — {text.reason}; the page gets the host's: "
                    f"“{text.host}”"
                )


def _print_waiting(waiting: list[WaitingOut], indent: str = "") -> None:
    """One line per text that waits for a person, naming why (W11)."""
    if waiting:
        click.echo(f"{indent}Waits for a person:")
    for item in waiting:
        click.echo(f"{indent}  {item.line}")


@click.group("inbox", invoke_without_command=True)
@click.option(
    "--all", "show_all", is_flag=True, help="Include applied, rejected and expired plans."
)
@database_options
@json_option
@click.pass_context
@user_errors
def inbox(
    ctx: click.Context, show_all: bool, db_url: str | None, db_vault: str | None, as_json: bool
) -> None:
    """List pending plans with their age and expiry; an agent's plans are marked [agent].

    \b
    Examples:
      affidavit inbox
      affidavit inbox --all --json
      affidavit inbox show 3f2a9c
      affidavit inbox --database postgresql://wiki@db/wiki --vault handbook
    """
    if ctx.invoked_subcommand is not None:
        return
    statuses = ("pending", "applied", "rejected", "expired") if show_all else ("pending",)
    daemon = None
    if db_vault is not None:
        with open_front(ctx, db_url, db_vault) as front:
            records: list[dict[str, Any]] = [r.model_dump() for r in front.list_plans(statuses)]
    else:
        with open_daemon(vault_path(ctx)) as daemon:  # the daemon when it serves the vault
            if daemon is not None:
                records = daemon.list_plans_json(statuses)
    if db_vault is None and daemon is None:
        with open_local(vault_path(ctx)) as backend:
            records = [r.model_dump() for r in backend.list_plans(statuses)]
    if as_json:
        echo_json(records)
        return
    if not records:
        click.echo("The inbox is empty." if not show_all else "No plans yet.")
        return
    click.echo(
        f"{'PLAN':<13} {'STATUS':<9} {'AGE':>7} {'EXPIRES':>8}  OPS  CLAIMS  AUTHOR / ORIGIN"
    )
    for item in records:
        counts = item["counts"]
        claims = f"{counts['admitted']}+{counts['quarantined']}!/{counts['rejected']}✗"
        expires = item["expires_in"] if item["status"] == "pending" else "-"
        click.echo(
            f"{item['id'][:12]:<13} {item['status']:<9} {item['age']:>7} {expires:>8}  "
            f"{item['operations']:>3}  {claims:>6}  {item['author']} / {item['origin']}"
            + ("  [agent]" if item["proposer"] == "agent" else "")
        )
        for waiting in item.get("waiting", []):
            click.echo(f"{'':13} waits: {waiting['line']}")


def _marked(text: str, words: list[str]) -> str:
    """``text`` with the words the support check found unsupported [bracketed] and bold."""
    from ..support import mark

    return "".join(
        click.style(f"[{piece}]", bold=True, fg="red") if lacks else piece
        for piece, lacks in mark(text, words)
    )


def _context(quote: QuoteContext) -> list[str]:
    """The lines of the source around a verified quote, with the quote marked »like this« and
    what the document hides from its reader ⟦like this⟧ (then why, under the lines)."""
    from ..service.quote_context import pieces

    marked, why = "", []
    for part, text, hidden in pieces(quote):
        if hidden:
            marked += click.style(f"⟦{text}⟧", dim=True)
            if hidden not in why:
                why.append(hidden)
        elif part == "quote":
            marked += click.style("»", fg="green") + click.style(text, bold=True)
            marked += click.style("«", fg="green")
        else:
            marked += text
    lines = ["      │ " + line for line in marked.strip("\n").splitlines()]
    return lines + [f"      ⟦…⟧ not shown to a reader of the document: {w}" for w in why]


@inbox.command("show")
@click.argument("plan_id")
@database_options
@json_option
@click.pass_context
@user_errors
def show(
    ctx: click.Context, plan_id: str, db_url: str | None, db_vault: str | None, as_json: bool
) -> None:
    """Show every operation of a plan with its evidence quoted in its source's context.

    \b
    Examples:
      affidavit inbox show 3f2a9c
      affidavit inbox show 3f2a9c --database postgresql://wiki@db/wiki --vault handbook
    """
    with open_front(ctx, db_url, db_vault) as front:  # the daemon when it serves the vault
        detail = front.plan_detail(plan_id)
    if as_json:
        echo_json(detail.model_dump(exclude={"age", "expires_in", "quotes"}))
        return
    from ..agents import quoted
    from ..gate.admission import Admission
    from ..inbox import claim_role
    from ..plan.schema import Plan
    from ..retract import describe_radius
    from ..store.blast import BlastRadius

    plan = Plan.model_validate(detail.plan)
    admission = Admission.from_json(detail.admission)
    contexts = {(q.op, q.claim, q.evidence): q for q in detail.quotes}
    click.echo(f"Plan {detail.id}")
    click.echo(f"  status {detail.status} · by {detail.author} · from {detail.origin}")
    click.echo(
        f"  proposed {detail.created_at} ({detail.age} ago) · expires {detail.expires_at}"
        + (f" (in {detail.expires_in})" if detail.status == "pending" else "")
    )
    if plan.summary:  # the proposer's words: nothing checked them
        click.echo(f"  summary, {quoted(plan.summary)}")
    if detail.reason:
        click.echo(f"  reason: {detail.reason}")
    if admission.policy_reason:
        click.echo(f"  policy: {admission.policy_reason}")
    _print_waiting(detail.waiting, "  ")
    verdicts = {op.index: op for op in admission.ops}
    for index, op in enumerate(plan.operations):
        verdict = verdicts.get(index)
        status = verdict.status if verdict else "not selected"
        if index + 1 in detail.applied_ops:
            rest = [w for w in detail.waiting if w.op == index + 1]
            status = (
                f"applied; {len(rest)} of its texts wait for a person"
                if rest
                else "applied (the rest of the plan is pending)"
            )
        click.echo("")
        click.echo(
            click.style(f"[{index + 1}] {op.op}", bold=True)
            + f"  — {status}"
            + (f" ({verdict.check}: {verdict.reason})" if verdict and verdict.reason else "")
        )
        fields = op.model_dump(exclude={"op", "claims", "entries", "by", "reason"})
        for key, value in fields.items():
            click.echo(f"    {key}: {value}")
        reason = getattr(op, "reason", "")
        if reason:  # the proposer's words: nothing checked them
            click.echo(f"    reason, {quoted(str(reason))}")
        for text in verdict.texts if verdict else []:
            if text.status == "rejected":
                click.echo(f"    {text.what} rejected — {text.reason}")
            elif text.waits:
                click.echo(
                    f"    {text.what} {text.support}: {_marked(text.text, text.missing)} — "
                    f"{text.reason}"
                )
            else:
                continue
            if text.host:
                click.echo(f"      the page gets the host's {text.what}: “{text.host}”")
        if verdict is not None and not verdict.texts:  # an admission recorded before texts
            for what, words in verdict.uncertain.items():
                text_ = str(getattr(op, "section" if what == "section heading" else what, ""))
                click.echo(f"    support: the {what} is uncertain — {_marked(text_, words)}")
        if verdict is not None and verdict.waits:
            click.echo(f"    waits whole for a person: {verdict.waits}")
        old = verdict.detail.get("old") if verdict is not None else None
        for what, words in old.items() if isinstance(old, dict) else ():  # update_page
            click.echo(f"    {what} on the page now: “{words}”")
        if verdict is not None and "radius" in verdict.detail:
            for line in describe_radius(BlastRadius.from_json(verdict.detail["radius"])):
                click.echo("    " + line)
        applied = index + 1 in detail.applied_ops
        for claim in verdict.claims if verdict else []:
            role = claim_role(claim.role, status, applied, detail.status)
            click.echo(
                f"    claim {claim.index + 1} [{role + ', ' if role else ''}{claim.status}"
                + (f", trust {claim.trust}" if claim.trust else "")
                + f"]: {_marked(claim.text, claim.unsupported)}"
            )
            if claim.reason:
                click.echo(f"      {claim.check}: {claim.reason}")
            elif claim.support and claim.support != "supported":
                click.echo(f"      support: {claim.support}: {claim.support_reason}")
            if claim.waits and claim.passes and claim.support != "uncertain":
                click.echo(f"      waits for a person: {claim.waits}")
            for n, quote in enumerate(claim.evidence):
                shown = contexts.get((index, claim.index, n))
                if quote.verified and shown is not None:
                    click.echo(
                        f"      quote from {shown.source_name} ({shown.source_id[:12]}), "
                        f"{shown.location}, chars {quote.start}–{quote.end}, verified:"
                    )
                    for line in _context(shown):
                        click.echo(line)
                else:
                    click.echo(f"      ✗ verified: false — “{quote.quote}” ({quote.reason})")


def _parse_ops(value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        return sorted({int(part) for part in value.split(",") if part.strip()})
    except ValueError as exc:
        raise click.BadParameter(
            "use operation numbers separated by commas, e.g. --ops 1,3"
        ) from exc


@click.command("approve")
@click.argument("plan_ids", nargs=-1)
@click.option("--ops", help="Apply only these operations (1-based, comma-separated), e.g. 1,3.")
@click.option(
    "--all", "approve_all", is_flag=True, help="Approve every pending plan (lists them first)."
)
@click.option(
    "--yes",
    is_flag=True,
    help="Don't ask. With --all, plans that supersede or retract claims are left out: approve "
    "those by id after reading what they end. Texts that wait for a person (uncertain) stay in "
    "the inbox: nothing was shown.",
)
@click.option(
    "--include-agents",
    is_flag=True,
    help="With --all: also the plans agents proposed (through MCP or with a token); without it "
    "--all takes only plans from you and the host's ingest, lint and doctor.",
)
@click.option(
    "--proposer",
    "proposers",
    multiple=True,
    metavar="AUTHOR",
    help="With --all: only the plans of this author (as `affidavit inbox` shows it), an "
    "agent's too. Repeat for several.",
)
@database_options
@json_option
@click.pass_context
@user_errors
def approve(
    ctx: click.Context,
    plan_ids: tuple[str, ...],
    ops: str | None,
    approve_all: bool,
    yes: bool,
    include_agents: bool,
    proposers: tuple[str, ...],
    db_url: str | None,
    db_vault: str | None,
    as_json: bool,
) -> None:
    """Approve pending plans (or some operations of one) and apply them.

    Each plan is re-checked against the current wiki first. Several plans are applied together
    in dependency order (a plan that extends a page another creates goes after it) as one
    commit, all or nothing. Operations left out with --ops stay pending until the plan expires.

    \b
    Examples:
      affidavit approve 3f2a9c
      affidavit approve 3f2a9c --ops 1,3
      affidavit approve 3f2a9c 9c1d77
      affidavit approve --all
      affidavit approve --all --include-agents
      affidavit approve --all --proposer "token:3f2a9c via mcp"
      affidavit approve 3f2a9c --ops 1 --database postgresql://wiki@db/wiki --vault handbook

    --all takes the plans you and the host (ingest, lint, doctor) proposed. Plans an agent
    proposed (through MCP, or through the API with a token) are listed and left out: approve
    them by id after reading them, or add --include-agents or --proposer.
    """
    if (include_agents or proposers) and not approve_all:
        raise click.UsageError("--include-agents and --proposer choose among --all's plans.")
    if approve_all and plan_ids:
        raise click.UsageError("give plan ids or --all, not both.")
    if not approve_all and not plan_ids:
        raise click.UsageError(
            "name the plan(s) to approve, or --all (`affidavit inbox` lists them)."
        )
    if ops is not None and (approve_all or len(plan_ids) != 1):
        raise click.UsageError("--ops selects operations of one plan; give exactly one plan id.")
    if approve_all and as_json and not yes:
        raise click.UsageError("--all --json doesn't ask; add --yes.")
    with open_front(ctx, db_url, db_vault) as backend:  # the daemon when it serves the vault
        if len(plan_ids) == 1:
            result = backend.approve(plan_ids[0], _parse_ops(ops))
            if as_json:
                echo_json(result.model_dump())
                return
            click.echo(result.message)
            if result.commit:
                click.echo(f"git commit {result.commit[:12]}")
            return
        skipped: list[PlanSummary] = []
        if plan_ids:
            refs = list(plan_ids)
        else:
            pending = backend.list_plans(("pending",))
            taken = [p for p in pending if _taken(p, include_agents, proposers)]
            skipped = [p for p in pending if p not in taken]
            refs = [p.id for p in taken]
            if not as_json:
                _print_skipped(skipped, proposers)
        if not refs:
            if as_json:
                echo_json(
                    {"preview": [], "results": [], "commit": None, "left_out": _left(skipped)}
                )
            elif not skipped:
                click.echo("The inbox is empty: nothing to approve.")
            return
        preview = backend.approve_many(refs, dry_run=True).preview
        held = [p for p in preview if p.withdrawals and approve_all and yes]
        chosen = [p for p in preview if p not in held]
        if not as_json:
            if chosen:
                _print_preview(chosen)
            for p in held:
                click.echo(
                    f"Left out: plan {p.plan_id[:12]} ends claims; read them "
                    f"(`affidavit inbox show {p.plan_id[:12]}`), then "
                    f"`affidavit approve {p.plan_id[:12]}`."
                )
        if not chosen:
            return
        if not yes and not click.confirm("Apply these?", default=False):
            raise click.ClickException("nothing applied.")
        # --yes approves unseen: what waits for a person (W11) stays in the inbox
        done = backend.approve_many([p.plan_id for p in chosen], sure_only=yes)
    if as_json:
        echo_json({**done.model_dump(), "left_out": _left(skipped)})
        return
    for item in done.results:
        click.echo(item.message)
    if done.commit:
        click.echo(f"git commit {done.commit[:12]}")


def _taken(plan: PlanSummary, include_agents: bool, proposers: tuple[str, ...]) -> bool:
    """Whether ``approve --all`` takes ``plan``: with ``--proposer``, only those authors' plans;
    otherwise a person's plans, and an agent's only with ``--include-agents``."""
    if proposers:
        return plan.author in proposers
    return include_agents or plan.proposer == "person"


def _left(skipped: list[PlanSummary]) -> list[dict[str, str]]:
    return [{"plan_id": p.id, "author": p.author, "proposer": p.proposer} for p in skipped]


def _print_skipped(skipped: list[PlanSummary], proposers: tuple[str, ...]) -> None:
    """Say which pending plans ``--all`` left out, and the command that approves each."""
    for p in skipped:
        who = "an agent" if p.proposer == "agent" else "someone else"
        click.echo(
            f"Left out: plan {p.id[:12]} proposed by {who} ({p.author} / {p.origin}); "
            f"read it (`affidavit inbox show {p.id[:12]}`), then "
            f"`affidavit approve {p.id[:12]}`."
        )
    if any(p.proposer == "agent" for p in skipped) and not proposers:
        click.echo(
            "To approve every agent's plan too: `affidavit approve --all --include-agents`; "
            'one agent\'s: `affidavit approve --all --proposer "AUTHOR"`.'
        )


def _print_preview(preview: list[PlanPreview]) -> None:
    ops = sum(len(p.ops) for p in preview)
    click.echo(f"Apply {len(preview)} plan(s), {ops} operation(s):")
    for item in preview:
        click.echo(f"  plan {item.plan_id[:12]}")
        for line in item.lines:
            click.echo(f"    {line}")
        for line in item.withdrawals:
            click.echo(click.style(f"    ! {line}", fg="yellow"))
        for line in item.waiting:
            click.echo(f"    waits: {line}")


@click.command("reject")
@click.argument("plan_id")
@click.option("--reason", required=True, help="Why the plan is rejected (kept in the audit log).")
@database_options
@json_option
@click.pass_context
@user_errors
def reject(
    ctx: click.Context, plan_id: str, reason: str, db_url: str | None, db_vault: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Reject a pending plan; its reserved slugs are released.

    \b
    Example:
      affidavit reject 3f2a9c --reason "duplicates the page on X"
      affidavit reject 3f2a9c --reason "off topic" --database postgresql://wiki@db/wiki --vault hb
    """
    with open_front(ctx, db_url, db_vault) as front:  # the daemon when it serves the vault
        record = front.reject(plan_id, reason)
    if as_json:
        echo_json(record.model_dump())
    else:
        click.echo(f"rejected plan {record.plan_id[:12]}: {reason}")


COMMANDS = [nonce, schema, propose, inbox, approve, reject]
