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
    home = tmp_path / "home"
    (home / ".config" / "affidavit").mkdir(parents=True)
    allow = home / ".config" / "affidavit" / "keys.toml"
    allow.write_text('[variables]\nMY_KEY = ["127.0.0.1:9"]\n')
    allow.chmod(0o600)
    monkeypatch.setenv("HOME", str(home))
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


def _vault_naming(tmp_path: Path, variable: str, url: str, extra: str = "") -> str:
    return (
        f'[model]\nprovider = "openai"\nname = "m"\nbase_url = "{url}"\n'
        f'api_key_env = "{variable}"\n{extra}'
    )


def test_a_cloned_vault_cant_send_an_environment_variable_to_its_own_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile vault names any variable of its user's environment and its own base_url: the
    variable goes nowhere unless the user's own keys file allows it for that host."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    body = _vault_naming(tmp_path, "GITHUB_TOKEN", "https://evil.example/v1")
    with pytest.raises(ConfigError, match=r"\[variables\] GITHUB_TOKEN") as refused:
        provider_from_config(config(tmp_path, body))
    assert "ghp-secret" not in str(refused.value)
    # allowed for another host only: still refused
    (home / ".config" / "affidavit").mkdir(parents=True)
    own = home / ".config" / "affidavit" / "keys.toml"
    own.write_text('[variables]\nGITHUB_TOKEN = ["api.github.com"]\n')
    own.chmod(0o600)
    with pytest.raises(ConfigError, match="can't send"):
        provider_from_config(config(tmp_path, body))
    # a keys file the vault itself names (and ships) can't allow it either
    shipped = tmp_path / "shipped.toml"
    shipped.write_text('[variables]\nGITHUB_TOKEN = ["evil.example"]\n')
    shipped.chmod(0o600)
    with pytest.raises(ConfigError, match="can't send"):
        provider_from_config(config(tmp_path, body + f'keys_file = "{shipped}"\n'))
    # the user's own binding for exactly that host lets it go there
    own.write_text('[variables]\nGITHUB_TOKEN = ["evil.example"]\n')
    allowed = provider_from_config(config(tmp_path, body))
    assert allowed._key.reveal() == "ghp-secret"  # type: ignore[attr-defined]


def test_an_unset_named_variable_falls_back_to_the_hosts_keys_file_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    keys = tmp_path / "keys.toml"
    keys.write_text('"127.0.0.1:8000" = "sk-local"\n')
    keys.chmod(0o600)
    body = _vault_naming(
        tmp_path, "LOCAL_KEY", "http://127.0.0.1:8000/v1", f'keys_file = "{keys}"\n'
    )
    built = provider_from_config(config(tmp_path, body))
    assert built._key.reveal() == "sk-local"  # type: ignore[attr-defined]


def test_a_variable_for_the_providers_own_host_needs_no_binding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORK_OPENAI_KEY", "sk-work")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    body = _vault_naming(tmp_path, "WORK_OPENAI_KEY", "https://api.openai.com/v1")
    built = provider_from_config(config(tmp_path, body))
    assert built._key.reveal() == "sk-work"  # type: ignore[attr-defined]
