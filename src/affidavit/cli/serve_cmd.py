"""``serve``: run the daemon (the HTTP API on a Unix socket, optionally on loopback TCP)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..client import default_socket_path
from ..config import Config
from ..errors import ConfigError
from ..vault_root import find_vault_root
from ._common import user_errors, vault_path

INSTALL = "pip install 'affidavit[server]'"


@click.command("serve")
@click.option(
    "--socket",
    "socket_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Unix socket to listen on (default: $XDG_RUNTIME_DIR/affidavit/affidavit.sock).",
)
@click.option(
    "--tcp", metavar="HOST:PORT", help="Also listen on TCP (bearer tokens), e.g. 127.0.0.1:8765."
)
@click.option(
    "--vault",
    "vaults",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A vault to serve (repeatable; default: the one given to affidavit or enclosing the cwd).",
)
@click.option(
    "--database",
    "database",
    envvar="AFFIDAVIT_DATABASE",
    metavar="URL",
    help="Serve the vaults of this PostgreSQL database (postgresql://…; or $AFFIDAVIT_DATABASE, "
    "or [database] url in the vault's affidavit.toml) instead of vault folders (docs/team.md).",
)
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --tcp address.")
@click.option(
    "--shared",
    is_flag=True,
    help="Let other local users connect to the socket (0666); each still sees only its vaults.",
)
@click.option(
    "--threads",
    default=16,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Requests handled at once (a thread pool); more wait their turn.",
)
@click.option(
    "--workers",
    "processes",
    type=click.IntRange(1, 64),
    help="Worker processes sharing the socket (default: min(cores, 4); 1 with --web). Each "
    "accepts connections and checks its callers; job workers run in one of them.",
)
@click.option(
    "--web",
    is_flag=True,
    help="Serve the review desk in a browser (on --tcp, default 127.0.0.1 with a free port) and "
    "print a one-time login link.",
)
@click.option(
    "--no-workers",
    is_flag=True,
    help="Don't run job workers in this daemon, nor follow the vaults' watches.",
)
@click.option(
    "--shutdown-timeout",
    default=30.0,
    show_default=True,
    help="Seconds to wait for requests and the running job to stop at shutdown.",
)
@click.option(
    "--check", is_flag=True, help="Validate config and permissions, print a report, exit 0/1."
)
@click.pass_context
@user_errors
def serve(
    ctx: click.Context,
    socket_path: Path | None,
    tcp: str | None,
    vaults: tuple[Path, ...],
    database: str | None,
    allow_remote: bool,
    shared: bool,
    threads: int,
    processes: int | None,
    web: bool,
    no_workers: bool,
    shutdown_timeout: float,
    check: bool,
) -> None:
    """Serve vaults over the typed HTTP API until SIGTERM (see docs/server.md).

    On the Unix socket callers are known by their UID (from the kernel); each vault's owner is the
    UID owning its directory. Over --tcp callers present a bearer token (`affidavit tokens`).

    \b
    Examples:
      affidavit serve --vault ~/vault
      affidavit serve --vault ~/a --vault ~/b --tcp 127.0.0.1:8765
      affidavit serve --vault ~/vault --web
      affidavit serve --vault ~/vault --check
      affidavit serve --database postgresql://wiki@db.example.org/wiki --tcp 127.0.0.1:8765
    """
    try:
        from ..server.check import run_check
        from ..server.prefork import default_workers
        from ..server.runtime import ServeOptions, parse_tcp
        from ..server.runtime import serve as run
    except ImportError as exc:
        raise click.ClickException(
            f"the daemon needs the [server] extra ({exc.name} is missing): {INSTALL}"
        ) from exc
    roots = list(vaults)
    url, config = _database(ctx, database, roots)
    if url is not None:
        return _serve_database(url, config, socket_path, tcp, shared, allow_remote, threads,
                               processes, web, check, shutdown_timeout)  # fmt: skip
    if not roots:
        default = find_vault_root(vault_path(ctx) or Path.cwd())
        if default is None and not check:
            raise ConfigError("no vault to serve: pass --vault PATH or run inside a vault.")
        roots = [default] if default is not None else []
    options = ServeOptions(
        socket_path=(socket_path or default_socket_path()).absolute(),
        vaults=[r.resolve() for r in roots],
        tcp=parse_tcp(tcp) if tcp else (("127.0.0.1", 0) if web else None),
        shared=shared,
        allow_remote=allow_remote,
        workers=not no_workers,
        shutdown_seconds=shutdown_timeout,
        threads=threads,
        processes=processes or (1 if web else default_workers()),
        web=web,
    )
    if check:
        report = run_check(options)
        click.echo(report.render())
        ctx.exit(0 if report.passed else 1)
    sys.exit(run(options))


def _database(
    ctx: click.Context, database: str | None, roots: list[Path]
) -> tuple[str | None, Config | None]:
    """The composition root's one choice of backend: the PostgreSQL URL to serve (from
    --database, $AFFIDAVIT_DATABASE, or the [database] url of the vault folder it would serve)
    and the affidavit.toml that applies to its vaults; (None, None) for SQLite vault folders."""
    from ..config import load_config
    from ..storage.url import check_database_url
    from ..vault_root import CONFIG_NAME

    if database is not None:
        if roots:
            raise ConfigError(
                "--database serves the vaults of a PostgreSQL database and --vault a SQLite "
                "vault folder: give one of them (unset $AFFIDAVIT_DATABASE to serve folders)."
            )
        return check_database_url(database, "--database (or $AFFIDAVIT_DATABASE)"), None
    enclosing = find_vault_root(vault_path(ctx) or Path.cwd())
    candidates = roots or ([enclosing] if enclosing is not None else [])
    found = [r for r in candidates if (r / CONFIG_NAME).is_file()]
    configs = []
    for root in found:
        try:
            configs.append(load_config(root / CONFIG_NAME))
        except ConfigError:  # the SQLite path reports a broken file as it always did
            continue
    urls = {c.database_url for c in configs}
    if urls == {""} or not urls:
        return None, None
    if len(configs) > 1:
        raise ConfigError(
            "these vaults' affidavit.toml name a [database] url: serve each database on its own "
            "(`affidavit serve` in that vault), not together with other vaults."
        )
    return configs[0].database_url, configs[0]


def _serve_database(
    url: str, config: Config | None, socket_path: Path | None, tcp: str | None, shared: bool,
    allow_remote: bool, threads: int, processes: int | None, web: bool, check: bool,
    shutdown_timeout: float,
) -> None:  # fmt: skip
    try:
        from ..server import pg_registry  # noqa: F401 - psycopg and the pool, now: a clear error
        from ..server.pg_runtime import check_options, serve_database
        from ..server.runtime import ServeOptions, parse_tcp
    except ImportError as exc:
        extra = "postgres" if exc.name and "psycopg" in exc.name else "server"
        raise click.ClickException(
            f"serving a PostgreSQL database needs the [{extra}] extra ({exc.name} is missing): "
            f"pip install 'affidavit[server,postgres]'"
        ) from exc
    options = ServeOptions(
        socket_path=(socket_path or default_socket_path()).absolute(),
        vaults=[],
        tcp=parse_tcp(tcp) if tcp else (("127.0.0.1", 0) if web else None),
        shared=shared,
        allow_remote=allow_remote,
        workers=False,
        shutdown_seconds=shutdown_timeout,
        threads=threads,
        processes=processes or 1,
        web=web,
    )
    check_options(options)
    if check:
        from ..server.pg_check import run_check_database

        report = run_check_database(options, url)
        click.echo(report.render())
        sys.exit(0 if report.passed else 1)
    sys.exit(serve_database(options, url, config))


COMMANDS = [serve]
