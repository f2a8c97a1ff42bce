"""Ingest: sources → chunks → model calls → plans through the gate."""

from .chunking import Chunk, chunk_text
from .pipeline import Ingestor, IngestReport

__all__ = ["Chunk", "IngestReport", "Ingestor", "chunk_text"]
