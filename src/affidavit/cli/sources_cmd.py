"""``affidavit sources``: add, list, show, retract the sources every claim quotes, and say which
files are gone."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import click

from ..agents import local_actor
from ..config import TRUST_TIERS
from ..errors import AffidavitError, IntegrityError
from ..retract import describe_radius, propose_source_retraction
from ..sources.extract import SUPPORTED_HELP, locator
from ..sources.store import AddResult, SourceRecord, SourceStore
from ._common import echo_json, json_option, opened_vault, user_errors

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


@dataclass
class _Outcome:
    target: str
    result: AddResult | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.result is None:
            return {"target": self.target, "status": "error", "error": self.error}
        return {
            "target": self.target,
            "status": "added" if self.result.added else "unchanged",
            "message": self.result.message,
            "source": self.result.record.to_json(),
        }


def _looks_like_url(target: str) -> bool:
    """A target with a scheme (``https:``, ``ftp:``, ``file:``...) that is not an existing path."""
    return bool(_SCHEME.match(target)) and not Path(target).exists()


def _attempt(target: str, action: Callable[[], AddResult]) -> _Outcome:
    try:
        return _Outcome(target, result=action())
    except AffidavitError as exc:
        return _Outcome(target, error=str(exc))


def _add_dir(store: SourceStore, target: str, trust: str | None, as_json: bool) -> list[_Outcome]:
    files = store.discover(target)
    if len(files) <= 1 or as_json:
        return [_attempt(str(f), partial(store.add_file, f, trust)) for f in files]
    outcomes: list[_Outcome] = []
    with click.progressbar(
        files, label=f"Adding {len(files)} files from {target}", file=sys.stderr
    ) as bar:
        for file in bar:
            outcomes.append(_attempt(str(file), partial(store.add_file, file, trust)))
    return outcomes


def _line(outcome: _Outcome) -> str:
    result = outcome.result
    assert result is not None
    record = result.record
    if not result.added:
        return f"{'unchanged':9} {outcome.target}: {result.message}"
    flags = f"{len(record.flags)} flag{'s' if len(record.flags) != 1 else ''}"
    return (
        f"{'added':9} {record.short_id}  {record.name}  {record.media_type}  "
        f"{record.text_chars:,} chars  trust={record.trust}  {flags}"
    )


@click.group("sources")
def sources() -> None:
    """Add, list, inspect and retract sources: the immutable documents every claim quotes.

    A source is stored once, read-only, under sources/ and named by the SHA-256 of its bytes,
    next to its extracted text. Formats: .md .markdown .txt .rst .html .htm .pdf, and http(s) URLs.

    \b
    Examples:
      affidavit sources add ~/papers/ notes.md https://example.org/report.html
      affidavit sources list
      affidavit sources show 3f2a9c1b0d4e
      affidavit sources retract 3f2a9c1b0d4e --reason "the report was withdrawn"
    """


@sources.command("add")
@click.argument("targets", nargs=-1, required=True, metavar="PATH|DIR|URL...")
@click.option(
    "--trust",
    type=click.Choice(TRUST_TIERS),
    default=None,
    help="Trust tier of these sources (default: the longest matching trust.rules pattern in "
    "affidavit.toml, else sources.default_trust).",
)
@json_option
@click.pass_context
@user_errors
def add(ctx: click.Context, targets: tuple[str, ...], trust: str | None, as_json: bool) -> None:
    """Add files, directories (recursively) and http(s) URLs as sources.

    The same bytes added twice are stored once ("already stored"). A file that can't be read is
    reported and the others are still added; the exit status is then 1.

    \b
    Examples:
      affidavit sources add report.pdf
      affidavit sources add ~/papers/ --trust trusted
      affidavit sources add https://example.org/post.html --trust untrusted --json
    """
    outcomes: list[_Outcome] = []
    with opened_vault(ctx) as vault:
        store = SourceStore(vault)
        for target in targets:
            if _looks_like_url(target):
                outcomes.append(_attempt(target, partial(store.add_url, target, trust)))
            elif Path(target).is_dir():
                try:
                    outcomes += _add_dir(store, target, trust, as_json)
                except AffidavitError as exc:
                    outcomes.append(_Outcome(target, error=str(exc)))
            else:
                outcomes.append(_attempt(target, partial(store.add_file, target, trust)))
    failed = sum(outcome.error is not None for outcome in outcomes)
    added = sum(bool(o.result and o.result.added) for o in outcomes)
    if as_json:
        echo_json(
            {
                "results": [outcome.to_json() for outcome in outcomes],
                "added": added,
                "unchanged": len(outcomes) - added - failed,
                "failed": failed,
            }
        )
    else:
        for outcome in outcomes:
            if outcome.error is not None:
                click.echo(f"{'error':9} {outcome.target}: {outcome.error}", err=True)
            else:
                click.echo(_line(outcome))
        if not outcomes:
            click.echo(f"No supported files found. Affidavit reads {SUPPORTED_HELP}.")
        elif len(outcomes) > 1:
            unchanged = len(outcomes) - added - failed
            click.echo(f"{added} added, {unchanged} already stored, {failed} failed")
    if failed:
        ctx.exit(1)


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


@sources.command("list")
@json_option
@click.pass_context
@user_errors
def list_sources(ctx: click.Context, as_json: bool) -> None:
    """List every stored source, oldest first.

    \b
    Example:
      affidavit sources list --json
    """
    with opened_vault(ctx) as vault:
        records = SourceStore(vault).list()
    if as_json:
        echo_json([record.to_json() for record in records])
        return
    if not records:
        click.echo("No sources yet. Add one with `affidavit sources add PATH|DIR|URL`.")
        return
    rows = [["ID", "NAME", "TYPE", "TRUST", "CHARS", "FLAGS", "ADDED"]]
    rows += [
        [
            r.short_id,
            r.name,
            r.media_type,
            r.trust,
            f"{r.text_chars:,}",
            str(len(r.flags)),
            r.added_at,
        ]
        for r in records
    ]
    for line in _table(rows, right={4, 5}):
        click.echo(line)


def _flag_rows(record: SourceRecord, text: str) -> list[dict[str, Any]]:
    where = locator(text, record.text_map)
    return [{**flag.to_json(), "location": where(flag.start)} for flag in record.flags]


@sources.command("show")
@click.argument("source_id", metavar="ID")
@click.option("--text", "show_text", is_flag=True, help="Print the extracted text.")
@json_option
@click.pass_context
@user_errors
def show(ctx: click.Context, source_id: str, show_text: bool, as_json: bool) -> None:
    """Show one source: metadata, integrity, and sanitizer flags with where they are.

    ID is the source's id or a unique prefix of it (as `sources list` prints). With --text, print
    the extracted text instead (with --json, it is added to the JSON).

    \b
    Examples:
      affidavit sources show 3f2a9c1b0d4e
      affidavit sources show 3f2a9c1b0d4e --text | less
    """
    with opened_vault(ctx) as vault:
        store = SourceStore(vault)
        record = store.get(source_id)
        problems = store.check_integrity(record.id)
        try:
            text: str | None = store.text(record.id)
        except IntegrityError:
            if show_text:
                raise
            text = None  # the text file is gone: say so below, show the flags without locations
    flags = _flag_rows(record, text) if text is not None else [f.to_json() for f in record.flags]
    if as_json:
        data = {**record.to_json(), "flags": flags, "integrity": problems}
        data["text_map"] = {
            k: v for k, v in record.text_map.items() if k in ("kind", "encoding", "visibility")
        }
        if show_text:
            data["text"] = text
        echo_json(data)
        return
    if show_text:
        click.echo(text or "", nl=False)
        return
    fields = [
        ("id", record.id),
        ("name", record.name),
        ("origin", record.origin),
        ("media type", record.media_type),
        ("size", f"{record.size_bytes:,} bytes ({record.original_file})"),
        ("text", f"{record.text_chars:,} chars ({record.text_file})"),
        ("text sha256", record.text_sha256),
        ("trust", record.trust),
        ("status", record.status),
        ("added", record.added_at),
        ("integrity", "; ".join(problems) if problems else "ok"),
        ("flags", str(len(flags))),
    ]
    seen_as = record.text_map.get("visibility")
    if isinstance(seen_as, dict):  # HTML and PDF: who decided what a reader sees (W12)
        how = (
            f"rendered by {seen_as.get('engine', '?')}"
            if seen_as.get("checked") == "rendered"
            else f"rules only ({seen_as.get('note', '')})"
        )
        fields.insert(-1, ("visibility", how))
    if record.stated:  # the version or date it states about itself (orders releases for lint)
        kind = record.stated_key.split(":", 2)[1] if record.stated_key.count(":") >= 2 else ""
        fields.insert(-1, ("states", f"{kind} {record.stated}".strip()))
    for label, value in fields:
        click.echo(f"{label + ':':13}{value}")
    for flag in flags:
        span = (
            f"{flag['start']}" if flag["start"] == flag["end"] else f"{flag['start']}-{flag['end']}"
        )
        where = flag.get("location", "")
        click.echo(f"  {flag['kind']:15}{span:>16}  {where:22}{flag['detail']}")


def _person() -> str:
    return f"person:{local_actor()}"


@sources.command("retract")
@click.argument("source_id", metavar="ID")
@click.option(
    "--reason",
    default="retracted by a person",
    show_default=True,
    help="Why (kept in the plan, the audit log and the pages' Retracted lists).",
)
@click.option("--dry-run", is_flag=True, help="Show the blast radius; propose nothing.")
@json_option
@click.pass_context
@user_errors
def retract(ctx: click.Context, source_id: str, reason: str, dry_run: bool, as_json: bool) -> None:
    """Show what retracting a source would take out of the wiki, and propose it.

    Claims whose only evidence is this source are retracted, with the saved answers and other
    syntheses that rest on them; claims with other evidence keep it, and their trust is
    recomputed. Nothing changes until the proposed plan is approved (it always waits for a
    person); approval refuses if the wiki changed so that more claims would go.

    \b
    Examples:
      affidavit sources retract 3f2a9c1b0d4e --dry-run
      affidavit sources retract 3f2a9c1b0d4e --reason "the report was withdrawn"
      affidavit approve 9d1e0c2b7a44
    """
    with opened_vault(ctx) as vault:
        done = propose_source_retraction(vault, source_id, reason, _person(), dry_run=dry_run)
    if as_json:
        echo_json(done.to_json())
        return
    for line in describe_radius(done.radius):
        click.echo(line)
    if done.proposal is None:
        click.echo("\nDry run: nothing proposed.")
        return
    click.echo(f"\n{done.proposal.message}")
    if done.proposal.status == "pending":
        click.echo(f"Review: affidavit inbox show {done.proposal.plan_id[:12]}")
        click.echo(f"Approve: affidavit approve {done.proposal.plan_id[:12]}")


@sources.command("gone")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--reason",
    default="the file was deleted",
    show_default=True,
    help="Why (kept in the plan, the audit log and the pages' Retracted lists).",
)
@json_option
@click.pass_context
@user_errors
def gone(ctx: click.Context, paths: tuple[str, ...], reason: str, as_json: bool) -> None:
    """Say that files the wiki was built from are deleted: propose retracting each one's
    current version (its blast radius shown in the inbox; it waits for a person).

    A path the vault never ingested, or whose retraction is already pending, is skipped.
    `affidavit ingest DIR` does this by itself for known files gone from DIR.

    \b
    Examples:
      affidavit sources gone ~/notes/old-plan.md
      affidavit sources gone ~/notes/a.md ~/notes/b.md --reason "moved out of the project" --json
    """
    from ..ingest.lineage import propose_deleted  # the ingest package: only for this command

    with opened_vault(ctx) as vault:
        proposals = propose_deleted(vault, list(paths), actor=_person(), reason=reason)
    if as_json:
        echo_json(
            {
                "proposed": [
                    {"plan_id": p.plan_id, "status": p.status, "message": p.message}
                    for p in proposals
                ]
            }
        )
        return
    if not proposals:
        click.echo("Nothing to propose: no known, active source has these paths as its origin.")
    for proposal in proposals:
        click.echo(proposal.message)
        click.echo(f"Review: affidavit inbox show {proposal.plan_id[:12]}")


COMMANDS = [sources]
