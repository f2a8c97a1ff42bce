"""The MCP server in the daemon: streamable HTTP at ``/mcp/{vault}``, behind the API's Guard.

The Guard authenticates every request to ``/mcp/{vault}`` exactly as it does the API (the socket
owner by peer credentials, or a bearer token over TCP) and requires the ``read`` role on that
vault; proposing and adding a source also need ``propose``, checked per call from the same
principal. The same tools serve a PostgreSQL database's vaults (:func:`pg_endpoint`, through
:mod:`.pg`). Each served vault gets its own server, stateless (one request, one answer) with JSON
responses, and DNS-rebinding protection on (Host and Origin must be loopback).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from ..server.auth import ACCESS_KEY, PRINCIPAL_KEY, ROLE_KEY, Principal, send_error
from ..server.peer import PEER_KEY
from ..server.registry import Registry, ServedVault
from ..vault import Vault
from .server import Door, build_server
from .wiki import ToolWiki

if TYPE_CHECKING:
    from ..server.pg_registry import PgRegistry

Opener = Callable[[], AbstractContextManager[Vault | ToolWiki]]
"""Lends one served vault for one tool call."""

PATH = "/mcp/{vault}"
LOOPBACK = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["localhost", "127.0.0.1", "[::1]", "localhost:*", "127.0.0.1:*", "[::1]:*"],
    allowed_origins=["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"],
)

Scope = dict[str, Any]


def _caller(request: Any) -> tuple[str, str]:
    state = request.scope.get("state", {}) if request is not None else {}
    principal = state.get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):
        return "", "unknown"
    return str(state.get(ROLE_KEY) or ""), principal.actor


class McpEndpoint:
    """The ASGI app behind ``/mcp/{vault}``: stateless MCP session managers per vault, each
    vault lent for a call by its opener (``registry``: the SQLite vaults a daemon serves; or
    ``opens``, name -> opener, e.g. a PostgreSQL database's, :func:`pg_endpoint`). ``find``
    names the opener of a vault served after the daemon started (a database's vault made later):
    its managers start at its first request.

    TCP requests go to a manager with DNS-rebinding protection (a browser page can reach a
    loopback port, never a Unix socket); socket requests, whose Host is arbitrary, to one without.
    """

    def __init__(
        self,
        registry: Registry | None = None,
        opens: Mapping[str, Opener] | None = None,
        find: Callable[[str], Opener | None] | None = None,
    ) -> None:
        if registry is not None:
            opens = {name: served.borrow for name, served in registry.vaults.items()}
        self.managers: dict[tuple[str, str], StreamableHTTPSessionManager] = {}
        for name, open_vault in (opens or {}).items():
            self.managers.update(_managers(name, open_vault))
        self._find = find
        self._late: TaskGroup | None = None  # runs the managers of vaults found later
        self._adding = anyio.Lock()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run every vault's session manager for the daemon's lifetime (its lifespan)."""
        async with AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            if self._find is None:
                yield
                return
            async with anyio.create_task_group() as late:
                self._late = late
                try:
                    yield
                finally:
                    self._late = None
                    late.cancel_scope.cancel()

    async def _late_manager(self, key: tuple[str, str]) -> StreamableHTTPSessionManager | None:
        """The manager of a vault the daemon serves since it started, started now (once)."""
        async with self._adding:
            if key not in self.managers and self._find is not None and self._late is not None:
                open_vault = self._find(key[0])
                if open_vault is None:
                    return None
                made = _managers(key[0], open_vault)
                for manager in made.values():
                    await self._late.start(_run, manager)
                self.managers.update(made)
        return self.managers.get(key)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        name = scope.get("path_params", {}).get("vault", "")
        peer = scope.get("state", {}).get(PEER_KEY)
        transport = "unix" if peer is not None and peer.transport == "unix" else "tcp"
        manager = self.managers.get((name, transport))
        if manager is None and self._find is not None:
            manager = await self._late_manager((name, transport))
        if manager is None:  # the Guard already refused unknown vaults; be safe anyway
            await send_error(send, 404, "NotFoundError", f"no vault {name!r}.", "GET /v1/whoami.")
            return
        await manager.handle_request(scope, receive, send)


def _managers(name: str, open_vault: Opener) -> dict[tuple[str, str], StreamableHTTPSessionManager]:
    """One vault's server behind a manager per transport (TCP with DNS-rebinding protection)."""
    door = Door(open_vault, "daemon", origin="mcp-http", caller=_caller, threaded=True)
    server = build_server(door)
    return {
        (name, transport): StreamableHTTPSessionManager(
            app=server._mcp_server,  # the lowlevel server the FastMCP wraps
            json_response=True,
            stateless=True,
            security_settings=security,
        )
        for transport, security in (("tcp", LOOPBACK), ("unix", None))
    }


async def _run(
    manager: StreamableHTTPSessionManager,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()


def pg_endpoint(registry: PgRegistry) -> McpEndpoint:
    """The endpoint over every vault of a PostgreSQL database (``serve --database URL``),
    including one made after the daemon started: the Guard found it in the database
    (:meth:`~affidavit.server.pg_registry.PgRegistry.find`) before the request reached here."""
    from functools import partial

    from .pg import opened

    def late(name: str) -> Opener | None:
        served = registry.vaults.get(name)  # never asks the database: the Guard did
        return None if served is None else partial(opened, served.service)

    return McpEndpoint(
        opens={n: partial(opened, s.service) for n, s in registry.vaults.items()}, find=late
    )


def mcp_route(endpoint: McpEndpoint) -> Route:
    """The route the Guard sees: ``read`` on the vault in the path, like any vault route."""
    route = Route(PATH, endpoint=endpoint, methods=["POST"])  # stateless: no stream to GET
    route.openapi_extra = {ACCESS_KEY: "read"}  # type: ignore[attr-defined]
    return route


__all__ = ["PATH", "McpEndpoint", "ServedVault", "mcp_route", "pg_endpoint"]
