"""Running the daemon over a PostgreSQL database (``serve --database URL``): the same sockets,
permissions, signals and shutdown as over SQLite vaults (:mod:`.runtime`), in one process or
``--workers N`` pre-forked ones sharing the sockets (:mod:`.prefork`; each opens its own
connection pool after the fork), no job workers (``affidavit worker`` runs the jobs), and with
``--web`` the review desk (one process: its sessions live in the daemon's memory). The URL is never logged: the log and every message show it with its password masked
(:func:`affidavit.storage.url.redact`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading

from ..config import Config
from ..errors import ConfigError
from .logs import event, setup_logging
from .prefork import SUPPORTED, Supervisor
from .runtime import (
    ServeOptions,
    _announce_web,
    _bind,
    _check_remote,
    _config,
    _listening,
    _raise_stopped,
    _release,
    _Server,
    _Stopped,
)


def check_options(options: ServeOptions) -> None:
    """Refuse what the PostgreSQL daemon doesn't do yet, naming it (never a silent SQLite)."""
    if options.web and options.processes > 1:
        raise ConfigError(
            "--web keeps its login sessions in the daemon's memory, which worker processes don't "
            "share: pass --workers 1 with --web."
        )
    if options.processes > 1 and not SUPPORTED:
        raise ConfigError(
            f"--workers {options.processes}: this platform can't pre-fork worker processes "
            "(no sigwaitinfo); pass --workers 1."
        )


def serve_database(options: ServeOptions, url: str, config: Config | None = None) -> int:
    """Serve the vaults of the database at ``url`` until SIGTERM/SIGINT; the exit status."""
    from .pg_app import create_pg_app
    from .pg_registry import PgRegistry

    setup_logging()
    _check_remote(options)
    registry = PgRegistry.open(url, config)  # migrations run here, once
    sockets: list[socket.socket] = []
    unix_inode: int | None = None
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if options.processes > 1:
            registry.close()  # no pool crosses a fork: each worker opens its own
            unix_inode, tcp_address = _bind(options, sockets)
            _listening(options, tcp_address)
            return Supervisor(
                options.processes,
                sockets,
                lambda slot, ready: _worker(options, url, config, sockets, slot, ready),
                options.shutdown_seconds,
            ).run()
        stopping = threading.Event()
        app = create_pg_app(
            registry,
            stopping=stopping,
            threads=options.threads,
            web=options.web,
            web_hosts=frozenset({options.tcp[0]}) if options.tcp else frozenset(),
        )
        unix_inode, tcp_address = _bind(options, sockets)
        if options.web and tcp_address is not None:
            host, port = sockets[-1].getsockname()[:2]
            _announce_web(app, host, port)
        _listening(options, tcp_address)
        _Server(_config(app, options), stopping).run(sockets=sockets)
        return 0
    except _Stopped:
        return 0
    finally:
        _release(options, sockets, unix_inode, previous)
        registry.close()
        event("stopped", pid=os.getpid())


def _worker(
    options: ServeOptions,
    url: str,
    config: Config | None,
    sockets: list[socket.socket],
    slot: int,
    ready: int,
) -> int:
    """One pre-forked worker process: its own pool and app over the shared sockets."""
    from .pg_app import create_pg_app
    from .pg_registry import PgRegistry

    registry = PgRegistry.open(url, config)
    stopping = threading.Event()
    app = create_pg_app(registry, stopping=stopping, threads=options.threads)
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn raises the signal again once drained
        signal.signal(sig, _raise_stopped)
    with contextlib.suppress(_Stopped):
        _Server(_config(app, options), stopping, ready, slot=slot, jobs=False).run(sockets=sockets)
    return 0


__all__ = ["check_options", "serve_database"]
