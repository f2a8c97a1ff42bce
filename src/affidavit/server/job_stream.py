"""A job's events as server-sent events (``GET …/jobs/{id}/events``), the same stream over a
SQLite vault (:mod:`.routes.jobs`) and a PostgreSQL one (:mod:`.pg_app`): ``id`` is the event's
seq, so a client resumes with Last-Event-ID; the stream ends once the job has ended and every
event of it is sent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from fastapi.responses import StreamingResponse

from ..jobs.models import Job, JobEvent

POLL_SECONDS = 0.25
KEEPALIVE_POLLS = 60


def sse(event: JobEvent) -> str:
    """One server-sent event: ``id`` is the event's seq, so a client resumes with Last-Event-ID."""
    return f"id: {event.seq}\nevent: {event.type}\ndata: {event.model_dump_json()}\n\n"


def resume_at(after: int, last_event_id: str | None) -> int:
    """The seq a stream starts after: ``after``, or the client's Last-Event-ID if later."""
    if last_event_id is not None and last_event_id.isdigit():
        return max(after, min(int(last_event_id), 2**62))  # a BIGINT's range on PostgreSQL
    return after


def event_stream(
    poll: Callable[[int], tuple[list[JobEvent], Job]], start: int, stopping: Any
) -> StreamingResponse:
    """A job's events as ``text/event-stream`` (SQLite's or PostgreSQL's: ``poll(seq)`` returns
    the events after ``seq`` and the job), until the job has ended and every event is sent."""

    async def stream() -> AsyncIterator[str]:
        seq, idle, ended = start, 0, False
        while True:
            batch, job = await anyio.to_thread.run_sync(poll, seq)
            for event in batch:
                seq = event.seq
                yield sse(event)
            if ended and not batch:
                return
            if job.terminal and not ended:
                # A job's last event commits with its end; a poll that read the events before
                # the end committed and the job after saw the end without that event. Every
                # event is committed once the end is seen: one more read gets the rest.
                ended = True
                continue
            if stopping.is_set():
                yield ": the daemon is shutting down; reconnect with Last-Event-ID\n\n"
                return
            if batch:
                idle = 0
                continue
            idle += 1
            if idle % KEEPALIVE_POLLS == 0:
                yield ": keep-alive\n\n"
            await anyio.sleep(POLL_SECONDS)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


__all__ = ["event_stream", "resume_at", "sse"]
