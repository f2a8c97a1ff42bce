"""The request log: one line per request, in the log before the client holds its whole answer.

A test (or an operator's script) that has its response must find the request's line already
written — never "the line may still be on its way" — and a request that fails, before or after
its response, is still logged exactly once.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from affidavit.server import logs
from affidavit.server.logs import RequestLog, setup_logging


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """setup_logging() onto a string, and the loggers as they were afterwards."""
    names = ("affidavit", "uvicorn", "uvicorn.error")
    saved = {n: logging.getLogger(n) for n in names}
    before = {n: (lg.handlers[:], lg.level, lg.propagate) for n, lg in saved.items()}
    access = logging.getLogger("uvicorn.access").disabled
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    monkeypatch.setattr(logs, "_direct", None)
    setup_logging()
    try:
        yield out
    finally:
        for name, (handlers, level, propagate) in before.items():
            saved[name].handlers, saved[name].level = handlers, level
            saved[name].propagate = propagate
        logging.getLogger("uvicorn.access").disabled = access


def _lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _run(app: Any, out: io.StringIO) -> list[tuple[bool, int]]:
    """Call ``RequestLog(app)``; for each body part sent, (more to come?, lines logged then)."""
    seen: list[tuple[bool, int]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            seen.append((bool(message.get("more_body")), len(_lines(out))))

    scope = {"type": "http", "method": "GET", "path": "/x", "state": {}}
    asyncio.run(RequestLog(app)(scope, receive, send))
    return seen


def test_the_line_is_written_before_the_answers_last_part(stream: io.StringIO) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"a", "more_body": True})
        await send({"type": "http.response.body", "body": b"b"})

    assert _run(app, stream) == [(True, 0), (False, 1)]
    ((line,),) = [_lines(stream)]
    assert line["event"] == "request" and line["status"] == 201 and line["method"] == "GET"


def test_a_failed_request_is_logged_once(stream: io.StringIO) -> None:
    async def before(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("no answer at all")

    async def after(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})
        raise RuntimeError("after the answer")

    for app in (before, after):
        with pytest.raises(RuntimeError):
            _run(app, stream)
    assert [x["status"] for x in _lines(stream)] == [500, 200]
