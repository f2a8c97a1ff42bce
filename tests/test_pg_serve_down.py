"""``serve --database`` while its PostgreSQL is down (issue 26): the guard's lookups — a presented
token, a vault made since — run in a worker thread, never on the event loop, so a request waiting
on the database stalls no other request; a database that doesn't answer is a 503 with
``Retry-After`` and the fix (start the server; the daemon reconnects by itself), never a 500; and
once the server is back the same request is answered, with nothing to restart. The server is
stopped as in a crash (``pg_ctl stop -m immediate``) under a live daemon, on a cluster of this
module's own."""

from __future__ import annotations

import json
import os
import pwd
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from . import pg_cluster
from .test_pg_serve_cli import Daemon, cli, with_password

pytestmark = pytest.mark.xdist_group("postgres")

BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A cluster of its own, vault ``team`` with a read token, and a daemon serving it."""
    try:
        own = pg_cluster.private("down")
    except pg_cluster.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        url = with_password(own.create_database("down"))
        env = {"AFFIDAVIT_DATABASE": url}
        me = pwd.getpwuid(os.geteuid()).pw_name
        assert cli("team", "create", "team", "--owner", me, env=env).returncode == 0
        made = cli("team", "token", "team", "--role", "read", "--json", env=env)
        assert made.returncode == 0, made.stderr
        daemon = Daemon(tmp_path_factory.mktemp("daemon"), env=env)
        try:
            yield {"cluster": own, "daemon": daemon, "token": json.loads(made.stdout)["token"]}
        finally:
            assert daemon.stop() == 0, daemon.log.read_text()
    finally:
        if not own.running:  # a failed restart: nothing to stop but the watchdog and the dir
            own.running = False
        own.stop()


def pages(daemon: Daemon, token: str) -> httpx.Response:
    with daemon.tcp(token) as client:
        return client.get("/v1/vaults/team/pages")


def test_a_database_down_is_503_with_the_fix_and_stalls_no_other_request(
    served: dict[str, Any],
) -> None:
    daemon, token, own = served["daemon"], served["token"], served["cluster"]
    assert pages(daemon, token).status_code == 200
    own.stop_immediate()
    try:
        waiting: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: waiting.append(pages(daemon, token)))
        asking.start()  # its token lookup waits on the database that is gone
        time.sleep(0.5)  # (the lookup waits 5 s before it gives up: ample)
        answered = 0  # other requests answered while the lookup still waited
        while asking.is_alive():
            with daemon.tcp() as other:
                assert other.get("/v1/health").status_code == 200
            if asking.is_alive() and "database_error" not in daemon.log.read_text():
                answered += 1
            time.sleep(0.05)
        assert answered > 0  # on the event loop, the lookup would have held every request
        asking.join()
        (down,) = waiting
        assert down.status_code == 503, down.text
        assert down.headers["retry-after"].isdigit()
        error = down.json()["error"]
        assert error["type"] == "DatabaseUnavailable"
        assert (
            "did not answer" in error["message"] and "start the PostgreSQL server" in error["fix"]
        )
        assert (
            "Sup3r-S3cret-pw" not in down.text and "Sup3r-S3cret-pw" not in daemon.log.read_text()
        )
        # an unknown token is asked of the database too: still 503, never 401 nor 500
        with daemon.tcp("afd_0123456789ab_" + "A" * 43) as stranger:
            assert stranger.get("/v1/vaults/team/pages").status_code == 503
    finally:
        own.restart()
    for _ in range(600):  # the pool reconnects by itself: no daemon restart
        back = pages(daemon, token)
        if back.status_code == 200:
            break
        assert back.status_code == 503, back.text
        time.sleep(0.1)
    assert back.status_code == 200 and back.json() == []
    assert daemon.proc.poll() is None


def test_the_owner_on_the_socket_hears_of_a_database_down_in_seconds(
    served: dict[str, Any],
) -> None:
    """The owner's request has no token to look up: it waits on the vault's pool itself. The
    pool waits a minute for a busy connection; a database down is a 503 long before that (the
    client here gives up after 30 s, half the pool's minute)."""
    daemon, own = served["daemon"], served["cluster"]
    with daemon.unix() as owner:
        assert owner.get("/v1/vaults/team/pages").status_code == 200
    own.stop_immediate()
    try:
        transport = httpx.HTTPTransport(uds=str(daemon.sock))
        with httpx.Client(transport=transport, base_url="http://affidavit", timeout=30) as owner:
            down = owner.get("/v1/vaults/team/pages")
            approve = owner.post("/v1/vaults/team/plans/0123abcd/approve", json={})
        for answer in (down, approve):
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"].isdigit()
            error = answer.json()["error"]
            assert error["type"] == "DatabaseUnavailable"
            assert "start the PostgreSQL server" in error["fix"]
            assert "Sup3r-S3cret-pw" not in answer.text
    finally:
        own.restart()
    with daemon.unix() as owner:
        for _ in range(600):  # the pool reconnects by itself: no daemon restart
            back = owner.get("/v1/vaults/team/pages")
            if back.status_code == 200:
                break
            assert back.status_code == 503, back.text
            time.sleep(0.1)
    assert back.status_code == 200 and back.json() == []
