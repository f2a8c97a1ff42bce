"""``team``: set up the vaults of a PostgreSQL database that ``serve --database`` serves — make a
vault, add a text source to it, give out a token (docs/team.md). Each needs the database's
credentials (the URL from --database or $AFFIDAVIT_DATABASE), which are the owner's authority over
every vault in it; the URL's password is never printed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import ConfigError
from ._common import echo_json, json_option, user_errors

if TYPE_CHECKING:
    from ..sources.extract import Extracted
    from ..storage.postgres import PostgresStorage

database_option = click.option(
    "--database", "url", required=True, envvar="AFFIDAVIT_DATABASE", metavar="URL",
    help="The PostgreSQL database (postgresql://…; or $AFFIDAVIT_DATABASE).",
)  # fmt: skip


@contextmanager
def _storage(url: str) -> Iterator[PostgresStorage]:
    """The database at ``url`` for one command: a database that doesn't answer is said at once
    with the fix (:mod:`affidavit.storage.pg_connect`), before and during the command."""
    from ..storage.url import check_database_url

    url = check_database_url(url, "--database (or $AFFIDAVIT_DATABASE)")
    try:
        from ..storage.pg_connect import connected
    except ImportError as exc:
        raise ConfigError(
            f"a PostgreSQL database needs the postgres extra ({exc.name} is missing): "
            "pip install 'affidavit[server,postgres]'"
        ) from None
    with connected(url) as storage:
        yield storage


@click.group("team")
def team() -> None:
    """A team's vaults in a PostgreSQL database, served by `affidavit serve --database`.

    \b
    Example:
      export AFFIDAVIT_DATABASE=postgresql://wiki@db.example.org/wiki
      affidavit team create handbook --owner ann
      affidavit team add handbook notes/bridge.md --trust trusted
      affidavit team token handbook --role propose --expires 7d --label ci
    """


@team.command("create")
@database_option
@click.argument("name")
@click.option("--owner", required=True, help="The vault's owner: a user name on the daemon's host.")
@user_errors
def create(url: str, name: str, owner: str) -> None:
    """Make vault NAME in the database (1-48 lowercase letters, digits or '_'; idempotent).
    Its OWNER has every role on it over the daemon's Unix socket.

    \b
    Example:
      affidavit team create handbook --owner ann --database postgresql://wiki@db/wiki
    """
    from ..storage.base import check_vault_name

    check_vault_name(name)
    with _storage(url) as storage:
        storage.create_vault(name, owner)
        storage.migrate()
    click.echo(f"Vault {name} (owner {owner}) is in the database.")


@team.command("add")
@database_option
@click.argument("name")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--trust", type=click.Choice(["untrusted", "semi-trusted", "trusted"]), default="semi-trusted",
    show_default=True, help="The source's trust tier.",
)  # fmt: skip
@click.option(
    "--ingest", is_flag=True,
    help="Also queue an ingest job of it, which `affidavit worker --database` runs.",
)  # fmt: skip
@json_option
@user_errors
def add(url: str, name: str, file: Path, trust: str, ingest: bool, as_json: bool) -> None:
    """Add FILE to vault NAME as a source (its id is the SHA-256 of its bytes; the same bytes are
    one source): any format `affidavit sources add` reads (markdown, text, HTML, PDF, Word,
    OpenDocument, EPUB, PowerPoint, man pages…), its text extracted here and text a reader can't
    see flagged, as in a vault folder. With --ingest, queue a job that ingests it (its plans are
    yours, as `affidavit ingest`'s).

    \b
    Example:
      affidavit team add handbook notes/bridge.md --trust trusted
      affidavit team add handbook notes/bridge.md --trust trusted --ingest
    """
    from ..clock import iso, utc_now

    data = file.read_bytes()
    media, extracted = _extracted(file, data)
    with _storage(url) as storage:
        source = storage.add_source(
            name, data, origin=str(file.resolve()), name=file.name, added_at=iso(utc_now()),
            media_type=media, trust=trust, text=extracted.text, flags=extracted.flags,
            text_map=extracted.text_map,
        )  # fmt: skip
        job = _queue_ingest(storage, name, source) if ingest else None
    if as_json:
        echo_json({"vault": name, "source": source, "trust": trust, "job": job})
        return
    click.echo(f"Added {file.name} to vault {name}: source {source} ({trust}).")
    if job:
        click.echo(f"Queued job {job}; `affidavit worker --database URL` runs it.")


def _extracted(file: Path, data: bytes) -> tuple[str, Extracted]:
    """``file``'s media type and extracted text, map and flags, as a vault folder's source store
    reads a new source (:func:`affidavit.storage.pg_intake.extracted`, MCP's add_source too)."""
    from ..storage.pg_intake import extracted

    return extracted(str(file), file.name, data)


def _queue_ingest(storage: PostgresStorage, vault: str, source: str) -> str:
    from ..agents import local_actor
    from ..jobs.payloads import StoredIngestPayload
    from ..storage.postgres_jobs import PostgresJobStore

    payload = StoredIngestPayload(sources=[source]).model_dump(mode="json")
    return PostgresJobStore(storage).enqueue(vault, payload, local_actor())


@team.command("token")
@database_option
@click.argument("name")
@click.option(
    "--role", type=click.Choice(["read", "propose", "approve"]), required=True,
    help="What it may do.",
)  # fmt: skip
@click.option("--expires", default="30d", show_default=True, help="Lifetime: 30s, 1m, 2h, 7d, 1w.")
@click.option("--label", default="", help="A note for yourself (e.g. where it is used).")
@json_option
@user_errors
def token(url: str, name: str, role: str, expires: str, label: str, as_json: bool) -> None:
    """Create a bearer token for vault NAME; its secret is printed once and stored hashed.

    \b
    Example:
      affidavit team token handbook --role approve --expires 7d --label ann-laptop
    """
    from ..agents import local_actor
    from ..config import Config
    from ..service.pg_vaults import PgVault
    from ..service.tokens import parse_duration

    try:
        lifetime = parse_duration(expires)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires") from exc
    with _storage(url) as storage:
        if name not in storage.vaults():
            raise ConfigError(f"no vault {name!r} in this database; `affidavit team create` it.")
        info, secret = PgVault(storage, name, Config()).create_token(
            role,
            lifetime,
            label,
            local_actor(),  # the kernel's word, never $USER
        )
    if as_json:
        echo_json({"info": info.model_dump(), "token": secret})
        return
    click.echo(f"Token {info.id} ({info.role}, expires {info.expires_at}) for vault {name}:")
    click.echo(secret)
    click.echo("Shown once: keep it now. Send it as Authorization: Bearer <token>.")


COMMANDS = [team]
