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
database carries its own row, so nothing per process can go stale. Both records are keyed by
:func:`renderer` too, the code that renders them: a new version of it renders them again.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..hashing import sha256_hex


@functools.cache
def renderer() -> str:
    """A fingerprint of the code that renders index.md and the head (this module, ``render``
    and ``overview``), so a record made by other code never passes for this code's rendering;
    the package's version where the files can't be read."""
    here = Path(__file__).parent
    try:
        code = b"".join((here / n).read_bytes() for n in ("catalog.py", "render.py", "overview.py"))
    except OSError:
        return __version__
    return sha256_hex(code)[:16]


def _key(data: bytes) -> str:
    return sha256_hex(renderer().encode() + b"\0" + data)


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


def index_unchanged(db: sqlite3.Connection, on_disk: bytes) -> bool:
    """Whether ``on_disk`` is ``index.md`` as the database renders it now: the door rendered it
    at this catalog version, with this code, to these bytes."""
    row = _row(db)
    return row is not None and row[1] == row[0] and row[2] == _key(on_disk)


def remember_index(db: sqlite3.Connection, text: str) -> None:
    """Record ``index.md``'s text just rendered (inside the door's transaction)."""
    db.execute(
        "UPDATE catalog SET index_version = version, index_sha256 = ?",
        (_key(text.encode("utf-8")),),
    )


def head(db: sqlite3.Connection, render: Callable[[sqlite3.Connection], list[str]]) -> list[str]:
    """context.md's head: as stored when rendered at this catalog version, else ``render(db)``,
    then stored (inside the door's transaction)."""
    row = _row(db)
    if row is not None and row[3] == row[0]:
        try:
            stored = json.loads(row[4])
        except ValueError:
            stored = None
        if isinstance(stored, dict) and stored.get("renderer") == renderer():
            lines = stored.get("lines")
            if isinstance(lines, list) and all(isinstance(line, str) for line in lines):
                return lines
    lines = render(db)
    if row is not None:
        head = json.dumps({"renderer": renderer(), "lines": lines})
        db.execute("UPDATE catalog SET head_version = version, head = ?", (head,))
    return lines
