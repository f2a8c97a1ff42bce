"""The hot read on the event loop: search, without FastAPI's dependency solving or a thread hop.

A search costs a fraction of a millisecond of SQLite work; through FastAPI (dependency solving,
validation, the thread pool and back) it cost several times that. :class:`FastReads` sits inside
the :class:`~affidavit.server.auth.Guard` — which has already authenticated the caller,
authorised the route and put the vault in the request's state; nothing reaches this lane that
the guard did not let through — and answers ``GET …/search`` itself, on the event loop, with the
vault's own read connection for this process (:meth:`~.registry.ServedVault.on_loop`:
``query_only``, never waiting on a lock). It runs the same retrieval as the route's service and sends the
same body, byte for byte (encoded by orjson from the hits, without the response models).

It steps aside, and the FastAPI route serves the request as before, whenever it is not sure:

- a query string that is not plain (a repeated or invalid parameter): the route answers it, with
  its usual 422;
- a vault with dense vectors (embedding a query is model work, not a short read) or whose
  vectors are not loaded yet;
- a search that runs past its work budget (:data:`~.registry.LOOP_BUDGET_STEPS` SQLite steps,
  bounded by work, not time) or meets a lock: it is abandoned and run again in the thread pool,
  so one expensive query never stalls the loop for everyone else.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qsl

import anyio
import orjson
from starlette.exceptions import HTTPException

from ..retrieval.search import Hit, Retriever
from ..service.backend import Forbidden
from ..service.models import AskRequest, Tier
from ..vault import Vault
from .auth import (
    PARAMS_KEY,
    PRINCIPAL_KEY,
    ROLE_KEY,
    ROUTE_KEY,
    VAULT_KEY,
    ASGIApp,
    Message,
    Principal,
    Receive,
    Scope,
    Send,
    allows,
    error_bytes,
)
from .errors import status_of
from .registry import SearchCache, ServedVault

log = logging.getLogger("affidavit.server")

SEARCH_ROUTE = "/v1/vaults/{vault}/search"
ASK_ROUTE = "/v1/vaults/{vault}/ask"
TIERS: frozenset[str] = frozenset(Tier.__args__)  # type: ignore[attr-defined]
_JSON = [(b"content-type", b"application/json")]


def _pairs(query_string: bytes) -> list[tuple[str, str]] | None:
    """The query string's ``(key, value)`` pairs as ``parse_qsl(..., keep_blank_values=True,
    strict_parsing=True)`` reads them; None where it refuses. An ASCII string without an escape
    (``%``, ``+``) — what a search usually sends — is split here: the same pairs, a tenth of the
    work; any other goes through ``parse_qsl`` itself."""
    if query_string.isascii() and b"%" not in query_string and b"+" not in query_string:
        if not query_string:
            return []
        pairs = []
        for part in query_string.decode("ascii").split("&"):
            key, eq, value = part.partition("=")
            if not eq:  # parse_qsl's "bad query field" (strict), an empty field included
                return None
            pairs.append((key, value))
        return pairs
    try:
        return parse_qsl(
            query_string.decode("latin-1"), keep_blank_values=True, strict_parsing=True
        )
    except (UnicodeDecodeError, ValueError):
        return None


def search_args(query_string: bytes) -> tuple[str, int, str] | None:
    """``q``, ``k`` and ``min_trust`` of a plain, valid search query string; None otherwise
    (the route then validates it and answers with its own error)."""
    pairs = _pairs(query_string)
    if pairs is None:
        return None
    seen: dict[str, str] = {}
    for key, value in pairs:
        if key in seen:
            return None
        seen[key] = value
    q, k, trust = seen.get("q"), seen.get("k", "10"), seen.get("min_trust", "untrusted")
    if q is None or not 1 <= len(q) <= 1000 or trust not in TIERS:
        return None
    if not (k.isascii() and k.isdigit() and 1 <= int(k) <= 100):
        return None
    return q, int(k), trust


class FastReads:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self._search(scope) if scope["type"] == "http" else None
        if body is None and _is_ask(scope):
            body, receive = await _ask(scope, receive)
        if body is None:
            await self.app(scope, receive, send)
            return
        status, payload = body
        headers = [*_JSON, (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    def _search(self, scope: Scope) -> tuple[int, bytes] | None:
        state: dict[str, Any] = scope.get("state") or {}
        if scope.get("method") != "GET" or state.get(ROUTE_KEY) != SEARCH_ROUTE:
            return None
        served = state.get(VAULT_KEY)
        params = state.get(PARAMS_KEY) or {}
        if not isinstance(served, ServedVault) or params.get("vault") != served.name:
            return None
        if not allows(state.get(ROLE_KEY), "read"):  # the guard decided; checked once more
            return None
        if not served.vectors_loaded or served.vectors is not None:
            return None
        args = search_args(scope.get("query_string", b""))
        if args is None:
            return None
        q, k, trust = args
        cache = served.search_cache()
        try:
            return served.on_loop(lambda vault: (200, search_body(vault, q, k, trust, cache)))
        except Exception as exc:  # the route's error body, as its exception handlers write it
            return _error(exc)


def search_body(
    vault: Vault, q: str, k: int, min_trust: str, cache: SearchCache | None = None
) -> bytes:
    """The body the route sends for this search (``svc.search(...).model_dump_json()``, byte for
    byte: the same keys in the same order, compact, UTF-8), encoded by orjson straight from the
    retriever's hits rather than through the response models (validating and serialising ten hits
    and their evidence was a tenth of a search's time). ``tests/test_server_peer.py`` holds the two
    to the same bytes.

    With ``cache`` (the lane's, on its ``query_only`` connection) a search asked again before
    any write to what search reads is answered from it: the same bytes (see
    :class:`~.registry.SearchCache`). Only
    an answer of the tantivy index is kept: FTS5 answers while the index catches up, and the
    index's answer may then differ without a commit."""
    if cache is None:
        return encode_search(q, Retriever(vault.db, None).search(q, k=k, min_trust=min_trust))
    key = (q, k, min_trust)
    version = cache.version_of(vault.db)
    body = cache.get(version, key)
    if body is not None:
        return body
    retriever = Retriever(vault.db, None)
    body = encode_search(q, retriever.search(q, k=k, min_trust=min_trust))
    if retriever.used == "tantivy" and cache.version_of(vault.db) == version:
        cache.put(version, key, body)
    return body


def encode_search(query: str, hits: list[Hit]) -> bytes:
    """``SearchResponse(query=query, hits=[...]).model_dump_json()`` of ``hits``, as bytes: the
    dataclasses' fields are the models' fields, in the same order."""
    return orjson.dumps({"query": query, "hits": hits})


def _is_ask(scope: Scope) -> bool:
    state: dict[str, Any] = scope.get("state") or {}
    return (
        scope.get("type") == "http"
        and scope.get("method") == "POST"
        and state.get(ROUTE_KEY) == ASK_ROUTE
    )


async def _ask(scope: Scope, receive: Receive) -> tuple[tuple[int, bytes] | None, Receive]:
    """``POST …/ask`` without FastAPI's dependency solving and response validation (a
    millisecond of an answer): the same checks in the same order as the route — the guard's
    decision read once more, the body validated by the route's own model, ``save`` only with
    the propose role — then the same service in the thread pool, and the same body
    (``AskResponse.model_dump_json()``, as the route sends it). A body the model refuses, or
    anything not plain, goes to the route with the bytes read so far handed back to it, for
    its own 422."""
    state: dict[str, Any] = scope.get("state") or {}
    served, role = state.get(VAULT_KEY), state.get(ROLE_KEY)
    principal = state.get(PRINCIPAL_KEY)
    params = state.get(PARAMS_KEY) or {}
    if (
        not isinstance(served, ServedVault)
        or _header(scope, b"content-type") != b"application/json"
        or params.get("vault") != served.name
        or not isinstance(principal, Principal)
        or not allows(role, "read")
    ):
        return None, receive
    chunks: list[bytes] = []
    while True:
        try:
            message = await receive()
        except HTTPException as exc:  # the guard's count: over the vault's body limit
            return (exc.status_code, error_bytes("PayloadTooLarge", str(exc.detail), _BIG)), receive
        if message["type"] != "http.request":  # the client left: the route's business
            return None, _replay(chunks, message, receive)
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    again = _replay([body], None, receive)
    try:  # as FastAPI reads a JSON body: json.loads, then the model (not its JSON mode)
        request = AskRequest.model_validate(json.loads(body)) if body else None
    except (ValueError, RecursionError):  # malformed JSON, refused by the model: the route
        request = None
    if request is None:
        return None, again
    try:
        if request.save and not allows(role, "propose"):
            raise Forbidden(f"saving an answer needs the propose role; yours is {role}.")
        payload = await anyio.to_thread.run_sync(_answer, served, request, principal.actor)
    except Exception as exc:  # the route's error body, as its exception handlers write it
        return _error(exc), again
    return (200, payload), again


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return bytes(value).split(b";")[0].strip().lower()
    return None


_BIG = "Send less, or raise server.max_body_bytes in the vault's affidavit.toml."


def _answer(served: ServedVault, request: AskRequest, actor: str) -> bytes:
    from ..service import vaults as svc

    with served.borrow() as vault:
        answer = svc.ask(vault, request, served.vector_search(vault), actor, served.ask_log())
    return answer.model_dump_json().encode()


def _replay(chunks: list[bytes], last: Message | None, receive: Receive) -> Receive:
    """``receive`` as it was before the lane read from it: what it read, then the rest."""
    pending: list[Message] = [
        {"type": "http.request", "body": b"".join(chunks), "more_body": last is not None}
    ]
    if last is not None:
        pending.append(last)

    async def again() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return again


def _error(exc: Exception) -> tuple[int, bytes]:
    status, fix = status_of(exc)
    if status >= 500:
        log.warning("request failed: %s: %s", type(exc).__name__, exc)
    if type(exc).__module__.startswith("affidavit"):
        return status, error_bytes(type(exc).__name__, str(exc), fix)
    log.exception("unexpected error in a search", exc_info=exc)
    return 500, error_bytes("InternalError", "the daemon failed unexpectedly.", "See its log.")


__all__ = ["FastReads", "encode_search", "search_args", "search_body"]
