"""The audit log: every proposal, approval, rejection, expiry and apply, hash-chained.

Each entry's hash covers its content and the previous entry's hash, so editing, deleting or
reordering any entry breaks the chain at that point (:func:`verify_chain`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..hashing import canonical_json, sha256_hex
from ..storage.queries import Sql

GENESIS = "0" * 64


def _entry_hash(
    seq: int, at: str, action: str, plan_id: str | None, actor: str, detail: str, prev: str
) -> str:
    body = {
        "seq": seq,
        "at": at,
        "action": action,
        "plan_id": plan_id,
        "actor": actor,
        "detail": detail,
        "prev": prev,
    }
    return sha256_hex(canonical_json(body))


entry_hash = _entry_hash
"""The hash of one audit entry (its content and the previous entry's hash): the public name for
the other backends that keep the same chain (:mod:`affidavit.storage.postgres`) and for doctor."""


def append(
    db: Sql,
    at: str,
    action: str,
    plan_id: str | None,
    actor: str,
    detail: dict[str, Any],
) -> str:
    """Append one entry inside the caller's transaction (a SQLite connection, or a PostgreSQL
    vault's :class:`~affidavit.storage.pg_sql.PgSql` under the vault's lock); returns its hash."""
    last = db.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    seq = (last["seq"] + 1) if last else 1
    prev = last["hash"] if last else GENESIS
    text = canonical_json(detail)
    digest = _entry_hash(seq, at, action, plan_id, actor, text, prev)
    db.execute(
        "INSERT INTO audit (seq, at, action, plan_id, actor, detail, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (seq, at, action, plan_id, actor, text, prev, digest),
    )
    return digest


def verify_chain(db: sqlite3.Connection) -> list[str]:
    """Problems found walking the chain from the first entry; empty when intact."""
    problems: list[str] = []
    prev = GENESIS
    expected_seq = 1
    for row in db.execute("SELECT * FROM audit ORDER BY seq"):
        if row["seq"] != expected_seq:
            problems.append(f"audit entry {expected_seq} is missing (next is {row['seq']})")
        if row["prev_hash"] != prev:
            problems.append(f"audit entry {row['seq']} does not follow the previous entry's hash")
        digest = _entry_hash(
            row["seq"],
            row["at"],
            row["action"],
            row["plan_id"],
            row["actor"],
            row["detail"],
            row["prev_hash"],
        )
        if digest != row["hash"]:
            problems.append(f"audit entry {row['seq']} was altered (its hash no longer matches)")
        prev = row["hash"]
        expected_seq = row["seq"] + 1
    return problems
