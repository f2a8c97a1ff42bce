"""Versions of a source (issue 27 item 1): one origin, several byte versions.

A source's **origin key** is its normalised origin: for a file, its absolute resolved path in
POSIX form (the watched or ingested folder's root joined with the file's path inside it); for a
URL, the URL with scheme and host lower-cased, the default port and the fragment dropped. Every
source stored from one origin key is a **version** of the same document: 1 for the first bytes
seen, then 2, 3…, each naming the one it replaces (``previous_id``). This is the only thing that
makes one source *newer* than another for lint (stale, supersession) — with the version or date
two sources of different origins state about themselves, when they are releases of one document
(:mod:`.stated`) — never the time it was ingested (issue 24 item 3). A file moved takes its
versions with it (:func:`follow_move`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from ..storage.queries import Sql

__all__ = [
    "Lineage",
    "chain",
    "claim_replaces",
    "current_version",
    "follow_move",
    "lineage_of",
    "moved_here",
    "newer_than",
    "origin_key",
    "under_root",
    "version_keys",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_key(origin: str | Path) -> str:
    """The normalised origin shared by every version of one document (see the module doc)."""
    text = str(origin)
    if "://" in text:
        parts = urlsplit(text.strip())
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        port = parts.port
        netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
        if parts.username:
            netloc = f"{parts.username}@{netloc}"
        return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    path = Path(text).expanduser()
    try:
        path = path.resolve()
    except OSError:  # a path that can't be resolved any more: as given, made absolute
        path = path.absolute()
    return path.as_posix()


def under_root(root: str | Path) -> str:
    """The prefix every origin key of a file inside folder ``root`` starts with."""
    key = origin_key(root)
    return key if key.endswith("/") else key + "/"


@dataclass(frozen=True)
class Lineage:
    """Where a source stands among the versions of its origin."""

    origin_key: str
    version: int
    previous_id: str | None


def lineage_of(db: sqlite3.Connection, source_id: str) -> Lineage | None:
    row = db.execute(
        "SELECT origin_key, version, previous_id FROM sources WHERE id = ?", (source_id,)
    ).fetchone()
    if row is None:
        return None
    return Lineage(str(row[0]), int(row[1]), row[2])


def current_version(db: sqlite3.Connection, key: str) -> tuple[str, int] | None:
    """``(source id, version)`` of the newest version stored from origin key ``key``."""
    row = db.execute(
        "SELECT id, version FROM sources WHERE origin_key = ? ORDER BY version DESC LIMIT 1",
        (key,),
    ).fetchone()
    return (str(row[0]), int(row[1])) if row is not None else None


def chain(db: sqlite3.Connection, source_id: str) -> list[str]:
    """The versions a source replaces, newest first (``source_id`` itself excluded), following
    ``previous_id`` (a cycle, which no write makes, stops the walk)."""
    out: list[str] = []
    seen = {source_id}
    current: str | None = source_id
    while current is not None:
        row = db.execute("SELECT previous_id FROM sources WHERE id = ?", (current,)).fetchone()
        current = row[0] if row is not None else None
        if current is None or current in seen:
            break
        seen.add(current)
        out.append(current)
    return out


def version_keys(
    key: str, version: int, stated_key: str = "", stated_rank: int = 0
) -> tuple[tuple[str, int], ...]:
    """The ``(key, rank)`` pairs that order a source among others: its origin's key and version,
    and, when it states a version or date of a document (:mod:`.stated`), that document's key
    and the statement's rank. Two sources are ordered by a pair of the same key alone."""
    own = ((key, version),) if key else ()
    return (*own, (stated_key, stated_rank)) if stated_key else own


def newer_than(
    lineages: dict[str, tuple[tuple[str, int], ...]], newer: set[str], older: set[str]
) -> bool:
    """Whether a source of ``newer`` is a later version of a document a source of ``older`` is
    an earlier version of (``lineages``: source id -> its :func:`version_keys`): a later
    version of the same origin, or a later version or date stated by a release of the same
    document; a source never replaces itself, and sources of unrelated documents are never
    ordered."""
    for a in newer:
        for b in older:
            if a == b:
                continue
            for key_a, rank_a in lineages.get(a, ()):
                for key_b, rank_b in lineages.get(b, ()):
                    if key_a == key_b and rank_a > rank_b:
                        return True
    return False


def claim_replaces(db: Sql, newer: str, older: str) -> bool:
    """Whether claim ``newer`` cites a later version of a document (an origin, or a document
    whose releases state their versions) that claim ``older`` cites an earlier version of (what
    a stale finding must show)."""
    rows = db.execute(
        "SELECT e.claim_id, s.id, s.origin_key, s.version, s.stated_key, s.stated_rank "
        "FROM evidence e JOIN sources s ON s.id = e.source_id WHERE e.claim_id IN (?, ?)",
        (newer, older),
    ).fetchall()
    lineages = {str(r[1]): version_keys(str(r[2]), int(r[3]), str(r[4]), int(r[5])) for r in rows}
    return newer_than(
        lineages,
        {str(r[1]) for r in rows if r[0] == newer},
        {str(r[1]) for r in rows if r[0] == older},
    )


def follow_move(
    db: sqlite3.Connection, old: str | Path, new: str | Path, at: str, actor: str
) -> list[str]:
    """A file moved (its bytes gone from ``old`` and found at ``new``): every version of origin
    ``old`` becomes a version of origin ``new``, so the next edit of the file at its new place
    is the next version of the same document (claims carried, changes proposed) and deleting it
    there proposes its retraction. Each version keeps ``origin``, the path its bytes were read
    from; the move is an audit entry (``source_moved``). Nothing moves when ``new`` already has
    versions of its own (a file moved over another: the lineages are not merged) or ``old`` is
    still there. Returns the source ids re-keyed. The caller holds the vault's write lock."""
    from ..db import transaction
    from ..store import audit

    old_key, new_key = origin_key(old), origin_key(new)
    if old_key == new_key or "://" in old_key or Path(old_key).exists():
        return []
    with transaction(db):
        if current_version(db, new_key) is not None:
            return []
        ids = [
            str(r[0])
            for r in db.execute(
                "SELECT id FROM sources WHERE origin_key = ? ORDER BY version", (old_key,)
            )
        ]
        if not ids:
            return []
        db.execute("UPDATE sources SET origin_key = ? WHERE origin_key = ?", (new_key, old_key))
        detail: dict[str, Any] = {"from": old_key, "to": new_key, "sources": ids}
        audit.append(db, at, "source_moved", None, actor, detail)
    return ids


def moved_here(db: sqlite3.Connection, source_id: str, path: str | Path) -> str | None:
    """The origin key ``source_id`` (bytes just found at ``path``) was last seen under, when
    that was another file that no longer exists and is the current version there: the file was
    moved (None otherwise)."""
    row = db.execute("SELECT origin_key FROM sources WHERE id = ?", (source_id,)).fetchone()
    if row is None or not row[0] or "://" in str(row[0]):
        return None
    key = str(row[0])
    if key == origin_key(path) or Path(key).exists():
        return None
    latest = current_version(db, key)
    return key if latest is not None and latest[0] == source_id else None
