"""The worker that computes pure work ahead (ingest/ahead.py): same results as in-process, and
when it can't help — not started, dead, its call raised, asked out of order — the caller is told
to compute the value itself, never handed a wrong one."""

from __future__ import annotations

import io
import os
import pickle
import signal

import pytest

from affidavit.hashing import sha256_hex
from affidavit.ingest import ahead
from affidavit.ingest.ahead import Ahead

HASH = "affidavit.hashing:sha256_hex"


def _items(n: int) -> list[tuple[int, str]]:
    return [(i, f"item {i} " * (i % 7 + 1)) for i in range(n)]


def test_results_are_those_of_the_same_call_in_process() -> None:
    items = _items(40)
    with Ahead(HASH, depth=4) as worker:
        worker.extend(items)
        got = [worker.take(key) for key, _ in items]
        assert worker.computed == 40  # the worker computed every one of them
    assert got == [(True, sha256_hex(value)) for _, value in items]


def test_skipped_keys_are_dropped_and_later_ones_still_right() -> None:
    items = _items(30)
    with Ahead(HASH, depth=3) as worker:
        worker.extend(items)
        assert worker.take(0) == (True, sha256_hex(items[0][1]))
        # 1..9 never taken (a chunk the caller skipped): 10 is still 10's result
        assert worker.take(10) == (True, sha256_hex(items[10][1]))
        assert worker.take(5) == (False, None)  # passed: the caller computes it
        assert worker.take(11) == (True, sha256_hex(items[11][1]))
        assert worker.take(999) == (False, None)  # never queued
        assert worker.take(12) == (True, sha256_hex(items[12][1]))


def test_a_call_that_raises_is_left_to_the_caller() -> None:
    items: list[tuple[int, object]] = [(i, f"v{i}") for i in range(12)]
    items[4] = (4, 12345)  # sha256_hex(int) raises
    with Ahead(HASH, depth=2) as worker:
        worker.extend(items)
        results = [worker.take(key) for key, _ in items]
    assert results[4] == (False, None)
    assert all(results[i] == (True, sha256_hex(f"v{i}")) for i in range(12) if i != 4)


def test_a_killed_worker_leaves_everything_to_the_caller_without_hanging() -> None:
    items = _items(50)
    worker = Ahead(HASH, depth=2)
    worker.extend(items)
    try:
        assert worker.take(0)[0] is True
        assert worker._process is not None
        os.kill(worker._process.pid, signal.SIGKILL)
        worker._process.wait()
        rest = [worker.take(key) for key, _ in items[1:]]
        # at most what was already in the pipe comes through, always right; then nothing
        for (key, value), (ok, result) in zip(items[1:], rest, strict=True):
            assert (ok, result) in ((True, sha256_hex(value)), (False, None)), key
        assert rest[-1] == (False, None)
    finally:
        worker.close()


def test_items_given_later_are_taken_after_the_first_ones() -> None:
    items = _items(20)
    with Ahead(HASH, depth=3) as worker:
        worker.extend(items[:5])
        assert worker.take(0) == (True, sha256_hex(items[0][1]))
        assert worker.take(7) == (False, None)  # not given yet
        worker.extend(items[5:])
        got = [worker.take(key) for key, _ in items[1:]]
        assert worker.computed == 20
    assert got == [(True, sha256_hex(value)) for _, value in items[1:]]


def test_a_worker_that_cannot_start_leaves_everything_to_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ahead.sys, "executable", "/nonexistent/python")
    with Ahead(HASH) as worker:
        worker.extend(_items(10))
        assert worker.take(0) == (False, None)


def test_close_before_taking_ends_the_worker() -> None:
    worker = Ahead(HASH, depth=4)
    worker.extend(_items(100))
    process = worker._process
    assert process is not None
    worker.take(0)
    worker.close()
    assert process.poll() is not None


@pytest.mark.parametrize(
    "name",
    ["os:system", "builtins:eval", "affidavit.hashing:sha256_hex.x", "affidavit.hashing", ""],
)
def test_only_functions_of_the_package_are_run(name: str) -> None:
    with pytest.raises(ValueError, match="not a function of this package"):
        ahead.resolve(name)


def test_a_worker_of_other_code_refuses_to_start() -> None:
    assert ahead.main([HASH, "/somewhere/else/affidavit"]) == 2


def test_the_loop_answers_each_frame_in_order() -> None:
    source = io.BytesIO()
    for frame in ((1, "a"), (2, 7), (3, "c")):
        pickle.dump(frame, source)
    source.seek(0)
    sink = io.BytesIO()
    ahead.serve(sha256_hex, source, sink)
    sink.seek(0)
    answers = [pickle.load(sink) for _ in range(3)]
    assert answers[0] == (1, True, sha256_hex("a"))
    assert answers[1][:2] == (2, False) and "Error" in answers[1][2]
    assert answers[2] == (3, True, sha256_hex("c"))
