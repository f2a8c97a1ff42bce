"""The web desk behind a TLS proxy (issue 26 item 7): ``serve --web --web-origin https://…``.

Behind a proxy the browser sends ``Origin: https://wiki.example.org`` and, depending on the
proxy, ``Host: wiki.example.org`` or the daemon's own loopback address; without the option the
desk refuses every form post there. With it the desk accepts exactly that origin, answers to its
host name, sets its session cookie ``Secure`` and builds its login link on it. The attacker's
tests: another origin, the same host over plain http, a look-alike host, a refused option value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from affidavit.errors import ConfigError
from affidavit.web.session import parse_origin, same_origin
from tests.web import BASE, desk_client, form_values, make_vault

from .test_web_auth import _plan_page, _status

PUBLIC = "https://wiki.example.org"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "desk"
    return root, make_vault(root, [["four-freedoms"]])


def test_the_origin_is_parsed_as_a_browser_sends_it() -> None:
    assert parse_origin("https://Wiki.Example.org") == (PUBLIC, "wiki.example.org")
    assert parse_origin("https://wiki.example.org:443/") == (PUBLIC, "wiki.example.org")
    assert parse_origin("https://wiki.example.org:8443")[0] == PUBLIC + ":8443"
    assert parse_origin("http://[::1]:8080") == ("http://[::1]:8080", "::1")
    for bad in ("wiki.example.org", "ftp://wiki.example.org", "https://wiki.example.org/desk",
                "https://ann:pw@wiki.example.org", "https://wiki.example.org?x=1",
                "https://wiki.example.org:99999", "https://"):  # fmt: skip
        with pytest.raises(ConfigError, match="--web-origin"):
            parse_origin(bad)


def test_same_origin_accepts_exactly_the_public_origin() -> None:
    assert same_origin("127.0.0.1:8765", PUBLIC, "same-origin", PUBLIC) is None
    assert same_origin("127.0.0.1:8765", "http://127.0.0.1:8765", None, PUBLIC) is None
    for other in ("http://wiki.example.org", "https://wiki.example.org.evil.net",
                  "https://evil.example", "https://wiki.example.org:8443", "null"):  # fmt: skip
        assert same_origin("127.0.0.1:8765", other, None, PUBLIC) is not None, other
    assert same_origin("127.0.0.1:8765", PUBLIC, None, None) is not None  # option not given


def test_behind_the_proxy_a_login_and_an_approval_go_through(
    world: tuple[Path, list[str]],
) -> None:
    root, (plan_id,) = world
    with desk_client(root) as (plain, desk, _):
        refused = plain.get("/web/desk/inbox", headers={"Host": "wiki.example.org"})
        assert refused.status_code == 400  # not its name until the option says so
        desk.serve_at(PUBLIC)
        desk.base_url = desk.public_origin or ""
        link = desk.login_url(os.geteuid())
        assert link.startswith(PUBLIC + "/web/login?token=")
        # the browser at https://wiki.example.org, through the proxy (Host kept)
        client = TestClient(plain.app, base_url=PUBLIC)
        first = client.get(link.removeprefix(PUBLIC), follow_redirects=False)
        assert first.status_code == 303
        cookie = first.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
        fields = form_values(_plan_page(client, plan_id), "approve-form")
        url = f"/web/desk/plans/{plan_id}/approve"
        for origin in ("http://wiki.example.org", "https://wiki.example.org.evil.net",
                       "https://evil.example", "https://wiki.example.org:8443"):  # fmt: skip
            response = client.post(url, data={**fields, "action": "all"},
                                   headers={"Origin": origin}, follow_redirects=False)  # fmt: skip
            assert response.status_code == 403, (origin, response.text)
        assert _status(root, plan_id)[0] == "pending"
        done = client.post(url, data={**fields, "action": "all"}, headers={"Origin": PUBLIC},
                           follow_redirects=False)  # fmt: skip
        assert done.status_code == 303, done.text
        assert _status(root, plan_id)[0] == "applied"
        look_alike = client.get("/web/desk/inbox", headers={"Host": "wiki.example.org.evil.net"})
        assert look_alike.status_code == 400


def test_without_the_option_the_cookie_is_not_secure_and_loopback_works(
    world: tuple[Path, list[str]],
) -> None:
    root, _ = world
    with desk_client(root) as (client, desk, _):
        link = desk.login_url(os.geteuid())
        assert link.startswith(BASE)
        first = client.get(link.removeprefix(BASE), follow_redirects=False)
        assert "secure" not in first.headers["set-cookie"].lower()


def test_the_option_is_refused_without_web_or_with_a_path(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from affidavit.cli import main

    no_web = CliRunner().invoke(main, ["serve", "--vault", str(tmp_path), "--web-origin", PUBLIC,
                                       "--check"], env={"AFFIDAVIT_DATABASE": ""})  # fmt: skip
    assert no_web.exit_code != 0 and "pass --web too" in no_web.output
    path = CliRunner().invoke(main, ["serve", "--vault", str(tmp_path), "--web", "--web-origin",
                                     PUBLIC + "/desk", "--check"],
                              env={"AFFIDAVIT_DATABASE": ""})  # fmt: skip
    assert path.exit_code != 0 and "no path" in path.output
