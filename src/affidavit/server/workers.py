"""One job worker thread per served vault, and one following its registered watches
(:mod:`affidavit.watch.feeder`), stopped gracefully on shutdown.

The queue's lease (in the database) runs one job per vault at a time even across several
daemons; here each served vault simply gets one :class:`~affidavit.jobs.worker.Worker` looping in
a thread until the daemon's stop event is set. The worker honours the event between jobs and
asks a running job to stop at its next checkpoint; a job that is stopped is requeued and resumed
by the next worker, and re-applying its plans is a no-op (the door's journal).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .logs import event, log
from .registry import Registry


class WorkerThreads:
    def __init__(
        self, registry: Registry, stop: threading.Event, poll_seconds: float = 0.5
    ) -> None:
        self.registry = registry
        self.stop = stop
        self.poll_seconds = poll_seconds
        self.threads: list[threading.Thread] = []

    def start(self) -> bool:
        """Start the workers; False (and a log line) when the jobs package has no Worker."""
        try:
            from ..jobs.worker import Worker
        except ImportError as exc:
            event("workers_unavailable", message=f"job workers not started: {exc}")
            return False
        for served in self.registry.vaults.values():
            if served.read_only:  # jobs write: they run in the owner's processes, not as us
                continue
            worker: Any = Worker(served.root, f"serve-{os.getpid()}-{served.name}")
            wake = threading.Event()  # the watches' feeder queued a job: claim it now
            thread = threading.Thread(
                target=self._run,
                args=(worker, served.name, wake),
                name=f"worker-{served.name}",
                daemon=True,
            )
            thread.start()
            self.threads.append(thread)
            self._feed(served.root, served.name, wake)
        event("workers_started", vaults=sorted(self.registry.vaults))
        return True

    def _feed(self, root: Path, name: str, wake: threading.Event) -> None:
        """The vault's continuous watches (``affidavit watch add``): a thread that queues a
        watch job for each burst of changes in its registered folders."""
        from ..watch.feeder import Feeder

        feeder = Feeder(root, self.stop, event, queued=wake.set)
        thread = threading.Thread(
            target=self._follow, args=(feeder, name), name=f"watch-{name}", daemon=True
        )
        thread.start()
        self.threads.append(thread)

    def _follow(self, feeder: Any, name: str) -> None:
        try:
            feeder.run()
        except Exception:  # a broken feeder must not take the daemon down silently
            log.exception("the watches of vault %s stopped with an error", name)

    def _run(self, worker: Any, name: str, wake: threading.Event) -> None:
        try:
            worker.run_forever(self.stop, poll_seconds=self.poll_seconds, wake=wake)
        except Exception:  # a broken worker must not take the daemon down silently
            log.exception("job worker of vault %s stopped with an error", name)

    def join(self, timeout: float) -> list[str]:
        """Stop and wait for the workers; returns the names of those still running."""
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout)
        left = [t.name for t in self.threads if t.is_alive()]
        event("workers_stopped", still_running=left)
        return left


__all__ = ["WorkerThreads"]
