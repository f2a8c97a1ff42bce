"""Model providers (SPEC §5): text in, text out, behind one small interface.

``build_provider(name, options)`` is the one way the composition roots make a provider: it
validates the options with the provider's pydantic model (unknown keys are errors that list the
valid ones), finds the API key of the network providers (``$ENV`` first, then the 0600 keys file)
and constructs the provider. The SDKs and runtimes (``anthropic``, ``llama_cpp``) are imported
only when such a provider is built, and a missing one fails with its install command.

Providers: ``extractive`` (built in, deterministic, the default), ``scripted`` (tests),
``openai`` (any OpenAI-compatible endpoint), ``anthropic``, ``local`` (a GGUF file in-process).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from ..errors import ProviderError
from .anthropic import AnthropicOptions, AnthropicProvider
from .base import (
    Completion,
    IngestTask,
    Message,
    ModelRequest,
    PageBrief,
    Provider,
    ProviderOptions,
    Usage,
)
from .keys import Secret, load_api_key, redact
from .local import LocalOptions, LocalProvider
from .openai import OpenAIOptions, OpenAIProvider
from .scripted import ScriptedOptions, ScriptedProvider

PROVIDERS: dict[str, type[Provider]] = {
    "scripted": ScriptedProvider,
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "local": LocalProvider,
}
"""Providers by name. ``extractive`` is added on first use by :func:`provider_class`."""

OPTIONS: dict[str, type[ProviderOptions]] = {
    "scripted": ScriptedOptions,
    "openai": OpenAIOptions,
    "anthropic": AnthropicOptions,
    "local": LocalOptions,
}
"""The options model of each provider, by name."""

PROVIDER_NAMES = ("extractive", "scripted", "openai", "anthropic", "local")


def _load_extractive() -> None:
    """Register the extractive engine, imported here so that its absence breaks nothing else."""
    try:
        module = importlib.import_module(f"{__name__}.extractive")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.extractive":
            raise
        raise ProviderError(
            "the extractive engine is not available in this installation; "
            "reinstall affidavit or choose another model.provider"
        ) from None
    PROVIDERS["extractive"] = module.ExtractiveProvider
    OPTIONS["extractive"] = getattr(module, "ExtractiveOptions", ProviderOptions)


def _known(name: str) -> None:
    if name not in PROVIDER_NAMES:
        raise ProviderError(f"unknown provider {name!r}; use one of: {', '.join(PROVIDER_NAMES)}")
    if name not in PROVIDERS:
        _load_extractive()


def provider_class(name: str) -> type[Provider]:
    """The provider class registered as ``name``."""
    _known(name)
    return PROVIDERS[name]


def options_model(name: str) -> type[ProviderOptions]:
    """The pydantic options model of provider ``name``."""
    _known(name)
    return OPTIONS[name]


def parse_options(name: str, options: Mapping[str, Any]) -> ProviderOptions:
    """Validate ``options`` for provider ``name``; errors list the valid keys."""
    model = options_model(name)
    try:
        return model.model_validate(dict(options))
    except ValidationError as exc:
        valid = ", ".join(model.model_fields) or "(none)"
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(part) for part in error["loc"]) or "options"
            if error["type"] == "extra_forbidden":
                problems.append(f"unknown option {where!r}")
            elif error["type"] == "missing":
                problems.append(f"missing option {where!r}")
            else:
                problems.append(f"{where}: {error['msg']}")
        raise ProviderError(
            f"bad options for the {name} provider: {'; '.join(problems)}. Valid options: {valid}"
        ) from None


def build_provider(
    name: str,
    options: Mapping[str, Any],
    *,
    client: httpx.Client | None = None,
    api_key: str | None = None,
    keys_file: Path | None = None,
) -> Provider:
    """Make provider ``name`` from a plain options mapping (e.g. the ``[model]`` table).

    ``client`` is the HTTP client of the network providers (tests inject one over
    ``httpx.MockTransport``). Without ``api_key`` they look it up with :func:`load_api_key`:
    ``$<api_key_env>`` first, then ``keys_file``.
    """
    opts = parse_options(name, options)
    if isinstance(opts, OpenAIOptions | AnthropicOptions) and api_key is None:
        api_key = load_api_key(opts.api_key_env, keys_file, name)
    if isinstance(opts, OpenAIOptions):
        return OpenAIProvider(opts, client=client, api_key=api_key)
    if isinstance(opts, AnthropicOptions):
        return AnthropicProvider(opts, client=client, api_key=api_key)
    if isinstance(opts, LocalOptions):
        return LocalProvider(opts)
    if isinstance(opts, ScriptedOptions):
        return ScriptedProvider(opts)
    cls: Any = provider_class(name)
    return cls(opts) if OPTIONS[name].model_fields else cls()  # type: ignore[no-any-return]


__all__ = [
    "OPTIONS",
    "PROVIDERS",
    "PROVIDER_NAMES",
    "AnthropicOptions",
    "AnthropicProvider",
    "Completion",
    "IngestTask",
    "LocalOptions",
    "LocalProvider",
    "Message",
    "ModelRequest",
    "OpenAIOptions",
    "OpenAIProvider",
    "PageBrief",
    "Provider",
    "ProviderOptions",
    "ScriptedOptions",
    "ScriptedProvider",
    "Secret",
    "Usage",
    "build_provider",
    "load_api_key",
    "options_model",
    "parse_options",
    "provider_class",
    "redact",
]
