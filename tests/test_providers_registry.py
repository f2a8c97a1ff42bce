"""The provider registry: names, lazy extractive engine, option validation, missing extras."""

from __future__ import annotations

import sys

import pytest

from affidavit.errors import ProviderError
from affidavit.providers import (
    OPTIONS,
    PROVIDER_NAMES,
    PROVIDERS,
    AnthropicOptions,
    AnthropicProvider,
    Provider,
    build_provider,
    options_model,
    provider_class,
)
from affidavit.providers.anthropic import INSTALL_HINT


def test_every_named_provider_resolves_to_a_provider_class() -> None:
    for name in PROVIDER_NAMES:
        cls = provider_class(name)
        assert issubclass(cls, Provider) and cls.name == name
        assert options_model(name).model_config.get("extra") == "forbid"
    assert set(PROVIDERS) == set(PROVIDER_NAMES) == set(OPTIONS)


def test_the_extractive_engine_is_built_without_options() -> None:
    provider = build_provider("extractive", {})
    assert provider.name == "extractive" and not provider.needs_network
    with pytest.raises(ProviderError, match=r"unknown option 'model'.*Valid options: \(none\)"):
        build_provider("extractive", {"model": "x"})


def test_a_missing_extractive_module_fails_only_when_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(PROVIDERS, "extractive", raising=False)
    monkeypatch.setitem(sys.modules, "affidavit.providers.extractive", None)
    assert build_provider("scripted", {"replies": ["x"]}).name == "scripted"
    with pytest.raises(ProviderError, match="extractive engine is not available"):
        build_provider("extractive", {})


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ProviderError) as info:
        AnthropicProvider(AnthropicOptions(model="m"), api_key="k")
    assert str(info.value) == INSTALL_HINT
    assert "pip install 'affidavit[anthropic]'" in INSTALL_HINT


def test_option_errors_list_every_problem_and_the_valid_keys() -> None:
    with pytest.raises(ProviderError) as info:
        build_provider("openai", {"model": "m", "timeout_seconds": 0, "colour": "red"})
    message = str(info.value)
    assert "unknown option 'colour'" in message
    assert "timeout_seconds: Input should be greater than 0" in message
    assert "structured_output" in message  # listed among the valid options
