"""A test hook: hold a job's process at an apply step, so a test can kill its daemon right there.

A crash test through the real daemon (``tests/test_server_crash.py``) must kill ``affidavit
serve`` after a job applied its first batch and before the job ends — every time, whatever the
machine's speed. Waiting for a database row and then sending the kill is a race: on a quiet
machine the job can finish first. With this hook the job's process itself stops at the named
point and says so; the test waits for that and kills the daemon while the job is held there.

**Inert unless both variables are set in the job process's environment** (which it inherits from
its worker, which inherits it from whoever started ``affidavit serve`` or ``affidavit jobs
work``). Nothing a vault holds — its config, a job's payload, a request, a source — can set an
environment variable: only the owner of the daemon's process can, who could stop it anyway.

``AFFIDAVIT_TEST_HOLD_AT=STEP:N``
    the ``N``-th time this process's applies reach ``STEP`` (one of
    :data:`~affidavit.store.apply.APPLY_STEPS`; ``done`` is the end of a batch's commit);
``AFFIDAVIT_TEST_HOLD_FILE=PATH``
    an absolute path: at that point the process writes its pid there (whole: written beside it
    and renamed), then waits until it is asked to stop (SIGTERM, after which the job stops at its
    next checkpoint) or killed — its worker dying kills it, as always (its stdin closes).

A malformed value fails the job's process at start with a message naming the variable, so a test
never runs unheld by mistake.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from ..store.apply import APPLY_STEPS, Step

HOLD_AT_ENV = "AFFIDAVIT_TEST_HOLD_AT"
HOLD_FILE_ENV = "AFFIDAVIT_TEST_HOLD_FILE"


def hold_from_env(environ: Mapping[str, str], stop: threading.Event) -> Step | None:
    """The step hook the two variables ask for, or None when neither is set (production)."""
    at, file = environ.get(HOLD_AT_ENV, ""), environ.get(HOLD_FILE_ENV, "")
    if not at and not file:
        return None
    name, _, nth = at.partition(":")
    if name not in APPLY_STEPS or not nth.isdigit() or int(nth) < 1:
        raise ConfigError(
            f"{HOLD_AT_ENV}={at!r}: give STEP:N, STEP one of {', '.join(APPLY_STEPS)} and N "
            f"from 1 (a test hook; unset it and {HOLD_FILE_ENV} to run jobs normally)."
        )
    path = Path(file)
    if not path.is_absolute():
        raise ConfigError(f"{HOLD_FILE_ENV}={file!r}: give an absolute path (a test hook).")
    target, seen = (name, int(nth)), {name: 0}

    def step(reached: str) -> None:
        if reached != name:
            return
        seen[name] += 1
        if (name, seen[name]) == target:
            _announce(path)
            while not stop.wait(1.0):  # until SIGTERM (the stop request) or a kill
                pass

    return step


def _announce(path: Path) -> None:
    """Write this process's pid to ``path`` whole: a reader sees no file or the full pid."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(partial, flags, 0o600)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)
    os.replace(partial, path)


def chain(*steps: Step | None) -> Step | None:
    """One step hook calling each given one in turn (None when none is given)."""
    given = [s for s in steps if s is not None]
    if len(given) <= 1:
        return given[0] if given else None

    def step(name: str) -> None:
        for each in given:
            each(name)

    return step
