"""What ``index.md`` and context.md's head were last rendered from, so a batch that changes no
page's name, title, summary or category and no link neither renders them again (issue 25 item 1:
both read every page, a cost that grew with the wiki in every apply).

Both read only ``pages`` (slug, title, summary, category) and ``links``
(:func:`~affidavit.store.render.render_index`, :func:`~affidavit.store.render.context_head`).
Migration ``m029_catalog_version`` counts every change to them in ``catalog.version`` (triggers:
a row inserted or deleted, one of those columns updated — even to the same value); the door
keeps, in the same row and inside its batch's transaction, the version each was last rendered
at, with the SHA-256 of ``index.md``'s text and the head's lines. While the version is the same,
the rendering is too: the door compares the file on disk with the stored hash instead of
rendering it, and takes the head as stored. Another process, a rolled-back batch or a restored
database carries its own row, so nothing per process can go stale.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from ..hashing import sha256_hex


def _row(db: sqlite3.Connection) -> tuple[int, int, str, int, str] | None:
    try:
        row = db.execute(
            "SELECT version, index_version, index_sha256, head_version, head FROM catalog"
        ).fetchone()
    except sqlite3.OperationalError:  # (a database before m029: nothing remembered)
        return None
    if row is None:
        return None
    return int(row[0]), int(row[1]), str(row[2]), int(row[3]), str(row[4])


def index_sha256(db: sqlite3.Connection) -> str | None:
    """The SHA-256 of ``index.md`` as the database renders it now, when the door rendered it at
    this catalog version; None when it must be rendered."""
    row = _row(db)
    if row is None or row[1] != row[0]:
        return None
    return row[2]


def remember_index(db: sqlite3.Connection, text: str) -> None:
    """Record ``index.md``'s text just rendered (inside the door's transaction)."""
    db.execute(
        "UPDATE catalog SET index_version = version, index_sha256 = ?",
        (sha256_hex(text.encode("utf-8")),),
    )


def head(db: sqlite3.Connection, render: Callable[[sqlite3.Connection], list[str]]) -> list[str]:
    """context.md's head: as stored when rendered at this catalog version, else ``render(db)``,
    then stored (inside the door's transaction)."""
    row = _row(db)
    if row is not None and row[3] == row[0]:
        lines = json.loads(row[4])
        if isinstance(lines, list) and all(isinstance(line, str) for line in lines):
            return lines
    lines = render(db)
    if row is not None:
        db.execute("UPDATE catalog SET head_version = version, head = ?", (json.dumps(lines),))
    return lines
