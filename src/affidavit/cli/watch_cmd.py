"""``affidavit watch``: follow folders and ingest what changes in them — here, in the
foreground (``affidavit watch DIR…``, the same as ``watch run DIR…``), or by the daemon serving
the vault (``watch add``, ``watch list``, ``watch remove``: :mod:`affidavit.watch.registered`)."""

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
from ._common import echo_json, json_option, opened_vault, user_errors
from .ingest_cmd import MODELS


class WatchGroup(click.Group):
    """``watch DIR…`` runs ``watch run DIR…``: a first word that is no subcommand is a folder
    (a folder named like a subcommand is given as ``./add``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("watch", cls=WatchGroup)
def watch() -> None:
    """Follow folders: ingest each file that appears or changes, report each that is deleted.

    `affidavit watch DIR...` follows them here until Ctrl-C (see `affidavit watch run --help`);
    `affidavit watch add DIR...` has the daemon serving the vault follow them, across its
    restarts, each burst of changes queued as a job (`affidavit jobs` shows them).

    \b
    Examples:
      affidavit watch ~/notes ~/papers          # follow them here
      affidavit watch add ~/notes               # the daemon follows it
      affidavit watch list --json
      affidavit watch remove ~/notes
    """


@watch.command("run")
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
def run(
    ctx: click.Context,
    folders: tuple[str, ...],
    trust: str | None,
    model: str | None,
    once: bool,
    debounce_ms: int,
    run_async: bool,
    as_json: bool,
) -> None:
    """Follow folders here: ingest each file that appears or changes, report each deleted.

    `affidavit watch DIR...` is this command. Files are chosen as `ingest DIR` chooses them, minus what .gitignore and .affidavitignore
    files in the folders exclude (git's rules). On start every file is hashed, so what changed
    while the watch was down is found. Plans go through the gate to the inbox; only what the
    policy (policy.auto_apply) applies is applied — never more. Stop it with Ctrl-C.
    With --once it exits 1 when a file could not be ingested.

    \b
    Examples:
      affidavit watch ~/notes ~/papers
      affidavit watch ~/notes --once --json     # one look, JSON event lines, exit
      affidavit watch ~/notes --once --async    # the same look as a job of the queue
      affidavit watch run ./list                # a folder named like a subcommand
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


@watch.command("add")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option(
    "--trust",
    type=click.Choice(["untrusted", "semi-trusted", "trusted"]),
    help="Trust tier of the sources found (default: the config's rules).",
)
@click.option("--model", type=click.Choice(MODELS), help="Provider of the watch's ingests.")
@json_option
@click.pass_context
@user_errors
def add(
    ctx: click.Context,
    folders: tuple[str, ...],
    trust: str | None,
    model: str | None,
    as_json: bool,
) -> None:
    """Have the daemon serving this vault follow folders, across its restarts.

    Each burst of changes is queued as a `watch` job (the vault's queue: run once, resumed
    after a crash) doing what `affidavit watch` does with it; on every daemon start the folder
    is hashed again, so what changed while it was down is found. A folder reached through a
    symbolic link is stored as its real path; if a part of that path becomes a symbolic link
    later, the watch is refused (`watch list` says why) until you add it again.

    \b
    Examples:
      affidavit watch add ~/notes ~/papers --trust semi-trusted
      affidavit serve                            # the daemon that follows them
    """
    from ..watch.registered import WatchCreate, add_watch

    added = []
    with opened_vault(ctx) as vault:
        for folder in folders:
            path = str(Path(folder).expanduser().resolve())
            added.append(
                add_watch(vault, WatchCreate(folder=path, trust=trust, model=model), local_actor())
            )
    if as_json:
        echo_json([w.model_dump(mode="json") for w in added])
        return
    for info in added:
        click.echo(f"{info.id}  {info.folder}: the daemon serving this vault follows it")
    click.echo("  no daemon running? start one:  affidavit serve")


@watch.command("list")
@json_option
@click.pass_context
@user_errors
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """The folders the daemon follows for this vault: status, last job queued.

    \b
    Examples:
      affidavit watch list
      affidavit watch list --json
    """
    from ..watch.registered import list_watches

    with opened_vault(ctx) as vault:
        found = list_watches(vault)
    if as_json:
        echo_json([w.model_dump(mode="json") for w in found])
        return
    if not found:
        click.echo("No watches; `affidavit watch add DIR` adds one.")
    for w in found:
        note = f"  refused: {w.error}" if w.status == "refused" else ""
        click.echo(f"{w.id}  {w.status:<8}  {w.folder}  last job {w.last_job or '-'}{note}")


@watch.command("remove")
@click.argument("watches", nargs=-1, required=True)
@json_option
@click.pass_context
@user_errors
def remove(ctx: click.Context, watches: tuple[str, ...], as_json: bool) -> None:
    """Stop the daemon following folders (by watch id or folder); what they ingested stays.

    \b
    Examples:
      affidavit watch remove watch-3f2a9c01
      affidavit watch remove ~/notes
    """
    from ..watch.registered import remove_watch

    with opened_vault(ctx) as vault:
        removed = [remove_watch(vault, ref) for ref in watches]
    if as_json:
        echo_json([w.model_dump(mode="json") for w in removed])
        return
    for w in removed:
        click.echo(f"Removed {w.id}: {w.folder} is no longer followed")


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
