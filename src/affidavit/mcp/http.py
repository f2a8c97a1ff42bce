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
    ``opens``, name -> opener, e.g. a PostgreSQL database's, :func:`pg_endpoint`).

    TCP requests go to a manager with DNS-rebinding protection (a browser page can reach a
    loopback port, never a Unix socket); socket requests, whose Host is arbitrary, to one without.
    """

    def __init__(
        self, registry: Registry | None = None, opens: Mapping[str, Opener] | None = None
    ) -> None:
        if registry is not None:
            opens = {name: served.borrow for name, served in registry.vaults.items()}
        self.managers: dict[tuple[str, str], StreamableHTTPSessionManager] = {}
        for name, open_vault in (opens or {}).items():
            door = Door(open_vault, "daemon", origin="mcp-http", caller=_caller, threaded=True)
            server = build_server(door)
            for transport, security in (("tcp", LOOPBACK), ("unix", None)):
                self.managers[(name, transport)] = StreamableHTTPSessionManager(
                    app=server._mcp_server,  # the lowlevel server the FastMCP wraps
                    json_response=True,
                    stateless=True,
                    security_settings=security,
                )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run every vault's session manager for the daemon's lifetime (its lifespan)."""
        async with AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            yield

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        name = scope.get("path_params", {}).get("vault", "")
        peer = scope.get("state", {}).get(PEER_KEY)
        transport = "unix" if peer is not None and peer.transport == "unix" else "tcp"
        manager = self.managers.get((name, transport))
        if manager is None:  # the Guard already refused unknown vaults; be safe anyway
            await send_error(send, 404, "NotFoundError", f"no vault {name!r}.", "GET /v1/whoami.")
            return
        await manager.handle_request(scope, receive, send)


def pg_endpoint(registry: PgRegistry) -> McpEndpoint:
    """The endpoint over every vault of a PostgreSQL database (``serve --database URL``)."""
    from functools import partial

    from .pg import opened

    return McpEndpoint(opens={n: partial(opened, s.service) for n, s in registry.vaults.items()})


def mcp_route(endpoint: McpEndpoint) -> Route:
    """The route the Guard sees: ``read`` on the vault in the path, like any vault route."""
    route = Route(PATH, endpoint=endpoint, methods=["POST"])  # stateless: no stream to GET
    route.openapi_extra = {ACCESS_KEY: "read"}  # type: ignore[attr-defined]
    return route


__all__ = ["PATH", "McpEndpoint", "ServedVault", "mcp_route", "pg_endpoint"]
