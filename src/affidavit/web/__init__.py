"""The web review desk (``affidavit serve --web``): server-rendered pages over the service layer.

:func:`mount` adds the desk's routes to the daemon's app. They are ``public`` to the API's guard
(a browser carries no bearer token) and do their own authentication: a session cookie from a
one-time login link or a token login (:mod:`.session`), a CSRF token and same-origin checks on
every POST (:mod:`.desk`). Roles are the API's (``Principal.role_on``); decisions go through the
same service functions as the API's routes (:mod:`.review`, :mod:`.browse`), through one small
protocol (:class:`~.wiki.DeskWiki`) with a SQLite vault's implementation and a PostgreSQL
database's (:mod:`.pg`, ``serve --database URL --web``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from ..server.auth import ACCESS_KEY, PRINCIPAL_KEY, Principal, Vaults
from ..service.backend import Forbidden
from . import browse, changes, graph, review, upkeep
from .desk import HERE, SECURITY_HEADERS, Opener, WebDesk, WebRefusal
from .session import COOKIE, LoginRefused, same_origin

STATIC = {
    "desk.js": "text/javascript",
    "desk.css": "text/css",
    "graph.js": "text/javascript",
    "cytoscape.min.js": "text/javascript",
    "cytoscape.LICENSE.txt": "text/plain",
    "favicon.svg": "image/svg+xml",
}


def _login_routes(desk: WebDesk, router: APIRouter) -> None:
    @router.get("/web/login")
    async def login(request: Request, token: str | None = None) -> Response:
        desk.check_host(request)
        if token is None:
            return desk.page("login.html", visit=None, title="Log in", error=None)
        try:
            cookie, _ = desk.sessions.redeem_link(token)
        except LoginRefused as exc:
            return desk.page("login.html", 401, visit=None, title="Log in", error=str(exc))
        return desk.with_cookie(desk.redirect("/web/"), cookie)

    @router.post("/web/login")
    async def login_token(request: Request) -> Response:
        host = desk.check_host(request)
        why = same_origin(
            host, request.headers.get("origin"), request.headers.get("sec-fetch-site")
        )
        if why is not None:
            raise WebRefusal(403, f"refused: {why}.", "Log in from the desk's own page.")
        from urllib.parse import parse_qs

        form = parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=10)
        presented = (form.get("token") or [""])[0]
        try:
            cookie, _ = desk.sessions.login_token(presented)
        except LoginRefused as exc:
            return desk.page("login.html", 401, visit=None, title="Log in", error=str(exc))
        return desk.with_cookie(desk.redirect("/web/"), cookie)

    @router.post("/web/logout")
    async def logout(request: Request) -> Response:
        visit = await desk.post(request)
        desk.sessions.end(visit.cookie)
        response = desk.redirect("/web/login")
        response.delete_cookie(COOKIE, path="/web")
        return response

    @router.get("/web/")
    async def home(request: Request) -> Response:
        visit = desk.visit(request)
        principal = visit.session.principal
        vaults = [
            (name, principal.role_on(served))
            for name, served in sorted(desk.registry.vaults.items())
            if principal.role_on(served) is not None
        ]
        return desk.page("home.html", **desk.context(visit, vaults=vaults, title="Vaults"))

    @router.get("/web/{vault}/")
    async def vault_home(request: Request, vault: str) -> Response:
        desk.visit(request, vault)
        return desk.redirect(f"/web/{vault}/inbox")

    @router.get("/web/static/{name}")
    async def static(name: str) -> Response:
        if name not in STATIC:
            return Response("not found", status_code=404)
        body = (HERE / "static" / name).read_bytes()
        return Response(body, media_type=STATIC[name], headers=SECURITY_HEADERS)


def _link_route(desk: WebDesk) -> APIRouter:
    """``POST /v1/web/login-link``: a fresh one-time login link, for a user on the Unix socket."""
    router = APIRouter(include_in_schema=False)

    @router.post("/v1/web/login-link", openapi_extra={ACCESS_KEY: "authenticated"})
    async def login_link(request: Request) -> Response:
        principal = request.scope.get("state", {}).get(PRINCIPAL_KEY)
        if not isinstance(principal, Principal) or principal.transport != "unix":
            raise Forbidden("login links are given on the Unix socket only, to a local user.")
        if principal.uid is None or not desk.base_url:
            raise Forbidden("this daemon serves no web desk on TCP (start it with --web).")
        return JSONResponse({"url": desk.login_url(principal.uid)})

    return router


def mount(
    app: FastAPI,
    registry: Vaults,
    table: list[Any],
    hosts: frozenset[str],
    opener: Opener | None = None,
) -> WebDesk:
    """Add the desk to ``app``; its routes join ``table`` (the guard's route list). ``opener``
    opens a served vault as the desk's :class:`~.wiki.DeskWiki` (SQLite's by default; a
    PostgreSQL database's: :func:`.pg.pg_desk`)."""
    desk = WebDesk(registry, hosts, opener)
    router = APIRouter(include_in_schema=False)
    _login_routes(desk, router)
    changes.routes(desk, router)
    review.routes(desk, router)
    browse.routes(desk, router)
    graph.routes(desk, router)
    upkeep.routes(desk, router)
    for route in router.routes:
        route.openapi_extra = {ACCESS_KEY: "public"}  # type: ignore[attr-defined]
    links = _link_route(desk)
    for part in (router, links):
        app.include_router(part)
    table.extend(route for part in (router, links) for route in part.routes)

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebRefusal)
        return desk.refusal(exc)

    app.add_exception_handler(WebRefusal, refused)
    app.state.web = desk
    return desk


__all__ = ["WebDesk", "mount"]
