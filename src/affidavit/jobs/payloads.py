"""Typed job payloads: a closed, discriminated union on ``kind``, and the handler registry.

Every payload is a pydantic model with ``extra="forbid"``, validated when the job is submitted
and again when a worker runs it; a job can't carry arguments its handler does not declare.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from ..errors import AffidavitError

if TYPE_CHECKING:
    from .context import JobContext

TrustTier = Literal["untrusted", "semi-trusted", "trusted"]
ModelName = Literal["extractive", "openai", "anthropic", "local"]


class JobPayloadError(AffidavitError):
    """A job payload is not a valid member of the payload union."""


class BasePayload(BaseModel):
    """What every payload shares: a ``kind`` tag and no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str


class IngestPayload(BasePayload):
    """``affidavit ingest`` as a job: the same arguments as the command."""

    kind: Literal["ingest"] = "ingest"
    sources: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        min_length=1,
        max_length=10_000,
        description="Absolute file or folder paths, or http(s) URLs.",
    )
    trust: TrustTier | None = Field(
        default=None, description="Trust tier of these sources (default: the config's rules)."
    )
    model: ModelName | None = Field(
        default=None, description="Provider instead of model.provider from affidavit.toml."
    )
    yes: bool = Field(
        default=False, description="Apply each plan that passes the checks at once (like --yes)."
    )
    dry_run: bool = Field(
        default=False,
        description="Preview only (like --dry-run): the job's result is the chunks, tokens and "
        "cost the ingest would take; nothing is sent or stored.",
    )
    budget: int | None = Field(
        default=None,
        ge=1,
        description="Tokens (prompt + completion) the job may spend; it stops cleanly before "
        "the chunk that would pass them (like --budget).",
    )

    @field_validator("sources")
    @classmethod
    def _absolute(cls, sources: list[str]) -> list[str]:
        for source in sources:
            if "://" in source:
                if not source.startswith(("http://", "https://")):
                    raise ValueError(f"{source!r}: only http and https URLs can be ingested")
            elif not source.startswith("/"):
                raise ValueError(
                    f"{source!r} is a relative path; a job runs elsewhere, so give an absolute "
                    "path (the CLI resolves it for you)"
                )
            if "\x00" in source:
                raise ValueError("a source must not contain NUL characters")
        return sources


class WatchPayload(BasePayload):
    """One look of ``affidavit watch --once`` as a job: ingest what changed in the folders
    since the last look, report what was deleted. (A job that never ended would hold the
    vault's one job lease: the daemon's continuous watches, ``affidavit watch add``, queue one
    such job per burst of changes instead, naming the ``watch`` and the changed ``paths``.)"""

    kind: Literal["watch"] = "watch"
    folders: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        min_length=1, max_length=100, description="Absolute folder paths."
    )
    trust: TrustTier | None = Field(
        default=None, description="Trust tier of the sources found (default: the config's rules)."
    )
    model: ModelName | None = Field(
        default=None, description="Provider instead of model.provider from affidavit.toml."
    )

    watch: str | None = Field(
        default=None,
        pattern=r"^watch-[0-9a-f]{8}$",
        description="The daemon's watch that queued this job (`affidavit watch list`): the "
        "job reads nothing if that watch was removed or refused since.",
    )
    paths: list[Annotated[str, Field(min_length=1, max_length=4096)]] | None = Field(
        default=None,
        max_length=100_000,
        description="Only these paths of the folders changed (files or folders, absolute); "
        "none: look at the whole folders.",
    )

    @field_validator("folders", "paths")
    @classmethod
    def _absolute(cls, folders: list[str] | None) -> list[str] | None:
        for folder in folders or ():
            if not folder.startswith("/") or "\x00" in folder:
                raise ValueError(
                    f"{folder!r} is not an absolute path; a job runs elsewhere, so give the "
                    "full path (the CLI resolves it for you)"
                )
        return folders


class ReindexPayload(BasePayload):
    """``affidavit reindex`` as a job: rebuild stale claim vectors."""

    kind: Literal["reindex"] = "reindex"


class LintPayload(BasePayload):
    """``affidavit lint`` as a job; ``propose`` turns fixable findings into plans."""

    kind: Literal["lint"] = "lint"
    propose: bool = False


class StoredIngestPayload(BasePayload):
    """An ingest of sources already stored in a PostgreSQL vault (their bytes submitted to the
    daemon, ``POST …/jobs``), run by ``affidavit worker --database``: each source's chunks are
    proposed by the model, admitted by the gate and applied by the policy through the door."""

    kind: Literal["ingest_stored"] = "ingest_stored"
    sources: list[Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]] = Field(
        min_length=1, max_length=1000, description="The sources' ids (SHA-256 of their bytes)."
    )
    model: ModelName | None = Field(
        default=None, description="Provider instead of the worker's model.provider (extractive)."
    )


DATABASE_ONLY = ("ingest_stored",)
"""Kinds that only a PostgreSQL vault's queue takes (a SQLite vault's refuses them)."""

JobPayload = Annotated[
    IngestPayload | WatchPayload | ReindexPayload | LintPayload, Field(discriminator="kind")
]
"""The union of the built-in payloads, for request bodies (the daemon's OpenAPI document)."""

JOB_PAYLOAD: TypeAdapter[IngestPayload | WatchPayload | ReindexPayload | LintPayload] = TypeAdapter(
    JobPayload
)

Handler = Callable[["JobContext", Any], dict[str, Any]]
"""``handler(context, payload) -> result``: runs in the job's own process; returns JSON data."""

P = TypeVar("P", bound=BasePayload)

_MODELS: dict[str, type[BasePayload]] = {
    "ingest": IngestPayload,
    "watch": WatchPayload,
    "reindex": ReindexPayload,
    "lint": LintPayload,
    "ingest_stored": StoredIngestPayload,
}
_HANDLERS: dict[str, Handler] = {}


def register_handler(
    kind: str, payload_model: type[P], handler: Callable[[JobContext, P], dict[str, Any]]
) -> None:
    """Register (or replace) the payload model and handler of job ``kind``.

    Registration is per process: a handler for a new kind must be registered in the process
    that submits the job and in the job's runner (import it from a module the runner loads).
    """
    field = payload_model.model_fields.get("kind")
    if field is None or field.default != kind:
        raise ValueError(f"{payload_model.__name__}.kind must default to {kind!r}")
    _MODELS[kind] = payload_model
    _HANDLERS[kind] = handler


def job_kinds() -> list[str]:
    """The kinds a job may have, sorted."""
    return sorted(_MODELS)


def parse_payload(data: BasePayload | Mapping[str, Any] | str | bytes) -> BasePayload:
    """Validate ``data`` (a payload model, a mapping or JSON text) into its payload model."""
    if isinstance(data, BasePayload):
        data = data.model_dump(mode="json")
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise JobPayloadError(f"job payload is not JSON: {why}") from None
    if not isinstance(data, Mapping):
        raise JobPayloadError("a job payload is a JSON object with a 'kind'")
    kind = data.get("kind")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise JobPayloadError(f"unknown job kind {kind!r}; the kinds are: {', '.join(job_kinds())}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or kind}: {err['msg']}" for err in exc.errors()
        )
        raise JobPayloadError(f"invalid {kind} job payload: {problems}") from None


def handler_for(kind: str) -> Handler:
    """The handler of ``kind`` (built-in handlers are registered by :mod:`.handlers`)."""
    from . import handlers  # noqa: F401  (registers the built-in handlers)

    try:
        return _HANDLERS[kind]
    except KeyError:
        raise JobPayloadError(f"no handler is registered for job kind {kind!r}") from None
