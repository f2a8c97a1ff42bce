"""Dense vectors of active claims in the ``vectors`` table, with lineage, and brute-force search.

Every stored vector records the embedding model, its version and the SHA-256 of exactly the text
it embeds. A vector is *usable* only while all three match: the current embedder's ``name`` and
``version``, and the hash of its claim's current text, and while the claim is active. Anything
else is ignored by :meth:`VectorIndex.search` and rebuilt by :meth:`VectorIndex.reindex` (the
work of ``affidavit reindex``); vectors of claims that are no longer active are deleted.

Search is exact: one float32 matrix-vector product over the usable rows and a partial sort
(``bench/bench_vectors.py`` and docs/benchmarks.md "Vector search" have the measurements that chose
it over approximate indexes). The matrix is cached per process, keyed by database file, model,
version and a fingerprint of the ``vectors`` table (row count, highest rowid), so repeated searches
don't re-read the BLOBs; which rows are usable is re-derived from ``claims`` (hashing every text)
only when the claims changed — the change log of ``m008_search_changes`` says so — not when
anything else in the database did (every ``ask`` logs its question: that used to cost 35 % of a
dense search). ``PRAGMA data_version`` plus the connection's ``total_changes`` still decide when
to look at all.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..clock import Clock, iso, utc_now
from ..db import read_snapshot, transaction
from .embeddings import Embedder, Vectors, text_sha256

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each batch that :meth:`VectorIndex.reindex` stores."""

CACHE_ENTRIES = 4


@dataclass(frozen=True)
class ReindexReport:
    """What a reindex did: claims embedded now, vectors kept as they were, vectors deleted."""

    embedded: int
    reused: int
    removed: int

    def to_json(self) -> dict[str, int]:
        return {"embedded": self.embedded, "reused": self.reused, "removed": self.removed}


def to_blob(vector: npt.NDArray[Any]) -> bytes:
    """A vector as the stored BLOB: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: list[bytes], dim: int) -> Vectors:
    """Stored BLOBs (each ``dim`` little-endian float32) as one ``(len(blobs), dim)`` matrix."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype="<f4")
    return np.ascontiguousarray(flat.reshape(len(blobs), dim), dtype=np.float32)


def top_k(
    matrix: Vectors,
    query: Vectors,
    k: int,
    rows: npt.NDArray[np.intp] | None = None,
    rank: npt.NDArray[np.int64] | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` rows of ``matrix`` with the highest dot product with ``query``, best first.

    Only ``rows`` (row numbers) are candidates when given: a few are scored alone, many by
    scoring all rows and picking theirs (cheaper than copying most of the matrix). Ties go to the
    lower ``rank[row]`` (the row's claim id's place in id order), or without ``rank`` to the lower
    row number, so results are deterministic. Returns ``(row, score)`` pairs.
    """
    if rows is None:
        scores = matrix @ query
    elif 4 * len(rows) < len(matrix):
        scores = matrix[rows] @ query
    else:
        scores = (matrix @ query)[rows]
    k = min(k, len(scores))
    if k <= 0:
        return []
    if k < len(scores):
        part = np.argpartition(scores, len(scores) - k)[len(scores) - k :]
        keep = np.flatnonzero(scores >= scores[part].min())  # every row tied with the k-th
    else:
        keep = np.arange(len(scores))
    found = keep if rows is None else rows[keep]
    order = np.lexsort((found if rank is None else rank[found], -scores[keep]))[:k]
    return [(int(found[i]), float(scores[keep[i]])) for i in order]


@dataclass(frozen=True)
class _Matrix:
    """Stored vectors of one lineage in table order: row ``i`` is claim ``ids[i]``, whose id is
    the ``rank[i]``-th in id order."""

    fingerprint: tuple[int, int]
    ids: list[str]
    shas: list[str]
    matrix: Vectors
    row_of: dict[str, int]
    rank: npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Entry:
    matrix: _Matrix
    usable: npt.NDArray[np.bool_]
    state: tuple[sqlite3.Connection, int, int]
    claims: object  # the claims' change position the mask was derived at (None: unknown)


_CACHE: OrderedDict[tuple[str, str, str, int], _Entry] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every cached matrix (the next search reloads from the database)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _rows(db: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    """All rows as plain tuples (several times cheaper than ``sqlite3.Row`` for bulk reads)."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql).fetchall()


def _db_key(db: sqlite3.Connection) -> str:
    for row in db.execute("PRAGMA database_list"):
        if row[1] == "main" and row[2]:
            return str(row[2])
    return f"memory:{id(db)}"


def _claims_position(db: sqlite3.Connection) -> object:
    """Where the claims' change log stands (migration ``m008_search_changes`` logs every change
    to a claim's text or status): equal positions mean the same claims. None without the log."""
    from .tantivy_index import db_position

    return db_position(db)


def _state(db: sqlite3.Connection) -> tuple[sqlite3.Connection, int, int]:
    """Changes whenever anything in the database changed, by this connection or another."""
    return db, int(db.execute("PRAGMA data_version").fetchone()[0]), db.total_changes


class VectorIndex:
    """Builds and searches the claim vectors of one database. Stateless: the cache is shared."""

    def __init__(self, batch_size: int = 256, clock: Clock = utc_now) -> None:
        self.batch_size = batch_size
        self.clock = clock

    # -- lineage ---------------------------------------------------------------------------

    def _pending(
        self, db: sqlite3.Connection, embedder: Embedder, claim_ids: Iterable[str] | None
    ) -> tuple[list[tuple[str, str, str]], int]:
        """Active claims whose vector is missing or of another lineage, as (id, text, sha); and
        how many have a usable one."""
        rows = db.execute(
            "SELECT c.id, c.text, v.model, v.model_version, v.text_sha256, v.dim "
            "FROM claims c LEFT JOIN vectors v ON v.claim_id = c.id "
            "WHERE c.status = 'active' ORDER BY c.id"
        ).fetchall()
        wanted = None if claim_ids is None else set(claim_ids)
        todo: list[tuple[str, str, str]] = []
        usable = 0
        for cid, text, model, version, sha, dim in rows:
            if wanted is not None and cid not in wanted:
                continue
            current = text_sha256(text)
            if (model, version, sha, dim) == (
                embedder.name,
                embedder.version,
                current,
                embedder.dim,
            ):
                usable += 1
            else:
                todo.append((cid, text, current))
        return todo, usable

    def stale(self, db: sqlite3.Connection, embedder: Embedder) -> int:
        """How many active claims have no usable vector (missing, other model or other text)."""
        return len(self._pending(db, embedder, None)[0])

    def reindex(
        self,
        db: sqlite3.Connection,
        embedder: Embedder,
        claim_ids: Iterable[str] | None = None,
        progress: Progress | None = None,
    ) -> ReindexReport:
        """Embed every active claim (or those of ``claim_ids``) without a usable vector, and
        delete the vectors of claims that are not active.

        Each batch is embedded outside any transaction and stored in its own short one, so an
        interrupted reindex keeps what it stored and the next one carries on from there.
        """
        ids = None if claim_ids is None else list(claim_ids)
        with transaction(db):
            removed = db.execute(
                "DELETE FROM vectors WHERE claim_id NOT IN "
                "(SELECT id FROM claims WHERE status = 'active')"
            ).rowcount
        todo, reused = self._pending(db, embedder, ids)
        done = 0
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            vectors = embedder.embed([text for _, text, _ in batch])
            if vectors.shape != (len(batch), embedder.dim):
                raise ValueError(
                    f"embedder {embedder.name} returned shape {vectors.shape} for "
                    f"{len(batch)} texts of dimension {embedder.dim}"
                )
            self._store(db, embedder, batch, vectors)
            done += len(batch)
            if progress is not None:
                progress(done, len(todo))
        return ReindexReport(embedded=done, reused=reused, removed=max(removed, 0))

    def _store(
        self,
        db: sqlite3.Connection,
        embedder: Embedder,
        batch: list[tuple[str, str, str]],
        vectors: Vectors,
    ) -> None:
        now = iso(self.clock())
        with transaction(db):
            # Explicit rowids above every earlier one: the cache's fingerprint (count, max rowid)
            # then changes with every write, even when a replaced row had the highest rowid.
            base = int(db.execute("SELECT coalesce(max(rowid), 0) FROM vectors").fetchone()[0])
            db.executemany(
                "DELETE FROM vectors WHERE claim_id = ?", [(cid,) for cid, _, _ in batch]
            )
            lineage = (embedder.name, embedder.version)
            rows = [
                (base + n + 1, cid, *lineage, sha, embedder.dim, to_blob(vector), now)
                for n, ((cid, _, sha), vector) in enumerate(zip(batch, vectors, strict=True))
            ]
            db.executemany(
                "INSERT INTO vectors (rowid, claim_id, model, model_version, text_sha256, dim, "
                "vector, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    # -- search ----------------------------------------------------------------------------

    def search(
        self,
        db: sqlite3.Connection,
        embedder: Embedder,
        query: str,
        k: int,
        allowed: set[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` claims nearest to ``query`` by cosine, best first, ties by claim id.

        Only usable vectors count (see the module docstring); ``allowed`` further restricts the
        claims considered (e.g. to a trust tier). Returns ``(claim id, cosine)`` pairs.
        """
        if k <= 0 or not query.strip():
            return []
        entry = self._entry(db, embedder)
        usable = entry.usable
        if allowed is not None:
            chosen = np.zeros(len(usable), dtype=np.bool_)
            rows_allowed = [entry.matrix.row_of[c] for c in allowed if c in entry.matrix.row_of]
            chosen[rows_allowed] = True
            usable = usable & chosen
        rows = np.flatnonzero(usable)
        if len(rows) == 0:
            return []
        vector = embedder.embed([query])[0]
        subset = None if len(rows) == len(usable) else rows
        found = top_k(entry.matrix.matrix, vector, k, subset, entry.matrix.rank)
        return [(entry.matrix.ids[row], score) for row, score in found]

    def _entry(self, db: sqlite3.Connection, embedder: Embedder) -> _Entry:
        key = (_db_key(db), embedder.name, embedder.version, embedder.dim)
        state = _state(db)
        with _CACHE_LOCK:
            entry = _CACHE.get(key)
            if entry is not None and entry.state[0] is db and entry.state[1:] == state[1:]:
                _CACHE.move_to_end(key)
                return entry
            with read_snapshot(db):  # the fingerprint, the rows and the lineage check agree
                row = db.execute("SELECT count(*), coalesce(max(rowid), 0) FROM vectors").fetchone()
                fingerprint = (int(row[0]), int(row[1]))
                claims = _claims_position(db)
                if entry is not None and entry.matrix.fingerprint == fingerprint:
                    matrix = entry.matrix
                    if claims is not None and claims == entry.claims:
                        # Something else changed (a logged question, a job's progress): the
                        # same vectors and the same claims, so the same usable rows.
                        usable = entry.usable
                    else:
                        usable = self._usable(db, matrix)
                else:
                    matrix = self._load(db, embedder, fingerprint)
                    usable = self._usable(db, matrix)
                entry = _Entry(matrix, usable, state, claims)
            _CACHE[key] = entry
            _CACHE.move_to_end(key)
            while len(_CACHE) > CACHE_ENTRIES:
                _CACHE.popitem(last=False)
            return entry

    @staticmethod
    def _load(db: sqlite3.Connection, embedder: Embedder, fingerprint: tuple[int, int]) -> _Matrix:
        """Read one lineage's vectors in table order (sequential; ORDER BY claim_id would fetch
        rows at random through the index), a chunk at a time straight into the matrix."""
        dim = embedder.dim
        cursor = db.cursor()
        cursor.row_factory = None
        cursor.execute(
            "SELECT claim_id, text_sha256, vector FROM vectors "
            "WHERE model = ? AND model_version = ? AND dim = ? AND length(vector) = ?",
            (embedder.name, embedder.version, dim, 4 * dim),
        )
        matrix = np.empty((fingerprint[0], dim), dtype=np.float32)  # count: an upper bound
        ids: list[str] = []
        shas: list[str] = []
        while chunk := cursor.fetchmany(4096):
            block = np.frombuffer(b"".join(r[2] for r in chunk), dtype="<f4")
            matrix[len(ids) : len(ids) + len(chunk)] = block.reshape(len(chunk), dim)
            ids += [r[0] for r in chunk]
            shas += [r[1] for r in chunk]
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        return _Matrix(
            fingerprint=fingerprint,
            ids=ids,
            shas=shas,
            matrix=matrix[: len(ids)],
            row_of={cid: n for n, cid in enumerate(ids)},
            rank=rank,
        )

    @staticmethod
    def _usable(db: sqlite3.Connection, matrix: _Matrix) -> npt.NDArray[np.bool_]:
        """Rows whose claim is active and whose text still hashes to the stored hash."""
        usable = np.zeros(len(matrix.ids), dtype=np.bool_)
        if not matrix.ids:
            return usable
        row_of, shas = matrix.row_of, matrix.shas
        for cid, text in _rows(db, "SELECT id, text FROM claims WHERE status = 'active'"):
            row = row_of.get(cid)
            if row is not None and shas[row] == hashlib.sha256(text.encode()).hexdigest():
                usable[row] = True
        return usable


__all__ = [
    "Progress",
    "ReindexReport",
    "VectorIndex",
    "clear_cache",
    "from_blobs",
    "text_sha256",
    "to_blob",
    "top_k",
]
