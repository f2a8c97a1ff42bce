"""Retrieval: FTS5 (BM25), optional dense vectors, fused; token counting."""
