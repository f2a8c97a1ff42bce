"""HTTP/1.1 over a Unix socket with the standard library's ``socket`` only: the CLI's wire to the
daemon (:mod:`affidavit.client`).

A command sent to a running daemon must start in a few hundredths of a second; httpx alone
costs more to import than the whole request (and ``http.client`` pulls in the ``email``
package). One request per connection (``Connection: close``): a Unix socket connects in
microseconds. Everything the peer sends is untrusted: the status line and headers are bounded
(:data:`MAX_HEAD`), the body by :data:`MAX_BODY`; anything malformed raises
:class:`ProtocolError` (a :class:`ValueError`).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

MAX_HEAD = 64 * 1024
MAX_BODY = 256 * 1024 * 1024


class ProtocolError(ValueError):
    """The peer's reply is not HTTP/1.1 this client can read."""


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]  # names in lower case; a repeated header keeps its last value
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def request(
    path: str,
    method: str,
    target: str,
    *,
    params: dict[str, Any] | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> Reply:
    """Send one request to the Unix socket at ``path`` and read the whole reply. ``target`` is
    the path part of the URL (percent-encoded here); ``body`` is sent as JSON. Raises
    :class:`OSError` when nothing answers and :class:`ProtocolError` on a malformed reply."""
    url = quote(target, safe="/:@!$&'()*+,;=-._~")
    if params:
        url += "?" + urlencode({k: v for k, v in params.items() if v is not None})
    payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
    lines = [f"{method} {url} HTTP/1.1", "Host: affidavit", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    elif method not in ("GET", "HEAD", "DELETE"):
        lines.append("Content-Length: 0")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(head + payload)
        return _read_reply(sock, method == "HEAD")


def _read_reply(sock: socket.socket, head_only: bool) -> Reply:
    data = bytearray()
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            raise ProtocolError("the reply's headers are too long")
        chunk = sock.recv(65536)
        if not chunk:
            raise ProtocolError("the connection closed before the reply's headers ended")
        data += chunk
    end = data.index(b"\r\n\r\n")
    if end > MAX_HEAD:
        raise ProtocolError("the reply's headers are too long")
    status_line, *header_lines = bytes(data[:end]).decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in header_lines:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise ProtocolError(f"malformed header line: {line[:80]!r}")
        headers[name.lower()] = value.strip()
    rest = bytes(data[end + 4 :])
    status = int(parts[1])
    if head_only or status in (204, 304) or 100 <= status < 200:
        return Reply(status, headers, b"")
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return Reply(status, headers, _dechunk(sock, rest))
    length = headers.get("content-length")
    if length is not None:
        if not length.isdigit() or int(length) > MAX_BODY:
            raise ProtocolError(f"bad Content-Length {length[:20]!r}")
        return Reply(status, headers, _read_exactly(sock, rest, int(length)))
    return Reply(status, headers, _read_to_close(sock, rest))


def _read_exactly(sock: socket.socket, have: bytes, size: int) -> bytes:
    buf = bytearray(have[:size])
    while len(buf) < size:
        chunk = sock.recv(min(1 << 20, size - len(buf)))
        if not chunk:
            raise ProtocolError("the connection closed before the reply's body ended")
        buf += chunk
    return bytes(buf)


def _read_to_close(sock: socket.socket, have: bytes) -> bytes:
    buf = bytearray(have)
    while chunk := sock.recv(1 << 20):
        buf += chunk
        if len(buf) > MAX_BODY:
            raise ProtocolError("the reply's body is too long")
    return bytes(buf)


def _dechunk(sock: socket.socket, have: bytes) -> bytes:
    """A chunked body (RFC 9112 §7.1): sizes in hex, extensions and trailers ignored."""
    pending = bytearray(have)
    out = bytearray()

    def line() -> bytes:
        while b"\r\n" not in pending:
            if len(pending) > MAX_HEAD:
                raise ProtocolError("a chunk's size line is too long")
            chunk = sock.recv(65536)
            if not chunk:
                raise ProtocolError("the connection closed inside a chunked body")
            pending.extend(chunk)
        end = pending.index(b"\r\n")
        found = bytes(pending[:end])
        del pending[: end + 2]
        return found

    while True:
        size_text = line().split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ProtocolError(f"bad chunk size {size_text[:20]!r}") from None
        if size < 0 or len(out) + size > MAX_BODY:
            raise ProtocolError("the reply's body is too long")
        if size == 0:
            while line():  # trailers, up to the empty line
                pass
            return bytes(out)
        while len(pending) < size + 2:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise ProtocolError("the connection closed inside a chunk")
            pending.extend(chunk)
        if pending[size : size + 2] != b"\r\n":
            raise ProtocolError("a chunk does not end with CRLF")
        out += pending[:size]
        del pending[: size + 2]


__all__ = ["MAX_BODY", "MAX_HEAD", "ProtocolError", "Reply", "request"]
