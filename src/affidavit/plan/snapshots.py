"""``context_snapshots``: wiki/context.md as it was before each plan that changed it (W6), kept as
keyframes and line deltas.

Each snapshot is nearly the one before it (an entry added, the head's counts changed, the oldest
entries spilled to the archive), and stored whole each was a whole context.md compressed: 4.6 MB
of a 233-speech vault. Now (migration ``m023_context_deltas``) a snapshot whose ``base`` is NULL
is stored whole (``content`` or ``content_z``, as before); any other holds in ``content_z`` the
packed delta from snapshot ``base`` (the one before it): the line ranges it keeps of its base and
the lines it adds. Every :data:`KEYFRAME` th snapshot is whole, so reading one, or writing the
next, decodes at most ``KEYFRAME - 1`` deltas, however many snapshots the vault holds. A delta
whose base is missing or unreadable is an :class:`~affidavit.errors.IntegrityError`.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
from typing import Any

from ..errors import IntegrityError
from .stored import pack, unpack

KEYFRAME = 16
"""One snapshot in this many is stored whole."""
_COLUMNS = "id, plan_id, content, content_z, base"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


_NOTE = re.compile(r"\[\^(\d+)\]: ")
_REF = re.compile(r"\[\^(\d+)\]")
_MASK = "[^#]"


def _mask(text: str) -> str | None:
    """``text`` with its footnote numbers written ``[^#]``, when they are what they are in a
    rendered context.md — references numbered 1, 2, … in order, notes likewise — and so can be
    counted back (:func:`_unmask`); None otherwise. A spill to the archive renumbers every
    footnote of context.md: masked, the lines that stay are the same lines."""
    refs = notes = 0
    out = []
    for line in _lines(text):
        note = _NOTE.match(line)
        if note is not None:
            notes += 1
            if note.group(1) != str(notes):
                return None
            line = _MASK + line[note.end() - 2 :]
        else:
            parts = _REF.split(line)
            for k in range(1, len(parts), 2):
                refs += 1
                if parts[k] != str(refs):
                    return None
                parts[k] = "#"
            line = "".join(p if k % 2 == 0 else f"[^{p}]" for k, p in enumerate(parts))
        out.append(line)
    masked = "".join(out)
    return masked if _unmask(masked) == text else None


def _unmask(masked: str) -> str:
    refs = notes = 0
    out = []
    for line in _lines(masked):
        if line.startswith(_MASK + ": "):
            notes += 1
            line = f"[^{notes}]" + line[len(_MASK) :]
        else:
            pieces = line.split(_MASK)
            line = pieces[0]
            for piece in pieces[1:]:
                refs += 1
                line += f"[^{refs}]" + piece
        out.append(line)
    return "".join(out)


def delta(base: str, text: str) -> str:
    """``text`` as what it keeps of ``base`` (``[start, end]`` line ranges) and the text it
    adds between them (strings), in order: a JSON list, or ``{"masked": list}`` when the delta
    is between the two texts with their footnote numbers masked (:func:`_mask`)."""
    masked = (_mask(base), _mask(text))
    if masked[0] is not None and masked[1] is not None:
        return json.dumps({"masked": json.loads(_delta(masked[0], masked[1]))})
    return _delta(base, text)


def _delta(base: str, text: str) -> str:
    old, new = _lines(base), _lines(text)
    ops: list[Any] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append([i1, i2])
        elif j2 > j1:  # replace or insert: the new lines; a delete adds nothing
            ops.append("".join(new[j1:j2]))
    return json.dumps(ops, ensure_ascii=False, separators=(",", ":"))


def patch(base: str, ops_json: str) -> str:
    """The text a :func:`delta` describes against ``base``."""
    try:
        ops = json.loads(ops_json)
        if isinstance(ops, dict):
            masked = _mask(base)
            if masked is None or set(ops) != {"masked"}:
                raise ValueError("a masked delta of a text whose footnotes don't mask")
            return _unmask(_patch(masked, ops["masked"]))
        return _patch(base, ops)
    except (ValueError, TypeError) as exc:
        raise IntegrityError(
            f"a stored context snapshot's delta is not readable ({exc}): restore the database "
            "from a backup"
        ) from None


def _patch(base: str, ops: Any) -> str:
    if not isinstance(ops, list):
        raise ValueError("not a list of operations")
    old = _lines(base)
    out: list[str] = []
    for op in ops:
        if isinstance(op, str):
            out.append(op)
        elif (
            isinstance(op, list)
            and len(op) == 2
            and all(isinstance(n, int) for n in op)
            and 0 <= op[0] <= op[1] <= len(old)
        ):
            out += old[op[0] : op[1]]
        else:
            raise ValueError(op)
    return "".join(out)


def _row(db: sqlite3.Connection, snapshot_id: int) -> tuple[Any, ...]:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM context_snapshots WHERE id = ?", (snapshot_id,)
    ).fetchone()
    if row is None:
        raise IntegrityError(
            f"context snapshot {snapshot_id}, the base of a later one, is missing: restore the "
            "database from a backup"
        )
    return tuple(row)


def _whole(row: tuple[Any, ...]) -> str:
    return str(row[2]) if row[2] else unpack(row[3], "context snapshot")


def _chain(db: sqlite3.Connection, row: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """``row`` and the snapshots it is a delta of, back to a whole one (oldest first)."""
    chain = [row]
    while chain[-1][4] is not None:
        if len(chain) > KEYFRAME:  # never written so: a loop or a forged base
            raise IntegrityError(
                f"context snapshot {row[0]} is a delta of more than {KEYFRAME} others: restore "
                "the database from a backup"
            )
        base = int(chain[-1][4])
        if base >= int(chain[-1][0]):
            raise IntegrityError(
                f"context snapshot {chain[-1][0]} names a later base ({base}): restore the "
                "database from a backup"
            )
        chain.append(_row(db, base))
    return chain[::-1]


def _decode(chain: list[tuple[Any, ...]]) -> str:
    text = _whole(chain[0])
    for row in chain[1:]:
        text = patch(text, unpack(row[3], "context snapshot"))
    return text


def text_of(db: sqlite3.Connection, snapshot_id: int) -> str:
    """Snapshot ``snapshot_id``'s text (its delta chain decoded)."""
    return _decode(_chain(db, _row(db, snapshot_id)))


def all_texts(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every snapshot as (plan id, text), oldest first, each delta decoded once."""
    texts: dict[int, str] = {}
    out = []
    for raw in db.execute(f"SELECT {_COLUMNS} FROM context_snapshots ORDER BY id").fetchall():
        row = tuple(raw)
        if row[4] is None:
            text = _whole(row)
        elif int(row[4]) in texts:
            text = patch(texts[int(row[4])], unpack(row[3], "context snapshot"))
        else:
            text = text_of(db, int(row[0]))
        texts[int(row[0])] = text
        out.append((str(row[1]), text))
    return out


def save(db: sqlite3.Connection, plan_id: str, created_at: str, text: str) -> None:
    """Record ``text`` (context.md before ``plan_id`` changes it): a delta of the last snapshot,
    or whole when that one ends a run of :data:`KEYFRAME` (or there is none)."""
    last = db.execute(
        f"SELECT {_COLUMNS} FROM context_snapshots ORDER BY id DESC LIMIT 1"
    ).fetchone()
    chain = _chain(db, tuple(last)) if last is not None else []
    if not chain or len(chain) >= KEYFRAME:
        db.execute(
            "INSERT INTO context_snapshots (plan_id, created_at, content, content_z, base) "
            "VALUES (?, ?, '', ?, NULL)",
            (plan_id, created_at, pack(text)),
        )
        return
    db.execute(
        "INSERT INTO context_snapshots (plan_id, created_at, content, content_z, base) "
        "VALUES (?, ?, '', ?, ?)",
        (plan_id, created_at, pack(delta(_decode(chain), text)), chain[-1][0]),
    )


def rechain(db: sqlite3.Connection) -> int:
    """Store every snapshot written whole as keyframes and deltas (migration
    ``m023_context_deltas``); each one is read back through its chain and compared before the
    next is written. Returns how many became deltas."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM context_snapshots WHERE base IS NULL ORDER BY id"
    ).fetchall()
    if db.execute("SELECT count(*) FROM context_snapshots WHERE base IS NOT NULL").fetchone()[0]:
        return 0  # chained already
    made = 0
    previous: tuple[int, str] | None = None
    run = 0
    for raw in rows:
        row = tuple(raw)
        text = _whole(row)
        if previous is None or run + 1 >= KEYFRAME:
            if row[2]:  # still text: packed like the others
                db.execute(
                    "UPDATE context_snapshots SET content = '', content_z = ? WHERE id = ?",
                    (pack(text), row[0]),
                )
            run = 0
        else:
            db.execute(
                "UPDATE context_snapshots SET content = '', content_z = ?, base = ? WHERE id = ?",
                (pack(delta(previous[1], text)), previous[0], row[0]),
            )
            run += 1
            made += 1
            if text_of(db, int(row[0])) != text:  # never: the delta is exact
                raise IntegrityError(f"context snapshot {row[0]} did not survive its delta")
        previous = (int(row[0]), text)
    return made


__all__ = ["KEYFRAME", "all_texts", "delta", "patch", "rechain", "save", "text_of"]
