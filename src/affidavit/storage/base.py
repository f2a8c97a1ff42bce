"""What the door and the batch journal need from a database, as one contract for two backends.

A :class:`Storage` holds vaults (SQLite: the one vault of its file; PostgreSQL: several, a schema
each). Its :meth:`Storage.door` is the door's database step for one batch: one transaction under
the vault's single-writer lock (SQLite: the vault's ``flock`` and ``BEGIN IMMEDIATE``;
PostgreSQL: ``pg_advisory_xact_lock``), in which every plan is re-checked (W5) before it is
written, and which gives the batch the next number of the vault's gap-free batch sequence. Either
all of it commits or none of it does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..clock import parse_iso
from ..errors import ConflictError, IntegrityError

VAULT_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")
"""A vault's name in a database: it names its PostgreSQL schema (``v_<name>``)."""


def check_vault_name(name: str) -> str:
    if not isinstance(name, str) or not VAULT_NAME.fullmatch(name):
        raise ConflictError(
            f"{name!r} is not a vault name: use 1-48 lowercase letters, digits or '_', "
            "starting with a letter (e.g. 'team_wiki')."
        )
    return name


def check_text(field: str, value: str) -> str:
    """A text bound for the database: PostgreSQL's text can't hold NUL, so neither backend
    takes it (one contract); everything else is stored as given, byte for byte."""
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ConflictError(f"{field} holds a NUL character; remove it and try again.")
    return value


MAX_BATCH_ID = 200


def check_batch_id(value: str) -> str:
    """A batch id both doors take: printable (no line break, tab or control character, which a
    git trailer or a log line would read as a new field) and at most :data:`MAX_BATCH_ID`
    characters."""
    check_text("batch id", value)
    if not value or len(value) > MAX_BATCH_ID or not value.isprintable():
        raise ConflictError(
            f"batch id {value[:40]!r} must be 1 to {MAX_BATCH_ID} printable characters (no line "
            "break, tab or control character); use one the host makes, such as a UUID."
        )
    return value


@dataclass(frozen=True)
class PlanRow:
    """What the door re-checks of a recorded plan (W5)."""

    id: str
    author: str
    origin: str
    status: str
    expires_at: str


def recheck(plan: PlanRow | None, plan_id: str, now: str) -> PlanRow:
    """W5 at the door, under the lock: the plan exists, is pending and has not expired."""
    if plan is None:
        raise ConflictError(f"no plan {plan_id[:12]} in this vault; `affidavit inbox` lists them.")
    if plan.status != "pending":
        raise ConflictError(
            f"plan {plan_id[:12]} is {plan.status} and can't be applied again. "
            "Propose it again with a fresh nonce if it is still wanted."
        )
    if parse_iso(plan.expires_at) <= parse_iso(now):
        raise ConflictError(
            f"plan {plan_id[:12]} expired at {plan.expires_at}; propose it again with a fresh nonce."
        )
    return plan


@dataclass(frozen=True)
class AuditEntry:
    """One entry of the vault's hash-chained audit log (:mod:`affidavit.store.audit`)."""

    seq: int
    at: str
    action: str
    plan_id: str | None
    actor: str
    detail: str  # canonical JSON, hashed as stored
    prev_hash: str
    hash: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> AuditEntry:
        return cls(
            int(row["seq"]),
            str(row["at"]),
            str(row["action"]),
            None if row["plan_id"] is None else str(row["plan_id"]),
            str(row["actor"]),
            str(row["detail"]),
            str(row["prev_hash"]),
            str(row["hash"]),
        )


@dataclass(frozen=True)
class BatchRecord:
    """A committed batch: its number in the vault's sequence, its id, and its plans' "applied"
    audit entries in the order they were written."""

    seq: int
    batch_id: str
    entries: tuple[AuditEntry, ...]

    @property
    def plans(self) -> tuple[str, ...]:
        return tuple(e.plan_id or "" for e in self.entries)


class Door(Protocol):
    """The door's step for one batch, inside its transaction and under the vault's lock."""

    batch_id: str

    def plan(self, plan_id: str) -> PlanRow | None:
        """The plan as it is now, read under the lock."""

    def mark_applied(
        self, plan_id: str, *, now: str, actor: str, detail: Mapping[str, Any]
    ) -> AuditEntry:
        """Re-check the plan (W5, :func:`recheck`), record it applied and append its "applied"
        audit entry (``detail`` plus this batch's id); returns the entry."""

    def seal(self) -> int:
        """The batch's number: the vault's last one plus one, in this transaction (gap-free:
        a batch that does not commit leaves no number behind). Called once, after the plans."""


class Storage(Protocol):
    """A database of vaults, as the door and the batch journal see it."""

    backend: str

    def migrate(self) -> list[str]:
        """Apply the migrations not applied yet (every vault's); returns their names."""

    def create_vault(self, name: str, owner: str) -> None:
        """Make vault ``name`` (idempotent)."""

    def vaults(self) -> list[str]:
        """The vaults' names."""

    def propose(
        self,
        vault: str,
        plan_id: str,
        *,
        author: str,
        origin: str,
        plan_json: str,
        created_at: str,
        expires_at: str,
    ) -> None:
        """Record a pending plan (the inbox's write, reduced to what the door re-checks)."""

    def plan(self, vault: str, plan_id: str) -> PlanRow | None: ...

    def door(self, vault: str, batch_id: str) -> AbstractContextManager[Door]:
        """One batch's transaction under the vault's lock: commits when the block ends, rolls
        back on an error. Seals the batch (:meth:`Door.seal`) if the block applied plans and
        did not."""

    def batches(self, vault: str, after: int = 0) -> list[BatchRecord]:
        """The committed batches numbered above ``after``, in order."""

    def committed(self, vault: str, batch_id: str) -> int | None:
        """The batch's number if its transaction committed, else None: what recovery asks to
        roll an interrupted apply forward or back (:mod:`affidavit.store.recovery`)."""

    def audit(self, vault: str) -> list[AuditEntry]: ...

    def verify_audit(self, vault: str) -> list[str]:
        """Problems of the vault's audit hash chain; empty when intact."""

    def close(self) -> None: ...


def group_batches(entries: Iterable[AuditEntry]) -> list[tuple[str, list[AuditEntry]]]:
    """The "applied" audit entries grouped by their batch, in the order the batches were written.
    An entry from before batches (no batch id) is a batch of its own. A batch whose entries are
    not contiguous was interleaved with another: the log is damaged."""
    groups: list[tuple[str, list[AuditEntry]]] = []
    seen: set[str] = set()
    for entry in entries:
        try:
            batch = json.loads(entry.detail).get("batch") or ""
        except (ValueError, AttributeError):
            raise IntegrityError(
                f"audit entry {entry.seq}'s detail is not a JSON object; `affidavit doctor` "
                "checks the audit chain."
            ) from None
        if batch and groups and groups[-1][0] == batch:
            groups[-1][1].append(entry)
            continue
        if batch in seen:
            raise IntegrityError(
                f"batch {batch}'s audit entries are interleaved with another batch's (at entry "
                f"{entry.seq}); `affidavit doctor` checks the audit chain."
            )
        if batch:
            seen.add(batch)
        groups.append((batch, [entry]))
    return groups
