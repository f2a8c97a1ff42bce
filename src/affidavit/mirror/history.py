"""The mirror's git history: one commit per batch, each carrying the batch's trailers —

    Affidavit-Vault: <vault name>
    Affidavit-Plan: <plan id>          (one per plan, in the batch's order)
    Affidavit-Batch: <number> <batch id>

— and their check against the database: walking HEAD's first parents, the ``Affidavit-Batch``
trailers must be 1, 2, … *k* in order, each naming the batch the database numbers so, with the
same plans, of the same vault. A forged, reordered, missing or foreign trailer is an error that
says how to rebuild. Commits without trailers (a person's own commit) are passed over here; the
check of the files (:func:`affidavit.mirror.run.check`) sees what they changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import pygit2

from ..clock import parse_iso
from ..errors import IntegrityError
from ..storage.base import BatchRecord
from ..store.gitrepo import BATCH_TRAILER, PLAN_TRAILER

VAULT_TRAILER = "Affidavit-Vault"
AUTHOR = ("affidavit", "affidavit@localhost")


@dataclass(frozen=True)
class Trailer:
    commit: str
    seq: int
    batch_id: str
    vault: str
    plans: tuple[str, ...]


def _rebuild_hint(root: str) -> str:
    return (
        f"move {root} aside and run `affidavit mirror` into an empty folder to rebuild the mirror "
        "from the database"
    )


def _parse(commit: pygit2.Commit) -> Trailer | None:
    values: dict[str, list[str]] = {}
    for line in commit.message.splitlines():
        key, colon, value = line.partition(":")
        if colon and key in (BATCH_TRAILER, PLAN_TRAILER, VAULT_TRAILER):
            values.setdefault(key, []).append(value.strip())
    batch = values.get(BATCH_TRAILER)
    if not batch:
        return None
    number, _, batch_id = batch[-1].partition(" ")
    if len(batch) != 1 or not number.isdigit() or not batch_id:
        raise IntegrityError(
            f"commit {str(commit.id)[:12]} has a malformed {BATCH_TRAILER} trailer "
            f"({'; '.join(batch)!r}): the mirror's history was edited; move the folder aside "
            "and run `affidavit mirror` into an empty folder to rebuild it from the database."
        )
    vault = values.get(VAULT_TRAILER, [""])[-1]
    return Trailer(
        str(commit.id), int(number), batch_id, vault, tuple(values.get(PLAN_TRAILER, ()))
    )


def trailers(repo: pygit2.Repository) -> list[Trailer]:
    """The ``Affidavit-Batch`` commits of HEAD's first-parent history, oldest first."""
    if repo.head_is_unborn:
        return []
    out = []
    commit: pygit2.Commit | None = repo.head.peel(pygit2.Commit)
    while commit is not None:
        found = _parse(commit)
        if found is not None:
            out.append(found)
        commit = commit.parents[0] if commit.parents else None
    return out[::-1]


def verify(found: list[Trailer], batches: list[BatchRecord], vault: str, root: str) -> int:
    """The number of the mirror's last batch, after checking its trailers against the database's
    batches (:data:`batches`, numbered from 1): an :class:`IntegrityError` naming the fix if any
    trailer is forged, out of order, missing one, of another vault or ahead of the database."""
    hint = _rebuild_hint(root)
    for expected, trailer in enumerate(found, 1):
        where = f"{root}: commit {trailer.commit[:12]}"
        if trailer.vault != vault:
            raise IntegrityError(
                f"{where} mirrors vault {trailer.vault!r}, not {vault!r}: give the folder of this "
                f"vault's mirror, or {hint}."
            )
        if trailer.seq != expected:
            raise IntegrityError(
                f"{where} says batch {trailer.seq} where batch {expected} comes: the mirror's "
                f"batches are out of order or one is missing (its history was edited); {hint}."
            )
        if expected > len(batches):
            raise IntegrityError(
                f"{where} says batch {expected}, but the database has {len(batches)} batch(es): "
                f"this mirror is ahead of the database (restored from an older backup?); {hint}."
            )
        record = batches[expected - 1]
        if trailer.batch_id != record.batch_id or trailer.plans != record.plans:
            raise IntegrityError(
                f"{where} says batch {expected} is {trailer.batch_id} with plans "
                f"{', '.join(p[:12] for p in trailer.plans) or 'none'}, but the database's batch "
                f"{expected} is {record.batch_id} with plans "
                f"{', '.join(p[:12] for p in record.plans)}: the trailer is forged or comes from "
                f"another database; {hint}."
            )
    return len(found)


def batch_time(record: BatchRecord) -> datetime:
    """When the batch was applied: its last audit entry's time (so a rebuild anywhere makes the
    same commits, byte for byte)."""
    return parse_iso(record.entries[-1].at)


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
"""A batch or plan id as a trailer carries it: one plain token."""


def _token(what: str, value: str, seq: int) -> str:
    if not _TOKEN.fullmatch(value):
        raise IntegrityError(
            f"batch {seq}'s {what} {value[:80]!r} is not a plain id (letters, digits, '.', '_', "
            "':', '-'), so no trailer can carry it: the database was written by something other "
            "than Affidavit's door, or altered. Restore it from a backup."
        )
    return value


def message(record: BatchRecord, vault: str, ops: list[tuple[str, str]]) -> str:
    """The batch's commit message: what it did, then its trailers (ids checked to be plain
    tokens: a line break in one would add a trailer of its own)."""
    batch_id = _token("batch id", record.batch_id, record.seq)
    plans = [_token("plan id", plan, record.seq) for plan in record.plans]
    lines = [f"Batch {record.seq}: {len(record.plans)} plan(s), {len(ops)} operation(s)", ""]
    lines += [f"- {_line(kind)}: {_line(title)}"[:200] for kind, title in ops]
    actors = dict.fromkeys(_line(e.actor) for e in record.entries)
    lines += ["", *(f"Approved by {a}." for a in actors), ""]
    lines.append(f"{VAULT_TRAILER}: {vault}")
    lines += [f"{PLAN_TRAILER}: {plan}" for plan in plans]
    lines.append(f"{BATCH_TRAILER}: {record.seq} {batch_id}")
    return "\n".join(lines) + "\n"


def _line(text: str) -> str:
    """Text from the database on one line of a message: no line of its own can pose as a
    trailer."""
    return " ".join(str(text).split())
