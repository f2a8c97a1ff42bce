"""A plan's stored text once it is decided: compressed, whole.

A pending plan keeps its canonical JSON and its admission (the gate's verdicts, op by op) as text
in ``plans.plan_json`` and ``plans.admission``: approval reads them. Once the plan is applied,
rejected or expired, nothing changes them again, and they were most of the database (233 speeches:
101 MB of 195 MB), so the door moves them into ``plan_z`` and ``admission_z``, zlib-compressed
(about 7× smaller), and leaves the text columns empty (migration ``m013_plans_compressed`` does the
same to existing vaults). Nothing is pruned: the plan's text still hashes to its id, the audit
chain still names it, and doctor re-derives every claim from it as before.

A compressed column is read back as untrusted input: at most :data:`MAX_TEXT` bytes are
inflated (a planted zlib bomb is refused, not swallowed), and bytes that are not zlib are an
:class:`~affidavit.errors.IntegrityError`.
"""

from __future__ import annotations

import sqlite3
import zlib
from typing import Any

from ..errors import IntegrityError

MAX_TEXT = 64 * 1024 * 1024
"""The most a stored plan or admission inflates to (a plan is at most 20 operations)."""
LEVEL = 6


def pack(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), LEVEL)


def unpack(blob: bytes | None, what: str = "plan") -> str:
    """The text of a compressed column; IntegrityError if it isn't one."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise IntegrityError(f"the stored {what} is missing: restore the database from a backup")
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(bytes(blob), MAX_TEXT)
        if inflate.unconsumed_tail or not inflate.eof:
            raise IntegrityError(
                f"the stored {what} inflates past {MAX_TEXT} bytes or is cut short: restore "
                "the database from a backup"
            )
        return data.decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise IntegrityError(
            f"the stored {what} is not readable ({exc}): restore the database from a backup"
        ) from None


def plan_text(row: Any) -> str:
    """The canonical JSON of a plan's row (``plan_json``, else ``plan_z`` inflated)."""
    text = row["plan_json"]
    return str(text) if text else unpack(row["plan_z"], "plan")


def admission_text(row: Any) -> str:
    """The admission JSON of a plan's row (``admission``, else ``admission_z`` inflated)."""
    text = row["admission"]
    return str(text) if text else unpack(row["admission_z"], "admission")


def compact(db: sqlite3.Connection, plan_id: str) -> None:
    """Move a decided plan's texts into their compressed columns (nothing for a pending plan
    or one compacted already). Runs inside the caller's transaction."""
    row = db.execute(
        "SELECT plan_json, admission FROM plans WHERE id = ? AND status != 'pending' "
        "AND (plan_json != '' OR admission != '')",
        (plan_id,),
    ).fetchone()
    if row is None:
        return
    plan, admission = row[0], row[1]
    db.execute(
        "UPDATE plans SET plan_z = coalesce(?, plan_z), admission_z = coalesce(?, admission_z), "
        "plan_json = '', admission = '' WHERE id = ?",
        (pack(plan) if plan else None, pack(admission) if admission else None, plan_id),
    )


def compact_all(db: sqlite3.Connection) -> int:
    """:func:`compact` every decided plan still stored as text; returns how many."""
    ids = [
        r[0]
        for r in db.execute(
            "SELECT id FROM plans WHERE status != 'pending' AND (plan_json != '' OR admission != '')"
        )
    ]
    for plan_id in ids:
        compact(db, plan_id)
    return len(ids)


def snapshot_text(row: Any) -> str:
    """The text of a ``context_snapshots`` row (``content``, else ``content_z`` inflated)."""
    text = row["content"]
    return str(text) if text else unpack(row["content_z"], "context snapshot")


def compact_snapshots(db: sqlite3.Connection) -> int:
    """Compress every snapshot of context.md still stored as text; returns how many."""
    rows = db.execute("SELECT id, content FROM context_snapshots WHERE content != ''").fetchall()
    for snapshot_id, content in rows:
        db.execute(
            "UPDATE context_snapshots SET content = '', content_z = ? WHERE id = ?",
            (pack(content), snapshot_id),
        )
    return len(rows)


__all__ = [
    "MAX_TEXT",
    "admission_text",
    "compact",
    "compact_all",
    "compact_snapshots",
    "pack",
    "plan_text",
    "snapshot_text",
    "unpack",
]
