"""The OpenAI-compatible provider against httpx.MockTransport: the exact wire behaviour."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from affidavit.errors import ProviderError
from affidavit.providers import (
    Message,
    ModelRequest,
    OpenAIOptions,
    OpenAIProvider,
    build_provider,
)

BASE = "http://127.0.0.1:8080/v1"
KEY = "sk-secret-abcdef0123456789"
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
REQUEST = ModelRequest(
    messages=(Message("system", "be brief"), Message("user", "give a")),
    schema=SCHEMA,
    schema_name="affidavit plan",
    max_tokens=64,
)

Handler = Callable[[httpx.Request], httpx.Response]


def ok(text: str = '{"a": 1}', finish: str = "stop") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "x",
            "model": "served-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        },
    )


def make(
    handler: Handler, sleeps: list[float] | None = None, **options: Any
) -> tuple[OpenAIProvider, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    client = httpx.Client(transport=httpx.MockTransport(record), follow_redirects=True)
    waits = sleeps if sleeps is not None else []
    provider = OpenAIProvider(
        OpenAIOptions(base_url=BASE, model="m1", **options),
        client=client,
        api_key=KEY,
        sleep=waits.append,
    )
    return provider, seen


def test_request_body_and_parsed_reply() -> None:
    provider, seen = make(lambda r: ok())
    completion = provider.complete(REQUEST)
    assert completion.text == '{"a": 1}'
    assert completion.finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 5)
    assert completion.model == "served-model"
    assert completion.duration_s >= 0
    (request,) = seen
    assert str(request.url) == f"{BASE}/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body["model"] == "m1"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "give a"},
    ]
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "affidavit_plan", "schema": SCHEMA, "strict": False},
    }


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("json_object", {"type": "json_object"}),
        ("json_object_schema", {"type": "json_object", "schema": SCHEMA}),
        ("none", None),
    ],
)
def test_structured_output_modes(mode: str, expected: dict[str, Any] | None) -> None:
    provider, seen = make(lambda r: ok(), structured_output=mode)
    provider.complete(REQUEST)
    assert json.loads(seen[0].content).get("response_format") == expected


def test_no_schema_no_key_no_response_format_nor_authorization() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return ok("plain")

    client = httpx.Client(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider(OpenAIOptions(base_url=BASE, model="m"), client=client)
    assert provider.complete(ModelRequest(messages=(Message("user", "hi"),))).text == "plain"
    assert "response_format" not in json.loads(seen[0].content)
    assert "authorization" not in seen[0].headers


def test_length_finish_is_reported() -> None:
    provider, _ = make(lambda r: ok('{"a": ', finish="length"))
    assert provider.complete(REQUEST).finish_reason == "length"


def test_retries_500_then_succeeds_with_backoff() -> None:
    replies = iter([httpx.Response(500, text="oops"), httpx.Response(503), ok()])
    sleeps: list[float] = []
    provider, seen = make(lambda r: next(replies), sleeps=sleeps, max_retries=2)
    assert provider.complete(REQUEST).text == '{"a": 1}'
    assert len(seen) == 3
    assert sleeps == [0.5, 1.0]


def test_429_honours_retry_after_and_gives_up_after_max_retries() -> None:
    sleeps: list[float] = []
    provider, seen = make(
        lambda r: httpx.Response(
            429, headers={"retry-after": "3"}, json={"error": {"message": "slow down"}}
        ),
        sleeps=sleeps,
        max_retries=1,
    )
    with pytest.raises(ProviderError, match=r"rate limited .* after 2 attempt.*slow down"):
        provider.complete(REQUEST)
    assert len(seen) == 2 and sleeps == [3.0]


def test_no_retry_on_400() -> None:
    provider, seen = make(
        lambda r: httpx.Response(400, json={"error": {"message": "bad response_format"}})
    )
    with pytest.raises(ProviderError, match=r"400 from .*bad response_format.*structured_output"):
        provider.complete(REQUEST)
    assert len(seen) == 1


def test_401_names_the_environment_variable() -> None:
    provider, _ = make(lambda r: httpx.Response(401, json={"error": {"message": KEY}}))
    with pytest.raises(ProviderError) as info:
        provider.complete(REQUEST)
    assert str(info.value) == f"401 from {BASE}/chat/completions: check the key in $OPENAI_API_KEY"


def test_404_model_not_found() -> None:
    provider, _ = make(
        lambda r: httpx.Response(
            404, json={"error": {"message": 'model "m1" not found, try pulling it first'}}
        )
    )
    with pytest.raises(ProviderError, match=r"model 'm1' not found at http://127.0.0.1:8080/v1"):
        provider.complete(REQUEST)
    provider, _ = make(lambda r: httpx.Response(404, text="Not Found"))
    with pytest.raises(ProviderError, match=r"is model.base_url right"):
        provider.complete(REQUEST)


def test_redirects_are_never_followed_so_the_key_stays_home() -> None:
    hosts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        return httpx.Response(
            307, headers={"location": "https://elsewhere.example/v1/chat/completions"}
        )

    provider, seen = make(handler)  # the injected client even has follow_redirects=True
    with pytest.raises(ProviderError, match=r"redirecting to https://elsewhere.example"):
        provider.complete(REQUEST)
    assert hosts == ["127.0.0.1"]
    assert all(r.url.host == "127.0.0.1" for r in seen)


def test_timeout_and_connection_errors() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    provider, seen = make(slow, max_retries=3, timeout_seconds=7)
    with pytest.raises(ProviderError, match=r"did not answer within 7 s"):
        provider.complete(REQUEST)
    assert len(seen) == 1  # a read timeout is not retried: the server is still generating

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    sleeps: list[float] = []
    provider, seen = make(refused, sleeps=sleeps, max_retries=2)
    with pytest.raises(ProviderError) as info:
        provider.complete(REQUEST)
    assert str(info.value).startswith(
        "could not connect to http://127.0.0.1:8080/v1 (ConnectError, 3 attempt(s)): "
        "is the server running? set model.base_url"
    )
    assert len(seen) == 3 and sleeps == [0.5, 1.0]


def test_a_real_refused_connection() -> None:
    provider = OpenAIProvider(
        OpenAIOptions(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_seconds=5)
    )
    with pytest.raises(ProviderError, match=r"could not connect to http://127.0.0.1:9/v1"):
        provider.complete(REQUEST)
    provider.close()


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="<html>"),
        httpx.Response(200, json={"choices": []}),
        httpx.Response(200, json={"choices": [{"message": {"content": None, "refusal": "no"}}]}),
    ],
)
def test_unusable_replies(response: httpx.Response) -> None:
    provider, _ = make(lambda r: response)
    with pytest.raises(ProviderError):
        provider.complete(REQUEST)


def test_build_provider_validates_options() -> None:
    with pytest.raises(ProviderError) as info:
        build_provider("openai", {"model": "m", "base_ur": "x"})
    message = str(info.value)
    assert "unknown option 'base_ur'" in message
    assert "Valid options: base_url, model, timeout_seconds" in message
    with pytest.raises(ProviderError, match=r"missing option 'model'"):
        build_provider("openai", {})
    with pytest.raises(ProviderError, match=r"base_url must be an http"):
        build_provider("openai", {"model": "m", "base_url": "file:///etc/passwd"})
    with pytest.raises(ProviderError, match=r"unknown provider 'gpt'; use one of: extractive"):
        build_provider("gpt", {})
    provider = build_provider(
        "openai", {"model": "m", "base_url": BASE + "/", "context_length": 4096}, api_key="k"
    )
    assert isinstance(provider, OpenAIProvider)
    assert provider.context_length == 4096 and provider.options.base_url == BASE
    provider.close()
