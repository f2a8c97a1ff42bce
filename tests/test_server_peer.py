"""The peer-credential protocols and the search lane on the event loop.

The daemon now parses HTTP with httptools on uvloop; the caller on the Unix socket must still be
the UID the kernel reports for the connection, read when the connection is made, whatever the
request says. Each parser is run here under a real uvicorn on a real Unix socket, and called by
root and by a forked child that became ``nobody``. The search lane
(:mod:`affidavit.server.fastlane`) must answer exactly what the route answers, leave anything it
is not sure of to the route, and hand a search past its work budget to the thread pool.
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn

from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.server import fastlane, registry
from affidavit.server.app import create_app
from affidavit.server.peer import PeerCredProtocol, peer_protocol
from affidavit.server.registry import Registry
from affidavit.server.runtime import bind_unix
from affidavit.service import tokens as token_store
from affidavit.service import vaults as svc
from affidavit.vault import init_vault, open_vault
from tests.test_server_authz import NOBODY, as_user, make_alpha, private_dir, start_daemon

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


@pytest.fixture(scope="module")
def alpha() -> tuple[Path, dict[str, str]]:
    base = private_dir("afd-peer-")
    root = base / "alpha"
    return root, make_alpha(root)


class Served:
    """The daemon's app under a real uvicorn, with one given HTTP protocol, on a Unix socket."""

    def __init__(self, root: Path, protocol: type) -> None:
        base = private_dir("afd-peer-run-")
        self.socket = base / "run" / "affidavit.sock"
        self.registry = Registry.open([root])
        self.sock: socket.socket = bind_unix(self.socket, shared=True)
        sock = self.sock
        config = uvicorn.Config(
            create_app(self.registry, run_workers=False),
            http=protocol,
            loop="uvloop" if protocol is not PeerCredProtocol else "asyncio",
            ws="none",
            lifespan="on",
            log_config=None,
            access_log=False,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]})
        self.thread.start()
        deadline = time.monotonic() + 600  # a hang guard: a busy machine starts slowly
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)

    def client(self) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=str(self.socket))
        return httpx.Client(transport=transport, base_url="http://affidavit", timeout=600)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(60)
        self.sock.close()  # uvicorn leaves a socket it was handed open
        self.registry.close()


@pytest.fixture(params=["h11", "httptools"])
def served(request: pytest.FixtureRequest, alpha: tuple[Path, dict[str, str]]) -> Iterator[Served]:
    running = Served(alpha[0], peer_protocol(request.param))
    try:
        yield running
    finally:
        running.stop()


def test_each_protocol_gives_the_kernels_uid_and_refuses_a_foreign_one(
    served: Served, alpha: tuple[Path, dict[str, str]]
) -> None:
    search = "/v1/vaults/alpha/search?q=tower"
    with served.client() as client:
        me = client.get("/v1/whoami").json()
        assert me["uid"] == 0 and [v["role"] for v in me["vaults"]] == ["owner"]
        assert client.get(search).status_code == 200  # the first search loads the vectors
        assert client.get(search).status_code == 200  # and the next takes the lane
    # a token on the socket changes nothing: the connection's UID decides
    with open_vault(alpha[0]) as vault:
        _, token = token_store.create_token(
            vault.db, vault.clock, "approve", timedelta(hours=1), "peer", "root"
        )
    who, found, pages, nonce = as_user(
        NOBODY,
        served.socket,
        [
            ("GET", "/v1/whoami", None),
            ("GET", search, None),
            ("GET", "/v1/vaults/alpha/pages", None),
            ("POST", "/v1/vaults/alpha/nonces", {"hours": 1}),
        ],
        headers={"Authorization": f"Bearer {token}", "X-Remote-User": "root"},
    )
    mine = json.loads(who[1])
    assert mine["uid"] == NOBODY and mine["token_id"] is None and mine["vaults"] == []
    for status, text in (found, pages, nonce):
        assert status == 403, text
        assert json.loads(text)["error"]["type"] == "Forbidden"


def test_the_daemon_serves_with_httptools_on_uvloop(alpha: tuple[Path, dict[str, str]]) -> None:
    base = private_dir("afd-peer-daemon-")
    daemon = start_daemon([alpha[0]], base)
    try:
        listening = [x for x in daemon.log_lines() if x.get("event") == "listening"]
        assert listening[0]["http"] == "PeerCredHttpToolsProtocol"
        assert listening[0]["loop"] == "uvloop"
        ((status, text),) = as_user(NOBODY, daemon.socket, [("GET", "/v1/whoami", None)])
        assert status == 200 and json.loads(text)["uid"] == NOBODY
        with daemon.unix() as client:
            assert client.get("/v1/whoami").json()["uid"] == 0
    finally:
        assert daemon.stop() == 0


def test_the_lane_answers_what_the_route_answers_and_leaves_it_the_rest(
    served: Served, alpha: tuple[Path, dict[str, str]]
) -> None:
    base = "/v1/vaults/alpha/search"
    with served.client() as client, open_vault(alpha[0]) as vault:
        client.get(f"{base}?q=warm")  # loads the vectors (none here): the lane serves after
        for query, k, trust in (("freedom", 10, "untrusted"), ("freedom speech", 3, "trusted")):
            got = client.get(base, params={"q": query, "k": k, "min_trust": trust})
            assert got.status_code == 200 and got.json()["hits"]
            want = svc.search(vault, query, k, trust, None)
            assert got.json() == json.loads(want.model_dump_json())
        # what the lane is not sure of, the route answers, with its own 422
        for bad in ("q=a&q=b", "q=x&k=0", "q=x&k=101", "q=x&min_trust=nope", "k=3", "q="):
            refused = client.get(f"{base}?{bad}")
            if bad == "q=a&q=b":  # repeated: the route takes the last, as it always did
                assert refused.status_code == 200 and refused.json()["query"] == "b"
                continue
            assert refused.status_code == 422, bad
            assert refused.json()["error"]["type"] == "ValidationError", bad


def test_a_search_past_its_budget_moves_to_the_thread_pool(
    alpha: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    reg = Registry.open([alpha[0]])
    try:
        served = reg.vaults["alpha"]
        served.vectors_loaded = True  # no vectors in this vault
        # the budget is counted every 10 steps here (a search of this small vault takes < 1,000)
        monkeypatch.setattr(registry, "_STEPS_PER_CHECK", 10)
        within = served.on_loop(lambda v: svc.search(v, "freedom", 10, "untrusted", None))
        assert within is not None and within.hits
        monkeypatch.setattr(registry, "LOOP_BUDGET_STEPS", 0)  # every step is past the budget
        assert served.on_loop(lambda v: svc.search(v, "freedom", 10, "untrusted", None)) is None
        # the lane then leaves the request to the route, which answers in the thread pool
        scope = {
            "type": "http",
            "method": "GET",
            "query_string": b"q=freedom",
            "state": {
                "affidavit.route": fastlane.SEARCH_ROUTE,
                "affidavit.vault": served,
                "affidavit.role": "owner",
                "affidavit.params": {"vault": "alpha"},
            },
        }
        assert fastlane.FastReads(lambda *a: None)._search(scope) is None  # type: ignore[arg-type]
        monkeypatch.setattr(registry, "LOOP_BUDGET_STEPS", 20_000)
        answered = fastlane.FastReads(lambda *a: None)._search(scope)  # type: ignore[arg-type]
        assert answered is not None and answered[0] == 200
        # the lane's connection reads only: a write fails (and the lane leaves it to the route)
        assert served.on_loop(lambda v: v.db.execute("DELETE FROM claims")) is None
        with open_vault(alpha[0]) as vault:
            assert vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] > 0
        # a read from another thread never gets the lane's connection: it goes to the pool
        answers: list[object] = []
        thread = threading.Thread(target=lambda: answers.append(served.on_loop(lambda v: 1)))
        thread.start()
        thread.join()
        assert answers == [None] and served.on_loop(lambda v: 1) == 1
    finally:
        reg.close()


def test_a_vault_of_unknown_shape_is_not_served_by_the_lane(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "empty")
    vault.close()
    reg = Registry.open([tmp_path / "empty"])
    try:
        served = reg.vaults["empty"]
        scope = {
            "type": "http",
            "method": "GET",
            "query_string": b"q=tower",
            "state": {
                "affidavit.route": fastlane.SEARCH_ROUTE,
                "affidavit.vault": served,
                "affidavit.role": None,  # the guard would have refused: the lane refuses too
                "affidavit.params": {"vault": "empty"},
            },
        }
        served.vectors_loaded = True
        lane = fastlane.FastReads(lambda *a: None)  # type: ignore[arg-type]
        assert lane._search(scope) is None
        scope["state"]["affidavit.role"] = "read"
        assert lane._search(scope) is not None
        scope["state"]["affidavit.params"] = {"vault": "other"}
        assert lane._search(scope) is None
    finally:
        reg.close()


def test_the_lanes_body_is_the_routes_byte_for_byte(alpha: tuple[Path, dict[str, str]]) -> None:
    """The lane encodes the retriever's hits with orjson, not through the response models: the
    bytes must be the route's, for real searches and for hits holding what a source may hold
    (quotes, backslashes, control characters, non-ASCII, U+2028, long floats)."""
    with open_vault(alpha[0]) as vault:
        for query, k, trust in (("freedom", 10, "untrusted"), ("freedom speech", 3, "trusted")):
            want = svc.search(vault, query, k, trust, None).model_dump_json().encode()
            assert fastlane.search_body(vault, query, k, trust) == want
            assert json.loads(want)["hits"]
    nasty = [
        'a "quoted" \\ back',
        "tab\there\nnew\r\x00\x1f\x7f",
        "é ü 漢字 🙂",
        "\u2028\u2029",
        "",
    ]
    hits = [
        Hit(
            claim_id=f"c-{n}",
            page=text,
            page_title=text[::-1],
            text=text * 3,
            trust="trusted",
            score=score,
            evidence=tuple(
                EvidenceRef(f"s-{i}", text, text + str(i), f"line {i}", i, i + 10**12)
                for i in range(n % 3)
            ),
        )
        for n, (text, score) in enumerate(
            zip(
                nasty * 2,
                (0.0, 1.0, 0.016393, 1e-7, 123456.789012, 2.5e16, 1 / 3, -0.0, 5e-324, 7.0),
                strict=True,
            )
        )
    ]
    for query in ("plain", *nasty):
        want = svc.SearchResponse(query=query, hits=[svc._hit(h) for h in hits])
        assert fastlane.encode_search(query, hits) == want.model_dump_json().encode()


QUERY_STRINGS = [
    "",
    "q=1",
    "q=freedom&k=3",
    "q=1&&k=2",
    "q=1&",
    "&q=1",
    "q",
    "q=a=b",
    "q=",
    "=x",
    "q=1;k=2",
    "q=%zz",
    "q=a+b",
    "q=%C3%A9t%C3%A9",
    "q=%26&k=%3D",
    "q=a&q=b",
    "q=caf\xe9",
    "q=" + "x" * 1001,
]


def test_the_lanes_query_string_is_read_as_parse_qsl_reads_it() -> None:
    """The lane splits plain query strings itself; every string must give parse_qsl's pairs, or
    be refused where parse_qsl (strict) refuses it."""
    from urllib.parse import parse_qsl

    rng = random.Random(5)
    alphabet = "qk=&%+;a1é "
    generated = ["".join(rng.choices(alphabet, k=rng.randrange(12))) for _ in range(3000)]
    for text in QUERY_STRINGS + generated:
        raw = text.encode("latin-1")
        try:
            want: list[tuple[str, str]] | None = parse_qsl(
                text, keep_blank_values=True, strict_parsing=True
            )
        except ValueError:
            want = None
        assert fastlane._pairs(raw) == want, text
