"""The daemon's FastAPI application: one composition root for every served vault.

``create_app`` wires the registry of vaults, the routers (one per resource), the error handlers,
the :class:`~affidavit.server.auth.Guard` (authentication, authorisation, body limits — before
any route) and the request log; its lifespan starts one job worker per vault and stops them at
shutdown. ``/openapi.json`` describes every route, model and the access each needs (``x-access``).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

import anyio
from fastapi import FastAPI

from .. import __version__
from . import errors
from .auth import Guard
from .fastlane import FastReads
from .logs import RequestLog, event
from .registry import Registry
from .routes import content, jobs, lint, meta, plans, tokens, watches
from .workers import WorkerThreads

DESCRIPTION = """\
The Affidavit daemon: the typed API over one or more vaults.

On the Unix socket the caller is the UID the kernel reports (SO_PEERCRED); over TCP the caller
presents `Authorization: Bearer <token>`. Each route's `x-access` says who may call it: `public`,
`authenticated`, or a role on the vault in its path (`read` ⊂ `propose` ⊂ `approve` ⊂ `owner`).
Errors have one body: `{"error": {"type", "message", "fix"}}`. Writes go only through the inbox
(propose → approve → the one door).
"""


def create_app(
    registry: Registry,
    *,
    run_workers: bool = True,
    stopping: threading.Event | None = None,
    shutdown_seconds: float = 30.0,
    threads: int = 16,
    web: bool = False,
    web_hosts: frozenset[str] = frozenset(),
) -> FastAPI:
    stop = stopping or threading.Event()
    workers = WorkerThreads(registry, stop)
    mcp = _mcp_endpoint(registry)
    mcp_running: AbstractAsyncContextManager[Any] = mcp.running() if mcp else nullcontext()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # requests run in a bounded thread pool: past a few threads per core they only fight over
        # the GIL and open more SQLite connections with cold caches
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        if run_workers:
            workers.start()
        event("ready", vaults={name: str(v.root) for name, v in registry.vaults.items()})
        try:
            async with mcp_running:
                yield
        finally:
            stop.set()
            if run_workers:
                workers.join(shutdown_seconds)
            registry.close()

    app = FastAPI(
        title="Affidavit daemon",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        **_no_telemetry(),
    )
    app.state.registry = registry
    app.state.stopping = stop
    errors.install(app)
    routers = (
        meta.router,
        content.router,
        plans.router,
        jobs.router,
        lint.router,
        tokens.router,
        watches.router,
    )
    for router in routers:
        app.include_router(router)
    table = [route for router in routers for route in router.routes]
    if mcp is not None:  # /mcp/{vault}: the MCP tools, behind the same Guard as every route
        from ..mcp.http import mcp_route

        route = mcp_route(mcp)
        app.router.routes.append(route)
        table.append(route)
    if web:  # the review desk (serve --web): its own sessions, the same services
        from ..web import mount

        mount(app, registry, table, web_hosts)
    app.add_middleware(FastReads)  # inside the guard: only what it let through reaches it
    app.add_middleware(Guard, registry=registry, routes=lambda: table)
    app.add_middleware(RequestLog)
    return app


def _no_telemetry() -> dict[str, Any]:
    """FastAPI's OpenTelemetry bridge off (FastAPI ≥ 0.16x has one): the request log is the
    daemon's record, nothing is exported to a provider the environment may configure, and the
    bridge's per-request check of the environment was a tenth of the daemon's own work."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}


def _mcp_endpoint(registry: Registry) -> Any:
    """The streamable-HTTP MCP endpoint, when the [mcp] extra is installed."""
    try:
        from ..mcp.http import McpEndpoint
    except ImportError:
        return None
    return McpEndpoint(registry)


__all__ = ["create_app"]
