"""Who is on the other end of a connection, as the kernel says (SPEC W10).

uvicorn does not put the connection's socket in the ASGI scope, but it builds one protocol object
per connection and copies its ``app_state`` into every request's ``scope["state"]``. The protocols
below read ``SO_PEERCRED`` from the accepted socket once, when the connection is made, and add it
to that connection's state. Nothing a client sends can change it: it is read from the kernel
before the first byte of the request is parsed. A connection whose credentials can't be read is
closed at once (it never reaches the application).

Two HTTP parsers carry it: httptools (C, the default when installed: several times less work per
request) and h11 (pure Python, the fallback). :func:`peer_protocol` picks one.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from dataclasses import dataclass
from typing import Any, Literal

from uvicorn.protocols.http.h11_impl import H11Protocol

PEER_KEY = "affidavit.peer"
_UCRED = struct.Struct("3i")  # struct ucred { pid_t pid; uid_t uid; gid_t gid; }


@dataclass(frozen=True)
class Peer:
    """The connection's transport and, on the Unix socket, the peer's pid, uid and gid."""

    transport: Literal["unix", "tcp"]
    pid: int | None = None
    uid: int | None = None
    gid: int | None = None


def peer_credentials(sock: Any) -> Peer:
    """``SO_PEERCRED`` of a connected Unix socket (a socket, or uvloop's pseudo-socket)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, gid = _UCRED.unpack(raw)
    return Peer("unix", pid, uid, gid)


def peer_of(transport: asyncio.BaseTransport) -> Peer:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family == socket.AF_UNIX:
        return peer_credentials(sock)
    return Peer("tcp")


def _with_peer(protocol: Any, transport: asyncio.Transport) -> bool:
    """Add the peer to the connection's state; False (the connection closed) when the kernel's
    answer can't be had: such a connection never reaches the application."""
    try:
        peer = peer_of(transport)
    except (OSError, struct.error):
        transport.abort()
        return False
    protocol.app_state = {**protocol.app_state, PEER_KEY: peer}
    return True


class PeerCredProtocol(H11Protocol):
    """uvicorn's h11 protocol, plus the peer's credentials in every request's state."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        _with_peer(self, transport)


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools not installed: h11 only
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

if HttpToolsProtocol is not None:

    class PeerCredHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol, plus the peer's credentials in every request's state."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            _with_peer(self, transport)


def peer_protocol(parser: str = "auto") -> type[asyncio.Protocol]:
    """The peer-credential protocol for ``parser`` (``auto``: httptools when installed)."""
    if parser == "h11" or (parser == "auto" and HttpToolsProtocol is None):
        return PeerCredProtocol
    if HttpToolsProtocol is None:
        raise ImportError("httptools is not installed: pip install 'affidavit[server]'")
    return PeerCredHttpToolsProtocol


__all__ = [
    "PEER_KEY",
    "Peer",
    "PeerCredProtocol",
    "peer_credentials",
    "peer_of",
    "peer_protocol",
]
