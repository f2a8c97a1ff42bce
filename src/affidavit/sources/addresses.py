"""Which addresses a URL fetch may connect to, checked where the connection is made.

A source URL comes from a person, a document or a model, so it may point at this machine or its
network: ``http://127.0.0.1:8080/admin``, the cloud metadata service at ``169.254.169.254``, a
name that resolves to ``10.0.0.5``, or a public page that redirects to any of them. Every
connection therefore goes through :class:`GuardedBackend`: it resolves the host once, refuses the
connection if *any* address it resolves to is loopback, private, link-local, multicast,
unspecified, reserved or otherwise not public (IPv4 inside IPv6 — ``::ffff:127.0.0.1``, NAT64,
6to4 — is judged by the IPv4 address it carries; decimal and octal spellings such as
``2130706433`` or ``0177.0.0.1`` are resolved first, so they are judged as the address they mean),
and connects to exactly the addresses it checked. There is no second lookup a DNS-rebinding server
could answer differently, and every redirect hop is a new connection, checked again.

Host names listed in ``sources.allow_private_hosts`` may resolve to any address: a wiki of an
intranet, or a test server on loopback.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import httpcore
import httpx
from httpcore import NetworkStream

from ..errors import FetchError

if TYPE_CHECKING:
    from httpcore._backends.base import SOCKET_OPTION  # the base class's own annotation

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
SETTING = "sources.allow_private_hosts"


def normalize_host(host: str) -> str:
    """A host name as the allow-list compares it: lower case, IDNA, no brackets or final dot."""
    host = host.strip().strip("[]").rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def refusal(ip: IPAddress) -> str | None:
    """Why a fetch may not connect to ``ip`` (e.g. "a loopback address"), or None if it may."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            why = refusal(embedded)
            return f"{why} ({embedded} inside IPv6)" if why else None
        if ip.teredo is not None:
            return "a Teredo tunnel address"
        if ip.is_site_local:  # fec0::/10, the private range before fc00::/7 (RFC 3879)
            return "a site-local (private) address"
    checks = (
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address (cloud metadata services live there)"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_reserved, "a reserved address"),
        (ip.is_private, "a private address"),
        (not ip.is_global, "not a public address"),
    )
    return next((why for bad, why in checks if bad), None)


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to, in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpcore.ConnectError(f"can't resolve {host}: {exc}") from exc
    found = (ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos)
    return list(dict.fromkeys(found))


Resolver = Callable[[str, int], list[IPAddress]]
"""Host and port to the addresses to check and connect to (:func:`resolve`; tests pass their own)."""


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, resolving and checking each host before it connects."""

    def __init__(self, allowed_hosts: Iterable[str] = (), resolver: Resolver | None = None) -> None:
        self.allowed = frozenset(normalize_host(h) for h in allowed_hosts)
        self.resolve = resolver or resolve

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> NetworkStream:
        addresses = self.resolve(host, port)  # once: the connection goes to what is checked
        if normalize_host(host) not in self.allowed:
            for address in addresses:
                why = refusal(address)
                if why is not None:
                    raise FetchError(
                        f"Refusing to fetch from {host}:{port}: it resolves to {address}, {why}. "
                        f"Sources are fetched only from public addresses. If you trust this "
                        f'host, add "{normalize_host(host)}" to {SETTING} in affidavit.toml.'
                    )
        errors: list[str] = []
        for address in addresses:  # the addresses checked, nothing else
            try:
                return super().connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectTimeout:
                raise
            except httpcore.ConnectError as exc:
                errors.append(f"{address}: {exc}")
        raise httpcore.ConnectError("; ".join(errors) or f"{host} has no address")


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport whose every connection goes through :class:`GuardedBackend`.

    Proxies from the environment are not used: a proxy would resolve the host itself, out of
    reach of the check.
    """

    def __init__(self, allowed_hosts: Iterable[str] = (), resolver: Resolver | None = None) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=GuardedBackend(allowed_hosts, resolver),
        )


__all__ = ["SETTING", "GuardedBackend", "GuardedTransport", "normalize_host", "refusal", "resolve"]
