"""A plan's stored text once it is decided: compressed, whole.

A pending plan keeps its canonical JSON and its admission (the gate's verdicts, op by op) as text
in ``plans.plan_json`` and ``plans.admission``: approval reads them. Once the plan is applied,
rejected or expired, nothing changes them again, and they were most of the database (233 speeches:
101 MB of 195 MB), so the door moves them into ``plan_z`` and ``admission_z``, zlib-compressed
(about 7× smaller), and leaves the text columns empty (migration ``m013_plans_compressed`` does the
same to existing vaults). The admission repeats the plan's quotes and texts, so it is packed with
the plan's text as zlib's preset dictionary (half the size again; ``m021b_lean_words_and_admissions``
repacks those stored before): reading it needs the plan's row. The plan's text is itself packed
with the texts of the claims its apply wrote as dictionary (most of a plan is those claims: ~4×
smaller again), naming their rowids in ``plans.packed_with`` (``m027_plans_packed_with_claims``
repacks those stored before): reading it needs those claims, each still the plan's, and the text
read must hash to the plan's id, else it is an IntegrityError. Nothing is pruned: the plan's text
still hashes to its id, the audit chain still names it, and doctor re-derives every claim from it
as before.

A compressed column is read back as untrusted input: at most :data:`MAX_TEXT` bytes are
inflated (a planted zlib bomb is refused, not swallowed), and bytes that are not zlib are an
:class:`~affidavit.errors.IntegrityError`.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Sequence
from typing import Any

from ..errors import IntegrityError
from ..hashing import sha256_hex

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


def plan_text(row: Any, db: sqlite3.Connection | None = None) -> str:
    """The canonical JSON of a plan's row (``plan_json``, else ``plan_z`` inflated). A plan
    packed against its claims (:func:`pack_plan`) is read through ``db`` and must hash to the
    row's ``id``: ``row`` then needs ``id`` too."""
    text = row["plan_json"]
    if text:
        return str(text)
    blob = row["plan_z"]
    if not needs_dictionary(blob):
        return unpack(blob, "plan")
    if db is None:
        raise IntegrityError("a plan packed against its claims is read with its database")
    return unpack_plan(db, str(row["id"]), blob)


def admission_text(row: Any, db: sqlite3.Connection | None = None) -> str:
    """The admission JSON of a plan's row (``admission``, else ``admission_z`` inflated, with
    the plan's text as its dictionary when it was packed with it: ``row`` then needs the plan's
    columns too, and ``db`` when the plan was packed against its claims)."""
    text = row["admission"]
    if text:
        return str(text)
    blob = row["admission_z"]
    return unpack(blob, "admission", plan_text(row, db) if needs_dictionary(blob) else "")


MAX_ROWS = 100_000
"""The most claims a stored plan names as its dictionary (``plans.packed_with``)."""
_RANGES = re.compile(r"(?:[0-9]{1,18}(?:-[0-9]{1,18})?)(?:,[0-9]{1,18}(?:-[0-9]{1,18})?)*")


def _ranges(rowids: list[int]) -> str:
    """Sorted claim rowids as ``a-b,c,…`` (a plan's claims are mostly consecutive)."""
    out: list[str] = []
    start = prev = rowids[0]
    for rowid in [*rowids[1:], None]:
        if rowid is not None and rowid == prev + 1:
            prev = rowid
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if rowid is not None:
            start = prev = rowid
    return ",".join(out)


def _parse_ranges(text: str, plan_id: str) -> list[tuple[int, int]]:
    bad = IntegrityError(
        f"plan {plan_id[:12]}'s list of the claims it was packed against is not readable: "
        "restore the database from a backup"
    )
    if len(text) > 64 * 1024 or not _RANGES.fullmatch(text):
        raise bad
    spans: list[tuple[int, int]] = []
    total, last = 0, 0
    for part in text.split(","):
        first, _, end = part.partition("-")
        low, high = int(first), int(end or first)
        if low <= last or high < low:  # ascending, disjoint: each claim once, in rowid order
            raise bad
        total += high - low + 1
        if total > MAX_ROWS:
            raise bad
        spans.append((low, high))
        last = high
    return spans


def _dictionary(texts: list[str]) -> str:
    return "\n".join(texts)


def claims_dictionary(db: sqlite3.Connection, plan_id: str, packed_with: str) -> str:
    """The texts of the claims ``packed_with`` names, each of which must exist and belong to
    ``plan_id`` (IntegrityError otherwise): the dictionary the plan's text was packed with."""
    texts: list[str] = []
    for low, high in _parse_ranges(packed_with, plan_id):
        rows = db.execute(
            "SELECT plan_id, text FROM claims WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (low, high),
        ).fetchall()
        if len(rows) != high - low + 1 or any(r[0] != plan_id for r in rows):
            raise IntegrityError(
                f"the claims plan {plan_id[:12]} was packed against are missing or not its own: "
                "restore the database from a backup"
            )
        texts += [str(r[1]) for r in rows]
    return _dictionary(texts)


def unpack_plan(db: sqlite3.Connection, plan_id: str, blob: bytes) -> str:
    """A plan's text packed against its claims: inflated with their texts as dictionary (a
    wrong one fails zlib's Adler-32 check) and then required to hash to ``plan_id``, so a
    forged pack or an edited list of claims is an IntegrityError, never a plan believed."""
    row = db.execute("SELECT packed_with FROM plans WHERE id = ?", (plan_id,)).fetchone()
    if row is None or not row[0]:
        raise IntegrityError(
            f"plan {plan_id[:12]} was packed against claims it doesn't name: restore the "
            "database from a backup"
        )
    text = unpack(blob, "plan", claims_dictionary(db, plan_id, str(row[0])))
    if sha256_hex(text) != plan_id:
        raise IntegrityError(
            f"the stored text of plan {plan_id[:12]} doesn't hash to its id: restore the "
            "database from a backup"
        )
    return text


def pack_plan(db: sqlite3.Connection, plan_id: str, text: str, rowids: list[int]) -> None:
    """Store a decided plan's text in ``plan_z``: packed with the texts of its claims (rowids
    ``rowids``, each of ``plan_id``) as zlib's preset dictionary — most of a plan is the claims
    it created, so it is ~4× smaller — naming them in ``packed_with``; packed alone when it has
    no claims or its text doesn't hash to its id (it could not be checked when read). Lossless:
    :func:`plan_text` gives back the same bytes."""
    rowids = sorted(rowids)
    if not rowids or len(rowids) > MAX_ROWS or sha256_hex(text) != plan_id:
        db.execute(
            "UPDATE plans SET plan_z = ?, packed_with = '', plan_json = '' WHERE id = ?",
            (pack(text), plan_id),
        )
        return
    ranges = _ranges(rowids)
    blob = pack(text, claims_dictionary(db, plan_id, ranges))
    db.execute(
        "UPDATE plans SET plan_z = ?, packed_with = ?, plan_json = '' WHERE id = ?",
        (blob, ranges, plan_id),
    )


def compact(db: sqlite3.Connection, plan_id: str, claim_ids: Sequence[str] = ()) -> None:
    """Move a decided plan's texts into their compressed columns (nothing for a pending plan
    or one compacted already): the plan's text packed against the claims ``claim_ids`` of it
    (:func:`pack_plan`; the claims its apply wrote), its admission with the plan's text as
    dictionary. Runs inside the caller's transaction."""
    row = db.execute(
        "SELECT plan_json, admission FROM plans WHERE id = ? AND status != 'pending' "
        "AND (plan_json != '' OR admission != '')",
        (plan_id,),
    ).fetchone()
    if row is None:
        return
    plan, admission = row[0], row[1]
    if admission:
        full = plan or plan_text(
            db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone(), db
        )
        db.execute(
            "UPDATE plans SET admission_z = ?, admission = '' WHERE id = ?",
            (pack(admission, full), plan_id),
        )
    if plan:
        rowids: list[int] = []
        ids = list(dict.fromkeys(claim_ids))
        for at in range(0, len(ids), 500):
            chunk = ids[at : at + 500]
            marks = ",".join("?" * len(chunk))
            rowids += [
                int(r[0])
                for r in db.execute(
                    f"SELECT rowid FROM claims WHERE id IN ({marks}) AND plan_id = ?",
                    (*chunk, plan_id),
                )
            ]
        pack_plan(db, plan_id, plan, rowids)


def repack_against_claims(db: sqlite3.Connection) -> int:
    """Pack again, against its claims (:func:`pack_plan`), every decided plan's text packed
    alone (migration ``m027_plans_packed_with_claims``); returns how many. The claims are read
    once, in plan order (no index by plan needed); each packed text is read back and compared."""
    count = 0
    group: list[int] = []
    current: str | None = None

    def flush() -> None:
        nonlocal count
        if current is None or not group:
            return
        row = db.execute(
            "SELECT id, plan_json, plan_z FROM plans WHERE id = ? AND status != 'pending' "
            "AND plan_json = '' AND plan_z IS NOT NULL",
            (current,),
        ).fetchone()
        if row is None or needs_dictionary(row[2]):
            return
        text = unpack(row[2], "plan")
        if sha256_hex(text) != current:
            return  # stays packed alone: nothing to check it by when read
        pack_plan(db, current, text, group)
        stored = db.execute("SELECT plan_z FROM plans WHERE id = ?", (current,)).fetchone()[0]
        if unpack_plan(db, current, stored) != text:  # pragma: no cover - zlib is lossless
            raise IntegrityError(f"plan {current[:12]} did not read back as packed")
        count += 1

    rows = db.execute("SELECT plan_id, rowid FROM claims ORDER BY plan_id, rowid")
    for plan_id, rowid in rows:
        if plan_id != current:
            flush()
            current, group = str(plan_id), []
        group.append(int(rowid))
    flush()
    return count


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
        plan = row[1] or (
            unpack_plan(db, row[0], row[2]) if needs_dictionary(row[2]) else unpack(row[2], "plan")
        )
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
    "claims_dictionary",
    "compact",
    "compact_all",
    "compact_snapshots",
    "needs_dictionary",
    "pack",
    "pack_plan",
    "plan_text",
    "repack_admissions",
    "repack_against_claims",
    "snapshot_text",
    "unpack",
    "unpack_plan",
]
