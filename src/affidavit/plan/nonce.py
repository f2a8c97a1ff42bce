"""Nonces (W2): issued by the host, echoed by the proposer, consumed once by the plan that uses them."""

from __future__ import annotations

import secrets
import sqlite3
from datetime import timedelta

from ..clock import Clock, iso, parse_iso
from ..db import transaction
from ..errors import PlanValidationError

ANSWER_NONCE = "ask"
"""The purpose of an answer's nonce (:mod:`affidavit.ask.log`): shown to the model that answers,
never to the caller, and never taken for a plan's."""


def issue_nonce(
    db: sqlite3.Connection, clock: Clock, purpose: str, ttl: timedelta = timedelta(hours=24)
) -> str:
    """A fresh random nonce recorded in the database, valid for ``ttl`` and for one plan."""
    nonce = secrets.token_urlsafe(18)
    now = clock()
    with transaction(db):
        db.execute(
            "INSERT INTO nonces (nonce, purpose, issued_at, expires_at) VALUES (?, ?, ?, ?)",
            (nonce, purpose, iso(now), iso(now + ttl)),
        )
    return nonce


def check_nonce(db: sqlite3.Connection, clock: Clock, nonce: str, plan_id: str) -> None:
    """Raise :class:`PlanValidationError` unless ``nonce`` was issued, is unexpired and unused.

    A nonce already consumed by the same plan is accepted (re-validation at approval).
    """
    row = db.execute(
        "SELECT purpose, expires_at, used_by FROM nonces WHERE nonce = ?", (nonce,)
    ).fetchone()
    if row is None or row["purpose"] == ANSWER_NONCE:  # an answer's fenced claims for a model
        raise PlanValidationError(
            "plan rejected: its nonce was never issued by this vault. Ask for a fresh one with "
            '`affidavit nonce` and put it in the plan\'s "nonce" field.'
        )
    if row["used_by"] is not None and row["used_by"] != plan_id:
        raise PlanValidationError(
            "plan rejected: its nonce was already used by another plan. Each plan needs a fresh "
            "nonce from `affidavit nonce`."
        )
    if row["used_by"] is None and parse_iso(row["expires_at"]) < clock():
        raise PlanValidationError(
            "plan rejected: its nonce expired. Get a fresh one with `affidavit nonce`."
        )


def consume_nonce(db: sqlite3.Connection, nonce: str, plan_id: str) -> None:
    """Mark ``nonce`` as used by ``plan_id`` (inside the caller's transaction)."""
    db.execute(
        "UPDATE nonces SET used_by = ? WHERE nonce = ? AND used_by IS NULL", (plan_id, nonce)
    )
