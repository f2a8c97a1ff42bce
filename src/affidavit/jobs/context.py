"""What a job handler is given: the vault, the job, progress reporting and checkpoints."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..clock import iso, utc_now
from ..store.apply import Step
from ..vault import Vault
from .lease import report_progress
from .models import Job

EXIT_FINISHED = 0
"""Exit status of a job process that recorded the job's outcome (done or failed)."""
EXIT_STOPPED = 75
"""Exit status of a job process stopped at a checkpoint, or unable to start: resumable."""


class JobInterrupted(Exception):
    """Raised at a checkpoint when the job's process was asked to stop (SIGTERM): the job is
    left as its last checkpoint wrote it, to be resumed or cancelled by its worker."""


@dataclass
class JobContext:
    """Handed to a handler in the job's own process.

    ``checkpoint()`` raises :class:`JobInterrupted` once the worker asked the job to stop; call it
    between steps whose effects are durable. ``progress()`` records how far the job is (and is
    a checkpoint too). ``step`` is passed on to the apply (tests use it to inject crashes).
    """

    vault: Vault
    job: Job
    stop: threading.Event = field(default_factory=threading.Event)
    step: Step | None = None

    @property
    def actor(self) -> str:
        """Who asked for the job: the name every approval and audit entry carries."""
        return self.job.requested_by or "jobs"

    def checkpoint(self) -> None:
        if self.stop.is_set():
            raise JobInterrupted(f"job {self.job.id} was asked to stop")

    def progress(self, done: int, total: int, message: str = "") -> None:
        report_progress(self.vault.db, self.job.id, done, total, message, iso(utc_now()))
        self.checkpoint()
