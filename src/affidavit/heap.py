"""The cyclic garbage collector, tuned for long passes that build many lasting objects.

An ingest keeps large caches (the support check's readings and verdicts, the duplicate index,
source texts): over all 233 State of the Union addresses about 1.4 million tracked objects. With
CPython's default thresholds the collector walked all of them some thirty times (a full
collection each time the objects surviving younger collections grew by a quarter), ~0.7 s each:
29 s of a 155 s ingest. Almost nothing an ingest makes is cyclic garbage (reference counting frees
it): with the collector off, peak memory was the same. :func:`few_collections` keeps the collector
on, so a cycle is still freed, but collects young objects every 50,000 allocations rather than
700 and old ones rarely; the thresholds are restored after.

:func:`few_arenas` caps glibc's malloc arenas. Each thread that allocates (the search index's
refresher, tantivy's writer threads, the read-ahead feeder) gets an arena of its own, up to
eight per core, and memory freed in one arena is not reused by another: ingesting 60 State of
the Union addresses peaked at 603-655 MB with the default and at 555-567 MB with two arenas, for
about the same CPU time (median +2 %) and the same wiki (docs/benchmarks.md, issue 25 item 2).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

ARENAS = 2
"""glibc malloc arenas at most (``M_ARENA_MAX``): the main one and one the other threads share."""
_M_ARENA_MAX = -8  # glibc's malloc.h
_capped = False


def few_arenas() -> bool:
    """Cap glibc's malloc arenas at :data:`ARENAS` for the rest of the process (threads started
    later share them; arenas already made stay). True once capped; False where the C library is
    not glibc, which is left as it is."""
    global _capped
    if _capped:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return False
    _capped = bool(mallopt(_M_ARENA_MAX, ARENAS))
    return _capped


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
