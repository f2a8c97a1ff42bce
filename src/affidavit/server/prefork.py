"""Several worker processes on one listening socket (``serve --workers N``), pre-forked.

The parent binds the sockets, listens (connections wait in the kernel's backlog until a worker
accepts them), then forks N workers; each inherits the listening descriptors and accepts on its
own. A connection is accepted by exactly one worker, and that worker reads the peer's
credentials from it (``SO_PEERCRED``, :mod:`.peer`): authentication and authorisation stay per
connection, as in one process. Each worker opens its own connections to the vaults after the fork
(no SQLite handle crosses a fork) and runs the whole application.

Jobs stay single: only worker slot 0 runs the job worker threads (and its replacement, if it is
replaced), and the queue's database lease keeps each job to one runner even across daemons.

The parent only supervises; it never answers a request. It waits for signals with
``sigwaitinfo`` (SIGTERM, SIGINT, SIGCHLD blocked, so none is lost between two checks):

- SIGTERM or SIGINT: every worker gets SIGTERM and drains as one daemon does (running requests
  finish, event streams end, the job stops at its next checkpoint); the parent waits for all of
  them (``--shutdown-timeout`` and a little more, then SIGKILL), removes the socket, exits 0.
- a worker that dies after it was ready (it accepted connections) is replaced in its slot;
- a worker that dies before it was ready (it could not open a vault or build the app) ends the
  daemon: the others are stopped and ``serve`` exits 1 — a broken start is not retried forever.

Each worker holds the read end of a pipe whose write end only the parent holds: when the parent
dies, even by SIGKILL, the pipe reads end-of-file and the worker kills itself at once, as the
single-process daemon would have died with it (its job process notices and stops; the job is
resumed exactly once by the next daemon).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .logs import event, log

_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD}
BACKLOG = 2048
"""Connections the kernel queues before a worker accepts them."""
_EXTRA_SHUTDOWN_SECONDS = 10.0
"""How much longer than ``--shutdown-timeout`` the parent waits for a draining worker."""


SUPPORTED = hasattr(signal, "sigwaitinfo") and hasattr(os, "fork")
"""Whether this platform can pre-fork (Linux and most Unixes; not macOS: no ``sigwaitinfo``)."""


def default_workers() -> int:
    """``min(cores, 4)``: past the cores more processes only take turns (1 where pre-forking is
    not supported)."""
    if not SUPPORTED:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, 4))


@dataclass
class _Child:
    slot: int
    ready_fd: int


@dataclass
class Supervisor:
    """Fork ``count`` workers running ``child(slot, ready_fd)``; supervise them until a signal."""

    count: int
    sockets: list[socket.socket]
    child: Callable[[int, int], int]
    shutdown_seconds: float
    children: dict[int, _Child] = field(default_factory=dict)
    _lifeline: tuple[int, int] = (-1, -1)
    _mask: set[int | signal.Signals] = field(default_factory=set)

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT (0) or a worker that failed to start (1)."""
        for sock in self.sockets:
            sock.listen(BACKLOG)
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        self._lifeline = os.pipe()
        status = 0
        try:
            for slot in range(self.count):
                self._spawn(slot)
            while True:
                info = signal.sigwaitinfo(_SIGNALS)
                if info.si_signo != signal.SIGCHLD:
                    event("stopping", signal=signal.Signals(info.si_signo).name)
                    break
                if not self._reap_and_replace():
                    status = 1
                    break
            self._stop_all()
        finally:
            for fd in self._lifeline:
                os.close(fd)
            for child in self.children.values():
                os.close(child.ready_fd)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        return status

    def _spawn(self, slot: int) -> None:
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the parent's code
            code = 1
            try:
                os.close(ready_r)
                os.close(self._lifeline[1])
                for other in self.children.values():
                    os.close(other.ready_fd)
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
                    signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
                _die_with_parent(self._lifeline[0])
                code = self.child(slot, ready_w)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                log.exception("worker %d failed", slot)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(ready_w)
        self.children[pid] = _Child(slot, ready_r)
        event("worker_started", slot=slot, pid=pid)

    def _reap(self) -> list[tuple[int, _Child, int, bool]]:
        """The workers that exited: (pid, child, exit status, whether it had been ready)."""
        out = []
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            child = self.children.pop(pid, None)
            if child is None:
                continue
            os.set_blocking(child.ready_fd, False)
            try:
                ready = os.read(child.ready_fd, 1) == b"1"
            except BlockingIOError:  # pragma: no cover - the writer is gone: never blocks
                ready = False
            os.close(child.ready_fd)
            out.append((pid, child, os.waitstatus_to_exitcode(status), ready))
        return out

    def _reap_and_replace(self) -> bool:
        for pid, child, code, ready in self._reap():
            if not ready:
                event("worker_failed", slot=child.slot, pid=pid, exit=code)
                return False
            event("worker_exited", slot=child.slot, pid=pid, exit=code, replaced=True)
            self._spawn(child.slot)
        return True

    def _stop_all(self) -> None:
        for pid in self.children:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.shutdown_seconds + _EXTRA_SHUTDOWN_SECONDS
        killed = False
        while self.children:
            for pid, child, code, _ in self._reap():
                event("worker_exited", slot=child.slot, pid=pid, exit=code, replaced=False)
            if not self.children:
                break
            left = deadline - time.monotonic()
            if left > 0 and signal.sigtimedwait({signal.SIGCHLD}, left) is not None:
                continue
            if killed:  # pragma: no cover - SIGKILL is not refused; reaped on the next pass
                signal.sigtimedwait({signal.SIGCHLD}, 1.0)
                continue
            event("worker_killed", pids=sorted(self.children))  # still draining past the wait
            for pid in self.children:
                _signal(pid, signal.SIGKILL)
            killed = True


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _die_with_parent(fd: int) -> None:
    """Kill this worker the moment the parent is gone (the lifeline pipe reads end-of-file)."""

    def watch() -> None:
        try:
            os.read(fd, 1)
        finally:
            os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def mark_ready(fd: int) -> None:
    """Tell the parent this worker is up (it accepts connections)."""
    os.write(fd, b"1")
    os.close(fd)


__all__ = ["BACKLOG", "SUPPORTED", "Supervisor", "default_workers", "mark_ready"]
