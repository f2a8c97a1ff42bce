"""Any OpenAI-compatible chat completions endpoint over plain httpx (SPEC §5).

Works with OpenAI, Ollama (``http://127.0.0.1:11434/v1``), vLLM, the llama.cpp server and LM Studio.
No SDK is needed. When a request carries a JSON Schema it is sent as
``response_format={"type": "json_schema", ...}`` — or, per ``structured_output``, as
``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server), as plain JSON mode, or not
at all; the host validates the reply either way.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

import httpx
from pydantic import Field, field_validator

from ..errors import ProviderError
from .base import Completion, ModelRequest, Provider, ProviderOptions, Usage
from .http import (
    Sleep,
    body_excerpt,
    is_retryable,
    join_url,
    make_client,
    post_json,
    wire_name,
)
from .keys import Secret


class OpenAIOptions(ProviderOptions):
    """Options of the ``openai`` provider."""

    base_url: str = Field(
        default="https://api.openai.com/v1",
        description="Endpoint root; /chat/completions is appended (Ollama: http://127.0.0.1:11434/v1)",
    )
    model: str = Field(min_length=1, description="Model name the server knows, e.g. gpt-4o-mini")
    timeout_seconds: float = Field(default=120.0, gt=0, description="Limit for one HTTP request")
    max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries after connection errors, 429 and 5xx"
    )
    structured_output: Literal["json_schema", "json_object_schema", "json_object", "none"] = Field(
        default="json_schema",
        description="How the reply's JSON Schema is sent: OpenAI's json_schema response format; "
        "json_object with a schema key (llama-cpp-python's server); plain JSON mode; or not at all",
    )
    context_length: int = Field(default=8192, ge=256, description="Prompt + reply tokens")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Environment variable holding the API key"
    )
    seed: int | None = Field(default=None, description="Sampling seed, for servers that take one")

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


class OpenAIProvider(Provider):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    name: ClassVar[str] = "openai"
    supports_schema: ClassVar[bool] = True
    needs_network: ClassVar[bool] = True

    def __init__(
        self,
        options: OpenAIOptions,
        *,
        client: httpx.Client | None = None,
        api_key: str | None = None,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.options = options
        self.context_length = options.context_length
        self._key = Secret(api_key or "")
        self._own_client = client is None
        self._client = client if client is not None else make_client(options.timeout_seconds)
        self._sleep = sleep
        self._url = join_url(options.base_url, "chat/completions")

    def __repr__(self) -> str:
        return f"OpenAIProvider(base_url={self.options.base_url!r}, model={self.options.model!r})"

    def close(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._own_client:
            self._client.close()

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        body: dict[str, Any] = {
            "model": self.options.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": False,
        }
        if self.options.seed is not None:
            body["seed"] = self.options.seed
        if request.schema is not None:
            mode = self.options.structured_output
            if mode == "json_schema":
                name = wire_name(request.schema_name)
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": request.schema, "strict": False},
                }
            elif mode == "json_object_schema":
                body["response_format"] = {"type": "json_object", "schema": request.schema}
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, request: ModelRequest) -> Completion:
        """Send one chat completion request; raise :class:`ProviderError` with the fix on failure."""
        headers = {"Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        started = time.monotonic()
        response = post_json(
            self._client,
            self._url,
            self.payload(request),
            headers=headers,
            base_url=self.options.base_url,
            max_retries=self.options.max_retries,
            timeout_seconds=self.options.timeout_seconds,
            sleep=self._sleep,
        )
        if response.status_code != 200:
            raise self._status_error(response)
        completion = self._parse(response)
        return Completion(
            text=completion.text,
            usage=completion.usage,
            finish_reason=completion.finish_reason,
            model=completion.model,
            duration_s=time.monotonic() - started,
        )

    def _status_error(self, response: httpx.Response) -> ProviderError:
        status, url, opts = response.status_code, self._url, self.options
        detail = body_excerpt(response, [self._key])
        if status == 401:
            missing = "" if self._key else " (no key was given)"
            return ProviderError(f"401 from {url}: check the key in ${opts.api_key_env}{missing}")
        if status == 403:
            return ProviderError(
                f"403 from {url}: the key in ${opts.api_key_env} is not allowed to do this "
                f"(model {opts.model!r}): {detail}"
            )
        if status == 404:
            if "model" in detail.lower():
                return ProviderError(
                    f"model {opts.model!r} not found at {opts.base_url}: {detail}. Set model.name "
                    f"to one the server serves (GET {join_url(opts.base_url, 'models')} "
                    "lists them; Ollama: `ollama pull NAME` first)"
                )
            return ProviderError(
                f"404 from {url}: is model.base_url right? OpenAI-compatible servers usually "
                "answer under /v1"
            )
        hint = _hint(detail)
        if is_retryable(status) and not hint:
            tries = opts.max_retries + 1
            what = "rate limited" if status == 429 else f"server error {status}"
            return ProviderError(
                f"{what} from {url} after {tries} attempt(s): {detail}. Retry later "
                "or raise model.max_retries"
            )
        return ProviderError(f"{status} from {url}: {detail}{hint}")

    def _parse(self, response: httpx.Response) -> Completion:
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(
                f"{self._url} answered with a body that is not JSON: is model.base_url an "
                "OpenAI-compatible endpoint?"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"{self._url} answered without choices; the reply is unusable")
        choice = choices[0]
        message = choice.get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if refusal:
                raise ProviderError(f"the model refused to answer: {refusal}")
            content = ""
        if not isinstance(content, str):
            raise ProviderError(f"{self._url} answered with non-text content; unusable")
        usage = data.get("usage") or {}
        return Completion(
            text=content,
            usage=Usage(
                prompt_tokens=_int(usage.get("prompt_tokens")),
                completion_tokens=_int(usage.get("completion_tokens")),
            ),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            model=str(data.get("model") or self.options.model),
        )


def _hint(detail: str) -> str:
    """A fix suggested by the words of a server's error (some servers answer 500 to bad input)."""
    lowered = detail.lower()
    if "response_format" in lowered or "json_schema" in lowered:
        return (
            ". This server may not support this structured output: set "
            "model.structured_output to 'json_object_schema' (llama-cpp-python's server), "
            "'json_object' or 'none'"
        )
    if "context" in lowered and ("length" in lowered or "window" in lowered):
        return ". The prompt is too long for the model: use a model with a larger context"
    return ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["OpenAIOptions", "OpenAIProvider"]
