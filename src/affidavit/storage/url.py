"""A database URL as the product takes it (``[database] url``, ``serve --database``,
``$AFFIDAVIT_DATABASE``): checked before anything connects, and shown only with its password
masked. No psycopg here: a plain install imports this module.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..errors import ConfigError

SCHEMES = ("postgresql://", "postgres://")
MASK = "***"
_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/?#]*):[^@/?#]*@")
_PASSWORD_PARAM = re.compile(r"(?i)([?&]password=)[^&#]*")


def redact(url: str) -> str:
    """``url`` with its password (``user:password@`` or ``?password=``) replaced by ``***``:
    the only form of a database URL that may be printed or logged."""
    text = _CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", str(url))
    return _PASSWORD_PARAM.sub(lambda m: m.group(1) + MASK, text)


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's error message, say) with the URL's password masked wherever it
    appears, and the URL itself shown redacted."""
    out = str(text).replace(url, redact(url))
    secrets: list[str] = []
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        secrets.append(password)
    secrets += [m.group(0).split("=", 1)[1] for m in _PASSWORD_PARAM.finditer(url)]
    for secret in secrets:
        if secret:
            out = out.replace(secret, MASK)
    return out


def check_database_url(url: object, where: str = "[database] url") -> str:
    """``url`` if it is a ``postgresql://`` URL a connection can be made from; otherwise a
    :class:`ConfigError` naming ``where`` and the fix (its password never in the message)."""
    example = '"postgresql://wiki@db.example.org/wiki" (the password in ~/.pgpass or $PGPASSWORD)'
    if not isinstance(url, str):
        raise ConfigError(f"{where} must be a string, like {example}.")
    text = url.strip()
    if not text.startswith(SCHEMES):
        scheme = text.split("://", 1)[0] if "://" in text else ""
        what = f"a {scheme}:// URL" if scheme else "not a URL"
        raise ConfigError(
            f"{where} is {what}; only PostgreSQL is supported: give {example}, or remove the "
            "setting to keep the vault's own SQLite database."
        )
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise ConfigError(
            f"{where} ({redact(text)}) holds a space or a control character; percent-encode it "
            f"(%20) or write it as {example}."
        )
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ConfigError(
            f"{where} ({redact(text)}) is not a valid URL (its port?); write it as {example}."
        ) from None
    if parts.fragment:
        raise ConfigError(f"{where} ({redact(text)}) has a '#' fragment; remove it.")
    return text


__all__ = ["MASK", "SCHEMES", "check_database_url", "redact", "scrub"]
