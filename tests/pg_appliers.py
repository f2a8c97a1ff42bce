"""Appliers for the storage contract tests (tests/test_storage*.py): the door's database step run
by threads or by processes against either backend, with faults injected between its steps, and a
witness file that records who is inside the door so interleaving shows.

Runs in child processes too (``multiprocessing`` spawn), so everything here is importable and
picklable; a storage is reopened from its address (a ``postgresql://`` URL or a vault folder).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.errors import ConflictError
from affidavit.storage import Door, Storage, open_storage

VAULT = "main"
NOW = "2026-11-30T09:00:00Z"
EXPIRES = "2099-01-01T00:00:00Z"
ACTOR = "tester"
STEPS = ("locked", "applied", "sealed")


class Abort(Exception):
    """An exception raised between two steps of the door."""


def storage_at(where: str) -> Storage:
    return open_storage(where, name=VAULT)


def note(witness: Path | None, what: str, who: str) -> None:
    if witness is None:
        return
    fd = os.open(witness, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{what} {who}\n".encode())
    finally:
        os.close(fd)


def interleavings(witness: Path) -> list[str]:
    """Where the witness shows two appliers inside the door at once (empty: never)."""
    problems, inside = [], None
    for n, line in enumerate(witness.read_text().splitlines(), 1):
        what, who = line.split(" ", 1)
        if what == "enter":
            if inside is not None:
                problems.append(f"line {n}: {who} entered while {inside} was inside")
            inside = who
        elif inside != who:
            problems.append(f"line {n}: {who} left, but {inside} was inside")
        else:
            inside = None
    return problems


def detail_for(batch_id: str, plan_id: str) -> dict[str, Any]:
    return {"text": f'\'; DROP TABLE plans; -- «{plan_id}» "{batch_id}" ✓', "n": len(plan_id)}


@dataclass
class Outcome:
    batch_id: str
    plans: list[str]
    seq: int | None = None  # None: aborted
    error: str = ""
    details: list[dict[str, Any]] = field(default_factory=list)


Fault = Callable[[str, Door, Callable[[], None]], None]
"""Called at each step with the door and ``leave`` (notes the applier out of the door first)."""


def no_fault(step: str, door: Door, leave: Callable[[], None]) -> None:
    return None


def apply_once(
    storage: Storage,
    batch_id: str,
    plans: list[str],
    witness: Path | None = None,
    fault: Fault = no_fault,
) -> Outcome:
    """One batch through the door; an exception (a fault, a lost race) leaves it aborted."""
    outcome = Outcome(batch_id, plans)
    left = False

    def leave() -> None:
        nonlocal left
        if not left:
            left = True
            note(witness, "exit", batch_id)

    try:
        with storage.door(VAULT, batch_id) as door:
            note(witness, "enter", batch_id)
            try:
                fault("locked", door, leave)
                for plan_id in plans:
                    detail = detail_for(batch_id, plan_id)
                    door.mark_applied(plan_id, now=NOW, actor=ACTOR, detail=detail)
                    outcome.details.append({**detail, "batch": batch_id})
                    fault("applied", door, leave)
                seq = door.seal()
                fault("sealed", door, leave)
            finally:
                leave()
        outcome.seq = seq
    except Exception as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.details = []
    return outcome


def propose_all(storage: Storage, plans: list[str]) -> None:
    for plan_id in plans:
        storage.propose(
            VAULT,
            plan_id,
            author="agent",
            origin=f"test:{plan_id}",
            plan_json=json.dumps({"operations": [], "id": plan_id}),
            created_at=NOW,
            expires_at=EXPIRES,
        )


def raising_fault(rng: random.Random, rate: float) -> Fault:
    def fault(step: str, door: Door, leave: Callable[[], None]) -> None:
        if rng.random() < rate / len(STEPS):
            raise Abort(f"injected at {step}")

    return fault


def storm(
    where: str, tag: str, count: int, seed: int, witness: str | None, raise_rate: float
) -> list[Outcome]:
    """``count`` batches of 1-3 fresh plans each, with exceptions raised between steps at
    ``raise_rate``; for a thread or a child process (opens its own storage)."""
    rng = random.Random(seed)
    storage = storage_at(where)
    try:
        jobs = []
        for n in range(count):
            plans = [f"{tag}-{n}-{k}" for k in range(rng.randint(1, 3))]
            propose_all(storage, plans)
            jobs.append((f"{tag}-b{n}", plans))
        fault = raising_fault(rng, raise_rate)
        path = Path(witness) if witness else None
        return [apply_once(storage, b, p, path, fault) for b, p in jobs]
    finally:
        storage.close()


def race(where: str, tag: str, plans: list[str], seed: int, witness: str) -> list[Outcome]:
    """Apply every one of ``plans`` (shared with the other racers), one per batch, in a
    shuffled order: the door's re-check (W5) lets exactly one racer apply each."""
    order = list(plans)
    random.Random(seed).shuffle(order)
    storage = storage_at(where)
    try:
        return [
            apply_once(storage, f"{tag}-{plan_id}", [plan_id], Path(witness)) for plan_id in order
        ]
    finally:
        storage.close()


def lost_race(outcome: Outcome) -> bool:
    return outcome.seq is None and ConflictError.__name__ in outcome.error
