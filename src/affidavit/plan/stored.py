"""A plan's stored text once it is decided: compressed, whole.

A pending plan keeps its canonical JSON and its admission (the gate's verdicts, op by op) as text
in ``plans.plan_json`` and ``plans.admission``: approval reads them. Once the plan is applied,
rejected or expired, nothing changes them again, and they were most of the database (233 speeches:
101 MB of 195 MB), so the door moves them into ``plan_z`` and ``admission_z``, zlib-compressed
(about 7× smaller), and leaves the text columns empty (migration ``m013_plans_compressed`` does the
same to existing vaults). The admission repeats the plan's quotes and texts, so it is packed with
the plan's text as zlib's preset dictionary (half the size again; ``m021b_lean_words_and_admissions``
repacks those stored before): reading it needs the plan's row. Nothing is pruned: the plan's text still hashes to its id, the audit
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
WINDOW = 32 * 1024
"""zlib's window: how much of a preset dictionary (its end) can be referred to."""


def pack(text: str, dictionary: str = "") -> bytes:
    """``text`` zlib-compressed; with ``dictionary`` (a decided plan's admission: its plan's
    canonical JSON, whose quotes and texts the admission repeats) as zlib's preset dictionary,
    which the stream's header then flags (FDICT) and names by its Adler-32."""
    if not dictionary:
        return zlib.compress(text.encode("utf-8"), LEVEL)
    deflate = zlib.compressobj(LEVEL, zdict=_window(dictionary))
    return deflate.compress(text.encode("utf-8")) + deflate.flush()


def _window(dictionary: str) -> bytes:
    return dictionary.encode("utf-8")[-WINDOW:]


def needs_dictionary(blob: bytes | bytearray | memoryview | None) -> bool:
    """Whether a compressed column was packed with a preset dictionary (zlib's FDICT flag)."""
    return (
        isinstance(blob, bytes | bytearray | memoryview)
        and len(blob) > 1
        and bool(bytes(blob[1:2])[0] & 0x20)
    )


def unpack(blob: bytes | None, what: str = "plan", dictionary: str = "") -> str:
    """The text of a compressed column (packed with ``dictionary`` if its header says so: a
    wrong one fails zlib's Adler-32 check); IntegrityError if it isn't one."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise IntegrityError(f"the stored {what} is missing: restore the database from a backup")
    inflate = (
        zlib.decompressobj(zdict=_window(dictionary))
        if needs_dictionary(blob)
        else zlib.decompressobj()
    )
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
    """The admission JSON of a plan's row (``admission``, else ``admission_z`` inflated, with
    the plan's text as its dictionary when it was packed with it: ``row`` then needs the plan's
    columns too)."""
    text = row["admission"]
    if text:
        return str(text)
    blob = row["admission_z"]
    return unpack(blob, "admission", plan_text(row) if needs_dictionary(blob) else "")


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
        (pack(plan) if plan else None, pack(admission, plan) if admission else None, plan_id),
    )


def repack_admissions(db: sqlite3.Connection) -> int:
    """Pack again, with its plan as dictionary, every decided plan's admission packed without
    (migration ``m021b_lean_words_and_admissions``); returns how many. Each is inflated and checked as
    any stored text is read."""
    count = 0
    rows = db.execute(
        "SELECT id, plan_json, plan_z, admission, admission_z FROM plans "
        "WHERE admission = '' AND admission_z IS NOT NULL"
    )
    for row in rows.fetchall():
        blob = row[4]
        if needs_dictionary(blob):
            continue
        plan = row[1] or unpack(row[2], "plan")
        admission = unpack(blob, "admission")
        db.execute("UPDATE plans SET admission_z = ? WHERE id = ?", (pack(admission, plan), row[0]))
        count += 1
    return count


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


def snapshot_text(row: Any, db: sqlite3.Connection | None = None) -> str:
    """The text of a ``context_snapshots`` row (``content``, else ``content_z`` inflated; a
    delta of an earlier snapshot, :mod:`.snapshots`, is decoded through ``db``)."""
    text = row["content"]
    if text:
        return str(text)
    try:
        base = row["base"]
    except (IndexError, KeyError):  # a row read without the column (before m023)
        base = None
    if base is not None:
        if db is None:
            raise IntegrityError("a context snapshot stored as a delta is read with its database")
        from .snapshots import text_of

        return text_of(db, int(row["id"]))
    return unpack(row["content_z"], "context snapshot")


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
    "needs_dictionary",
    "pack",
    "plan_text",
    "repack_admissions",
    "snapshot_text",
    "unpack",
]
