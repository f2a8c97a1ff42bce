"""Pure work done ahead in a worker process, on the machine's other core.

An ingest gates and applies one chunk at a time, in order: each chunk's plan depends on the pages
the chunks before it left. Part of the work for a chunk depends on nothing of the wiki (the
extractive engine's reading of the chunk: sentences, units, topic candidates), so a worker process
computes it for the next chunks while this process admits and applies the current one.

The worker only computes a named pure function of values this process sends it; whatever it
returns is exactly what the same call here would return (same code: the worker checks it imported
the package from the same place). It never touches the vault. When it is not available — it could
not start, it died, or its call raised — :meth:`Ahead.take` says so and the caller computes the
value itself, so the worker changes how fast an ingest runs, never what it does.

The protocol is pickle frames over the worker's stdin and stdout (two anonymous pipes between
processes of this program: nothing else can write to them), each preceded by its length and a
BLAKE2b digest of its bytes: a frame that arrives short, long or changed (seen when a profiler's
ptrace stops the worker mid-write) is never unpickled; the reader stops there, and the caller
computes the values itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import IO, Any

PACKAGE = Path(__file__).resolve().parents[1]
"""This package's folder: the worker must import the same code."""
DEPTH = 6
"""Items sent to the worker before their results are taken: enough to keep it busy, few enough
that a stopped ingest has not computed much it won't use."""
STOP_SECONDS = 5.0
_HEADER = struct.Struct(">Q16s")  # a frame's length and the BLAKE2b-128 digest of its bytes
MAX_FRAME = 1 << 31


class FrameError(ValueError):
    """A frame that is not what its sender wrote (short, too long, or its digest differs)."""


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def send(stream: IO[bytes], value: Any) -> None:
    """Write ``value`` as one checked frame and flush."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data), _digest(data)))
    stream.write(data)
    stream.flush()


def _exactly(stream: IO[bytes], size: int) -> bytes:
    parts = []
    while size:
        part = stream.read(size)
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def receive(stream: IO[bytes]) -> Any:
    """The value of the next frame: :class:`EOFError` at a clean end of the stream,
    :class:`FrameError` when the frame is not what was sent (then the stream is out of step)."""
    header = _exactly(stream, _HEADER.size)
    if not header:
        raise EOFError
    if len(header) != _HEADER.size:
        raise FrameError("the stream ended inside a frame's header")
    size, digest = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise FrameError(f"a frame of {size} bytes")
    data = _exactly(stream, size)
    if len(data) != size or _digest(data) != digest:
        raise FrameError("a frame's bytes differ from what was sent")
    return pickle.loads(data)


def resolve(name: str) -> Callable[[Any], Any]:
    """The function ``module:qualname`` names, only inside this package."""
    module, _, attr = name.partition(":")
    if not module.startswith("affidavit.") or not attr or "." in attr:
        raise ValueError(f"not a function of this package: {name!r}")
    function = getattr(importlib.import_module(module), attr)
    if not callable(function):
        raise ValueError(f"not callable: {name!r}")
    return function  # type: ignore[no-any-return]


class Ahead:
    """``function`` (``"affidavit.module:name"``, pure, its argument and result picklable)
    computed in a worker process for the items given to :meth:`extend` (``(key, argument)``
    pairs, in the order they will be taken), at most ``depth`` items ahead of :meth:`take`."""

    def __init__(self, function: str, depth: int = DEPTH) -> None:
        self.function = function
        self._pending: deque[tuple[Hashable, Any]] = deque()
        self._sent: deque[Hashable] = deque()  # keys whose results are on their way, in order
        self._window = threading.Semaphore(depth)
        self._more = threading.Condition()  # guards the deques and the flags below
        self._ended = False  # no more items will be given
        self._dead = False  # nothing more comes from the worker
        self.computed = 0  # results taken from the worker
        self.stopped: str | None = None  # why the worker stopped helping before it was closed
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, function, str(PACKAGE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a failure only means the caller computes it
                env={**os.environ, "PYTHONPATH": _pythonpath()},
                close_fds=True,
            )
        except OSError as exc:
            self._dead = True
            self.stopped = f"the worker could not start: {exc}"
            return
        threading.Thread(target=self._feed, name="ahead-feeder", daemon=True).start()

    def extend(self, items: Iterable[tuple[Hashable, Any]]) -> None:
        """More items, taken after those given before."""
        with self._more:
            if not self._dead and not self._ended:
                self._pending.extend(items)
                self._more.notify()

    def _feed(self) -> None:
        """Send items while the window allows (a thread: writing never blocks the ingest)."""
        process = self._process
        assert process is not None and process.stdin is not None
        while True:
            self._window.acquire()
            with self._more:
                while not self._pending and not (self._ended or self._dead):
                    self._more.wait()
                if self._dead or not self._pending:
                    break
                key, argument = self._pending.popleft()
                self._sent.append(key)
            try:
                send(process.stdin, (key, argument))
            except (OSError, ValueError, pickle.PicklingError) as exc:
                self._stop(f"an item could not be sent to the worker: {exc}")
                break
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()  # end of input: the worker exits once it has answered

    def take(self, key: Hashable) -> tuple[bool, Any]:
        """``(True, result)`` of ``key`` from the worker, or ``(False, None)`` when it has none
        (the caller computes it). Results of keys given before ``key`` and never taken are
        dropped; a key never given stops nothing."""
        with self._more:
            if self._dead:
                return False, None
            if key not in self._sent:
                if not any(k == key for k, _ in self._pending):
                    return False, None
                while self._pending[0][0] != key:  # skipped by the caller: never send them
                    self._pending.popleft()
        process = self._process
        assert process is not None and process.stdout is not None
        while True:
            try:
                got, ok, value = receive(process.stdout)
            except EOFError:
                status = process.poll()
                self._stop("the worker ended" + ("" if status is None else f" (exit {status})"))
                return False, None
            except (OSError, pickle.UnpicklingError, ValueError, TypeError) as exc:
                self._stop(f"an answer from the worker was refused: {exc}")
                return False, None
            with self._more:
                expected = self._sent.popleft() if self._sent else None
            self._window.release()
            if got != expected:  # out of step: never trust it again
                self._stop("the worker answered out of order")
                return False, None
            if got == key:
                if ok:
                    self.computed += 1
                return (True, value) if ok else (False, None)

    def _stop(self, why: str) -> None:
        """Take nothing more from the worker, and remember why (the first reason only)."""
        with self._more:
            if not self._dead:
                self.stopped = why
            self._dead = True

    def close(self) -> None:
        """Stop the worker (it may still be computing items nobody will take)."""
        with self._more:
            self._dead = self._ended = True
            self._pending.clear()
            self._more.notify()
        self._window.release()  # wake the feeder so it sees the end
        process = self._process
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if process.stdin is not None:
                process.stdin.close()
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(STOP_SECONDS)
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pythonpath() -> str:
    """The folder this package was imported from first, then the caller's own path."""
    parts = [str(PACKAGE.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return os.pathsep.join(dict.fromkeys(parts))


def serve(function: Callable[[Any], Any], source: IO[bytes], sink: IO[bytes]) -> None:
    """The worker's loop: answer each ``(key, argument)`` with ``(key, ok, result or error)``;
    it stops at the end of its input or at a frame that is not what was sent."""
    while True:
        try:
            key, argument = receive(source)
        except (EOFError, FrameError):
            return
        try:
            frame = (key, True, function(argument))
        except Exception as exc:  # the caller computes it again and sees the error itself
            frame = (key, False, f"{type(exc).__name__}: {exc}")
        send(sink, frame)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or Path(argv[1]).resolve() != PACKAGE:
        return 2  # not the same code as the caller: it falls back to working in-process
    serve(resolve(argv[0]), sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
