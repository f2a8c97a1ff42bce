"""Settings as data: every setting of ``affidavit.toml`` is declared once here, with its documentation.

``affidavit init`` writes a commented ``affidavit.toml`` generated from :data:`SETTINGS`, and
``docs/configuration.md`` is checked against the same list by the test suite.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

TRUST_TIERS = ("untrusted", "semi-trusted", "trusted")
"""Trust tiers from weakest to strongest (SPEC W7)."""


@dataclass(frozen=True)
class Setting:
    """One setting: ``section.key``, its default, the accepted values and what it does."""

    section: str
    key: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"


SETTINGS: tuple[Setting, ...] = (
    Setting("sources", "default_trust", "semi-trusted",
            "Trust tier given to a new source when no --trust flag names one.", TRUST_TIERS),
    Setting("sources", "max_url_bytes", 20_000_000,
            "Largest response body accepted when a URL is added, in bytes; larger ones are refused.",
            minimum=1),
    Setting("sources", "url_timeout_seconds", 30,
            "Time limit for fetching one URL (connect, read and total), in seconds.", minimum=1),
    Setting("sources", "max_redirects", 5,
            "Most redirects followed when fetching a URL; only http and https are ever followed.",
            minimum=0),
    Setting("plans", "expiry_hours", 24,
            "Hours a pending plan waits in the inbox before it expires and can no longer be applied.",
            minimum=1),
    Setting("policy", "auto_apply", "never",
            "Which admitted plans apply without a person's approval: 'never' (everything waits in the "
            "inbox) or 'trusted' (plans whose every claim rests only on trusted sources and carries no "
            "sanitizer flag).", ("never", "trusted")),
    Setting("context", "max_lines", 400,
            "Line cap of wiki/context.md; entries past it spill into the page 'context-archive', "
            "never truncated.", minimum=20),
    Setting("git", "author_name", "affidavit", "Author and committer name of the vault's commits."),
    Setting("git", "author_email", "affidavit@localhost", "Author and committer email of commits."),
)


@dataclass(frozen=True)
class Config:
    """The validated settings of one vault. Build it with :func:`load_config`."""

    values: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        for setting in SETTINGS:
            if setting.name == name:
                return setting.default
        raise KeyError(name)

    @property
    def default_trust(self) -> str:
        return str(self.get("sources.default_trust"))

    @property
    def max_url_bytes(self) -> int:
        return int(self.get("sources.max_url_bytes"))

    @property
    def url_timeout_seconds(self) -> int:
        return int(self.get("sources.url_timeout_seconds"))

    @property
    def max_redirects(self) -> int:
        return int(self.get("sources.max_redirects"))

    @property
    def expiry_hours(self) -> int:
        return int(self.get("plans.expiry_hours"))

    @property
    def auto_apply(self) -> str:
        return str(self.get("policy.auto_apply"))

    @property
    def context_max_lines(self) -> int:
        return int(self.get("context.max_lines"))

    @property
    def git_author_name(self) -> str:
        return str(self.get("git.author_name"))

    @property
    def git_author_email(self) -> str:
        return str(self.get("git.author_email"))


def _validate(setting: Setting, value: Any, path: Path) -> Any:
    where = f"{path}: [{setting.section}] {setting.key}"
    expected = type(setting.default)
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where} must be a whole number, got {value!r}. Fix the value and retry.")
    if expected is str and not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}. Put it in quotes.")
    if setting.choices and value not in setting.choices:
        choices = ", ".join(repr(c) for c in setting.choices)
        raise ConfigError(f"{where} is {value!r}; use one of {choices}.")
    if setting.minimum is not None and value < setting.minimum:
        raise ConfigError(f"{where} is {value}; it must be at least {setting.minimum}.")
    return value


def load_config(path: Path) -> Config:
    """Read and validate ``affidavit.toml``. Unknown sections or keys are errors (typos must show)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} is missing. Run `affidavit init` to create it.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}). Fix the line it names.") from exc
    known = {(s.section, s.key): s for s in SETTINGS}
    sections = {s.section for s in SETTINGS}
    values: dict[str, Any] = {}
    for section, table in data.items():
        if section not in sections or not isinstance(table, dict):
            raise ConfigError(
                f"{path}: unknown section [{section}]. Known sections: {', '.join(sorted(sections))}."
            )
        for key, value in table.items():
            setting = known.get((section, key))
            if setting is None:
                keys = ", ".join(s.key for s in SETTINGS if s.section == section)
                raise ConfigError(f"{path}: unknown setting [{section}] {key}. Known: {keys}.")
            values[setting.name] = _validate(setting, value, path)
    return Config(values)


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def render_default_config() -> str:
    """The commented ``affidavit.toml`` written by ``affidavit init``: every setting, documented."""
    lines = [
        "# affidavit.toml: settings of this Affidavit vault.",
        "# No plan can ever write this file; only you can. Every setting is listed with its default.",
        "# Documentation: docs/configuration.md",
    ]
    section = ""
    for setting in SETTINGS:
        if setting.section != section:
            section = setting.section
            lines += ["", f"[{section}]"]
        lines.append(f"# {setting.doc}")
        if setting.choices:
            lines.append("# One of: " + ", ".join(setting.choices) + ".")
        lines.append(f"{setting.key} = {_toml_value(setting.default)}")
    return "\n".join(lines) + "\n"
