"""A job's event stream ends only after the job's last event is sent, whatever the order a
poll reads the job and its events in (a two-daemon run lost the ``done`` event: the poll read
the events before the end committed and the job after it)."""

from __future__ import annotations

import threading
from typing import Any

import anyio

from affidavit.jobs.models import Job, JobEvent
from affidavit.server import job_stream


def _job(status: str) -> Job:
    return Job(
        id="j1", kind="lint", status=status, queued=True, payload={}, requested_by="me",
        created_at="2026-12-08T00:00:00Z",
    )  # fmt: skip


def _event(seq: int, kind: str) -> JobEvent:
    return JobEvent(seq=seq, job_id="j1", at="2026-12-08T00:00:00Z", type=kind, data={})


def _read(poll: Any, start: int = 0) -> list[str]:
    response = job_stream.event_stream(poll, start, threading.Event())

    async def body() -> list[str]:
        return [chunk async for chunk in response.body_iterator]  # type: ignore[misc]

    return anyio.run(body)


def _types(chunks: list[str]) -> list[str]:
    return [
        line.removeprefix("event: ")
        for chunk in chunks
        for line in chunk.splitlines()
        if line.startswith("event: ")
    ]


def test_an_end_seen_before_its_event_is_read_still_sends_the_event() -> None:
    """Poll 2 is the race: the events read before the job ended, the job read after."""
    answers = iter([
        ([_event(1, "submitted"), _event(2, "progress")], _job("running")),
        ([], _job("done")),
        ([_event(3, "done")], _job("done")),
        ([], _job("done")),
    ])  # fmt: skip
    seen: list[int] = []

    def poll(seq: int) -> tuple[list[JobEvent], Job]:
        seen.append(seq)
        return next(answers)

    assert _types(_read(poll)) == ["submitted", "progress", "done"]
    assert seen == [0, 2, 2, 3]


def test_a_stream_of_an_ended_job_sends_its_events_and_ends() -> None:
    events = [_event(1, "submitted"), _event(2, "started"), _event(3, "failed")]
    calls: list[int] = []

    def poll(seq: int) -> tuple[list[JobEvent], Job]:
        calls.append(seq)
        return [e for e in events if e.seq > seq], _job("failed")

    chunks = _read(poll)
    assert _types(chunks) == ["submitted", "started", "failed"]
    assert [c.split("\n", 1)[0] for c in chunks] == ["id: 1", "id: 2", "id: 3"]
    assert calls == [0, 3]  # once for the events, once more to find nothing after them


def test_resuming_after_the_last_event_of_an_ended_job_ends_at_once() -> None:
    def poll(seq: int) -> tuple[list[JobEvent], Job]:
        return [], _job("done")

    assert _read(poll, start=3) == []
