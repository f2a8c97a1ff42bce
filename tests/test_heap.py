"""The collector's thresholds during long passes (heap.py): raised inside, restored after, even
when the block raises; never lowered; and a cycle made inside is still freed."""

from __future__ import annotations

import gc
import weakref

import pytest

from affidavit.heap import THRESHOLDS, few_collections


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_thresholds_are_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with few_collections():
            assert gc.get_threshold() == THRESHOLDS
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(RuntimeError), few_collections():
            raise RuntimeError("boom")
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(100_000, 50, 200)  # already higher: kept
        with few_collections():
            assert gc.get_threshold() == (100_000, 50, 200)
    finally:
        gc.set_threshold(*before)


def test_a_cycle_made_inside_is_still_collected_without_asking() -> None:
    with few_collections():
        assert gc.isenabled()
        node = _Node()
        ref = weakref.ref(node)
        del node
        assert ref() is not None  # a cycle: reference counting can't free it
        for _ in range(THRESHOLDS[0] * 2):  # the collector runs by itself as garbage piles up
            _Node()
        assert ref() is None
