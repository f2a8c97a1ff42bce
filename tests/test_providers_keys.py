"""API keys: the environment wins, the keys file must be private, keys never show in messages."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from affidavit.errors import ProviderError
from affidavit.providers import (
    OpenAIOptions,
    OpenAIProvider,
    Secret,
    build_provider,
    load_api_key,
    redact,
)

KEY = "sk-test-0123456789abcdef"


def keys_file(tmp_path: Path, body: str, mode: int = 0o600) -> Path:
    path = tmp_path / "keys.toml"
    path.write_text(body)
    os.chmod(path, mode)
    return path


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    path = keys_file(tmp_path, 'openai = "from-file"\n')
    env = {"OPENAI_API_KEY": "from-env"}
    assert load_api_key("OPENAI_API_KEY", path, "openai", environ=env) == "from-env"
    assert load_api_key("OPENAI_API_KEY", path, "openai", environ={}) == "from-file"
    assert load_api_key("OPENAI_API_KEY", path, "anthropic", environ={}) is None
    assert load_api_key("OPENAI_API_KEY", None, "openai", environ={}) is None
    assert load_api_key("OPENAI_API_KEY", tmp_path / "none.toml", "openai", environ={}) is None


def test_a_file_others_can_read_is_refused_with_the_chmod_hint(tmp_path: Path) -> None:
    path = keys_file(tmp_path, f'openai = "{KEY}"\n', mode=0o644)
    with pytest.raises(ProviderError) as info:
        load_api_key("OPENAI_API_KEY", path, "openai", environ={})
    message = str(info.value)
    assert f"chmod 600 {path}" in message
    assert "0644" in message
    assert KEY not in message


def test_malformed_files_never_echo_their_content(tmp_path: Path) -> None:
    path = keys_file(tmp_path, f"openai = {KEY}\n")  # unquoted: not TOML
    with pytest.raises(ProviderError) as info:
        load_api_key("OPENAI_API_KEY", path, "openai", environ={})
    assert KEY not in str(info.value)
    assert 'openai = "KEY"' in str(info.value)
    path = keys_file(tmp_path, "openai = 12\n")
    with pytest.raises(ProviderError, match=r"must be a string"):
        load_api_key("OPENAI_API_KEY", path, "openai", environ={})


def test_secret_and_redact_hide_the_key() -> None:
    secret = Secret(KEY)
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{secret}"
    assert secret.reveal() == KEY
    assert redact(f"bad key {KEY}!", [KEY, None, ""]) == "bad key [redacted]!"
    assert redact(f"{KEY}", [secret]) == "[redacted]"


def test_a_provider_keeps_the_key_out_of_repr_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {KEY}"
        return httpx.Response(400, json={"error": {"message": f"key {KEY} is malformed"}})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider(OpenAIOptions(model="m"), client=client, api_key=KEY)
    assert KEY not in repr(provider)
    assert KEY not in repr(vars(provider))
    from affidavit.providers import Message, ModelRequest

    with pytest.raises(ProviderError) as info:
        provider.complete(ModelRequest(messages=(Message("user", "hi"),)))
    assert KEY not in str(info.value) and "[redacted]" in str(info.value)
    # build_provider finds the key in the environment by the option's api_key_env
    monkeypatch.setenv("MY_KEY", KEY)
    built = build_provider("openai", {"model": "m", "api_key_env": "MY_KEY"}, client=client)
    with pytest.raises(ProviderError):
        built.complete(ModelRequest(messages=(Message("user", "hi"),)))
