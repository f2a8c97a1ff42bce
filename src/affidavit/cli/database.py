"""``--database URL --vault NAME``: the options with which a command reads (or acts on) a vault of
a PostgreSQL database instead of a vault folder, and opening that vault (``ask``, ``search``,
``chat``, ``jobs``, and through :func:`backend` ``nonce``, ``propose``, ``inbox``, ``approve``,
``reject``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..config import Config
    from ..service.backend import Backend
    from ..service.pg_vaults import PgVault


def database_options(command: Any) -> Any:
    """``--vault NAME`` (with ``--database URL`` or $AFFIDAVIT_DATABASE): the command reads that
    vault of a PostgreSQL database, with the database's credentials, instead of a vault folder."""
    command = click.option(
        "--vault", "db_vault", metavar="NAME",
        help="Read this vault of the PostgreSQL database (--database) instead of a folder.",
    )(command)  # fmt: skip
    return click.option(
        "--database", "db_url", envvar="AFFIDAVIT_DATABASE", metavar="URL",
        help="The PostgreSQL database of --vault (postgresql://…; or $AFFIDAVIT_DATABASE).",
    )(command)  # fmt: skip


@contextmanager
def database_vault(url: str | None, name: str, config: Config | None = None) -> Iterator[PgVault]:
    """Vault ``name`` of the database at ``url`` (the owner's credentials) with ``config`` (its
    settings; default: the defaults), refused by name when the URL is missing or the database
    holds no such vault (the error lists those it holds)."""
    from ..config import Config
    from ..errors import ConfigError
    from ..service.pg_vaults import PgVault
    from .team_cmd import _storage

    if not url:
        raise click.UsageError("--vault names a vault of a database: give --database URL too.")
    with _storage(url) as storage:
        known = storage.vaults()
        if name not in known:
            raise ConfigError(
                f"no vault {name[:64]!r} in this database (it has: {', '.join(known) or 'none'}); "
                "give one of those to --vault, or `affidavit team create` it."
            )
        yield PgVault(storage, name, config or Config())


def chosen(
    ctx: click.Context, db_url: str | None, db_vault: str | None
) -> tuple[str | None, str | None]:
    """``--database``/``--vault NAME`` as given to this command, or to its group before it
    (``affidavit inbox --vault team show 3f2a9c``)."""
    group = ctx.parent.params if ctx.parent is not None else {}
    return db_url or group.get("db_url"), db_vault or group.get("db_vault")


@contextmanager
def backend(ctx: click.Context, db_url: str | None, db_vault: str | None) -> Iterator[Backend]:
    """The CLI's front door: the services of vault ``db_vault`` of the database ``db_url`` as
    the local user (:class:`~affidavit.service.pg_backend.PgBackend`, the daemon's services on
    PostgreSQL) when ``--vault NAME`` is given, else the vault folder's (its daemon when one
    serves it, else in this process)."""
    from ..client import open_backend
    from ._common import vault_path

    db_url, db_vault = chosen(ctx, db_url, db_vault)
    if db_vault is None:
        with open_backend(vault_path(ctx)) as found:
            yield found
        return
    from ..agents import local_actor
    from ..service.pg_backend import PgBackend

    with database_vault(db_url, db_vault) as pg:
        yield PgBackend(pg, local_actor())


__all__ = ["backend", "chosen", "database_options", "database_vault"]
