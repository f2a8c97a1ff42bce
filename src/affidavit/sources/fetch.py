"""Fetching a URL's bytes within limits: http(s) only, bounded size, time and redirects.

Redirects are followed by hand so every hop's scheme is checked (a redirect to ``file:`` or ``ftp:``
is refused); the body is streamed and the fetch aborts as soon as it passes ``max_bytes``; one
deadline covers the whole fetch, redirects included. The bytes fetched are the source, as served.
Every connection, the first and each redirect's, goes only to public addresses, checked after
resolution and pinned for the connection (:mod:`affidavit.sources.addresses`), unless the host is
one of ``allowed_hosts`` (``sources.allow_private_hosts``). A ``public_only`` fetch (an agent's)
has no such exception, and checks each hop's addresses by the same rules before it connects.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import httpcore
import httpx

from .. import __version__
from ..errors import FetchError
from .addresses import GuardedTransport, refusal, resolve

ALLOWED_SCHEMES = ("http", "https")
USER_AGENT = f"affidavit/{__version__} (source fetch)"
_LIMIT_HINT = "sources.max_url_bytes in affidavit.toml"


@dataclass(frozen=True)
class Fetched:
    """A fetched response: the URL asked for, the one that answered, its Content-Type and body."""

    url: str
    final_url: str
    content_type: str | None
    data: bytes


def check_url(url: str | httpx.URL) -> httpx.URL:
    """Parse ``url`` and refuse anything but an absolute http or https URL with a host."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchError(f"{url} is not a valid URL ({exc}). Check it and retry.") from exc
    if parsed.scheme not in ALLOWED_SCHEMES:
        hint = " To add a local file, pass its path instead." if parsed.scheme == "file" else ""
        raise FetchError(
            f"Refusing {str(url)[:200]}: only http and https URLs are fetched, not "
            f"{parsed.scheme or 'scheme-less'} ones.{hint}"
        )
    if not parsed.host:
        raise FetchError(f"{url} has no host name. Write it as https://host/path.")
    return parsed


def check_public(url: httpx.URL) -> None:
    """Refuse a URL whose host is, or resolves to, anything but public addresses, by the rules
    every fetch connects under (:func:`affidavit.sources.addresses.refusal`), and with no
    ``sources.allow_private_hosts`` exception: for callers that must not reach the host's own
    network (an agent through MCP), whatever transport the fetch uses. The connection itself is
    checked again by :class:`GuardedTransport`, which connects only to the addresses it checked."""
    host = url.host
    try:
        addresses = resolve(host, url.port or 80)
    except httpcore.ConnectError as exc:
        raise FetchError(f"{exc}. Check the URL.") from exc
    for address in addresses:
        why = refusal(address)
        if why is not None:
            raise FetchError(
                f"Refusing {str(url)[:200]}: {host} is not a public address ({address}, {why}); "
                "only public http(s) URLs may be fetched here. Download the file and give it "
                "to the vault's owner instead."
            )


def _too_large(url: httpx.URL, size: str, max_bytes: int) -> FetchError:
    return FetchError(
        f"{url} is {size}, over the limit of {max_bytes:,} bytes ({_LIMIT_HINT}). Raise the limit, "
        f"or download the file and add it by path."
    )


def fetch_url(
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    max_redirects: int,
    client: httpx.Client | None = None,
    allowed_hosts: Iterable[str] = (),
    public_only: bool = False,
) -> Fetched:
    """GET ``url`` and return its body, within ``max_bytes``, ``timeout`` seconds and
    ``max_redirects`` redirects. Every failure is a :class:`FetchError` whose message names the fix.
    With ``public_only`` every hop must be a public address (:func:`check_public`).

    Without ``client``, a client is made for this fetch (and closed after it) whose every
    connection goes to public addresses only, or to ``allowed_hosts``. A ``client`` given is used
    as it is (its own redirect setting is overridden): its transport decides where it connects.
    """
    own = client is None
    active = client or httpx.Client(
        transport=GuardedTransport(() if public_only else allowed_hosts),
        timeout=timeout,
        headers={"User-Agent": USER_AGENT},
        trust_env=False,
    )
    try:
        return _fetch(active, check_url(url), url, max_bytes, timeout, max_redirects, public_only)
    finally:
        if own:
            active.close()


def _fetch(
    client: httpx.Client,
    current: httpx.URL,
    original: str,
    max_bytes: int,
    timeout: float,
    max_redirects: int,
    public_only: bool = False,
) -> Fetched:
    deadline = time.monotonic() + timeout
    visited = {str(current)}
    hops = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _timed_out(original, timeout)
        if public_only:
            check_public(current)
        try:
            with client.stream(
                "GET",
                current,
                follow_redirects=False,
                timeout=httpx.Timeout(remaining),
                headers={"Accept-Encoding": "identity", "User-Agent": USER_AGENT},
            ) as response:
                if response.is_redirect:
                    hops += 1
                    current = _next_hop(response, current, hops, max_redirects, visited)
                    continue
                if response.status_code >= 400:
                    raise FetchError(
                        f"{current} answered HTTP {response.status_code} "
                        f"{response.reason_phrase}. Check the URL (or that you may access it) "
                        f"and retry."
                    )
                data = _read_body(response, current, max_bytes, deadline, timeout)
                content_type = response.headers.get("content-type")
                return Fetched(original, str(current), content_type, data)
        except httpx.TimeoutException as exc:
            raise _timed_out(original, timeout) from exc
        except httpx.HTTPError as exc:
            raise FetchError(
                f"Fetching {current} failed: {type(exc).__name__}: {exc}. Check the URL and "
                f"your network, or download the file and add it by path."
            ) from exc


def _timed_out(url: str, timeout: float) -> FetchError:
    return FetchError(
        f"{url} did not finish within {timeout:g} s (sources.url_timeout_seconds in "
        f"affidavit.toml). Retry later, raise the limit, or download the file and add it by path."
    )


def _next_hop(
    response: httpx.Response,
    current: httpx.URL,
    hops: int,
    max_redirects: int,
    visited: set[str],
) -> httpx.URL:
    location = response.headers.get("location", "")
    try:
        target = current.join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise FetchError(f"{current} redirected to an invalid URL {location!r}: {exc}.") from exc
    if target.scheme not in ALLOWED_SCHEMES:
        raise FetchError(
            f"{current} redirected to {location[:200]!r}; only http and https redirects are "
            f"followed. Add the target some other way if you trust it."
        )
    check_url(target)
    if str(target) in visited:
        raise FetchError(
            f"{current} redirects in a loop (back to {target}). The site is misconfigured; "
            f"try a different URL for the same document."
        )
    if hops > max_redirects:
        raise FetchError(
            f"{current} redirected more than {max_redirects} times (sources.max_redirects in "
            f"affidavit.toml). Use the final URL directly or raise the limit."
        )
    visited.add(str(target))
    return target


def _read_body(
    response: httpx.Response, url: httpx.URL, max_bytes: int, deadline: float, timeout: float
) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > max_bytes:
        raise _too_large(url, f"{int(declared):,} bytes (Content-Length)", max_bytes)
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise _too_large(url, f"more than {max_bytes:,} bytes", max_bytes)
        if time.monotonic() > deadline:
            raise _timed_out(str(url), timeout)
    return bytes(body)


__all__ = ["ALLOWED_SCHEMES", "Fetched", "check_url", "fetch_url"]
