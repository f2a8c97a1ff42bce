"""API keys: where they come from and how they are kept out of every log, message and repr (W10).

A key is looked up in the environment first, then in a keys file — a TOML table of
``provider = "key"`` (or ``"host" = "key"``) that must be a regular file of the vault's owner,
readable by them only (mode 0600), never read through a symlink. A key is held in a
:class:`Secret`, whose ``repr`` and ``str`` never show it, and any text that could carry it
(a server's error body, an SDK's message) goes through :func:`redact` before it reaches the user.
"""

from __future__ import annotations

import errno
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


def _read_private(path: Path, owner_uid: int) -> str | None:
    """The text of a keys file, or None if there is none. It must be a regular file (not a
    symlink: it is opened with ``O_NOFOLLOW``) owned by ``owner_uid`` and private (no group or
    other bits), so a key file can only ever be its owner's own."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ProviderError(
                f"{path} is a symlink; a keys file is never read through one. Point "
                "model.keys_file at the file itself."
            ) from None
        raise ProviderError(f"could not read {path}: {type(exc).__name__}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ProviderError(f"{path} is not a regular file; a keys file must be one.")
        if info.st_uid != owner_uid:
            raise ProviderError(
                f"{path} belongs to UID {info.st_uid}, not to the vault's owner (UID "
                f"{owner_uid}); only the owner's own keys file is used for a vault."
            )
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ProviderError(
                f"{path} is readable by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
                f"an API keys file must be private. Run: chmod 600 {path}"
            )
        try:
            return handle.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ProviderError(f"could not read {path}: not UTF-8") from None


def load_api_key(
    env_var: str,
    keys_file: Path | None,
    provider: str,
    *,
    environ: Mapping[str, str] | None = None,
    owner_uid: int | None = None,
    entries: Iterable[str] | None = None,
) -> str | None:
    """Find the API key of ``provider``: ``$env_var`` first, then ``keys_file``; None if neither.

    The keys file is TOML, one ``provider = "key"`` (or ``"host" = "key"``) line per key, and
    must be a regular file owned by ``owner_uid`` (default: this process) with mode 0600 (a
    file others can read is refused with the ``chmod 600`` fix). ``entries`` are the names
    looked up in it, first found wins (default: ``provider``). No message this function raises
    ever contains a key.
    """
    env = os.environ if environ is None else environ
    value = env.get(env_var, "").strip() if env_var else ""
    if value:
        return value
    if keys_file is None:
        return None
    text = _read_private(keys_file, os.geteuid() if owner_uid is None else owner_uid)
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message quotes nothing but a line and column; keep only that part.
        where = str(exc).rsplit("(", 1)[-1].rstrip(")") if "(" in str(exc) else "unknown position"
        raise ProviderError(
            f"{keys_file} is not valid TOML ({where}); write one line per provider: "
            f'{provider} = "KEY"'
        ) from None
    for entry in (provider,) if entries is None else tuple(entries):
        key = data.get(entry)
        if key is None:
            continue
        if not isinstance(key, str):
            raise ProviderError(
                f'{keys_file}: the entry for {entry!r} must be a string: {entry} = "KEY"'
            )
        return key.strip() or None
    return None


def variable_hosts(keys_file: Path, owner_uid: int) -> dict[str, frozenset[str]]:
    """The ``[variables]`` table of the owner's own keys file: for each environment variable a
    vault's ``model.api_key_env`` may name, the hosts (``"host:port"`` or ``"host"``) its value
    may be sent to. Only the person, never a vault, can say where their environment goes."""
    text = _read_private(keys_file, owner_uid)
    if text is None:
        return {}
    try:
        table = tomllib.loads(text).get("variables", {})
    except tomllib.TOMLDecodeError:
        raise ProviderError(f"{keys_file} is not valid TOML; fix it or remove it.") from None
    if not isinstance(table, dict):
        raise ProviderError(
            f'{keys_file}: [variables] must be a table: NAME = ["host:port", ...] per variable.'
        )
    hosts: dict[str, frozenset[str]] = {}
    for name, value in table.items():
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ProviderError(
                f'{keys_file}: [variables] {name} must list hosts: {name} = ["host:port"]'
            )
        hosts[name] = frozenset(v.strip().lower() for v in values)
    return hosts


__all__ = ["REDACTED", "Secret", "load_api_key", "redact", "variable_hosts"]
