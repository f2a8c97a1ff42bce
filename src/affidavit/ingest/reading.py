"""A chunk read ahead, in the ingest's worker process (:mod:`.ahead`): everything about a chunk
that depends on the chunk alone.

- the provider's part of its answer that reads the chunk alone (:attr:`Provider.ahead`, e.g. the
  extractive engine's analysis), handed to :meth:`Provider.complete_with`;
- the query :func:`.related.related_pages` runs for the chunk;
- the gate's readings of the texts the plan may show (:mod:`affidavit.gate.hints`), when the
  provider's part can list them (a ``texts()`` method).

None of it decides anything: this process still asks for the related pages, the plan still comes
from the provider's answer, and the gate still checks it; each value is what this process would
compute from the same text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..gate.hints import Hints, read_texts
from ..providers.base import IngestTask
from .ahead import resolve
from .related import match_query


@dataclass(frozen=True)
class ChunkReading:
    prepared: Any
    """What the provider's :attr:`~affidavit.providers.base.Provider.ahead` returned."""
    query: str
    """:func:`.related.match_query` of the chunk."""
    hints: Hints | None


def read_chunk(item: tuple[str, IngestTask]) -> ChunkReading:
    """``item``: the provider's ahead function (``"affidavit.module:name"``) and the chunk's
    task without the wiki's state (no pages, no pending slugs, no nonce)."""
    function, task = item
    prepared = resolve(function)(task)
    texts = getattr(prepared, "texts", None)
    hints = read_texts(texts()) if callable(texts) else None
    return ChunkReading(prepared, match_query(task.chunk), hints)
