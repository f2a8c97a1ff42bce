"""API keys: where they come from and how they are kept out of every log, message and repr (W10).

A key is looked up in the environment first, then in a keys file — a TOML table of
``provider = "key"`` that must be readable by its owner only (mode 0600). A key is held in a
:class:`Secret`, whose ``repr`` and ``str`` never show it, and any text that could carry it
(a server's error body, an SDK's message) goes through :func:`redact` before it reaches the user.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import ProviderError

REDACTED = "[redacted]"


class Secret:
    """A secret string that never prints itself. Call :meth:`reveal` where it must be sent."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a Secret can't be pickled")


def redact(text: str, secrets: Iterable[str | Secret | None]) -> str:
    """Return ``text`` with every non-empty secret replaced by ``[redacted]``.

    Longer secrets are replaced first, so a key that contains another is removed whole.
    """
    values = [s.reveal() if isinstance(s, Secret) else s for s in secrets]
    for value in sorted((v for v in values if v), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def _check_private(path: Path) -> None:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ProviderError(
            f"{path} is readable by other users (mode {stat.S_IMODE(mode):04o}); "
            f"an API keys file must be private. Run: chmod 600 {path}"
        )


def load_api_key(
    env_var: str,
    keys_file: Path | None,
    provider: str,
    *,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Find the API key of ``provider``: ``$env_var`` first, then ``keys_file``; None if neither.

    The keys file is TOML, one ``provider = "key"`` line per provider, and must have mode 0600
    (a file others can read is refused with the ``chmod 600`` fix). No message this function
    raises ever contains a key.
    """
    env = os.environ if environ is None else environ
    value = env.get(env_var, "").strip() if env_var else ""
    if value:
        return value
    if keys_file is None or not keys_file.exists():
        return None
    _check_private(keys_file)
    try:
        data = tomllib.loads(keys_file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message quotes nothing but a line and column; keep only that part.
        where = str(exc).rsplit("(", 1)[-1].rstrip(")") if "(" in str(exc) else "unknown position"
        raise ProviderError(
            f"{keys_file} is not valid TOML ({where}); write one line per provider: "
            f'{provider} = "KEY"'
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProviderError(f"could not read {keys_file}: {type(exc).__name__}") from None
    key = data.get(provider)
    if key is None:
        return None
    if not isinstance(key, str):
        raise ProviderError(
            f'{keys_file}: the entry for {provider!r} must be a string: {provider} = "KEY"'
        )
    return key.strip() or None


__all__ = ["REDACTED", "Secret", "load_api_key", "redact"]
