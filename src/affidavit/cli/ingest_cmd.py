"""``affidavit ingest``: sources in, plans through the gate into the inbox (or applied)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..agents import local_actor
from ..ingest.pipeline import Ingestor, IngestReport
from ..providers.from_config import provider_from_config
from ._common import echo_json, json_option, lint_progress, opened_vault, user_errors

MODELS = ("extractive", "openai", "anthropic", "local")


def _actor() -> str:
    return local_actor()


@click.command("ingest")
@click.argument("targets", nargs=-1, required=True)
@click.option(
    "--trust",
    type=click.Choice(["untrusted", "semi-trusted", "trusted"]),
    help="Trust tier of these sources (default: the config's rules, then sources.default_trust).",
)
@click.option(
    "--model",
    "model",
    type=click.Choice(MODELS),
    help="Provider to use instead of model.provider from affidavit.toml.",
)
@click.option(
    "--yes",
    is_flag=True,
    help="Approve and apply each plan that passes the checks at once (quarantined or reviewer-held "
    "plans still wait in the inbox).",
)
@click.option(
    "--async",
    "run_async",
    is_flag=True,
    help="Queue the ingest as a job and print its id instead of running it here "
    "(follow it with `affidavit jobs wait ID`).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Send nothing, store nothing: say how many chunks, prompt and completion tokens the "
    "ingest would take with the configured model, and the cost where [providers] prices are set.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    metavar="TOKENS",
    help="Stop cleanly before the chunk that would take this run past TOKENS (prompt + "
    "completion); run the same ingest again to go on where it stopped.",
)
@json_option
@click.pass_context
@user_errors
def ingest(
    ctx: click.Context,
    targets: tuple[str, ...],
    trust: str | None,
    model: str | None,
    yes: bool,
    run_async: bool,
    dry_run: bool,
    budget: int | None,
    as_json: bool,
) -> None:
    """Add files, folders or URLs and compile them into wiki pages, each quote checked.

    Each source is split into chunks (never truncated); for each chunk the model proposes a
    plan, which goes through every admission check into the inbox — or is applied at once with
    --yes. Re-ingesting an unchanged source does nothing. A bad file is reported and skipped.

    \b
    Examples:
      affidavit ingest ~/papers/
      affidavit ingest notes.md https://example.org/article.html --trust trusted --yes
      affidavit ingest report.pdf --model openai --json
      affidavit ingest ~/papers/ --yes --async      # a background job: affidavit jobs
      affidavit ingest ~/papers/ --dry-run          # chunks, tokens and cost; sends nothing
      affidavit ingest ~/papers/ --budget 200000    # stop before passing 200k tokens
    """
    if run_async:
        _submit(ctx, targets, trust, model, yes, as_json, dry_run=dry_run, budget=budget)
        return
    if dry_run:
        _dry_run(ctx, targets, trust, model, as_json)
        return
    with opened_vault(ctx) as vault:
        provider = provider_from_config(vault.config, model)
        reviewer = provider_from_config(vault.config, model) if vault.config.review else None
        bar: Any = None

        def progress(name: str, done: int, total: int) -> None:
            nonlocal bar
            if as_json:
                return
            if bar is None or bar.label != name:
                if bar is not None:
                    bar.render_finish()
                bar = click.progressbar(length=total, label=name, show_pos=True, file=None)
                bar.label = name
            bar.update(1)
            if done == total:
                bar.render_finish()
                bar = None

        linting = False
        show_lint = lint_progress()

        def lint_stage(stage: str, done: int, total: int) -> None:
            nonlocal linting
            linting = True
            show_lint(stage, done, total)

        try:
            report = Ingestor(
                vault,
                provider,
                reviewer=reviewer,
                apply_now=yes,
                progress=progress,
                actor=_actor(),
                lint_progress=None if as_json else lint_stage,
                adding_progress=progress,
                budget=budget,
            ).run(list(targets), trust)
        finally:
            provider.close()
            if reviewer is not None:
                reviewer.close()
            if linting:
                show_lint.end()
        if as_json:
            echo_json(report.to_json())
        else:
            _print_report(report)
        if report.failed:
            ctx.exit(1)


def _dry_run(
    ctx: click.Context,
    targets: tuple[str, ...],
    trust: str | None,
    model: str | None,
    as_json: bool,
) -> None:
    from ..ingest.dry_run import estimate

    with opened_vault(ctx) as vault:
        provider = provider_from_config(vault.config, model)
        try:
            found = estimate(vault, provider, list(targets), trust)
        finally:
            provider.close()
    if as_json:
        echo_json(found.to_json())
    else:
        print_estimate(found.to_json())
    if any(s.status == "failed" for s in found.sources):
        ctx.exit(1)


def print_estimate(found: dict[str, Any]) -> None:
    """An estimate (``Estimate.to_json()``, also a dry-run job's result) for a person."""
    for source in found["sources"]:
        if source["status"] in ("failed", "not estimated"):
            click.echo(f"✗ {source['target']}: {source['status']}: {source['message']}")
            continue
        status = source["status"]
        if status == "new version":  # a changed file of a known origin, never "new"
            status = f"version {source['version']} of known source {source['previous_id'][:12]}"
        click.echo(
            f"• {source['name']} ({status}): {source['chunks_to_ingest']} of "
            f"{source['chunks']} chunk(s) to ingest, ~{source['prompt_tokens']} prompt + "
            f"~{source['completion_tokens']} completion tokens"
        )
    totals = found["totals"]
    click.echo("")
    model = f"{found['provider']}" + (f" ({found['model']})" if found["model"] else "")
    click.echo(
        f"Model {model}: {totals['chunks_to_ingest']} chunk(s), {totals['model_calls']} "
        f"call(s), ~{totals['prompt_tokens']} prompt tokens, ~{totals['completion_tokens']} "
        f"completion tokens (at most {totals['completion_tokens_at_most']})"
    )
    if totals["model_calls"] == 0 and totals["chunks_to_ingest"]:
        click.echo("This engine runs in-process and sends nothing anywhere: no tokens, no cost.")
    elif totals["cost"] is None:
        click.echo(
            "Cost: no prices set; add [providers] prompt_price_per_1k and "
            "completion_price_per_1k to affidavit.toml to see it."
        )
    else:
        click.echo(f"Cost: ~{totals['cost']:.4f} {totals['currency']} (re-asks not counted)")


def _submit(
    ctx: click.Context,
    targets: tuple[str, ...],
    trust: str | None,
    model: str | None,
    yes: bool,
    as_json: bool,
    *,
    dry_run: bool = False,
    budget: int | None = None,
) -> None:
    """Queue the ingest: paths become absolute (the job runs elsewhere) and must exist now."""
    from ..jobs import parse_payload
    from .jobs_cmd import submit_job

    sources = []
    for target in targets:
        if "://" in target:
            sources.append(target)
            continue
        path = Path(target).expanduser().resolve()
        if not path.exists():
            raise click.ClickException(f"{target} does not exist. Check the path and retry.")
        sources.append(str(path))
    payload = parse_payload(
        {
            "kind": "ingest",
            "sources": sources,
            "trust": trust,
            "model": model,
            "yes": yes,
            "dry_run": dry_run,
            "budget": budget,
        }
    )
    submit_job(ctx, payload, as_json)


def _counts(by_status: dict[str, int]) -> str:
    """``{'pending': 2, 'applied': 1}`` as ``2 pending, 1 applied`` (``none`` when empty)."""
    return ", ".join(f"{n} {status}" for status, n in by_status.items() if n) or "none"


def _version_line(lineage: dict[str, Any]) -> str:
    """What following a new version of a known file did, in words."""
    parts = [f"version {lineage['version']}: {lineage['carried']} claim(s) carried"]
    if lineage.get("supersede_proposals"):
        parts.append(f"{lineage['supersede_proposals']} changed fact(s) proposed for review")
    if lineage.get("retract_proposals"):
        parts.append(f"{lineage['retract_proposals']} removed fact(s) proposed for retraction")
    return ", ".join(parts)


def _print_report(report: IngestReport) -> None:
    for source in report.sources:
        if source.status == "failed":
            click.echo(f"✗ {source.target}: {source.message}")
        elif source.status == "unchanged":
            click.echo(f"= {source.message}")
        else:
            statuses = [c.status for c in source.chunks]
            click.echo(
                f"✓ {source.name} ({(source.source_id or '')[:12]}, {source.trust}): "
                f"{len(statuses)} chunk(s) — "
                + ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))
            )
            if source.lineage:
                click.echo("    " + _version_line(source.lineage))
            for chunk in source.chunks:
                if chunk.status in ("failed", "rejected"):
                    click.echo(f"    chunk {chunk.index + 1}: {chunk.message}")
    if report.deleted:
        click.echo(
            f"− files gone from the folder: {len(report.deleted)} retraction plan(s) proposed "
            f"({', '.join(p[:12] for p in report.deleted)})"
        )
    totals = report.totals()
    claims = totals["claims"]
    click.echo("")
    click.echo(
        f"Plans: {_counts(totals['chunks'])} · operations admitted: {totals['operations']} · claims: "
        f"{claims['admitted']} admitted, {claims['quarantined']} quarantined, "
        f"{claims['rejected']} rejected"
    )
    for reason, count in totals["rejected_because"].items():
        click.echo(f"  {count} × {reason}")
    tokens = totals["tokens"]
    click.echo(
        f"Model calls: {totals['model_calls']} · tokens: {tokens['prompt']} prompt + "
        f"{tokens['completion']} completion · job {report.job_id}"
    )
    changed = any(
        s.lineage and (s.lineage.get("supersede_proposals") or s.lineage.get("retract_proposals"))
        for s in report.sources
    )
    waiting = totals["chunks"].get("pending") or totals["chunks"].get("partial")
    if waiting or changed or report.deleted:
        click.echo("Review the plans: affidavit inbox")
    if totals["chunks"].get("partial"):
        click.echo(
            f"{totals['chunks']['partial']} plan(s) applied in part: their uncertain texts wait "
            "for a person (`affidavit inbox show ID` says why for each)"
        )
    if report.supersessions:
        plans = report.supersessions["plans"]
        click.echo(
            f"The new claims change {len(report.supersessions['findings'])} older claim(s): "
            "`affidavit findings` shows both quotes"
            + (
                f"; supersede plan(s) wait in the inbox: {', '.join(p[:12] for p in plans)}"
                if plans
                else ""
            )
            + "."
        )
    if report.stopped:
        click.echo(f"Stopped: {report.stopped['message']}")
    stopped = (report.read_ahead or {}).get("stopped")
    if stopped:
        click.echo(
            f"Note: the worker reading chunks ahead stopped ({stopped}); the chunks after that "
            "were read in this process: the same result, slower."
        )
    if report.lint:
        counts = ", ".join(f"{n} {kind}" for kind, n in report.lint["counts"].items()) or "none"
        click.echo(
            f"Automatic lint (lint.every_ingests) run {report.lint['run']}: "
            f"{report.lint['open']} open finding(s) ({counts}); see `affidavit findings`."
        )


COMMANDS = [ingest]
