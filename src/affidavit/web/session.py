"""Who is at the browser: one-time login links, token logins, session cookies, CSRF.

- **Login links** (as Jupyter's): ``serve --web`` prints one for the user the daemon runs as, and
  the owner can ask the Unix socket for another (``POST /v1/web/login-link``); the link carries a
  random secret that works once, for :data:`LINK_SECONDS`, and is exchanged for a session cookie.
  Only its SHA-256 is kept.
- **Token logins**: a bearer token of a vault (``affidavit tokens create``) pasted into the login
  form gives a session with that token's role on that vault; the token is checked again on every
  request, so revoking it ends the session.
- **Sessions** live in the daemon's memory (a restart logs everyone out; plans persist). The
  cookie is HttpOnly, SameSite=Strict, limited to ``/web``; its value is looked up by SHA-256.
- **Every state-changing request** (POST) must carry the session's CSRF token, and when the
  browser sends ``Origin`` or ``Sec-Fetch-Site`` they must name this very origin. The ``Host``
  header must be a loopback name (or the address the daemon was told to listen on): a page served
  from another name (DNS rebinding) gets nothing.

Roles are never decided here: a session holds a :class:`~affidavit.server.auth.Principal`, and its
role on a vault is ``Principal.role_on`` — the same rule the API's guard applies.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..server.auth import Principal, Vaults
from ..service import tokens as token_store

LINK_SECONDS = 15 * 60
SESSION_HOURS = 12
COOKIE = "afd_web"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Session:
    principal: Principal
    csrf: str
    expires: datetime
    token_secret: str | None = None
    """A token session's secret, to check the token again (revoked? expired?) on each request."""
    flashes: list[str] = field(default_factory=list)
    """Messages for the next page shown (what a decision did)."""


class LoginRefused(Exception):
    """A login that does not work; the message says why and what to do."""


@dataclass
class Sessions:
    """Login links and sessions of one daemon, in memory, safe across request threads."""

    registry: Vaults
    clock: Callable[[], datetime] = _now
    _links: dict[str, tuple[int, datetime]] = field(default_factory=dict)
    _sessions: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def new_link_secret(self, uid: int) -> str:
        """A single-use login secret for the local user ``uid``."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            self._links = {k: v for k, v in self._links.items() if v[1] > now}
            self._links[_digest(secret)] = (uid, now + timedelta(seconds=LINK_SECONDS))
        return secret

    def redeem_link(self, secret: str) -> tuple[str, Session]:
        """Exchange a login link's secret for a new session (once)."""
        with self._lock:
            entry = self._links.pop(_digest(secret), None)
        if entry is None:
            raise LoginRefused(
                "this login link is not valid: each link works once. Ask the daemon for a new "
                "one: `curl --unix-socket SOCKET -X POST http://affidavit/v1/web/login-link`, "
                "or log in with a token."
            )
        uid, expires = entry
        if expires <= self.clock():
            raise LoginRefused(
                "this login link expired (links work for 15 minutes). Ask the daemon for a new "
                "one (POST /v1/web/login-link on its Unix socket)."
            )
        return self._open(Principal("unix", uid=uid), None)

    def login_token(self, presented: str) -> tuple[str, Session]:
        """A session for a bearer token of one of the served vaults."""
        principal = self._token_principal(presented)
        return self._open(principal, presented.strip())

    def _token_principal(self, presented: str) -> Principal:
        parts = token_store.split_token(presented)
        if parts is None:
            raise LoginRefused("that is not a token (they look like afd_<id>_<secret>).")
        token_id, secret = parts
        name, verdict = self.registry.check_token(token_id, secret)
        if isinstance(verdict, token_store.TokenGrant):
            return Principal("tcp", token_id=token_id, token_vault=name, token_role=verdict.role)
        if verdict != "unknown":
            raise LoginRefused(
                f"token {token_id} is {verdict}. Ask the vault's owner for a new one."
            )
        raise LoginRefused("unknown token. Ask the vault's owner for one (`affidavit tokens`).")

    def _open(self, principal: Principal, token_secret: str | None) -> tuple[str, Session]:
        cookie = secrets.token_urlsafe(32)
        session = Session(
            principal=principal,
            csrf=secrets.token_urlsafe(24),
            expires=self.clock() + timedelta(hours=SESSION_HOURS),
            token_secret=token_secret,
        )
        with self._lock:
            now = self.clock()  # forget ended sessions as new ones start: memory stays bounded
            self._sessions = {k: v for k, v in self._sessions.items() if v.expires > now}
            self._sessions[_digest(cookie)] = session
        return cookie, session

    def lookup(self, cookie: str | None) -> Session | None:
        """The live session of a cookie value, or None (unknown, expired, token revoked)."""
        if not cookie:
            return None
        key = _digest(cookie)
        with self._lock:
            session = self._sessions.get(key)
        if session is None:
            return None
        if session.expires <= self.clock():
            self.end(cookie)
            return None
        if session.token_secret is not None:
            try:
                self._token_principal(session.token_secret)
            except LoginRefused:
                self.end(cookie)
                return None
        return session

    def end(self, cookie: str | None) -> None:
        if cookie:
            with self._lock:
                self._sessions.pop(_digest(cookie), None)


def csrf_ok(session: Session, presented: str | None) -> bool:
    return presented is not None and hmac.compare_digest(session.csrf, presented)


def host_ok(host: str | None, allowed: frozenset[str]) -> bool:
    """Is ``Host`` a name this desk answers to (loopback, or the configured address)?"""
    if not host:
        return False
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.lower() in allowed


def same_origin(host: str, origin: str | None, fetch_site: str | None) -> str | None:
    """Why a state-changing request is cross-site, or None when nothing says it is."""
    if fetch_site is not None and fetch_site != "same-origin":
        return (
            f"the browser says this request comes from another site (Sec-Fetch-Site: {fetch_site})"
        )
    if origin is not None and origin != f"http://{host}":
        return f"the request comes from another origin ({origin})"
    return None


__all__ = [
    "COOKIE",
    "LINK_SECONDS",
    "LOOPBACK_NAMES",
    "LoginRefused",
    "Session",
    "Sessions",
    "csrf_ok",
    "host_ok",
    "same_origin",
]
