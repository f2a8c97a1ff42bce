"""What an answer writes, and, in the daemon, writing it in batches.

Each answer records its nonce (``nonces``, purpose ``ask``) and the question (``questions``).
The CLI writes both at once, in one transaction. The daemon answers many questions a second; a
write transaction (with its WAL fsync) per answer was most of an answer's cost there, so it
keeps them in an :class:`AskLog` and writes them together: when ``server.ask_log_batch``
(default :data:`BATCH`) answers wait, when the oldest has waited :data:`DELAY` seconds (a timer),
and when the daemon stops.

The nonce's guarantee (W2) does not rest on its row: the answer's reply is checked against the
nonce held in memory, and an ``ask`` nonce is never handed to the caller. A row not yet written
(or lost with a crashed daemon) only makes that nonce unknown to the vault, so a plan that
presented it would be refused as never issued; what a crash can lose is at most the last
:data:`BATCH` questions' log rows, never a check.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from ..clock import Clock, iso
from ..db import transaction
from ..vault import Vault

BATCH = 32
"""Answers whose rows are written together, at most."""
DELAY = 1.0
"""Seconds an answer's rows wait, at most, while the daemon runs."""
NONCE_TTL = timedelta(hours=24)

NONCE_SQL = "INSERT INTO nonces (nonce, purpose, issued_at, expires_at) VALUES (?, ?, ?, ?)"
QUESTION_SQL = (
    "INSERT INTO questions (at, question, min_trust, provider, retrieved, answer, verdict, "
    "dropped, prompt_tokens, conversation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class Issued:
    """A nonce for one answer, and its row (written with the answer's question)."""

    value: str
    row: tuple[str, str, str, str]


class _Clocked(Protocol):
    @property
    def clock(self) -> Clock: ...


def new_nonce(vault: _Clocked, purpose: str = "ask") -> Issued:
    """A fresh random nonce (the same draw as :func:`~affidavit.plan.nonce.issue_nonce`), not
    yet recorded; ``vault`` (a vault, or any wiki the answerer reads) gives the time."""
    value = secrets.token_urlsafe(18)
    now = vault.clock()
    return Issued(value, (value, purpose, iso(now), iso(now + NONCE_TTL)))


def write(vault: Vault, nonces: list[tuple[Any, ...]], questions: list[tuple[Any, ...]]) -> None:
    """The rows, in one transaction."""
    if not nonces and not questions:
        return
    with transaction(vault.db):
        vault.db.executemany(NONCE_SQL, nonces)
        vault.db.executemany(QUESTION_SQL, questions)


class AskLog:
    """The rows of the daemon's answers to one vault, written in batches (see the module).

    ``borrow`` lends a connection of the vault's for the timer's writes (the daemon's pool);
    an answer's own thread writes with the connection it holds."""

    def __init__(
        self, borrow: Callable[[], AbstractContextManager[Vault]], batch: int | None = None
    ) -> None:
        self._borrow = borrow
        self.batch = batch
        self._lock = threading.Lock()
        self._nonces: list[tuple[Any, ...]] = []
        self._questions: list[tuple[Any, ...]] = []
        self._since = 0.0
        self._timer: threading.Timer | None = None
        self.writes = 0  # transactions written: the tests count them
        self.closed = False

    def add(self, vault: Vault, nonce: Issued, question: tuple[Any, ...]) -> None:
        """Keep one answer's rows; write the batch with ``vault`` (the caller's connection)
        when it is full or has waited long enough."""
        with self._lock:
            self._nonces.append(nonce.row)
            self._questions.append(question)
            if len(self._questions) == 1:
                self._since = time.monotonic()
                if not self.closed:
                    self._timer = threading.Timer(DELAY, self._on_timer)
                    self._timer.daemon = True
                    self._timer.start()
            size = BATCH if self.batch is None else self.batch
            due = len(self._questions) >= size or time.monotonic() - self._since >= DELAY
        if due or self.closed:
            self.flush(vault)

    def _take(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        with self._lock:
            nonces, questions = self._nonces, self._questions
            self._nonces, self._questions = [], []
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return nonces, questions

    def flush(self, vault: Vault) -> None:
        """Write what waits, now, with ``vault``'s connection (put back if the write fails)."""
        nonces, questions = self._take()
        if not questions and not nonces:
            return
        try:
            write(vault, nonces, questions)
        except BaseException:
            with self._lock:  # kept for the next write, in their order
                self._nonces[:0], self._questions[:0] = nonces, questions
            raise
        self.writes += 1

    def _on_timer(self) -> None:
        try:
            with self._borrow() as vault:
                self.flush(vault)
        except Exception:  # a busy vault: the next answer, or the close, writes them
            logging.getLogger("affidavit").warning(
                "the answers' log rows could not be written yet", exc_info=True
            )

    def close(self, vault_of: Callable[[], AbstractContextManager[Vault]] | None = None) -> None:
        """Write what waits (the daemon stops); later answers are written at once."""
        self.closed = True
        with (vault_of or self._borrow)() as vault:
            self.flush(vault)

    def pending(self) -> int:
        with self._lock:
            return len(self._questions)
