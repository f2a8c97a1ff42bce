"""The desk's plumbing: templates, the visit (session + vault + role), refusals, form posts.

Every handler starts with :meth:`WebDesk.visit` (a GET) or :meth:`WebDesk.post` (a POST): the
``Host`` must be one this desk answers to, the cookie must name a live session, and a POST must
carry the session's CSRF token and come from this origin. The role on the vault is
``Principal.role_on`` (the API guard's rule); whatever a template hides, a POST checks the role
again before it calls a service.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool

from ..errors import AffidavitError, ConflictError
from ..server.auth import Served, Vaults, allows
from ..server.errors import error_headers, status_of
from ..server.registry import ServedVault
from ..service.backend import Forbidden
from ..service.quote_context import pieces
from ..service.review import StaleScreen
from .session import COOKIE, SESSION_HOURS, Session, Sessions, csrf_ok, host_ok, same_origin
from .wiki import DeskWiki, SqliteDesk

HERE = Path(__file__).parent
T = TypeVar("T")
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


class WebRefusal(Exception):
    """A request the desk refuses, shown as a page saying why and what to do."""

    def __init__(
        self,
        status: int,
        message: str,
        fix: str = "",
        title: str = "",
        offer: Offer | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.fix, self.offer = status, message, fix, offer
        self.title = title or {
            400: "Bad request",
            401: "Please log in",
            403: "Not allowed",
            404: "Not found",
            409: "Not done",
            501: "Not on PostgreSQL yet",
            503: "The database did not answer",
        }.get(status, "Refused")

    @classmethod
    def of(cls, exc: AffidavitError) -> WebRefusal:
        """The refusal of a service's error. Only a stale screen is "changed since you opened
        it"; any other conflict is titled "Not done" and its message names the real reason (and
        its fix), never the generic "reload and decide again"."""
        status, fix = status_of(exc)
        if isinstance(exc, StaleScreen):
            return cls(status, str(exc), fix, title="Changed since you opened it")
        if isinstance(exc, ConflictError):
            return cls(status, str(exc))
        return cls(status, str(exc), fix)


@dataclass(frozen=True)
class Offer:
    """A fix the desk itself offers on a refusal: one button posting ``fields`` to ``action``."""

    action: str
    label: str
    fields: tuple[tuple[str, str], ...]
    explain: str = ""


@dataclass
class Visit:
    """One request of a logged-in person: their session, and the vault they look at."""

    session: Session
    cookie: str
    served: Served | None = None
    role: str | None = None
    form: dict[str, list[str]] = field(default_factory=dict)

    def can(self, level: str) -> bool:
        return allows(self.role, level)

    def field(self, name: str, default: str = "") -> str:
        values = self.form.get(name)
        return values[0] if values else default


class WebDesk:
    """The desk of one daemon: its sessions, templates and the hosts it answers to."""

    def __init__(
        self,
        registry: Vaults,
        extra_hosts: frozenset[str] = frozenset(),
        opener: Opener | None = None,
    ) -> None:
        from .session import LOOPBACK_NAMES

        self.registry = registry
        self.opener: Opener = opener or sqlite_desk
        """The vault of a visit as a :class:`~.wiki.DeskWiki`: SQLite's, or PostgreSQL's."""
        self.sessions = Sessions(registry)
        self.hosts = LOOPBACK_NAMES | {h.lower() for h in extra_hosts}
        self.base_url = ""
        """``http://host:port`` once the daemon listens on TCP (login links are built on it)."""
        self.public_origin: str | None = None
        """The origin a TLS proxy serves the desk at (``serve --web-origin``), if any."""
        self.env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals["context_pieces"] = pieces

    # --- login links ----------------------------------------------------------------------

    def serve_at(self, origin: str) -> None:
        """Behind a proxy at ``origin`` (``https://wiki.example.org``): the desk answers to its
        host name, accepts forms from exactly that origin, sets its cookie ``Secure`` when it is
        https, and builds login links on it."""
        from .session import parse_origin

        self.public_origin, name = parse_origin(origin)
        self.hosts = self.hosts | {name}

    def login_url(self, uid: int) -> str:
        return f"{self.base_url}/web/login?token={self.sessions.new_link_secret(uid)}"

    # --- rendering ------------------------------------------------------------------------

    def page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def refusal(self, refusal: WebRefusal, visit: Visit | None = None) -> HTMLResponse:
        response = self.page("error.html", refusal.status, refusal=refusal, visit=visit)
        if refusal.status == 503:  # the database not answering: when to try again
            response.headers.update(error_headers(503))
        return response

    def redirect(self, url: str) -> Response:
        return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)

    def with_cookie(self, response: Response, cookie: str) -> Response:
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=SESSION_HOURS * 3600,
            path="/web",
            httponly=True,
            samesite="strict",
            secure=bool(self.public_origin and self.public_origin.startswith("https://")),
        )
        return response

    # --- who is asking ----------------------------------------------------------------------

    def check_host(self, request: Request) -> str:
        host = request.headers.get("host")
        if not host_ok(host, frozenset(self.hosts)):
            raise WebRefusal(
                400,
                f"this desk does not answer to the host name {host!r}.",
                "Open it at the address `affidavit serve --web` printed (127.0.0.1 or localhost).",
            )
        assert host is not None
        return host

    def visit(self, request: Request, vault: str | None = None) -> Visit:
        self.check_host(request)
        cookie = request.cookies.get(COOKIE)
        session = self.sessions.lookup(cookie)
        if session is None or cookie is None:
            raise WebRefusal(
                401,
                "you are not logged in (or your session ended).",
                "Open the login link `affidavit serve --web` printed, or log in with a token.",
            )
        visit = Visit(session=session, cookie=cookie)
        if vault is not None:
            served = self.registry.find(vault)
            role = session.principal.role_on(served) if served is not None else None
            if served is None or role is None:
                raise WebRefusal(404, f"you have no vault {vault!r} here.", "Go back to /web/.")
            visit.served, visit.role = served, role
        return visit

    async def post(self, request: Request, vault: str | None = None) -> Visit:
        """A state-changing request: a session, its CSRF token and this very origin."""
        host = self.check_host(request)
        why = same_origin(
            host,
            request.headers.get("origin"),
            request.headers.get("sec-fetch-site"),
            self.public_origin,
        )
        if why is not None:
            raise WebRefusal(403, f"refused: {why}.", "Use the desk's own forms.")
        visit = self.visit(request, vault)
        form = parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=100)
        visit.form = form
        if not csrf_ok(visit.session, visit.field("csrf") or None):
            raise WebRefusal(
                403,
                "refused: the form's CSRF token is missing or not this session's.",
                "Reload the page and submit it again.",
            )
        return visit

    @staticmethod
    def require(visit: Visit, level: str, what: str) -> None:
        if not visit.can(level):
            raise WebRefusal(
                403,
                f"{what} needs the {level} role on this vault; yours is {visit.role}.",
                "Log in with the vault owner's link, or a token with a higher role.",
            )

    @contextmanager
    def borrow(self, visit: Visit) -> Iterator[DeskWiki]:
        assert visit.served is not None
        try:
            with self.opener(visit.served) as wiki:
                yield wiki
        except (AffidavitError, Forbidden) as exc:
            raise WebRefusal.of(exc) from exc

    async def run(self, visit: Visit, work: Callable[[DeskWiki], T]) -> T:
        """``work`` on the visit's vault, in the thread pool (SQLite, git and the database
        block)."""

        def call() -> T:
            with self.borrow(visit) as wiki:
                return work(wiki)

        return await run_in_threadpool(call)

    def flash(self, visit: Visit, message: str) -> None:
        visit.session.flashes.append(message)

    def context(self, visit: Visit, **extra: Any) -> dict[str, Any]:
        flashes, visit.session.flashes[:] = list(visit.session.flashes), []
        return {
            "visit": visit,
            "vault": visit.served.name if visit.served else None,
            "csrf": visit.session.csrf,
            "flashes": flashes,
            **extra,
        }


Opener = Callable[[Any], AbstractContextManager[DeskWiki]]
"""Opens a served vault for one request as a :class:`~.wiki.DeskWiki`."""


@contextmanager
def sqlite_desk(served: ServedVault) -> Iterator[DeskWiki]:
    """A served SQLite vault, borrowed for one request."""
    with served.borrow() as vault:
        yield SqliteDesk(vault, served)


__all__ = [
    "SECURITY_HEADERS",
    "Offer",
    "Opener",
    "Visit",
    "WebDesk",
    "WebRefusal",
    "sqlite_desk",
]
