"""Trust tiers from the config's rules (SPEC W7): the longest matching pattern wins.

Patterns:

- ``example.org`` — that host and nothing else (``example.org.evil.net`` and ``evilexample.org``
  don't match: hosts are compared label by label);
- ``*.example.org`` — any subdomain of example.org, and example.org itself;
- ``example.org/docs/`` or ``https://example.org/docs/`` — that host, paths under that prefix
  (a prefix ends at a path segment: ``/docs`` matches ``/docs/a`` but not ``/docs-evil``);
- ``/home/me/papers/`` or ``~/papers`` — local files under that directory.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class TrustDecision:
    tier: str
    rule: str  # the pattern that decided, or "" for the default / an explicit --trust


def _host_matches(pattern: str, host: str) -> bool:
    host = host.lower().rstrip(".")
    pattern = pattern.lower().rstrip(".")
    if pattern.startswith("*."):
        base = pattern[2:]
        return host == base or host.endswith("." + base)
    return host == pattern


def _path_under(prefix: str, path: str) -> bool:
    if not prefix or prefix == "/":
        return True
    prefix = prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def _url_match(pattern: str, origin: str) -> bool:
    url = urlsplit(origin)
    if url.scheme not in ("http", "https") or not url.hostname:
        return False
    if "://" in pattern:
        want = urlsplit(pattern)
        if want.scheme != url.scheme or not want.hostname:
            return False
        if want.port != url.port:
            return False
        return _host_matches(want.hostname, url.hostname) and _path_under(want.path, url.path)
    host, _, path = pattern.partition("/")
    return _host_matches(host, url.hostname) and _path_under("/" + path if path else "", url.path)


def _file_match(pattern: str, origin: str) -> bool:
    if "://" in origin:
        return False
    expanded = os.path.expanduser(pattern)
    if not expanded.startswith("/"):
        return False
    return _path_under(posixpath.normpath(expanded), posixpath.normpath(origin))


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
