"""``affidavit watch``: follow folders and ingest what changes in them."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from ..agents import local_actor
from ..providers.from_config import provider_from_config
from ._common import opened_vault, user_errors
from .ingest_cmd import MODELS


@click.command("watch")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option(
    "--trust",
    type=click.Choice(["untrusted", "semi-trusted", "trusted"]),
    help="Trust tier of the sources found (default: the config's rules, then "
    "sources.default_trust).",
)
@click.option(
    "--model",
    type=click.Choice(MODELS),
    help="Provider to use instead of model.provider from affidavit.toml.",
)
@click.option(
    "--once",
    is_flag=True,
    help="Look once: ingest what changed since the last look (or everything, the first time), "
    "report what was deleted, and exit. For scripts, cron and tests.",
)
@click.option(
    "--debounce",
    "debounce_ms",
    type=click.IntRange(min=50, max=60_000),
    default=1600,
    show_default=True,
    metavar="MS",
    help="Most milliseconds a burst of changes is gathered before it is handled (a change is "
    "handled once 50 ms pass without another).",
)
@click.option(
    "--async",
    "run_async",
    is_flag=True,
    help="With --once: queue the look as a job of the vault's queue instead of running it here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per event and line.")
@click.pass_context
@user_errors
def watch(
    ctx: click.Context,
    folders: tuple[str, ...],
    trust: str | None,
    model: str | None,
    once: bool,
    debounce_ms: int,
    run_async: bool,
    as_json: bool,
) -> None:
    """Follow folders: ingest each file that appears or changes, report each that is deleted.

    Files are chosen as `ingest DIR` chooses them, minus what .gitignore and .affidavitignore
    files in the folders exclude (git's rules). On start every file is hashed, so what changed
    while the watch was down is found. Plans go through the gate to the inbox; only what the
    policy (policy.auto_apply) applies is applied — never more. Stop it with Ctrl-C.
    With --once it exits 1 when a file could not be ingested.

    \b
    Examples:
      affidavit watch ~/notes ~/papers
      affidavit watch ~/notes --once --json     # one look, JSON event lines, exit
      affidavit watch ~/notes --once --async    # the same look as a job of the queue
    """
    from ..watch import Watcher

    if run_async:
        if not once:
            raise click.UsageError(
                "--async runs one look as a job: add --once (a job that never ends would hold "
                "the vault's queue)."
            )
        _submit(ctx, folders, trust, model, as_json)
        return
    show = _json_line if as_json else _human_line
    failures: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        if event["event"] in ("failed", "error"):
            failures.append(event)
        show(event)

    progress = None if as_json or not sys.stderr.isatty() else _progress()
    stop = threading.Event()
    with opened_vault(ctx) as vault:
        provider = provider_from_config(vault.config, model)
        try:
            watcher = Watcher(
                vault,
                [Path(f) for f in folders],
                provider,
                emit,
                trust=trust,
                actor=local_actor(),
                progress=progress,
                debounce_ms=debounce_ms,
            )
            if once:
                watcher.catch_up()
                watcher.settle()
                if failures:  # for scripts: a file that could not be ingested is an error
                    ctx.exit(1)
                return
            previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
            try:
                watcher.run(stop)
            except KeyboardInterrupt:
                emit({"event": "stopped"})
            finally:
                signal.signal(signal.SIGTERM, previous)
        finally:
            provider.close()


def _submit(
    ctx: click.Context,
    folders: tuple[str, ...],
    trust: str | None,
    model: str | None,
    as_json: bool,
) -> None:
    from ..jobs import parse_payload
    from .jobs_cmd import submit_job

    dirs = []
    for folder in folders:
        path = Path(folder).expanduser().resolve()
        if not path.is_dir():
            raise click.ClickException(f"{folder} is not a folder. Check the path and retry.")
        dirs.append(str(path))
    payload = parse_payload({"kind": "watch", "folders": dirs, "trust": trust, "model": model})
    submit_job(ctx, payload, as_json)


def _json_line(event: dict[str, Any]) -> None:
    click.echo(json.dumps(event, ensure_ascii=False, sort_keys=True))
    sys.stdout.flush()


def _human_line(event: dict[str, Any]) -> None:
    name = event["event"]
    if name == "scan":
        click.echo(
            f"Looked at {event['folder']}: {event['files']} file(s), {event['changed']} new or "
            f"changed, {event['deleted']} deleted"
        )
    elif name == "ready":
        click.echo("Watching; Ctrl-C stops.")
    elif name in ("ingested", "failed"):
        chunks = ", ".join(f"{n} {status}" for status, n in event["chunks"].items())
        mark = "✗" if name == "failed" else ("=" if event["status"] == "unchanged" else "✓")
        click.echo(f"{mark} {event['path']}: {event['message'] or chunks or event['status']}")
    elif name == "deleted":
        click.echo(
            f"- {event['path']} was deleted: {len(event.get('sources', []))} source(s), "
            f"{event.get('active_claims', 0)} active claim(s) rest on it"
            + (" (lineage proposals made)" if event.get("lineage") else "")
        )
    elif name == "moved":
        click.echo(f"→ {event['source']} was moved to {event['path']}")
    elif name == "ignored":
        click.echo(f"· {event['path']} is ignored now: no longer followed")
    elif name == "error":
        click.echo(f"✗ {', '.join(event['paths'])}: {event['message']}", err=True)
    elif name == "lint":
        click.echo(f"Automatic lint run {event['run']}: {event['open']} open finding(s)")
    elif name == "stopped":
        click.echo("Stopped.")
    sys.stdout.flush()


def _progress() -> Any:
    """A one-line progress display of a pass's chunks on stderr (a terminal only)."""

    def show(name: str, done: int, total: int) -> None:
        click.echo(f"\r{name[:50]:<50} chunk {done}/{total}", err=True, nl=False)
        if done == total:
            click.echo("", err=True)

    return show


COMMANDS = [watch]
