"""``affidavit worker --database URL``: run a PostgreSQL database's queued jobs on this host
(any number of workers, on any hosts; docs/team.md)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType

import click

from ..errors import ConfigError
from ._common import user_errors


@click.command("worker")
@click.option(
    "--database", "url", required=True, envvar="AFFIDAVIT_DATABASE", metavar="URL",
    help="The PostgreSQL database (postgresql://…; or $AFFIDAVIT_DATABASE).",
)  # fmt: skip
@click.option(
    "--vault", "vaults", multiple=True,
    help="Only this vault's jobs (repeat for several; default: every vault of the database).",
)  # fmt: skip
@click.option(
    "--lease", "lease", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
    help="Seconds a claim holds a job without a heartbeat (heartbeats every third of it).",
)  # fmt: skip
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="An affidavit.toml whose [model], [ingest], [policy] and [plans] settings apply.",
)  # fmt: skip
@click.option("--drain", is_flag=True, help="Exit once no job is free (default: wait for more).")
@click.option("--poll", type=click.FloatRange(0.05, 60), default=1.0, show_default=True,
              help="Seconds between looks at an empty queue.")  # fmt: skip
@user_errors
def worker_command(
    url: str, vaults: tuple[str, ...], lease: float, config_path: Path | None, drain: bool,
    poll: float,
) -> None:  # fmt: skip
    """Claim and run the queued jobs of the database's vaults: ingests of the sources submitted
    with POST /v1/vaults/{vault}/jobs, each chunk's plan through the gate and the door. Logs one
    JSON line per event on stderr. SIGTERM or Ctrl-C: the running job is given back to the queue
    after its current chunk. A database that doesn't answer (at the start or later) is waited
    out: each try logs database_error with the seconds to the next (retry_in, doubling up to
    30 s); one that refuses the URL (its user, database or password) exits 1 at once.

    \b
    Examples:
      affidavit worker --database postgresql://wiki@db.example.org/wiki
      affidavit worker --database postgresql://wiki@db/wiki --vault handbook --drain
    """
    from ..config import Config, load_config
    from ..storage.base import check_vault_name
    from ..storage.url import check_database_url

    url = check_database_url(url, "--database (or $AFFIDAVIT_DATABASE)")
    for name in vaults:
        check_vault_name(name)
    config = load_config(config_path) if config_path else Config()
    try:
        from ..jobs.pg_worker import PgWorker, _stderr, connect_when_up
        from ..storage.pg_connect import FAIL_AFTER, failure, probe
        from ..storage.postgres import PostgresStorage
    except ImportError as exc:
        raise ConfigError(
            f"a PostgreSQL database needs the postgres extra ({exc.name} is missing): "
            "pip install 'affidavit[postgres]'"
        ) from None
    import psycopg
    from psycopg.conninfo import make_conninfo

    from ..jobs.pg_ingest import idle_timeout_ms

    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # a worker paused inside a transaction (SIGSTOP, a swapped-out VM) must not hold the vault's
    # door lock for ever: the server ends such a session once it has idled a lease in it
    timeout = f"-c idle_in_transaction_session_timeout={idle_timeout_ms(lease)}"
    known: list[str] = []

    def connect() -> PostgresStorage:
        """The database, its vaults checked and migrated; one that doesn't answer (now, or
        before this is done) is DatabaseUnavailable, which the worker waits out."""
        probe(url)
        opened = PostgresStorage(
            make_conninfo(url, options=timeout), max_connections=4, fail_after=FAIL_AFTER
        )
        try:
            known[:] = opened.vaults()
            missing = [v for v in vaults if v not in known]
            if missing:
                raise ConfigError(
                    f"no vault {missing[0]!r} in this database (it has: "
                    f"{', '.join(known) or 'none'}); `affidavit team create` it."
                )
            opened.migrate()  # pg008's checkpoints, on a database made before them
        except BaseException as exc:
            opened.close()
            if isinstance(exc, psycopg.Error):
                raise failure(exc, url, "can't use the database") from None
            raise
        return opened

    storage = connect_when_up(connect, stop=stopping, log=_stderr, poll=poll)
    if storage is None:  # stopped while waiting for the database
        return
    try:
        worker = PgWorker(
            storage, vaults=list(vaults) or None, lease_seconds=lease, poll_seconds=poll,
            config=config,
        )  # fmt: skip
        worker.stop = stopping
        worker.log({"event": "ready", "worker": worker.owner, "vaults": list(vaults) or known})
        worker.run(drain=drain)
    finally:
        storage.close()


COMMANDS = [worker_command]
