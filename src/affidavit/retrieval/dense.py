"""Dense retrieval when the ``[embeddings]`` extra is installed and the vault is indexed."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..vault import Vault
    from .search import VectorSearch


class _Dense:
    def __init__(self, embedder: object, index: object) -> None:
        self.embedder = embedder
        self.index = index

    def search(self, db: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]:
        result: list[tuple[str, float]] = self.index.search(  # type: ignore[attr-defined]
            db, self.embedder, query, k
        )
        return result


def dense_search(vault: Vault) -> VectorSearch | None:
    """The vector search of ``vault``, or None without the extra or without any usable vector."""
    if vault.db.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
        return None  # never indexed: don't pay for loading the model
    try:
        from .embeddings import load_embedder
        from .vectors import VectorIndex
    except ImportError:
        return None
    embedder = load_embedder()
    if embedder is None:
        return None
    return _Dense(embedder, VectorIndex())
