"""HTTP plumbing shared by the network providers: one base URL, no redirects, bounded retries.

The API key goes only to the configured base URL: requests are built from it, redirects are never
followed (a 3xx is an error that names the fix), and an injected client can't change that because
``follow_redirects=False`` is passed on every request. Retries cover transport errors, 429 and 5xx
only (never a read timeout: the server is still working on it), with a bounded exponential
backoff that honours a short ``Retry-After``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import httpx

from ..errors import ProviderError
from .keys import Secret, redact

MAX_BACKOFF_SECONDS = 20.0
MAX_BODY_IN_MESSAGE = 300

Sleep = Callable[[float], None]
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(name: str) -> str:
    """``name`` as a schema or tool name APIs accept: ``[A-Za-z0-9_-]{1,64}``."""
    return _NAME_CHARS.sub("_", name)[:64] or "reply"


def is_retryable(status: int) -> bool:
    """429 (rate limited) and 5xx (server trouble) are worth another try; nothing else is."""
    return status == 429 or status >= 500


def join_url(base_url: str, path: str) -> str:
    """``base_url`` + ``/path`` with exactly one slash between them."""
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def same_origin(url: str, base_url: str) -> bool:
    """True when ``url`` has the scheme, host and port of ``base_url``."""
    a, b = httpx.URL(url), httpx.URL(base_url)
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


def make_client(timeout_seconds: float) -> httpx.Client:
    """An httpx client that never follows redirects and ignores proxy/netrc environment variables."""
    return httpx.Client(
        timeout=httpx.Timeout(timeout_seconds), follow_redirects=False, trust_env=False
    )


def backoff_seconds(attempt: int, response: httpx.Response | None = None) -> float:
    """Wait before retry number ``attempt`` (1-based): 0.5 s, 1 s, 2 s ... capped; Retry-After wins."""
    if response is not None:
        header = response.headers.get("retry-after", "")
        try:
            return min(max(float(header), 0.0), MAX_BACKOFF_SECONDS)
        except ValueError:
            pass
    return float(min(0.5 * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS))


def body_excerpt(response: httpx.Response, secrets: list[str | Secret | None]) -> str:
    """The server's error message (or the start of its body), redacted and shortened."""
    try:
        data = response.json()
    except ValueError:
        data = None
    message = ""
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("detail") or "")
        elif isinstance(error, str):
            message = error
        if not message and isinstance(data.get("detail"), str):
            message = data["detail"]
    if not message:
        message = response.text
    message = " ".join(redact(message, secrets).split())
    if len(message) > MAX_BODY_IN_MESSAGE:
        message = message[:MAX_BODY_IN_MESSAGE] + "..."
    return message


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str],
    base_url: str,
    max_retries: int,
    timeout_seconds: float,
    sleep: Sleep = time.sleep,
) -> httpx.Response:
    """POST ``payload`` to ``url`` and return the final response (any status but 3xx).

    Retries transport errors, timeouts, 429 and 5xx answers up to ``max_retries`` times.
    Raises :class:`ProviderError` for connection failures, timeouts and redirects.
    """
    if not same_origin(url, base_url):  # defence in depth: URLs are built from base_url
        raise ProviderError(f"refusing to send a request outside {base_url}")
    attempt = 0
    while True:
        attempt += 1
        try:
            response = client.post(
                url,
                json=payload,
                headers=headers,
                follow_redirects=False,
                timeout=httpx.Timeout(timeout_seconds),
            )
        except httpx.TimeoutException as exc:
            # A read timeout means the server took the request and is still generating: asking
            # again would queue a second generation behind the first, so it is not retried.
            if attempt <= max_retries and not isinstance(exc, httpx.ReadTimeout):
                sleep(backoff_seconds(attempt))
                continue
            raise ProviderError(
                f"{url} did not answer within {timeout_seconds:g} s "
                f"({type(exc).__name__}, {attempt} attempt(s)); the model may be overloaded or "
                "too slow for this request: raise model.timeout_seconds or use a smaller model"
            ) from None
        except httpx.TransportError as exc:
            if attempt <= max_retries:
                sleep(backoff_seconds(attempt))
                continue
            what = "could not connect to" if isinstance(exc, httpx.ConnectError) else "lost"
            raise ProviderError(
                f"{what} {base_url} ({type(exc).__name__}, {attempt} attempt(s)): "
                "is the server running? set model.base_url"
            ) from None
        except httpx.HTTPError as exc:  # e.g. a body that fails to decode
            raise ProviderError(
                f"the request to {url} failed ({type(exc).__name__}); is model.base_url an "
                "OpenAI-compatible endpoint?"
            ) from None
        if is_retryable(response.status_code) and attempt <= max_retries:
            response.close()
            sleep(backoff_seconds(attempt, response))
            continue
        if response.is_redirect:
            target = response.headers.get("location", "?")
            raise ProviderError(
                f"{url} answered {response.status_code} redirecting to {target}; redirects are "
                "never followed (the API key must only go to model.base_url): set model.base_url "
                "to the final address"
            )
        return response
