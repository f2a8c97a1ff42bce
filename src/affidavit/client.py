"""The daemon's client over its Unix socket, and the CLI's choice of front door.

:class:`DaemonClient` speaks the daemon's API (:mod:`affidavit.service.models`) over its Unix
socket with the standard library alone (:mod:`affidavit.unix_http`); :class:`DaemonBackend` offers
the CLI the same calls as :class:`~affidavit.service.LocalBackend`, plus the plain-JSON reads
(``search``, ``ask``, the inbox) that the CLI prints without importing a response model.
:func:`open_backend` picks one: the daemon when one is running for the vault (its socket answers
``/v1/whoami`` and lists the vault as yours), else the services in-process; :func:`open_daemon`
is its first half. ``AFFIDAVIT_NO_DAEMON=1`` forces in-process; ``AFFIDAVIT_SOCKET`` names another
socket. Error bodies come back as the same exceptions the services raise.

Nothing here imports pydantic, the services or the vault until a call needs them: a question
asked through a running daemon costs the client a few hundredths of a second.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import errors
from .unix_http import ProtocolError, Reply, request
from .vault_root import find_vault_root

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .service.backend import Backend
    from .service.models import (
        ApproveManyResponse,
        ApproveResponse,
        AskRequest,
        AskResponse,
        NonceResponse,
        PlanDetail,
        PlanSummary,
        ProposalOut,
        RejectResponse,
        SearchResponse,
        TokenCreated,
        TokenCreateRequest,
        TokenInfo,
    )


def plan_object(plan: str, origin: str) -> tuple[dict[str, Any], str]:
    """A plan's text as a door that takes it parsed wants it (the daemon's API, a database's
    inbox): a JSON object (one-line errors for non-JSON, deep nesting, size) and its origin as a
    plain label."""
    from .plan.schema import load_plan_json

    data = load_plan_json(plan)
    if not isinstance(data, dict):
        raise errors.PlanValidationError("plan rejected by the schema: not a JSON object")
    return data, re.sub(r"[^\w.:/ -]", "_", origin)


SOCKET_ENV = "AFFIDAVIT_SOCKET"
NO_DAEMON_ENV = "AFFIDAVIT_NO_DAEMON"


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


def _error_class(kind: str) -> type[errors.AffidavitError]:
    """The exception an error body's ``type`` names; :class:`DaemonError` for any other."""
    if kind in ("Forbidden", "Unauthenticated"):
        from .service import backend  # only on this error path: it imports the services

        found: type[errors.AffidavitError] = getattr(backend, kind)
        return found
    if kind != "AffidavitError" and kind in errors.__all__:
        named = getattr(errors, kind)
        if isinstance(named, type) and issubclass(named, errors.AffidavitError):
            return named
    return DaemonError


def raise_for(response: Reply) -> None:
    """Raise the error an error body names (e.g. NotFoundError), with its message and fix."""
    if response.status < 400:
        return
    try:
        body = response.json()
        detail = body["error"]
        kind, message, fix = (detail[k] for k in ("type", "message", "fix"))
        if set(body) != {"error"} or not all(isinstance(x, str) for x in (kind, message, fix)):
            raise ValueError("not an error body")
    except (ValueError, KeyError, TypeError):
        kind, message, fix = "DaemonError", response.text[:500], "See the daemon's log."
    error = _error_class(kind)
    text = message if fix in message or fix == "See the message." else f"{message} ({fix})"
    if error is errors.AdmissionError:
        raise errors.AdmissionError("daemon", text)
    raise error(text)


class DaemonClient:
    """A client of the daemon on a Unix socket: plain JSON in and out (:meth:`call`), the
    service's response models where a caller wants them (:meth:`typed`)."""

    def __init__(
        self, path: Path, *, timeout: float = 300.0, headers: dict[str, str] | None = None
    ) -> None:
        self.path = path
        self.timeout = timeout
        self.headers = dict(headers or {})

    def close(self) -> None:
        """Nothing to close: each request has its own connection."""

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self, method: str, path: str, *, body: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        """The JSON of a successful reply; the error an error reply names otherwise."""
        reply = request(
            str(self.path),
            method,
            path,
            params=params,
            body=body,
            headers=self.headers,
            timeout=self.timeout,
        )
        raise_for(reply)
        return reply.json()

    def typed(
        self,
        method: str,
        path: str,
        model: Any,
        *,
        body: BaseModel | None = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        """:meth:`call`, its reply validated as ``model`` (a model class or a TypeAdapter)."""
        from pydantic import TypeAdapter

        data = self.call(
            method,
            path,
            body=body.model_dump(mode="json", exclude_unset=False) if body is not None else None,
            params=params,
        )
        if isinstance(model, TypeAdapter):
            return model.validate_python(data)
        return model.model_validate(data)

    def whoami(self) -> dict[str, Any]:
        """Who the daemon takes this process for, and the vaults it serves to it (as JSON)."""
        found = self.call("GET", "/v1/whoami")
        if not isinstance(found, dict) or not isinstance(found.get("vaults"), list):
            raise ProtocolError("the daemon's /v1/whoami is not a Whoami")
        return found


class DaemonBackend:
    """The CLI's calls sent to the daemon for one vault; same models as :class:`LocalBackend`.

    The ``*_json`` reads return the daemon's JSON as it came: what the CLI prints of a search, an
    answer or the inbox needs no response model (importing them cost more than the request)."""

    where = "daemon"

    def __init__(self, client: DaemonClient, vault: str) -> None:
        self.client = client
        self.prefix = f"/v1/vaults/{vault}"

    def _call(self, method: str, path: str, model: Any, **kwargs: Any) -> Any:
        return self.client.typed(method, self.prefix + path, model, **kwargs)

    def _json(self, method: str, path: str, kind: type, **kwargs: Any) -> Any:
        found = self.client.call(method, self.prefix + path, **kwargs)
        if not isinstance(found, kind):
            raise ProtocolError(f"the daemon's {path} is not a JSON {kind.__name__}")
        return found

    def search_json(self, query: str, k: int, min_trust: str) -> dict[str, Any]:
        params = {"q": query, "k": k, "min_trust": min_trust}
        found: dict[str, Any] = self._json("GET", "/search", dict, params=params)
        return found

    def ask_json(self, request: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = self._json("POST", "/ask", dict, body=request)
        return found

    def list_plans_json(self, statuses: tuple[str, ...]) -> list[dict[str, Any]]:
        status = statuses[0] if len(statuses) == 1 else "all"
        found: list[dict[str, Any]] = self._json("GET", "/plans", list, params={"status": status})
        return found

    def search(self, query: str, k: int, min_trust: str) -> SearchResponse:
        from .service.models import SearchResponse

        params = {"q": query, "k": k, "min_trust": min_trust}
        result: SearchResponse = self._call("GET", "/search", SearchResponse, params=params)
        return result

    def ask(self, request: AskRequest) -> AskResponse:
        from .service.models import AskResponse

        result: AskResponse = self._call("POST", "/ask", AskResponse, body=request)
        return result

    def list_plans(self, statuses: tuple[str, ...]) -> list[PlanSummary]:
        from pydantic import TypeAdapter

        from .service.models import PlanSummary

        status = statuses[0] if len(statuses) == 1 else "all"
        adapter = TypeAdapter(list[PlanSummary])
        result: list[PlanSummary] = self._call("GET", "/plans", adapter, params={"status": status})
        return result

    def plan_detail(self, ref: str) -> PlanDetail:
        from .service.models import PlanDetail

        result: PlanDetail = self._call("GET", f"/plans/{ref}", PlanDetail)
        return result

    def propose(self, plan: str, author: str | None, origin: str) -> ProposalOut:
        from .service.models import ProposalOut, ProposeRequest

        data, origin = plan_object(plan, origin)
        request = ProposeRequest(plan=data, origin=origin[:120])
        result: ProposalOut = self._call("POST", "/plans", ProposalOut, body=request)
        return result

    def approve(self, ref: str, ops: list[int] | None) -> ApproveResponse:
        from .service.models import ApproveRequest, ApproveResponse

        body = ApproveRequest(ops=ops)
        result: ApproveResponse = self._call(
            "POST", f"/plans/{ref}/approve", ApproveResponse, body=body
        )
        return result

    def approve_many(
        self, refs: list[str], dry_run: bool = False, sure_only: bool = False
    ) -> ApproveManyResponse:
        from .service.models import ApproveManyRequest, ApproveManyResponse

        body = ApproveManyRequest(plans=refs, dry_run=dry_run, sure_only=sure_only)
        result: ApproveManyResponse = self._call(
            "POST", "/plans/approve", ApproveManyResponse, body=body
        )
        return result

    def reject(self, ref: str, reason: str) -> RejectResponse:
        from .service.models import RejectRequest, RejectResponse

        body = RejectRequest(reason=reason)
        result: RejectResponse = self._call(
            "POST", f"/plans/{ref}/reject", RejectResponse, body=body
        )
        return result

    def new_nonce(self, hours: int) -> NonceResponse:
        from .service.models import NonceRequest, NonceResponse

        body = NonceRequest(hours=hours)
        result: NonceResponse = self._call("POST", "/nonces", NonceResponse, body=body)
        return result

    def create_token(self, request: TokenCreateRequest) -> TokenCreated:
        from .service.models import TokenCreated

        result: TokenCreated = self._call("POST", "/tokens", TokenCreated, body=request)
        return result

    def list_tokens(self) -> list[TokenInfo]:
        from pydantic import TypeAdapter

        from .service.models import TokenInfo

        result: list[TokenInfo] = self._call("GET", "/tokens", TypeAdapter(list[TokenInfo]))
        return result

    def revoke_token(self, token_id: str) -> TokenInfo:
        from .service.models import TokenInfo

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
    except (OSError, errors.AffidavitError, ValueError):
        return None
    for vault in me["vaults"]:
        if not isinstance(vault, dict) or not isinstance(vault.get("name"), str):
            continue
        if Path(str(vault.get("root"))) == root and vault.get("role") == "owner":
            client.timeout = 300.0
            return DaemonBackend(client, vault["name"])
    return None


@contextmanager
def open_daemon(vault_path: Path | None) -> Iterator[DaemonBackend | None]:
    """The daemon serving the vault at ``vault_path`` (or enclosing the working directory) to
    this user, or None when none does (or ``AFFIDAVIT_NO_DAEMON=1``): the light half of
    :func:`open_backend`, for the reads the CLI prints as they come."""
    root = find_vault_root(vault_path or Path.cwd())
    daemon = None
    if root is not None and os.environ.get(NO_DAEMON_ENV, "") in ("", "0"):
        daemon = find_daemon(root)
    try:
        yield daemon
    finally:
        if daemon is not None:
            daemon.client.close()


@contextmanager
def open_local(vault_path: Path | None) -> Iterator[Backend]:
    """The services in this process for the vault at ``vault_path`` (or enclosing the working
    directory)."""
    from .service.backend import LocalBackend
    from .vault import open_vault

    vault = open_vault(vault_path)
    try:
        yield LocalBackend(vault)
    finally:
        vault.close()


@contextmanager
def open_backend(vault_path: Path | None) -> Iterator[Backend]:
    """The CLI's front door for the vault at ``vault_path`` (or enclosing the working directory)."""
    with open_daemon(vault_path) as daemon:
        if daemon is not None:
            yield daemon
            return
    with open_local(vault_path) as local:
        yield local


__all__ = [
    "DaemonBackend",
    "DaemonClient",
    "DaemonError",
    "default_socket_path",
    "find_daemon",
    "open_backend",
    "open_daemon",
    "open_local",
    "raise_for",
    "socket_path",
]
