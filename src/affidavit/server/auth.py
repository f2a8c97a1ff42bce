"""Authentication and authorisation, decided before a request reaches its route (SPEC W10).

The :class:`Guard` middleware runs first for every request, before any body byte is read:

1. it finds the route the request would reach and the access the route declares
   (``openapi_extra={"x-access": ...}``; a route without one is refused: default deny);
2. it authenticates the caller: on the Unix socket by the UID the kernel gave for the connection
   (``SO_PEERCRED``, see :mod:`.peer`); on TCP by a bearer token (``Authorization: Bearer afd_…``);
3. it authorises: the caller's role on the vault named in the path must reach the route's level;
4. it refuses a body larger than the vault's ``server.max_body_bytes`` (413) from its
   ``Content-Length``, and counts the bytes of a body sent without one.

A registry whose lookups block (a PostgreSQL database's: :attr:`Vaults.blocking`) is asked in a
worker thread, never on the event loop, so one slow lookup stalls no other request; a database
that doesn't answer is a 503 with ``Retry-After`` and the fix
(:class:`~affidavit.errors.DatabaseUnavailable`), not a 500.

Roles: ``read`` ⊂ ``propose`` ⊂ ``approve`` ⊂ ``owner``. The vault's owner on the socket has every
role; token management is ``owner`` only, so never reachable with a token. Root's one exception:
on the socket, root may ``read`` a vault it does not own (``server.root_can_read``, default on).
Failures are 401 (who are you?) or 403 (not allowed), with the one error body; nothing runs.
"""

from __future__ import annotations

import json
import pwd
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.routing import Match

from ..errors import DatabaseUnavailable
from ..service import tokens as token_store
from ..service.models import AccessRole, ErrorBody, ErrorDetail
from .peer import PEER_KEY, Peer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

Access = Literal["public", "authenticated", "read", "propose", "approve", "owner"]
LEVEL: dict[str, int] = {"read": 1, "propose": 2, "approve": 3, "owner": 4}
ACCESS_KEY = "x-access"
PRINCIPAL_KEY = "affidavit.principal"
ROLE_KEY = "affidavit.role"
VAULT_KEY = "affidavit.vault"
ROUTE_KEY = "affidavit.route"
PARAMS_KEY = "affidavit.params"
PUBLIC_PATHS = frozenset({"/openapi.json"})
ROUTE_CACHE = 4096
"""Distinct (method, path) pairs whose matching route the guard remembers."""
ROUTE_CACHE_PATH = 512
"""Longer paths are matched every time, never remembered."""
DEFAULT_MAX_BODY = 65_536
"""Body limit of routes outside any vault (none of them takes a body)."""


class Served(Protocol):
    """What the guard reads of a served vault (SQLite's :class:`~.registry.ServedVault`, or a PostgreSQL
    database's vault, :class:`affidavit.server.pg_registry.PgServedVault`)."""

    name: str
    owner_uid: int
    read_only: str

    @property
    def root_can_read(self) -> bool: ...

    @property
    def max_body_bytes(self) -> int: ...


class Vaults(Protocol):
    """The served vaults by name, and whose a presented token is."""

    @property
    def vaults(self) -> Mapping[str, Served]: ...

    def check_token(
        self, token_id: str, secret: str
    ) -> tuple[str, token_store.TokenGrant | str]: ...

    def find(self, name: str) -> Served | None:
        """The served vault ``name``, or None (a database's registry may look it up first)."""

    @property
    def blocking(self) -> bool:
        """Whether :meth:`find` and :meth:`check_token` may wait on a network database (then
        the guard asks them in a worker thread, off the event loop)."""


def access(level: Access) -> dict[str, Any]:
    """Keyword arguments for a route decorator declaring who may call it."""
    return {"openapi_extra": {ACCESS_KEY: level}}


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a local user (by UID) or a bearer token of one vault."""

    transport: Literal["unix", "tcp"]
    uid: int | None = None
    token_id: str | None = None
    token_vault: str | None = None
    token_role: str | None = None

    @property
    def user(self) -> str | None:
        if self.uid is None:
            return None
        try:
            return pwd.getpwuid(self.uid).pw_name
        except KeyError:
            return None

    @property
    def actor(self) -> str:
        """How the audit log names this caller."""
        if self.token_id is not None:
            return f"token:{self.token_id}"
        return self.user or f"uid:{self.uid}"

    def role_on(self, vault: Served) -> AccessRole | None:
        """This caller's role on ``vault``, or None when it has none."""
        if vault.read_only:  # served read-only (W10): no one writes through this daemon
            full = self._full_role(vault)
            return "read" if full is not None else None
        return self._full_role(vault)

    def _full_role(self, vault: Served) -> AccessRole | None:
        if self.transport == "unix" and self.uid is not None:
            if self.uid == vault.owner_uid:
                return "owner"
            if self.uid == 0 and vault.root_can_read:
                return "read"
            return None
        if self.token_vault == vault.name and self.token_role in ("read", "propose", "approve"):
            return self.token_role  # type: ignore[return-value]
        return None


def allows(role: str | None, level: str) -> bool:
    return role is not None and LEVEL[role] >= LEVEL[level]


class Refused(Exception):
    def __init__(self, status: int, kind: str, message: str, fix: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.fix = status, kind, message, fix


def error_bytes(kind: str, message: str, fix: str) -> bytes:
    body = ErrorBody(error=ErrorDetail(type=kind, message=message, fix=fix))
    return json.dumps(body.model_dump()).encode()


_MISS = object()
DOWN_FIX = (
    "Retry after the seconds Retry-After says; if it persists, start the PostgreSQL server (or "
    "mend the network to it): the daemon reconnects by itself."
)
RETRY_AFTER = 5
"""Seconds a 503 (a vault or its database not answering now) tells the client to wait."""


async def send_error(send: Send, status: int, kind: str, message: str, fix: str) -> None:
    body = error_bytes(kind, message, fix)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="affidavit"'))
    if status == 503:
        headers.append((b"retry-after", str(RETRY_AFTER).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class Guard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, registry: Vaults, routes: Callable[[], list[Any]]) -> None:
        self.app = app
        self.registry = registry
        self.routes = routes
        self._cache: dict[tuple[Any, ...], tuple[Any, dict[str, Any]] | None] = {}
        self._local: dict[int | None, Principal] = {}
        self._table_size = -1

    def _route(self, scope: Scope) -> tuple[Any, dict[str, Any]] | None:
        """The first route that fully matches, as the router will pick it. The answer depends
        only on the request's type, method and path (and the table), so it is remembered for
        the last :data:`ROUTE_CACHE` distinct requests: matching ~40 patterns in turn was a
        tenth of a search's time."""
        routes = self.routes()
        key = (scope["type"], scope.get("method"), scope.get("root_path", ""), scope["path"])
        if self._table_size != len(routes):  # the table grew (a mount added late): forget all
            self._cache.clear()
            self._table_size = len(routes)
        cached: Any = self._cache.get(key, _MISS)  # one read: another thread may clear it
        if cached is not _MISS:
            return None if cached is None else (cached[0], dict(cached[1]))
        found = None
        for route in routes:
            match, child = route.matches(scope)
            if match == Match.FULL:
                found = (route, dict(child.get("path_params", {})))
                break
        if len(scope["path"]) <= ROUTE_CACHE_PATH:  # bounded memory, whoever sends paths
            if len(self._cache) >= ROUTE_CACHE:
                self._cache.clear()
            self._cache[key] = found
        return None if found is None else (found[0], dict(found[1]))

    def _authenticate(self, scope: Scope, peer: Peer | None) -> Principal | None:
        if peer is not None and peer.transport == "unix":
            known = self._local.get(peer.uid)
            if known is None:  # one immutable Principal per local UID, not one per request
                known = self._local[peer.uid] = Principal("unix", uid=peer.uid)
                if len(self._local) > ROUTE_CACHE:
                    self._local.clear()
            return known
        header = _header(scope, b"authorization")
        if header is None:
            return None
        scheme, _, value = header.partition(" ")
        parts = token_store.split_token(value) if scheme.lower() == "bearer" else None
        if parts is None:
            raise Refused(
                401,
                "Unauthenticated",
                "the Authorization header is not 'Bearer afd_…' with a well-formed token.",
                "Send Authorization: Bearer <token> with a token from `affidavit tokens create`.",
            )
        token_id, secret = parts
        name, verdict = self.registry.check_token(token_id, secret)
        if isinstance(verdict, token_store.TokenGrant):
            return Principal("tcp", token_id=token_id, token_vault=name, token_role=verdict.role)
        if verdict != "unknown":
            raise Refused(
                401,
                "Unauthenticated",
                f"token {token_id} is {verdict}.",
                "Ask the vault's owner for a new token (`affidavit tokens create`).",
            )
        raise Refused(
            401,
            "Unauthenticated",
            "unknown token.",
            "Check the token, or ask the vault's owner for one (`affidavit tokens create`).",
        )

    def _decide(self, scope: Scope) -> tuple[int, dict[str, Any]]:
        """Authenticate and authorise; returns the body limit and what to put in the state."""
        state: dict[str, Any] = scope.setdefault("state", {})
        peer = state.get(PEER_KEY)
        found = self._route(scope)
        level: str = "authenticated"
        params: dict[str, Any] = {}
        if found is not None:
            route, params = found
            state[ROUTE_KEY] = getattr(route, "path", "")
            state[PARAMS_KEY] = params
            level = (getattr(route, "openapi_extra", None) or {}).get(ACCESS_KEY, "")
            if not level:
                raise Refused(
                    500, "Misconfigured", "this route declares no access rule.", "Report it."
                )
        if scope.get("path") in PUBLIC_PATHS:
            state[ROUTE_KEY] = scope["path"]
            level = "public"
        if level == "public":
            return DEFAULT_MAX_BODY, {}
        name = params.get("vault") if found is not None and level != "authenticated" else None
        # found before the caller is authenticated, so that a token of a vault made after the
        # daemon started is known; refused only after, so an unknown caller learns nothing
        served = self.registry.find(name) if isinstance(name, str) else None
        principal = self._authenticate(scope, peer)
        if principal is None:
            raise Refused(
                401,
                "Unauthenticated",
                "this request carries no credentials.",
                "Over TCP send Authorization: Bearer <token> (`affidavit tokens create`); or "
                "use the Unix socket, where your UID identifies you.",
            )
        state[PRINCIPAL_KEY] = principal
        if found is None or level == "authenticated":
            return DEFAULT_MAX_BODY, {}
        if not isinstance(name, str):
            raise Refused(500, "Misconfigured", "a vault route without {vault}.", "Report it.")
        if served is None:
            raise Refused(
                404,
                "NotFoundError",
                f"no vault {name!r} is served here.",
                "GET /v1/whoami lists yours.",
            )
        role = principal.role_on(served)
        if served.read_only and role is not None and not allows(role, level):
            raise Refused(
                403,
                "Forbidden",
                f"this daemon serves vault {name!r} read-only: {served.read_only}",
                "Run `affidavit serve` as the vault's owner to write, or use the affidavit "
                "commands as that user.",
            )
        if not allows(role, level):
            have = f"your role on it is {role}" if role else "you have no access to it"
            raise Refused(
                403,
                "Forbidden",
                f"this needs {level} on vault {name!r}; {have}.",
                "Use the vault owner's account, or a token with a higher role from its owner."
                if level != "owner"
                else "Only the vault's owner, on the Unix socket, may do this.",
            )
        state[ROLE_KEY] = role
        state[VAULT_KEY] = served
        return served.max_body_bytes, {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            if self.registry.blocking:  # a database's: off the event loop
                limit, _ = await anyio.to_thread.run_sync(self._decide, scope)
            else:
                limit, _ = self._decide(scope)
            length = _header(scope, b"content-length")
            if length is not None:
                if not length.isdigit():
                    raise Refused(
                        400, "BadRequest", "Content-Length is not a number.", "Fix the client."
                    )
                if int(length) > limit:
                    raise Refused(
                        413,
                        "PayloadTooLarge",
                        f"the body has {int(length)} bytes; this vault accepts at most {limit}.",
                        "Send less, or raise server.max_body_bytes in the vault's affidavit.toml.",
                    )
        except Refused as refused:
            await send_error(send, refused.status, refused.kind, refused.message, refused.fix)
            return
        except DatabaseUnavailable as down:
            await send_error(send, 503, "DatabaseUnavailable", str(down), DOWN_FIX)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, f"the body is larger than {limit} bytes")
            return message

        await self.app(scope, counted, send)


__all__ = [
    "ACCESS_KEY",
    "PARAMS_KEY",
    "PRINCIPAL_KEY",
    "ROLE_KEY",
    "VAULT_KEY",
    "Access",
    "Guard",
    "Principal",
    "access",
    "allows",
    "error_bytes",
]
