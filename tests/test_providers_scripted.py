"""The scripted provider: replies in order, every request recorded, a clear error when it runs out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.errors import ProviderError
from affidavit.providers import (
    Completion,
    Message,
    ModelRequest,
    ScriptedProvider,
    Usage,
    build_provider,
)


def ask(text: str) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), schema={"type": "object"})


def test_replays_in_order_and_records_requests() -> None:
    canned = Completion(text="{}", usage=Usage(3, 4), finish_reason="length", model="m")
    provider = ScriptedProvider(["first", canned, "third"])
    assert provider.complete(ask("a")).text == "first"
    assert provider.complete(ask("b")) is canned
    third = provider.complete(ask("c"))
    assert (third.text, third.finish_reason, third.model) == ("third", "stop", "scripted")
    assert [r.messages[0].content for r in provider.requests] == ["a", "b", "c"]
    assert provider.requests[0].schema == {"type": "object"}
    assert provider.remaining == 0


def test_a_function_makes_its_reply_from_the_request() -> None:
    provider = ScriptedProvider(
        [
            lambda r: r.messages[0].content.upper(),
            lambda r: Completion(text="", finish_reason="length"),
        ]
    )
    assert provider.complete(ask("echo me")).text == "ECHO ME"
    assert provider.complete(ask("x")).finish_reason == "length"


def test_exhaustion_names_the_call() -> None:
    provider = ScriptedProvider(["only"])
    provider.complete(ask("a"))
    with pytest.raises(ProviderError, match=r"no reply left for call 2"):
        provider.complete(ask("b"))
    assert len(provider.requests) == 2  # the failed call is recorded too
    with pytest.raises(ProviderError, match=r"call 1"):
        ScriptedProvider().complete(ask("x"))


def test_exceptions_are_raised_in_turn() -> None:
    provider = ScriptedProvider([ProviderError("boom"), "after"])
    with pytest.raises(ProviderError, match=r"boom"):
        provider.complete(ask("a"))
    assert provider.complete(ask("b")).text == "after"


def test_replies_from_a_file_and_through_the_registry(tmp_path: Path) -> None:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(["one", "two"]))
    provider = ScriptedProvider(path=path)
    assert [provider.complete(ask("q")).text for _ in range(2)] == ["one", "two"]
    built = build_provider("scripted", {"path": str(path)})
    assert isinstance(built, ScriptedProvider)
    assert built.complete(ask("q")).text == "one"


@pytest.mark.parametrize("content", ["not json", '{"a": 1}', '["ok", 2]'])
def test_bad_reply_files_are_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "replies.json"
    path.write_text(content)
    with pytest.raises(ProviderError, match=r"replies\.json"):
        ScriptedProvider(path=path)
    with pytest.raises(ProviderError, match=r"does not exist"):
        ScriptedProvider(path=tmp_path / "missing.json")
