"""One error body for every failure: ``{"error": {"type", "message", "fix"}}``.

:class:`~affidavit.errors.AffidavitError` subclasses map to HTTP statuses here; their messages
already say what to do, and ``fix`` adds the general remedy for the kind of error. Unexpected
exceptions become a 500 whose body names no internals (the traceback goes to the log).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from .. import errors
from ..jobs.payloads import JobPayloadError
from ..service.backend import Forbidden, Unauthenticated
from ..service.models import ErrorBody, ErrorDetail
from ..watch.watcher import WatchError
from .auth import DOWN_FIX, RETRY_AFTER

log = logging.getLogger("affidavit.server")

STATUS: list[tuple[type[Exception], int, str]] = [
    (
        Unauthenticated,
        401,
        "Authenticate: the Unix socket as yourself, or a bearer token over TCP.",
    ),
    (Forbidden, 403, "Ask the vault's owner, or use an account or token with the needed role."),
    (JobPayloadError, 422, "Fix the job payload; GET /openapi.json describes each kind."),
    (WatchError, 422, "Give a real folder you keep sources in, by its absolute path."),
    (errors.PlanValidationError, 422, "Fix the plan: `affidavit schema` prints its JSON Schema."),
    (
        errors.AdmissionError,
        422,
        "The plan was refused; the message names the check that failed and why.",
    ),
    (
        errors.NotFoundError,
        404,
        "Check the id or name; GET the list it belongs to (…/pages, …/plans, …/jobs, "
        "…/lint/findings) to see what exists.",
    ),
    (errors.ConflictError, 409, "Reload the current state (e.g. the inbox) and decide again."),
    (errors.QuotaError, 429, "Call again at the time the message names, or ask the owner."),
    (errors.FetchError, 422, "Check the URL, or raise the vault's sources.* limits."),
    (errors.SourceError, 422, "Check the source and retry."),
    (errors.CitationError, 502, "Retry, or ask with the extractive answerer (model 'extractive')."),
    (errors.ProviderError, 502, "Check the model settings and that the provider is reachable."),
    (errors.DatabaseUnavailable, 503, DOWN_FIX),
    (errors.VaultError, 503, "Retry shortly; if it persists run `affidavit doctor` on the vault."),
    (errors.IntegrityError, 500, "Run `affidavit doctor` on the vault and restore what it names."),
    (errors.ConfigError, 500, "Fix the vault's affidavit.toml and restart the daemon."),
    (errors.AffidavitError, 500, "See the message."),
]

HTTP_KINDS = {
    400: "BadRequest",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "PayloadTooLarge",
    422: "ValidationError",
}


def error_headers(status: int) -> dict[str, str]:
    """The headers an error of ``status`` carries: a 401 its challenge, a 503 its Retry-After."""
    if status == 401:
        return {"WWW-Authenticate": 'Bearer realm="affidavit"'}
    if status == 503:
        return {"Retry-After": str(RETRY_AFTER)}
    return {}


def error_response(status: int, kind: str, message: str, fix: str) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(type=kind, message=message, fix=fix))
    return JSONResponse(body.model_dump(), status_code=status, headers=error_headers(status))


def status_of(exc: Exception) -> tuple[int, str]:
    for kind, status, fix in STATUS:
        if isinstance(exc, kind):
            return status, fix
    return 500, "See the daemon's log."


async def affidavit_error(request: Request, exc: Exception) -> JSONResponse:
    status, fix = status_of(exc)
    if status >= 500:
        log.warning("request failed: %s: %s", type(exc).__name__, exc)
    return error_response(status, type(exc).__name__, str(exc), fix)


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors()[:10]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        problems.append(f"{where}: {err.get('msg', 'invalid')}")
    return error_response(
        422,
        "ValidationError",
        "the request is not valid: " + "; ".join(problems),
        "Fix the fields named; GET /openapi.json describes every request.",
    )


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    kind = HTTP_KINDS.get(exc.status_code, "HTTPError")
    fix = {
        404: "GET /openapi.json lists the routes.",
        405: "GET /openapi.json lists each route's methods.",
        413: "Send less, or raise server.max_body_bytes in the vault's affidavit.toml.",
    }.get(exc.status_code, "See the message.")
    return error_response(exc.status_code, kind, str(exc.detail), fix)


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "InternalError", "the daemon failed unexpectedly.", "See its log.")


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.AffidavitError, affidavit_error)
    app.add_exception_handler(Forbidden, affidavit_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected_error)


__all__ = ["error_response", "install", "status_of"]
