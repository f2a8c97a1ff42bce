"""The provider a vault's [model] settings build, and where keys may go."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.config import load_config
from affidavit.errors import ConfigError
from affidavit.providers.from_config import provider_from_config


def config(tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "affidavit.toml"
    path.write_text(body)
    return load_config(path)


def test_default_is_the_extractive_engine(tmp_path: Path) -> None:
    assert provider_from_config(config(tmp_path, "")).name == "extractive"


def test_openai_needs_a_model_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.name is empty"):
        provider_from_config(config(tmp_path, '[model]\nprovider = "openai"\n'))


def test_default_key_goes_only_to_openai(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    own = provider_from_config(config(tmp_path, '[model]\nprovider = "openai"\nname = "m"\n'))
    assert own._key.reveal() == "sk-secret-value"  # type: ignore[attr-defined]
    other = provider_from_config(
        config(
            tmp_path,
            '[model]\nprovider = "openai"\nname = "m"\nbase_url = "https://evil.example/v1"\n',
        )
    )
    assert other._key.reveal() == ""  # type: ignore[attr-defined]
    monkeypatch.setenv("MY_KEY", "k2")
    named = provider_from_config(
        config(
            tmp_path,
            '[model]\nprovider = "openai"\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'api_key_env = "MY_KEY"\n',
        )
    )
    assert named._key.reveal() == "k2"  # type: ignore[attr-defined]


def test_local_needs_a_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.path is empty"):
        provider_from_config(config(tmp_path, '[model]\nprovider = "local"\n'))
