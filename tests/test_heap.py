"""The collector's thresholds during long passes (heap.py): raised inside, restored after, even
when the block raises; never lowered; and a cycle made inside is still freed."""

from __future__ import annotations

import gc
import os
import platform
import re
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

import affidavit
from affidavit.heap import ARENAS, THRESHOLDS, few_collections


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


_ARENAS_SCRIPT = """
import ctypes, sys, threading
from affidavit.heap import few_arenas
if sys.argv[1] == "cap":
    assert few_arenas() and few_arenas()
start = threading.Barrier(6)
def work():
    start.wait()  # all alive at once, so none can inherit an arena a finished one released
    keep = [bytearray(4000) for _ in range(2000)]
    start.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL("libc.so.6").malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc arenas are glibc's",
)
def test_few_arenas_caps_the_arenas_threads_make() -> None:
    """Six threads allocating at once make arenas of their own by default; after
    :func:`few_arenas` they share at most :data:`ARENAS`."""
    env = {**os.environ, "PYTHONPATH": str(Path(affidavit.__file__).parents[1])}
    env.pop("MALLOC_ARENA_MAX", None)

    def arenas(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _ARENAS_SCRIPT, mode],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        return len(re.findall(r"^Arena \d+:", done.stderr, re.MULTILINE))

    assert arenas("default") > ARENAS
    assert arenas("cap") <= ARENAS
