"""Trust tiers from the config's rules (SPEC W7): the longest matching pattern wins.

Patterns:

- ``example.org`` — that host and nothing else (``example.org.evil.net`` and ``evilexample.org``
  don't match: hosts are compared label by label), over http or https on the scheme's default
  port only (``http://example.org:8080/`` doesn't match);
- ``example.org:8080`` — that host on that port only, over http or https;
- ``*.example.org`` — any subdomain of example.org, and example.org itself;
- ``example.org/docs/`` or ``https://example.org/docs/`` — that host, paths under that prefix
  (a prefix ends at a path segment: ``/docs`` matches ``/docs/a`` but not ``/docs-evil``); a URL
  rule matches its own scheme and port (the default one when none is written);
- ``/home/me/papers/`` or ``~/papers`` — local files under that directory.

Both sides are normalised before they are compared. URLs as RFC 3986 §6.2 says, with yarl (the
aio-libs URL library, also aiohttp's): scheme and host lower-cased, the host IDNA-encoded
(``bücher.example`` is ``xn--bcher-kva.example``), a trailing dot dropped, the default port made
explicit, percent-encoded unreserved characters decoded and dot segments removed after that
(``/docs/%2e%2e/uploads/`` is ``/uploads/``). A path whose segments still spell a dot segment or a
slash once decoded (``..%2f``, ``%252e%252e``, a backslash, ``..;``, fullwidth ``．．``, an empty
segment ``//``, escapes that are not UTF-8 or IIS's ``%uXXXX``) is ambiguous: servers differ in
what they make of it, so it matches no rule that names a path. Files are compared by their real path
(``..`` resolved, symbolic links followed) against the rule's real path.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from yarl import URL


@dataclass(frozen=True)
class TrustDecision:
    tier: str
    rule: str  # the pattern that decided, or "" for the default / an explicit --trust


@dataclass(frozen=True)
class _Url:
    scheme: str
    host: str
    port: int | None
    segments: tuple[str, ...] | None  # None: the path is ambiguous (see the module docstring)


_AMBIGUOUS = ("/", "\\")
_DECODE_ROUNDS = 3


_IIS_ESCAPE = re.compile(r"%u[0-9a-f]{4}", re.IGNORECASE)


def _spells_a_dot_segment(decoded: str) -> bool:
    """``.``/``..`` as some server takes it: also with a ``;parameter`` (Tomcat and Spring read
    ``..;/`` as ``../``) or in compatibility forms (fullwidth ``．．``, which NFKC makes ``..``)."""
    for form in (decoded, unicodedata.normalize("NFKC", decoded)):
        if form.split(";", 1)[0] in (".", "..") or any(c in form for c in _AMBIGUOUS):
            return True
    return False


def _segment_is_ambiguous(segment: str) -> bool:
    """A segment that decodes (once, twice, thrice) to a dot segment or holds a slash, or whose
    escapes are not UTF-8 (overlong ``%c0%ae``) or IIS's ``%uXXXX``: servers differ on those."""
    for _ in range(_DECODE_ROUNDS):
        if _IIS_ESCAPE.search(segment):
            return True
        try:
            decoded = unquote(segment, errors="strict")
        except UnicodeDecodeError:
            return True
        if _spells_a_dot_segment(decoded):
            return True
        if decoded == segment:
            return False
        segment = decoded
    return True


def _raw_path_is_ambiguous(url: str) -> bool:
    """The path as written, before yarl resolves its dot segments: an empty segment (``//``, which
    a server that merges slashes reads differently, so ``/docs//../x`` is ``/docs/x`` to RFC 3986
    and ``/x`` to it) or a segment that is ambiguous but for a plain ``.`` or ``..``."""
    try:
        raw = urlsplit(url).path
    except ValueError:
        return True
    parts = raw.split("/")[1:]
    if any(part == "" for part in parts[:-1]):
        return True
    return any(part not in (".", "..") and _segment_is_ambiguous(part) for part in parts)


def _host(raw: str) -> str:
    """A host as compared: IDNA-encoded, lower-cased, without a trailing dot."""
    try:
        parsed = URL.build(scheme="http", host=raw.rstrip("."))
    except (ValueError, TypeError, UnicodeError):
        return raw.lower().rstrip(".")
    return (parsed.raw_host or raw).lower().rstrip(".")


def normalize_url(url: str) -> _Url | None:
    """``url`` normalised for matching, or None when it is not an absolute http(s) URL."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError, UnicodeError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        return None
    raw_segments = [s for s in parsed.raw_path.split("/") if s]
    segments: tuple[str, ...] | None = tuple(unquote(s) for s in raw_segments)
    if any(_segment_is_ambiguous(s) for s in raw_segments) or _raw_path_is_ambiguous(url):
        segments = None
    return _Url(parsed.scheme, _host(parsed.raw_host), parsed.port, segments)


def _host_matches(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        base = _host(pattern[2:])
        return host == base or host.endswith("." + base)
    return host == _host(pattern)


def _segments_under(prefix: tuple[str, ...] | None, path: tuple[str, ...] | None) -> bool:
    if prefix is None:
        return False  # a rule whose own path is ambiguous matches nothing
    if not prefix:
        return True
    return path is not None and path[: len(prefix)] == prefix


def _prefix(path: str) -> tuple[str, ...] | None:
    """The segments of a rule's path prefix, normalised like a URL's (None: ambiguous)."""
    parsed = normalize_url("http://h/" + path.lstrip("/"))
    return parsed.segments if parsed else None


def _url_match(pattern: str, origin: str) -> bool:
    url = normalize_url(origin)
    if url is None:
        return False
    if "://" in pattern:
        want = normalize_url(pattern)
        if want is None or want.scheme != url.scheme or want.port != url.port:
            return False
        return _host_matches(want.host, url.host) and _segments_under(want.segments, url.segments)
    authority, _, path = pattern.partition("/")
    host, port = _authority(authority)
    if host is None:
        return False
    if port is None:  # no port written: the scheme's default port only
        if url.port != DEFAULT_PORTS.get(url.scheme):
            return False
    elif url.port != port:
        return False
    return _host_matches(host, url.host) and _segments_under(_prefix(path), url.segments)


DEFAULT_PORTS = {"http": 80, "https": 443}
"""The ports a scheme-less rule without a port matches: ``example.org`` is the site a reader
reaches at ``http://example.org`` or ``https://example.org``, not whatever else listens on
another port of that host (a developer's server, an admin console, an upload service)."""


def _authority(authority: str) -> tuple[str | None, int | None]:
    """A scheme-less rule's host and the port written after it (None: none written).
    ``(None, None)`` when the port is not a number from 1 to 65535: such a rule matches nothing."""
    host, colon, port = authority.rpartition(":")
    if not colon or authority.endswith("]"):  # no port, or a bare IPv6 literal "[::1]"
        return authority.removeprefix("[").removesuffix("]"), None
    if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        return None, None
    return host.removeprefix("[").removesuffix("]"), int(port)


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _file_match(pattern: str, origin: str) -> bool:
    if "://" in origin or not origin.startswith("/"):
        return False
    expanded = os.path.expanduser(pattern)
    if not expanded.startswith("/"):
        return False
    prefix, path = _real(expanded), _real(origin)
    return prefix == "/" or path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _specificity(pattern: str) -> int:
    """Longer patterns are more specific; a wildcard counts less than the exact host."""
    return len(pattern.rstrip("/")) - (2 if pattern.startswith("*.") else 0)


def trust_for(origin: str, rules: list[dict[str, str]], default: str) -> TrustDecision:
    """The tier of a source from ``origin`` (an absolute path or a URL) under ``rules``."""
    best: tuple[int, str, str] | None = None
    for rule in rules:
        pattern = rule["pattern"]
        is_path = pattern.startswith(("/", "~"))
        matched = _file_match(pattern, origin) if is_path else _url_match(pattern, origin)
        if matched:
            key = (_specificity(pattern), pattern, rule["tier"])
            if best is None or key[0] > best[0]:
                best = key
    if best is None:
        return TrustDecision(default, "")
    return TrustDecision(best[2], best[1])
