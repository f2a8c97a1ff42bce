"""The worker that computes pure work ahead (ingest/ahead.py): same results as in-process, and
when it can't help — not started, dead, its call raised, asked out of order — the caller is told
to compute the value itself, never handed a wrong one."""

from __future__ import annotations

import io
import json
import os
import pickle
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from affidavit.hashing import sha256_hex
from affidavit.ingest import ahead, pipeline
from affidavit.ingest.ahead import Ahead
from affidavit.ingest.chunking import chunk_text
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import init_vault

from .conftest import SAMPLES, FakeClock

HASH = "affidavit.hashing:sha256_hex"
_python = sys.executable


def _items(n: int) -> list[tuple[int, str]]:
    return [(i, f"item {i} " * (i % 7 + 1)) for i in range(n)]


def test_results_are_those_of_the_same_call_in_process() -> None:
    items = _items(40)
    with Ahead(HASH, depth=4) as worker:
        worker.extend(items)
        got = [worker.take(key) for key, _ in items]
        assert worker.computed == 40  # the worker computed every one of them
        assert worker.stopped is None
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
    assert worker.stopped is None  # one item failed; the worker went on with the rest
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
        # the feeder's write into the dead pipe, the end of its answers or a frame cut short by
        # the kill: whichever came first is said
        assert worker.stopped is not None
        assert any(
            why in worker.stopped for why in ("worker ended", "could not be sent", "refused")
        ), worker.stopped
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
        assert worker.stopped is not None and "could not start" in worker.stopped


def test_close_before_taking_ends_the_worker() -> None:
    worker = Ahead(HASH, depth=4)
    worker.extend(_items(100))
    process = worker._process
    assert process is not None
    worker.take(0)
    worker.close()
    assert process.poll() is not None
    assert worker.stopped is None  # closed by its caller: it did not stop helping


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
        ahead.send(source, frame)
    source.seek(0)
    sink = io.BytesIO()
    ahead.serve(sha256_hex, source, sink)
    sink.seek(0)
    answers = [ahead.receive(sink) for _ in range(3)]
    assert answers[0] == (1, True, sha256_hex("a"))
    assert answers[1][:2] == (2, False) and "Error" in answers[1][2]
    assert answers[2] == (3, True, sha256_hex("c"))
    with pytest.raises(EOFError):
        ahead.receive(sink)


def _frames(*values: Any) -> bytes:
    stream = io.BytesIO()
    for value in values:
        ahead.send(stream, value)
    return stream.getvalue()


def test_a_changed_frame_is_never_unpickled() -> None:
    """A frame whose bytes changed on the way (one byte, or a valid pickle of another value put
    in its place) is refused, not read as a value: the caller then computes it itself."""
    good = _frames((1, "the argument"))
    other = pickle.dumps((1, "another arg!"), protocol=pickle.HIGHEST_PROTOCOL)
    header = good[: len(good) - len(other)]
    assert len(good) - len(header) == len(other)
    for bad in (
        good[:-1] + bytes([good[-1] ^ 1]),  # a flipped bit
        header + other,  # same length, a valid pickle of something else
        good[:-3],  # cut short
        good[:10],  # cut inside the header
    ):
        with pytest.raises(ahead.FrameError):
            ahead.receive(io.BytesIO(bad))
    huge = ahead._HEADER.pack(ahead.MAX_FRAME + 1, bytes(16))
    with pytest.raises(ahead.FrameError):
        ahead.receive(io.BytesIO(huge))


def test_a_changed_answer_stops_the_worker_helping_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answer from the worker that is not what it wrote ends the help: that item and every
    later one are the caller's, and ``stopped`` names the reason the ingest reports."""
    items = _items(6)
    real = ahead.receive

    def changed(stream: Any) -> Any:
        real(stream)  # the frame arrived, but (say) one of its bytes had changed
        raise ahead.FrameError("a frame's bytes differ from what was sent")

    with Ahead(HASH, depth=1) as worker:
        worker.extend(items)
        assert worker.take(0) == (True, sha256_hex(items[0][1]))
        monkeypatch.setattr(ahead, "receive", changed)
        assert [worker.take(key) for key, _ in items[1:]] == [(False, None)] * 5
        assert worker.stopped == (
            "an answer from the worker was refused: a frame's bytes differ from what was sent"
        )


def test_the_worker_stops_at_a_changed_frame() -> None:
    """The worker answers the frames before a changed one and nothing after it: a stream out of
    step is never read on."""
    first, second = _frames((1, "a")), _frames((2, "b"))
    source = io.BytesIO(first + second[:-1] + bytes([second[-1] ^ 1]) + _frames((3, "c")))
    sink = io.BytesIO()
    ahead.serve(sha256_hex, source, sink)
    sink.seek(0)
    assert ahead.receive(sink) == (1, True, sha256_hex("a"))
    with pytest.raises(EOFError):
        ahead.receive(sink)


def _ingest_samples(root: Path, worker: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(pipeline, "AHEAD_MIN_CHUNKS", 2 if worker else 10**9)
    taken: list[int] = []
    close = Ahead.close

    def counted(self: Ahead) -> None:
        taken.append(self.computed)
        close(self)

    monkeypatch.setattr(Ahead, "close", counted)
    vault, _ = init_vault(root, clock=FakeClock())
    try:
        provider = provider_from_config(vault.config, "extractive")
        report = Ingestor(vault, provider, apply_now=True).run([str(SAMPLES / "sotu")], "trusted")
        assert not report.failed
        return {
            "wiki": {p.name: p.read_bytes() for p in sorted(vault.wiki_dir.glob("*.md"))},
            "claims": vault.db.execute(
                "SELECT id, page_slug, section, position, text, status FROM claims ORDER BY id"
            ).fetchall(),
            "worker": sum(taken),
        }
    finally:
        vault.close()


def test_an_ingest_with_the_worker_writes_what_one_without_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = _ingest_samples(tmp_path / "alone", False, monkeypatch)
    helped = _ingest_samples(tmp_path / "helped", True, monkeypatch)
    assert alone["worker"] == 0
    chunks = sum(
        len(chunk_text(p.read_text(encoding="utf-8"), 6000)) for p in (SAMPLES / "sotu").iterdir()
    )
    assert helped["worker"] == chunks  # every chunk's reading came from the worker
    assert helped["wiki"] == alone["wiki"]
    assert [tuple(r) for r in helped["claims"]] == [tuple(r) for r in alone["claims"]]
    assert len(alone["claims"]) > 100


def test_the_ingest_says_when_the_worker_stopped_helping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that can't help makes the ingest slower, never different, and the user is told:
    the summary's note and ``--json``'s ``read_ahead``."""
    from click.testing import CliRunner

    from affidavit.cli import main

    monkeypatch.setattr(pipeline, "AHEAD_MIN_CHUNKS", 2)
    runner = CliRunner()
    for vault, broken in (("ok", False), ("broken", True)):
        if broken:
            monkeypatch.setattr(ahead.sys, "executable", "/nonexistent/python")
        root = tmp_path / vault
        assert runner.invoke(main, ["init", str(root)]).exit_code == 0
        args = ["--vault", str(root), "ingest", str(SAMPLES / "sotu"), "--yes", "--trust"]
        shown = runner.invoke(main, [*args, "trusted"])
        assert shown.exit_code == 0, shown.output
        assert ("worker reading chunks ahead stopped" in shown.output) is broken
        assert ("could not start" in shown.output) is broken
    for vault, broken in (("ok2", False), ("broken2", True)):
        monkeypatch.setattr(ahead.sys, "executable", "/nonexistent/python" if broken else _python)
        root = tmp_path / vault
        assert runner.invoke(main, ["init", str(root)]).exit_code == 0
        args = ["--vault", str(root), "ingest", str(SAMPLES / "sotu"), "--yes", "--json"]
        done = runner.invoke(main, [*args, "--trust", "trusted"])
        assert done.exit_code == 0, done.output
        read_ahead = json.loads(done.output)["totals"]["read_ahead"]
        if broken:
            assert read_ahead["chunks"] == 0 and "could not start" in read_ahead["stopped"]
        else:
            assert read_ahead["chunks"] > 0 and read_ahead["stopped"] is None
