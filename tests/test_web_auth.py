"""The web desk's rules without a browser: logins, cookies, CSRF, origins, roles, stale screens.

Each attack is the request an attacker's page (or a stale tab) would send; after a refusal the
plan is still pending and the wiki unchanged.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from affidavit.service import tokens as token_store
from affidavit.vault import open_vault
from affidavit.web.session import Sessions
from tests.web import BASE, desk_client, form_values, login_owner, make_vault


def _status(root: Path, plan_id: str) -> tuple[str, list[str]]:
    with open_vault(root) as vault:
        row = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
        pages = [r[0] for r in vault.db.execute("SELECT slug FROM pages ORDER BY slug")]
    return row[0], pages


def _token(root: Path, role: str) -> str:
    with open_vault(root) as vault:
        _, secret = token_store.create_token(
            vault.db, vault.clock, role, timedelta(hours=1), "web", "tester"
        )
    return secret


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "desk"
    plans = make_vault(root, [["four-freedoms", "monroe-doctrine", "washington-1790"]])
    return root, plans


def _plan_page(client: TestClient, plan_id: str) -> str:
    response = client.get(f"/web/desk/plans/{plan_id}")
    assert response.status_code == 200, response.text
    return response.text


def test_a_login_link_works_once_and_its_cookie_is_httponly_strict(
    world: tuple[Path, list[str]],
) -> None:
    root, _ = world
    with desk_client(root) as (client, desk, _):
        assert client.get("/web/desk/inbox").status_code == 401
        path = desk.login_url(0).removeprefix(BASE)
        first = client.get(path, follow_redirects=False)
        assert first.status_code == 303
        cookie = first.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/web" in cookie
        assert client.get("/web/desk/inbox").status_code == 200
        other = TestClient(client.app, base_url=BASE)
        again = other.get(path, follow_redirects=False)
        assert again.status_code == 401 and "works once" in again.text
        assert other.get("/web/desk/inbox").status_code == 401


def test_an_expired_login_link_is_refused(world: tuple[Path, list[str]]) -> None:
    root, _ = world
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    with desk_client(root) as (client, desk, registry):
        desk.sessions = Sessions(registry, clock=lambda: now[0])
        path = desk.login_url(0).removeprefix(BASE)
        now[0] += timedelta(minutes=16)
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 401 and "expired" in response.text


def test_a_cross_origin_post_without_csrf_changes_nothing(world: tuple[Path, list[str]]) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        fields = form_values(_plan_page(client, plan_id), "approve-form")
        url = f"/web/desk/plans/{plan_id}/approve"
        attacks = [
            ({"Origin": "http://evil.example"}, {**fields, "action": "all"}),
            ({"Sec-Fetch-Site": "cross-site"}, {**fields, "action": "all"}),
            ({}, {"seen": fields["seen"], "action": "all"}),  # no CSRF token
            ({}, {**fields, "csrf": "guessed", "action": "all"}),
        ]
        for headers, body in attacks:
            response = client.post(url, data=body, headers=headers, follow_redirects=False)
            assert response.status_code == 403, (headers, response.text)
            assert "refused" in response.text
        assert _status(root, plan_id) == ("pending", [])


def test_a_foreign_host_name_gets_nothing(world: tuple[Path, list[str]]) -> None:
    """DNS rebinding: evil.example resolving to 127.0.0.1 is still not this desk's name."""
    root, _ = world
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        response = client.get("/web/desk/inbox", headers={"Host": "evil.example:8765"})
        assert response.status_code == 400 and "host name" in response.text


def test_a_read_role_sees_no_buttons_and_its_posts_are_refused(
    world: tuple[Path, list[str]],
) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (client, _, _):
        login = client.post("/web/login", data={"token": _token(root, "read")})
        assert login.status_code == 200 and "desk" in login.text
        html = _plan_page(client, plan_id)
        assert "approve-form" not in html and "reject-form" not in html
        assert "Your role on this vault is read" in html
        csrf = re.search(r'name="csrf" value="([^"]+)"', html)
        assert csrf is not None  # the logout form's: a real token of this session
        for action in ("approve", "reject"):
            response = client.post(
                f"/web/desk/plans/{plan_id}/{action}",
                data={"csrf": csrf.group(1), "seen": "x", "action": "all", "reason": "no"},
            )
            assert response.status_code == 403 and "needs the approve role" in response.text
        assert _status(root, plan_id) == ("pending", [])


def test_a_revoked_token_ends_its_session(world: tuple[Path, list[str]]) -> None:
    root, _ = world
    secret = _token(root, "approve")
    with desk_client(root) as (client, _, _):
        client.post("/web/login", data={"token": secret})
        assert client.get("/web/desk/inbox").status_code == 200
        token_id = token_store.split_token(secret)
        assert token_id is not None
        with open_vault(root) as vault:
            token_store.revoke_token(vault.db, vault.clock, token_id[0], "tester")
        assert client.get("/web/desk/inbox").status_code == 401


def test_approving_two_of_three_writes_exactly_those(world: tuple[Path, list[str]]) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        fields = form_values(_plan_page(client, plan_id), "approve-form")
        response = client.post(
            f"/web/desk/plans/{plan_id}/approve",
            data={**fields, "op": ["1", "3"], "action": "selected"},
        )
        assert response.status_code == 200
        assert "Approved operation(s) 1, 3" in response.text
    assert _status(root, plan_id) == ("pending", ["four-freedoms", "washington-1790"])


def test_a_stale_or_expired_screen_is_refused_with_a_clear_message(
    world: tuple[Path, list[str]],
) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        fields = form_values(_plan_page(client, plan_id), "approve-form")
        url = f"/web/desk/plans/{plan_id}/approve"
        # someone approves operation 2 elsewhere: the open screen is stale now
        assert client.post(url, data={**fields, "op": "2"}).status_code == 200
        stale = client.post(url, data={**fields, "action": "all"})
        assert stale.status_code == 409 and "changed since you opened it" in stale.text
        fresh = form_values(_plan_page(client, plan_id), "approve-form")
        with open_vault(root) as vault:  # the plan's day passes
            vault.db.execute(
                "UPDATE plans SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?", (plan_id,)
            )
            vault.db.commit()
        expired = client.post(url, data={**fresh, "action": "all"})
        assert expired.status_code == 409 and "changed since you opened it" in expired.text
        assert "expired" in expired.text
    assert _status(root, plan_id) == ("expired", ["monroe-doctrine"])


def test_login_links_are_given_on_the_socket_only(world: tuple[Path, list[str]]) -> None:
    root, _ = world
    secret = _token(root, "approve")
    with desk_client(root) as (client, _, _):
        response = client.post("/v1/web/login-link", headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 403
        assert client.post("/v1/web/login-link").status_code == 401


def test_odd_input_gets_a_refusal_page_never_a_server_error(
    world: tuple[Path, list[str]],
) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        fields = form_values(_plan_page(client, plan_id), "approve-form")
        gets = [
            "/web/desk/plans/ffff",
            "/web/desk/plans/%2e%2e",
            "/web/desk/pages/..%2fetc",
            "/web/desk/pages/no-such-page",
            "/web/nosuchvault/inbox",
            f"/web/desk/sources/{'0' * 12}",
            "/web/desk/search?q=" + "x" * 1001,
        ]
        for url in gets:
            response = client.get(url)
            assert 400 <= response.status_code < 500, (url, response.status_code)
        assert client.get("/web/desk/lint?status=bogus").status_code == 200  # open ones shown
        source = re.search(r"/web/desk/sources/([0-9a-f]{64})", _plan_page(client, plan_id))
        assert source is not None
        for span in ("start=-1&end=5", "start=5&end=999999999", "start=9&end=3"):
            response = client.get(f"/web/desk/sources/{source.group(1)}?{span}")
            assert response.status_code < 500, (span, response.status_code)
        url = f"/web/desk/plans/{plan_id}/approve"
        for ops in (["abc"], ["99"], []):
            response = client.post(url, data={**fields, "op": ops, "action": "selected"})
            assert response.status_code == 409, (ops, response.text)
        assert client.post(url, data={**fields, "action": "all", "seen": "old"}).status_code == 409
    assert _status(root, plan_id) == ("pending", [])
