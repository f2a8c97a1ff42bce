"""The Anthropic provider through the official SDK, over httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from affidavit.errors import ProviderError
from affidavit.providers import (
    AnthropicOptions,
    AnthropicProvider,
    Message,
    ModelRequest,
    build_provider,
)

pytest.importorskip("anthropic", reason="pip install 'affidavit[anthropic]'")

KEY = "sk-ant-test-0123456789"
SCHEMA = {
    "type": "object",
    "properties": {"nonce": {"type": "string"}, "operations": {"type": "array"}},
    "required": ["nonce", "operations"],
}
REQUEST = ModelRequest(
    messages=(Message("system", "You propose plans."), Message("user", "Plan this.")),
    schema=SCHEMA,
    schema_name="plan",
    max_tokens=300,
)


def recorded(stop_reason: str = "tool_use", tool_input: Any = None) -> dict[str, Any]:
    """A Messages API reply as the API sends it, with one tool_use block."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "plan",
                "input": tool_input
                if tool_input is not None
                else {"nonce": "n" * 16, "operations": []},
            }
        ],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 321, "output_tokens": 45},
    }


def make(
    handler: Callable[[httpx.Request], httpx.Response], **options: Any
) -> tuple[AnthropicProvider, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    client = httpx.Client(transport=httpx.MockTransport(record))
    opts = AnthropicOptions(model="claude-test-1", max_retries=0, **options)
    return AnthropicProvider(opts, client=client, api_key=KEY), seen


def test_tool_use_reply_becomes_the_text_and_the_tool_is_forced() -> None:
    provider, seen = make(lambda r: httpx.Response(200, json=recorded()))
    completion = provider.complete(REQUEST)
    assert json.loads(completion.text) == {"nonce": "n" * 16, "operations": []}
    assert completion.finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (321, 45)
    assert completion.model == "claude-test-1"
    (request,) = seen
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    # SDKs before 2.x send x-api-key; later ones a bearer token
    assert KEY in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])
    body = json.loads(request.content)
    assert body["tool_choice"] == {"type": "tool", "name": "plan"}
    assert body["tools"][0]["name"] == "plan"
    assert body["tools"][0]["input_schema"] == SCHEMA
    assert body["system"] == "You propose plans."
    assert body["messages"] == [{"role": "user", "content": "Plan this."}]
    assert body["max_tokens"] == 300 and body["model"] == "claude-test-1"
    provider.close()


def test_max_tokens_stop_is_length() -> None:
    provider, _ = make(lambda r: httpx.Response(200, json=recorded("max_tokens", {"nonce": "x"})))
    completion = provider.complete(REQUEST)
    assert completion.finish_reason == "length"


def test_text_reply_without_a_schema() -> None:
    reply = recorded("end_turn")
    reply["content"] = [{"type": "text", "text": "Hello."}]
    provider, seen = make(lambda r: httpx.Response(200, json=reply))
    completion = provider.complete(ModelRequest(messages=(Message("user", "hi"),)))
    assert (completion.text, completion.finish_reason) == ("Hello.", "stop")
    assert "tools" not in json.loads(seen[0].content)


def test_a_reply_without_the_tool_call_is_an_error() -> None:
    reply = recorded("end_turn")
    reply["content"] = [{"type": "text", "text": "I'd rather chat."}]
    provider, _ = make(lambda r: httpx.Response(200, json=reply))
    with pytest.raises(ProviderError, match=r"did not call the reply tool"):
        provider.complete(REQUEST)


def error(status: int, kind: str, message: str) -> Callable[[httpx.Request], httpx.Response]:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return lambda r: httpx.Response(status, json=body)


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (401, "authentication_error", r"401 from .*check the key in \$ANTHROPIC_API_KEY"),
        (404, "not_found_error", "model 'claude-test-1' not found"),
        (429, "rate_limit_error", "rate limited"),
        (400, "invalid_request_error", "400 from .*bad things"),
        (529, "overloaded_error", "529 from"),
    ],
)
def test_sdk_errors_become_provider_errors(status: int, kind: str, expected: str) -> None:
    provider, _ = make(error(status, kind, f"bad things {KEY}"))
    with pytest.raises(ProviderError, match=expected) as info:
        provider.complete(REQUEST)
    assert KEY not in str(info.value)


def test_connection_errors_and_timeouts() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    provider, _ = make(refused)
    with pytest.raises(ProviderError, match=r"could not connect to https://api.anthropic.com"):
        provider.complete(REQUEST)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    provider, _ = make(slow, timeout_seconds=9)
    with pytest.raises(ProviderError, match=r"did not answer within 9 s"):
        provider.complete(REQUEST)


def test_redirects_are_not_followed() -> None:
    provider, seen = make(
        lambda r: httpx.Response(307, headers={"location": "https://elsewhere.example/v1/messages"})
    )
    with pytest.raises(ProviderError, match=r"redirect"):
        provider.complete(REQUEST)
    assert [r.url.host for r in seen] == ["api.anthropic.com"]


def test_a_key_is_required_and_never_shown() -> None:
    with pytest.raises(ProviderError, match=r"\$ANTHROPIC_API_KEY"):
        AnthropicProvider(AnthropicOptions(model="m"))
    provider = build_provider("anthropic", {"model": "m"}, api_key=KEY)
    assert KEY not in repr(provider)
    provider.close()
