"""The cyclic garbage collector, tuned for long passes that build many lasting objects.

An ingest keeps large caches (the support check's readings and verdicts, the duplicate index,
source texts): over all 233 State of the Union addresses about 1.4 million tracked objects. With
CPython's default thresholds the collector walked all of them some thirty times (a full
collection each time the objects surviving younger collections grew by a quarter), ~0.7 s each:
29 s of a 155 s ingest. Almost nothing an ingest makes is cyclic garbage (reference counting frees
it): with the collector off, peak memory was the same. :func:`few_collections` keeps the collector
on, so a cycle is still freed, but collects young objects every 50,000 allocations rather than
700 and old ones rarely; the thresholds are restored after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 100)
"""Young objects collected after this many net allocations; the middle generation after 20 young
collections, the oldest after 100 of those (and, as always, only once a quarter more objects
have survived into it)."""


@contextmanager
def few_collections() -> Iterator[None]:
    """Run the block with :data:`THRESHOLDS` (never lower than the ones set), then restore them."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(THRESHOLDS, before, strict=False)))
    try:
        yield
    finally:
        gc.set_threshold(*before)
