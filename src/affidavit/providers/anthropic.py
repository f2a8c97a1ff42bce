"""Anthropic's Messages API through the official SDK (extra ``[anthropic]``), SPEC §5.

A request with a JSON Schema is answered through a forced tool call: the schema becomes the tool's
``input_schema``, ``tool_choice`` names the tool, and the reply text is ``json.dumps`` of the tool's
input. The SDK never sees the network directly: its HTTP client is given a transport that sends
every request through an ``httpx.Client`` this provider controls (or the one a test injects), refuses
any address outside the base URL and never follows redirects. That bridge also lets the provider work
with both SDK generations: before 1.0 it is built on ``httpx``, from 1.0 on ``httpx2``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from types import ModuleType
from typing import Any, ClassVar

import httpx
from pydantic import Field, field_validator

from ..errors import ProviderError
from .base import Completion, ModelRequest, Provider, ProviderOptions, Usage
from .http import join_url, make_client, same_origin, wire_name
from .keys import Secret, redact

INSTALL_HINT = "the anthropic provider needs the extra: pip install 'affidavit[anthropic]'"
_DROP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
_STOP_REASONS = {
    "tool_use": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}


class AnthropicOptions(ProviderOptions):
    """Options of the ``anthropic`` provider."""

    model: str = Field(min_length=1, description="Model name, e.g. claude-sonnet-4-5")
    base_url: str = Field(default="https://api.anthropic.com", description="API root")
    timeout_seconds: float = Field(default=120.0, gt=0, description="Limit for one HTTP request")
    max_retries: int = Field(
        default=2, ge=0, le=10, description="SDK retries after connection errors, 429 and 5xx"
    )
    context_length: int = Field(default=200_000, ge=256, description="Prompt + reply tokens")
    api_key_env: str = Field(
        default="ANTHROPIC_API_KEY", description="Environment variable holding the API key"
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        try:
            url = httpx.URL(value)
        except httpx.InvalidURL as exc:
            raise ValueError(f"base_url is not a valid URL: {exc}") from None
        if url.userinfo:  # checked first: the value is not echoed when it holds a secret
            raise ValueError("base_url must not carry credentials; put the key in the keys file")
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base_url must be an http:// or https:// URL, got {value!r}")
        return value.rstrip("/")


def _import_sdk() -> ModuleType:
    try:
        return importlib.import_module("anthropic")
    except ImportError:
        raise ProviderError(INSTALL_HINT) from None


def _http_library(sdk: ModuleType) -> ModuleType:
    """The HTTP package the SDK is built on: ``httpx`` (SDK < 1.0) or ``httpx2`` (SDK >= 1.0)."""
    default = getattr(sdk, "DefaultHttpxClient", None)
    for cls in getattr(default, "__mro__", ()):
        top = cls.__module__.split(".")[0]
        if cls.__name__ == "Client" and top != sdk.__name__:
            return importlib.import_module(top)
    return httpx


def _bridge(lib: ModuleType, client: httpx.Client, base_url: str) -> Any:
    """A client of the SDK's HTTP library whose transport sends through ``client``."""

    class Bridge(lib.BaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            url = str(request.url)
            if not same_origin(url, base_url):
                raise ProviderError(f"refusing to send a request outside {base_url}: {url}")
            outgoing = client.build_request(
                request.method, url, headers=request.headers.raw, content=request.read()
            )
            try:
                response = client.send(outgoing, follow_redirects=False)
            except httpx.TimeoutException as exc:
                raise lib.TimeoutException(str(exc), request=request) from None
            headers = [
                (k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROP_HEADERS
            ]
            return lib.Response(response.status_code, headers=headers, content=response.content)

    return lib.Client(transport=Bridge(), follow_redirects=False)


class AnthropicProvider(Provider):
    """A Claude model; a request's JSON Schema is enforced through a forced tool call."""

    name: ClassVar[str] = "anthropic"
    supports_schema: ClassVar[bool] = True
    needs_network: ClassVar[bool] = True

    def __init__(
        self,
        options: AnthropicOptions,
        *,
        client: httpx.Client | None = None,
        api_key: str | None = None,
    ) -> None:
        sdk = _import_sdk()
        if not api_key:
            raise ProviderError(
                f"the anthropic provider needs an API key: set ${options.api_key_env} or add "
                'anthropic = "KEY" to the keys file (mode 0600)'
            )
        self.options = options
        self.context_length = options.context_length
        self._sdk = sdk
        self._key = Secret(api_key)
        self._own_client = client is None
        self._http = client if client is not None else make_client(options.timeout_seconds)
        self._sdk_http = _bridge(_http_library(sdk), self._http, options.base_url)
        self._client = sdk.Anthropic(
            api_key=api_key,
            base_url=options.base_url,
            timeout=options.timeout_seconds,
            max_retries=options.max_retries,
            http_client=self._sdk_http,
        )
        # Recent SDKs dropped ``temperature`` from messages.create; send it only where it exists.
        create = self._client.messages.create
        self._takes_temperature = "temperature" in inspect.signature(create).parameters

    def __repr__(self) -> str:
        return (
            f"AnthropicProvider(base_url={self.options.base_url!r}, model={self.options.model!r})"
        )

    def close(self) -> None:
        """Close the HTTP clients this provider created."""
        self._sdk_http.close()
        if self._own_client:
            self._http.close()

    def arguments(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments given to ``messages.create`` for ``request``."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": self.options.model,
            "max_tokens": request.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ],
        }
        if self._takes_temperature:
            kwargs["temperature"] = request.temperature
        if system:
            kwargs["system"] = system
        if request.schema is not None:
            if request.schema.get("type") != "object":
                raise ProviderError("the anthropic provider needs a reply schema of type 'object'")
            tool = wire_name(request.schema_name)
            kwargs["tools"] = [
                {
                    "name": tool,
                    "description": "Give the reply. Its input is the whole answer.",
                    "input_schema": request.schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": tool}
        return kwargs

    def complete(self, request: ModelRequest) -> Completion:
        """Send one Messages API request; raise :class:`ProviderError` with the fix on failure."""
        kwargs = self.arguments(request)
        started = time.monotonic()
        try:
            message = self._client.messages.create(**kwargs)
        except self._sdk.AnthropicError as exc:
            raise self._error(exc) from None
        stop = str(getattr(message, "stop_reason", None) or "end_turn")
        finish = _STOP_REASONS.get(stop, stop)
        blocks = list(getattr(message, "content", None) or [])
        if request.schema is not None:
            tool_input = next(
                (b.input for b in blocks if getattr(b, "type", "") == "tool_use"), None
            )
            if tool_input is None and finish != "length":
                raise ProviderError(
                    f"the model did not call the reply tool (stop reason {stop!r}); "
                    "the reply is unusable"
                )
            text = "" if tool_input is None else json.dumps(tool_input, ensure_ascii=False)
        else:
            text = "".join(b.text for b in blocks if getattr(b, "type", "") == "text")
        usage = getattr(message, "usage", None)
        return Completion(
            text=text,
            usage=Usage(
                prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            ),
            finish_reason=finish,
            model=str(getattr(message, "model", "") or self.options.model),
            duration_s=time.monotonic() - started,
        )

    def _error(self, exc: Exception) -> ProviderError:
        opts = self.options
        cause = exc.__cause__
        if isinstance(cause, ProviderError):
            return cause
        detail = " ".join(redact(str(getattr(exc, "message", exc)), [self._key]).split())[:300]
        if isinstance(exc, self._sdk.APITimeoutError):
            return ProviderError(
                f"{opts.base_url} did not answer within {opts.timeout_seconds:g} s: raise "
                "model.timeout_seconds or retry later"
            )
        if isinstance(exc, self._sdk.APIConnectionError):
            return ProviderError(
                f"could not connect to {opts.base_url}: check the network or set model.base_url"
            )
        status = getattr(exc, "status_code", None)
        where = join_url(opts.base_url, "v1/messages")
        if status == 401:
            return ProviderError(f"401 from {where}: check the key in ${opts.api_key_env}")
        if status == 403:
            return ProviderError(
                f"403 from {where}: the key in ${opts.api_key_env} may not use this: {detail}"
            )
        if status == 404:
            return ProviderError(
                f"model {opts.model!r} not found at {opts.base_url}: {detail}. Set model.name "
                "to a current Claude model name"
            )
        if status == 429:
            return ProviderError(
                f"rate limited by {where} after {opts.max_retries + 1} attempt(s): {detail}. "
                "Retry later or raise model.max_retries"
            )
        if isinstance(status, int) and 300 <= status < 400:
            return ProviderError(
                f"{where} answered {status} (a redirect); redirects are never followed so the "
                "API key only goes to model.base_url: set model.base_url to the final address"
            )
        if isinstance(status, int):
            return ProviderError(f"{status} from {where}: {detail}")
        return ProviderError(f"the anthropic SDK failed: {type(exc).__name__}: {detail}")


__all__ = ["INSTALL_HINT", "AnthropicOptions", "AnthropicProvider"]
