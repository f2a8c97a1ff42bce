"""The daemon's client: httpx over the Unix socket, and the CLI's choice of front door.

:class:`DaemonClient` speaks the daemon's typed API (:mod:`affidavit.service.models`) over its
Unix socket; :class:`DaemonBackend` offers the CLI the same calls as
:class:`~affidavit.service.LocalBackend`. :func:`open_backend` picks one: the daemon when one is
running for the vault (its socket answers ``/v1/whoami`` and lists the vault as yours), else the
services in-process. ``AFFIDAVIT_NO_DAEMON=1`` forces in-process; ``AFFIDAVIT_SOCKET`` names
another socket. Error bodies come back as the same exceptions the services raise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from . import errors
from .service.backend import Backend, Forbidden, LocalBackend, Unauthenticated
from .service.models import (
    ApproveManyRequest,
    ApproveManyResponse,
    ApproveRequest,
    ApproveResponse,
    AskRequest,
    AskResponse,
    ErrorBody,
    NonceRequest,
    NonceResponse,
    PlanDetail,
    PlanSummary,
    ProposalOut,
    ProposeRequest,
    RejectRequest,
    RejectResponse,
    SearchResponse,
    TokenCreated,
    TokenCreateRequest,
    TokenInfo,
    Whoami,
)
from .vault import find_vault_root, open_vault

SOCKET_ENV = "AFFIDAVIT_SOCKET"
NO_DAEMON_ENV = "AFFIDAVIT_NO_DAEMON"
M = TypeVar("M", bound=BaseModel)
_ERRORS: dict[str, type[errors.AffidavitError]] = {
    name: getattr(errors, name) for name in errors.__all__ if name != "AffidavitError"
}
_ERRORS |= {"Forbidden": Forbidden, "Unauthenticated": Unauthenticated}


def default_socket_path() -> Path:
    """``$XDG_RUNTIME_DIR/affidavit/affidavit.sock``, else ``/run/user/<uid>/affidavit/…``,
    else ``~/.affidavit/run/affidavit.sock``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "affidavit" / "affidavit.sock"
    per_user = Path(f"/run/user/{os.getuid()}")
    if per_user.is_dir():
        return per_user / "affidavit" / "affidavit.sock"
    return Path.home() / ".affidavit" / "run" / "affidavit.sock"


def socket_path() -> Path:
    """The socket the CLI looks for: ``$AFFIDAVIT_SOCKET`` or the default."""
    named = os.environ.get(SOCKET_ENV)
    return Path(named) if named else default_socket_path()


class DaemonError(errors.AffidavitError):
    """The daemon answered with an error this client has no class for."""


def raise_for(response: httpx.Response) -> None:
    """Raise the error an error body names (e.g. NotFoundError), with its message and fix."""
    if response.status_code < 400:
        return
    try:
        body = ErrorBody.model_validate(response.json())
        kind, message = body.error.type, body.error.message
        fix = body.error.fix
    except ValueError:
        kind, message, fix = "DaemonError", response.text[:500], "See the daemon's log."
    error = _ERRORS.get(kind, DaemonError)
    text = message if fix in message or fix == "See the message." else f"{message} ({fix})"
    if error is errors.AdmissionError:
        raise errors.AdmissionError("daemon", text)
    raise error(text)


class DaemonClient:
    """A client of the daemon on a Unix socket (``transport`` may be any httpx transport)."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
        base_url: str = "http://affidavit",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.http = httpx.Client(
            transport=transport or httpx.HTTPTransport(uds=str(path)),
            base_url=base_url,
            timeout=timeout,
            headers=headers,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self,
        method: str,
        path: str,
        model: type[M] | TypeAdapter[Any],
        *,
        body: BaseModel | None = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        response = self.http.request(
            method,
            path,
            params=params,
            json=body.model_dump(mode="json", exclude_unset=False) if body is not None else None,
        )
        raise_for(response)
        if isinstance(model, TypeAdapter):
            return model.validate_python(response.json())
        return model.model_validate(response.json())

    def whoami(self) -> Whoami:
        result: Whoami = self.call("GET", "/v1/whoami", Whoami)
        return result


class DaemonBackend:
    """The CLI's calls sent to the daemon for one vault; same models as :class:`LocalBackend`."""

    where = "daemon"

    def __init__(self, client: DaemonClient, vault: str) -> None:
        self.client = client
        self.prefix = f"/v1/vaults/{vault}"

    def _call(self, method: str, path: str, model: Any, **kwargs: Any) -> Any:
        return self.client.call(method, self.prefix + path, model, **kwargs)

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse:
        params = {"q": query, "k": k, "min_trust": min_trust}
        result: SearchResponse = self._call("GET", "/search", SearchResponse, params=params)
        return result

    def ask(self, request: AskRequest) -> AskResponse:
        result: AskResponse = self._call("POST", "/ask", AskResponse, body=request)
        return result

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]:
        status = statuses[0] if len(statuses) == 1 else "all"
        adapter = TypeAdapter(list[PlanSummary])
        result: list[PlanSummary] = self._call("GET", "/plans", adapter, params={"status": status})
        return result

    def plan_detail(self, ref: str) -> PlanDetail:
        result: PlanDetail = self._call("GET", f"/plans/{ref}", PlanDetail)
        return result

    def propose(self, plan: str, author: str | None, origin: str) -> ProposalOut:
        from .plan.schema import load_plan_json

        data = load_plan_json(plan)  # one-line errors for non-JSON, deep nesting, size
        if not isinstance(data, dict):
            raise errors.PlanValidationError("plan rejected by the schema: not a JSON object")
        request = ProposeRequest(plan=data, origin=re.sub(r"[^\w.:/ -]", "_", origin)[:120])
        result: ProposalOut = self._call("POST", "/plans", ProposalOut, body=request)
        return result

    def approve(self, ref: str, ops: list[int] | None) -> ApproveResponse:
        body = ApproveRequest(ops=ops)
        result: ApproveResponse = self._call(
            "POST", f"/plans/{ref}/approve", ApproveResponse, body=body
        )
        return result

    def approve_many(self, refs: list[str], dry_run: bool = False) -> ApproveManyResponse:
        body = ApproveManyRequest(plans=refs, dry_run=dry_run)
        result: ApproveManyResponse = self._call(
            "POST", "/plans/approve", ApproveManyResponse, body=body
        )
        return result

    def reject(self, ref: str, reason: str) -> RejectResponse:
        body = RejectRequest(reason=reason)
        result: RejectResponse = self._call(
            "POST", f"/plans/{ref}/reject", RejectResponse, body=body
        )
        return result

    def new_nonce(self, hours: int) -> NonceResponse:
        body = NonceRequest(hours=hours)
        result: NonceResponse = self._call("POST", "/nonces", NonceResponse, body=body)
        return result

    def create_token(self, request: TokenCreateRequest) -> TokenCreated:
        result: TokenCreated = self._call("POST", "/tokens", TokenCreated, body=request)
        return result

    def list_tokens(self) -> list[TokenInfo]:
        result: list[TokenInfo] = self._call("GET", "/tokens", TypeAdapter(list[TokenInfo]))
        return result

    def revoke_token(self, token_id: str) -> TokenInfo:
        result: TokenInfo = self._call("DELETE", f"/tokens/{token_id}", TokenInfo)
        return result


def find_daemon(root: Path, path: Path | None = None, timeout: float = 2.0) -> DaemonBackend | None:
    """The daemon serving the vault at ``root`` to this user as its owner, if one answers."""
    where = path or socket_path()
    if not where.exists():
        return None
    client = DaemonClient(where, timeout=timeout)
    try:
        me = client.whoami()
    except (httpx.HTTPError, errors.AffidavitError, ValueError):
        client.close()
        return None
    for vault in me.vaults:
        if Path(vault.root) == root and vault.role == "owner":
            client.http.timeout = httpx.Timeout(300.0)
            return DaemonBackend(client, vault.name)
    client.close()
    return None


@contextmanager
def open_backend(vault_path: Path | None) -> Iterator[Backend]:
    """The CLI's front door for the vault at ``vault_path`` (or enclosing the working directory)."""
    root = find_vault_root(vault_path or Path.cwd())
    if root is not None and os.environ.get(NO_DAEMON_ENV, "") in ("", "0"):
        daemon = find_daemon(root)
        if daemon is not None:
            try:
                yield daemon
            finally:
                daemon.client.close()
            return
    vault = open_vault(vault_path)
    try:
        yield LocalBackend(vault)
    finally:
        vault.close()


__all__ = [
    "DaemonBackend",
    "DaemonClient",
    "DaemonError",
    "default_socket_path",
    "find_daemon",
    "open_backend",
    "raise_for",
    "socket_path",
]
