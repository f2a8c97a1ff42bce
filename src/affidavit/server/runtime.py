"""Running the daemon: the Unix socket, the optional TCP port, uvicorn, signals and cleanup.

The sockets are bound here rather than by uvicorn so that their permissions are right from the
start: the socket's directory is created 0700 (0711 with ``shared``) and the socket itself is
bound under a umask that leaves it 0600 (0666 with ``shared``: other local users may connect,
and each is still authorised by its UID). A socket file that answers is another daemon's and is
left alone; one that doesn't is stale and replaced. SIGTERM or SIGINT stops accepting
connections, ends event streams, lets running requests finish, asks the job workers to stop at a
checkpoint, waits for them, removes the socket file and exits 0. With ``--workers N`` above 1
the sockets are bound here too and handed to N pre-forked worker processes (:mod:`.prefork`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import stat
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI

from ..errors import ConfigError
from ..store.anchor import Anchor
from .app import create_app
from .logs import event, setup_logging
from .peer import peer_protocol
from .prefork import SUPPORTED, Supervisor, mark_ready
from .registry import Registry, pin_vaults


@dataclass
class ServeOptions:
    socket_path: Path
    vaults: list[Path]
    tcp: tuple[str, int] | None = None
    shared: bool = False
    allow_remote: bool = False
    workers: bool = True
    """Run the job workers (``--no-workers``: don't)."""
    processes: int = 1
    """Worker processes sharing the listening sockets (``--workers N``); 1 runs in-process."""
    shutdown_seconds: float = 30.0
    threads: int = 16
    http: str = "auto"
    """The HTTP parser under the peer-credential protocol: auto (httptools when installed), h11
    or httptools."""
    extra: dict[str, str] = field(default_factory=dict)
    web: bool = False
    web_origin: str | None = None
    """Where a TLS proxy serves the desk (``--web-origin https://wiki.example.org``)."""


def parse_tcp(value: str) -> tuple[str, int]:
    """``127.0.0.1:8765`` or ``[::1]:8765`` → (host, port)."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--tcp {value!r}: use HOST:PORT, e.g. 127.0.0.1:8765.")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def socket_answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def prepare_socket_dir(directory: Path, shared: bool) -> None:
    """Create the socket's directory (0700, or 0711 when shared), or check an existing one: it
    must be yours and writable by nobody else (it is never chmod-ed behind your back)."""
    mode = 0o711 if shared else 0o700
    if not directory.exists():
        directory.mkdir(mode=mode, parents=True)
        os.chmod(directory, mode)
    info = directory.stat()
    have = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.geteuid():
        raise ConfigError(
            f"{directory} belongs to UID {info.st_uid}, not to you (UID {os.geteuid()}); choose "
            "another --socket directory."
        )
    if have & 0o022:
        raise ConfigError(
            f"{directory} is writable by others (mode {have:o}); anyone could replace the "
            f"socket. `chmod {mode:o} {directory}` or choose another --socket."
        )
    if shared and not have & 0o001:
        raise ConfigError(
            f"--shared: other users can't reach {directory} (mode {have:o}); "
            f"`chmod {mode:o} {directory}` or choose another --socket."
        )


def bind_unix(path: Path, shared: bool) -> socket.socket:
    prepare_socket_dir(path.parent, shared)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ConfigError(f"{path} exists and is not a socket; remove it or choose another.")
        if socket_answers(path):
            raise ConfigError(
                f"a daemon already listens on {path}. Stop it first, or pass another --socket."
            )
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o111 if shared else 0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o666 if shared else 0o600)
    return sock


def bind_tcp(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY only on such sockets, and without it a
    # response's header and body segments wait out the peer's delayed ACK (~40 ms a request)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"can't listen on {host}:{port}: {exc.strerror}.") from exc
    return sock


def _loop() -> str:
    """uvloop when installed (the [server] extra): its event loop costs a fraction of asyncio's
    per request."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


LOOP = _loop()


class _Stopped(Exception):
    """Raised by our own signal handler once uvicorn has shut down gracefully."""


class _Server(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        stopping: threading.Event,
        ready_fd: int | None = None,
        **ready: Any,
    ) -> None:
        super().__init__(config)
        self.stopping = stopping
        self.ready_fd = ready_fd
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.ready_fd is not None:  # a pre-forked worker: tell the parent
            mark_ready(self.ready_fd)
            self.ready_fd = None
            event("worker_ready", pid=os.getpid(), **self.ready)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stopping.set()  # end event streams and stop workers at their next checkpoint now
        super().handle_exit(sig, frame)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


def _announce_web(app: FastAPI, host: str, port: int, origin: str | None = None) -> None:
    """Tell the desk its address and print the owner's one-time login link (as Jupyter does):
    on the proxy's origin when the desk is served behind one (``--web-origin``)."""
    desk = app.state.web
    desk.base_url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    if origin is not None:
        desk.serve_at(origin)
        desk.base_url = desk.public_origin
    url = desk.login_url(os.geteuid())
    print(f"Web desk: open {url}  (works once, for 15 minutes)", file=sys.stderr, flush=True)


def check_web_origin(options: ServeOptions) -> None:
    """``--web-origin`` needs ``--web`` and an origin (refused by name before anything listens)."""
    if options.web_origin is None:
        return
    if not options.web:
        raise ConfigError("--web-origin is where a proxy serves the web desk: pass --web too.")
    from ..web.session import parse_origin

    parse_origin(options.web_origin)


def _check_remote(options: ServeOptions) -> None:
    if options.tcp is not None and not is_loopback(options.tcp[0]):
        if not options.allow_remote:
            raise ConfigError(
                f"--tcp {options.tcp[0]} is not a loopback address; anyone who can reach it could "
                "try tokens. Pass --allow-remote to mean it (and put TLS in front)."
            )
        event(
            "warning",
            message=f"listening on non-loopback {options.tcp[0]}: bearer tokens cross the network "
            "in clear text unless a TLS proxy terminates in front of the daemon",
        )
    if options.processes < 1:
        raise ConfigError(f"--workers {options.processes}: use 1 or more.")
    if options.processes > 1 and not SUPPORTED:
        raise ConfigError(
            f"--workers {options.processes}: this platform can't pre-fork worker processes "
            "(no sigwaitinfo); pass --workers 1."
        )
    check_web_origin(options)
    if options.web and options.processes > 1:
        raise ConfigError(
            "--web keeps its login sessions in the daemon's memory, which worker processes don't "
            "share: pass --workers 1 with --web."
        )


def _app(registry: Registry, options: ServeOptions, stopping: threading.Event, jobs: bool) -> Any:
    return create_app(
        registry,
        run_workers=jobs,
        stopping=stopping,
        shutdown_seconds=options.shutdown_seconds,
        threads=options.threads,
        web=options.web,
        web_hosts=frozenset({options.tcp[0]}) if options.tcp else frozenset(),
    )


def _config(app: Any, options: ServeOptions) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        http=peer_protocol(options.http),
        loop=LOOP,
        ws="none",
        lifespan="on",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=max(1, int(options.shutdown_seconds)),
    )


def _bind(options: ServeOptions, sockets: list[socket.socket]) -> tuple[int, str | None]:
    """Bind the Unix socket (and TCP), appending to ``sockets``: (the socket's inode, TCP address)."""
    sockets.append(bind_unix(options.socket_path, options.shared))
    inode = options.socket_path.stat().st_ino
    if options.tcp is None:
        return inode, None
    tcp_sock = bind_tcp(*options.tcp)
    sockets.append(tcp_sock)
    host, port = tcp_sock.getsockname()[:2]
    return inode, f"{host}:{port}"


def _listening(options: ServeOptions, tcp_address: str | None) -> None:
    event(
        "listening",
        socket=str(options.socket_path),
        tcp=tcp_address,
        shared=options.shared,
        pid=os.getpid(),
        http=peer_protocol(options.http).__name__,
        loop=LOOP,
        workers=options.processes,
    )


def _release(
    options: ServeOptions,
    sockets: list[socket.socket],
    unix_inode: int | None,
    previous: dict[signal.Signals, Any],
) -> None:
    """Close the sockets, remove the Unix socket this process bound (not one a later daemon
    bound at the same path), and give the signals their previous handlers back."""
    for sock in sockets:
        sock.close()
    try:
        if unix_inode is not None and options.socket_path.stat().st_ino == unix_inode:
            options.socket_path.unlink()
    except FileNotFoundError:
        pass
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def serve(options: ServeOptions) -> int:
    """Run the daemon until SIGTERM/SIGINT; returns the exit status."""
    setup_logging()
    _check_remote(options)
    pins = pin_vaults(options.vaults)  # each root opened once: workers inherit the descriptors
    registry = Registry.open(pins)  # migrations and recovery run here, once
    for served in registry.vaults.values():
        if served.read_only:  # W10: a vault of another user is only read by this daemon
            event(
                "read_only", vault=served.name, owner_uid=served.owner_uid, message=served.read_only
            )
    sockets: list[socket.socket] = []
    unix_inode: int | None = None
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if options.processes > 1:
            registry.close()  # each worker opens its own connections: none crosses a fork
            _preload()
            unix_inode, tcp_address = _bind(options, sockets)
            _listening(options, tcp_address)
            return Supervisor(
                options.processes,
                sockets,
                lambda slot, ready: _worker(options, pins, sockets, slot, ready),
                options.shutdown_seconds,
            ).run()
        stopping = threading.Event()
        # the app first (imports, the MCP servers): a bound socket refuses connections until
        # uvicorn listens, so nothing slow may run between binding and listening
        app = _app(registry, options, stopping, options.workers)
        unix_inode, tcp_address = _bind(options, sockets)
        if options.web and tcp_address is not None:
            host, port = sockets[-1].getsockname()[:2]
            _announce_web(app, host, port, options.web_origin)
        _listening(options, tcp_address)
        _Server(_config(app, options), stopping).run(sockets=sockets)
        return 0
    except _Stopped:
        return 0
    finally:
        _release(options, sockets, unix_inode, previous)
        registry.close()
        for pin in pins:
            pin.close()
        event("stopped", pid=os.getpid())


def _preload() -> None:
    """Import what every worker's app needs once, before the fork (the pages are shared)."""
    with contextlib.suppress(ImportError):
        from ..mcp import http  # noqa: F401


def _worker(
    options: ServeOptions, pins: list[Anchor], sockets: list[socket.socket], slot: int, ready: int
) -> int:
    """One pre-forked worker process: its own vault connections (on the parent's pinned roots),
    the whole app; slot 0 alone runs the job workers."""
    registry = Registry.open(pins)
    stopping = threading.Event()
    jobs = options.workers and slot == 0
    app = _app(registry, options, stopping, jobs)
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn raises the signal again once drained
        signal.signal(sig, _raise_stopped)
    with contextlib.suppress(_Stopped):
        _Server(_config(app, options), stopping, ready, slot=slot, jobs=jobs).run(sockets=sockets)
    return 0


__all__ = ["ServeOptions", "bind_tcp", "bind_unix", "is_loopback", "parse_tcp", "serve"]
