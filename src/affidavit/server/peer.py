"""Who is on the other end of a connection, as the kernel says (SPEC W10).

uvicorn does not put the connection's socket in the ASGI scope, but it builds one protocol object
per connection and copies its ``app_state`` into every request's ``scope["state"]``. The protocol
below reads ``SO_PEERCRED`` from the accepted socket once, when the connection is made, and adds
it to that connection's state. Nothing a client sends can change it: it is read from the kernel
before the first byte of the request is parsed.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from dataclasses import dataclass
from typing import Literal

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


def peer_credentials(sock: socket.socket) -> Peer:
    """``SO_PEERCRED`` of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, gid = _UCRED.unpack(raw)
    return Peer("unix", pid, uid, gid)


def peer_of(transport: asyncio.BaseTransport) -> Peer:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family == socket.AF_UNIX:
        return peer_credentials(sock)
    return Peer("tcp")


class PeerCredProtocol(H11Protocol):
    """uvicorn's h11 protocol, plus the peer's credentials in every request's state."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.app_state = {**self.app_state, PEER_KEY: peer_of(transport)}


__all__ = ["PEER_KEY", "Peer", "PeerCredProtocol", "peer_credentials", "peer_of"]
