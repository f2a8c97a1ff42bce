"""The daemon benchmark's floor: an ASGI app answering every request with one fixed JSON body.

A module of its own, importing nothing, so that uvicorn's worker processes (which import the app
by name) start in a moment (``bench/bench_server.py --floor --workers``)."""

from __future__ import annotations

from typing import Any

BODY = b'{"query":"floor","hits":[]}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]


async def bare_app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
