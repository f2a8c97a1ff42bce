"""A warm parent for a worker's job processes: imports done once, each job's process forked.

Starting a job's process costs seconds of imports on a busy machine (``python -m
affidavit.jobs.runner``). A worker therefore starts one **fork server** —
``python -m affidavit.jobs.runner --fork-server FD``, its own session — which imports everything a
job needs, then waits on a Unix socket. For each job process the worker wants, it sends ``fork``
with two file descriptors (the read end of the new process's stdin and the write end of its
ready pipe); the server forks a child that makes itself a new session (its own process group,
as a process the worker started with ``start_new_session`` was), takes those descriptors, and
then behaves as ``runner --standby`` does after its imports: it waits for its job on stdin, kills
its group when stdin closes, and runs the job. The server answers ``pid N`` once the child is
its own group.

The server never runs a job and opens no vault: it holds what a fresh standby holds, however
many jobs it forked. Each job still runs in a process of its own that no other job ran in.

The server reports ``exit N STATUS`` when a child ends, but leaves it a zombie (``waitid`` with
``WNOWAIT``) until the worker says ``reap N``: until then its pid — which is also its process
group's id — can't be given to another process, so the worker's SIGKILL to the group after the
job reaches only what the job started, as with a child of its own. When the worker goes away
(the socket closes), the server exits; the job processes' own stdin watchdogs end them.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import BinaryIO

EXIT_UNKNOWN = 255
"""The exit status reported for a job process whose fork server died before it: the status is
lost with the server (the process is gone; the worker settles the job from the database)."""

_FORK = b"fork\n"


class ForkServer:
    """The worker's end of a fork server started with ``command`` (the runner's command)."""

    def __init__(self, command: Sequence[str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [*command, "--fork-server", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # a signal meant for the worker's group never hits it
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self._buffer = b""
        self._exits: dict[int, int] = {}
        self._forked: list[int] = []
        self._closed = False  # the server's end closed: it exited
        self._unanswered = False  # a fork was given up before its pid came: pids would mismatch

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the server can still fork (it has not exited or closed its socket)."""
        self.pump(0)
        return not (self._closed or self._unanswered) and self.proc.poll() is None

    def fork(self, stop: threading.Event | None = None) -> JobProcess:
        """A new standby job process; waits for the server's imports on its first use. Raises
        :class:`OSError` when the server exited, or when ``stop`` is set while waiting (the
        server is then no longer :meth:`alive`: the next pid it sent would be that request's)."""
        stdin_r, stdin_w = os.pipe()
        ready_r, ready_w = os.pipe()
        try:
            socket.send_fds(self.sock, [_FORK], [stdin_r, ready_w])
            self._unanswered = True
            pid = self._reply(stop)
            self._unanswered = False
        except BaseException:
            os.close(stdin_w)
            os.close(ready_r)
            raise
        finally:
            os.close(stdin_r)
            os.close(ready_w)
        os.set_blocking(ready_r, False)
        return JobProcess(self, pid, os.fdopen(stdin_w, "wb"), ready_r)

    def _reply(self, stop: threading.Event | None) -> int:
        while not self._forked:
            if self._closed:
                raise OSError(f"the fork server exited (status {self.proc.poll()})")
            if stop is not None and stop.is_set():
                raise OSError("the worker is stopping")
            self.pump(0.05)
        return self._forked.pop(0)

    def pump(self, timeout: float) -> None:
        """Read what the server said, waiting at most ``timeout`` seconds for it."""
        if self._closed:
            return
        readable, _, _ = select.select([self.sock], [], [], timeout)
        if not readable:
            return
        try:
            data = self.sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._closed = True
            return
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            word, *numbers = line.decode().split()
            if word == "pid":
                self._forked.append(int(numbers[0]))
            elif word == "exit":
                self._exits[int(numbers[0])] = int(numbers[1])

    def exit_status(self, pid: int) -> int | None:
        return self._exits.get(pid)

    def closed(self) -> bool:
        return self._closed

    def release(self, pid: int) -> None:
        """Let the server reap ``pid`` (its exit was reported): its pid may be reused now."""
        self._exits.pop(pid, None)
        if self._closed:
            return
        try:
            self.sock.sendall(f"reap {pid}\n".encode())
        except OSError:
            self._closed = True

    def close(self) -> None:
        """End the server (its standby children are the worker's to reap first)."""
        self.sock.close()
        self._closed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class JobProcess:
    """A job process forked by a :class:`ForkServer`, used as a worker used its ``Popen``:
    ``pid`` (its process group too), ``stdin``, ``wait``, and ``ready`` (the read end of its
    ready pipe)."""

    def __init__(self, server: ForkServer, pid: int, stdin: BinaryIO, ready: int) -> None:
        self.server = server
        self.pid = pid
        self.stdin: BinaryIO | None = stdin
        self.ready: int | None = ready
        self.returncode: int | None = None
        self._pidfd: int | None = None
        # to see it end even if the server dies first (it is the server's child, not ours);
        # without pidfds (not Linux) its pid is looked at instead
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(pid)

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status (negative: the signal), as ``Popen.wait``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            status = self.server.exit_status(self.pid)
            if status is not None:
                self.returncode = status
                break
            if self.server.closed() and self._ended():
                self.returncode = EXIT_UNKNOWN
                break
            left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if left < 0:
                raise subprocess.TimeoutExpired(f"job process {self.pid}", timeout or 0)
            if self.server.closed():
                time.sleep(left)
            else:
                self.server.pump(left)
        return self.returncode

    def _ended(self) -> bool:
        if self._pidfd is None:
            try:
                os.kill(self.pid, 0)  # orphaned by its server, it is reaped by init when it ends
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return bool(readable)

    def close(self) -> None:
        """After :meth:`wait`: close its descriptors and let the server reap it."""
        for fd in (self.ready, self._pidfd):
            if fd is not None:
                os.close(fd)
        self.ready = self._pidfd = None
        if self.stdin is not None:
            with contextlib.suppress(OSError):  # a buffered line its dead reader never took
                self.stdin.close()
            self.stdin = None
        self.server.release(self.pid)


# -- the server's side ---------------------------------------------------------------------------
def serve(fd: int, child: Callable[[int], int]) -> int:
    """Serve fork requests on the socket ``fd`` until it closes. Each child runs
    ``child(ready_fd)`` with its stdin in place, then exits with what it returns."""
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a Python handler: the wakeup fd is written
    signal.set_wakeup_fd(wake_w)
    children: set[int] = set()
    reported: set[int] = set()
    buffer = b""
    pending: list[int] = []
    try:
        while True:
            readable, _, _ = select.select([sock.fileno(), wake_r], [], [])
            if wake_r in readable:
                while _drain(wake_r):
                    pass
            if sock.fileno() in readable:
                data, fds, _, _ = socket.recv_fds(sock, 4096, 8)
                pending += fds
                if not data:
                    return 0
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line + b"\n" == _FORK and len(pending) >= 2:
                        stdin_r, ready_w = pending.pop(0), pending.pop(0)
                        pid = _fork(
                            child, stdin_r, ready_w, [sock.fileno(), wake_r, wake_w, *pending]
                        )
                        children.add(pid)
                        sock.sendall(f"pid {pid}\n".encode())
                    elif line.startswith(b"reap ") and int(line[5:]) in children:
                        pid = int(line[5:])
                        os.waitpid(pid, 0)
                        children.discard(pid)
                        reported.discard(pid)
            for pid in sorted(children - reported):
                ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if ended is not None and ended.si_pid == pid:
                    reported.add(pid)
                    sock.sendall(f"exit {pid} {_status(ended)}\n".encode())
    except OSError:  # the worker went away mid-message
        return 0
    finally:
        sock.close()


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


def _status(ended: os.waitid_result) -> int:
    if ended.si_code == os.CLD_EXITED:
        return int(ended.si_status)
    return -int(ended.si_status)


def _fork(child: Callable[[int], int], stdin_r: int, ready_w: int, close: list[int]) -> int:
    """Fork one job process; returns its pid once it is the leader of its own session."""
    sync_r, sync_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the job's process
        code = 70
        try:
            os.setsid()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (*close, sync_r):
                os.close(fd)
            os.dup2(stdin_r, 0)
            os.close(stdin_r)
            os.write(sync_w, b"1")
            os.close(sync_w)
            code = child(ready_w)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            os._exit(code)
    os.close(stdin_r)
    os.close(ready_w)
    os.close(sync_w)
    os.read(sync_r, 1)  # its own session now (or it died trying: then its exit is reported)
    os.close(sync_r)
    return pid


__all__ = ["EXIT_UNKNOWN", "ForkServer", "JobProcess", "serve"]
