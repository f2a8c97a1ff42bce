"""Searches answered from what a process already read (issue 25 item 4), never stale, never
past the guard.

The daemon's search lane keeps each vault's recent answers (:class:`SearchCache`) and the
retriever keeps the claims' rows it read (``_row_cache``), both for one version of the database.
An attacker would check that a commit elsewhere is seen at once, that a write rolled back never
shows, that a cached answer is still refused to a caller the route refuses (no token, another
vault's token, a revoked one) and that a reader still can't write.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from affidavit.db import connect
from affidavit.retrieval.search import Retriever
from affidavit.server.fastlane import search_body
from affidavit.server.registry import SearchCache
from affidavit.service import tokens as token_store
from affidavit.service import vaults as svc
from affidavit.service.models import AskRequest
from affidavit.vault import init_vault, open_vault
from tests.test_server_authz import make_alpha, private_dir, start_daemon

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the daemon's tests run as root")


def test_the_cache_keeps_one_version_and_stays_within_its_bounds() -> None:
    cache = SearchCache(entries=2, max_bytes=64 * 16)
    cache.get(1, ("a", 10, "untrusted"))
    cache.put(1, ("a", 10, "untrusted"), b"A")
    cache.put(1, ("b", 10, "untrusted"), b"B")
    assert cache.get(1, ("a", 10, "untrusted")) == b"A"
    cache.put(1, ("c", 10, "untrusted"), b"C")  # past two entries: b, the least recent, goes
    assert cache.get(1, ("b", 10, "untrusted")) is None
    assert cache.get(1, ("c", 10, "untrusted")) == b"C"
    cache.put(1, ("big", 10, "untrusted"), b"x" * 65)  # over a sixteenth of the bytes: not kept
    assert cache.get(1, ("big", 10, "untrusted")) is None
    cache.put(0, ("old", 10, "untrusted"), b"O")  # computed under another version: not kept
    assert cache.get(1, ("old", 10, "untrusted")) is None
    assert cache.get(2, ("a", 10, "untrusted")) is None  # a new version forgets everything
    assert cache.get(2, ("c", 10, "untrusted")) is None and cache.held == 0


def _first_hit(vault_root: Path, query: str) -> tuple[str, str]:
    with open_vault(vault_root) as vault:
        hit = Retriever(vault.db).search(query, k=5)[0]
    return hit.claim_id, hit.text


def test_rows_read_by_a_connection_follow_commits_and_never_show_a_rolled_back_write(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    make_alpha(root)
    claim, text = _first_hit(root, "freedom")
    reader = connect(root / ".affidavit" / "db.sqlite")
    writer = connect(root / ".affidavit" / "db.sqlite")
    try:
        retriever = Retriever(reader)
        assert {h.claim_id: h.text for h in retriever.search("freedom")}[claim] == text
        # another connection commits: the next search reads the new row, not the one it kept
        writer.execute("UPDATE claims SET text = ? WHERE id = ?", (text + " Changed.", claim))
        assert retriever.hits([claim])[0].text == text + " Changed."
        writer.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claim,))
        assert claim not in [h.claim_id for h in retriever.search("freedom")]
        assert retriever.hits([claim]) == []
        writer.execute("UPDATE claims SET status = 'active', text = ? WHERE id = ?", (text, claim))
        assert retriever.hits([claim])[0].text == text
        # the reader's own write, seen inside its transaction, is gone after the rollback
        reader.execute("BEGIN IMMEDIATE")
        undone = text + " Written, then undone."
        reader.execute("UPDATE claims SET text = ? WHERE id = ?", (undone, claim))
        assert retriever.hits([claim])[0].text == undone
        assert {h.claim_id: h.text for h in retriever.search("freedom")}[claim] == undone
        reader.execute("ROLLBACK")
        assert retriever.hits([claim])[0].text == text
        assert {h.claim_id: h.text for h in retriever.search("freedom")}[claim] == text
    finally:
        reader.close()
        writer.close()


def test_the_lanes_cached_answer_is_a_fresh_searchs_bytes_until_a_commit(tmp_path: Path) -> None:
    root = tmp_path / "v"
    make_alpha(root)
    claim, _ = _first_hit(root, "freedom")
    with open_vault(root) as vault, open_vault(root) as other:
        vault.db.execute("PRAGMA query_only = ON")  # as the lane's connection is
        cache = SearchCache(16)
        first = search_body(vault, "freedom", 10, "untrusted", cache)
        assert first == search_body(vault, "freedom", 10, "untrusted", None)
        assert cache.bodies, "a tantivy answer is kept"
        assert search_body(vault, "freedom", 10, "untrusted", cache) is first  # from the cache
        other.db.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claim,))
        after = search_body(vault, "freedom", 10, "untrusted", cache)
        assert claim in first.decode() and claim not in after.decode()
        assert json.loads(after) == json.loads(
            svc.search(other, "freedom", 10, "untrusted", None).model_dump_json()
        )


def test_a_cached_search_is_refused_to_whom_the_route_refuses() -> None:
    base = private_dir("afd-cache-")
    alpha, gamma = base / "alpha", base / "gamma"
    ids = make_alpha(alpha)
    with init_vault(gamma)[0] as other:
        _, gamma_token = token_store.create_token(
            other.db, other.clock, "approve", timedelta(days=1), "gamma", "root"
        )
    with open_vault(alpha) as vault:
        read_info, read_token = token_store.create_token(
            vault.db, vault.clock, "read", timedelta(days=1), "reader", "root"
        )
    daemon = start_daemon([alpha, gamma], base)
    search = "/v1/vaults/alpha/search?q=freedom"
    try:
        with daemon.unix() as owner:
            owned = [owner.get(search) for _ in range(3)]  # the first fills the cache
        assert {r.status_code for r in owned} == {200} and owned[0].json()["hits"]
        assert owned[1].content == owned[2].content == owned[0].content
        with daemon.tcp() as nobody:
            refused = nobody.get(search)
            assert refused.status_code == 401, refused.text
            assert ids["claim"] not in refused.text and "hits" not in refused.text
        with daemon.tcp(gamma_token) as stranger:  # a token of another served vault
            refused = stranger.get(search)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["type"] == "Forbidden"
        with daemon.tcp(read_token) as reader:
            allowed = reader.get(search)
            assert allowed.status_code == 200 and allowed.content == owned[0].content
            # a reader on a write route, the lane's or not: refused as before
            for method, path, body in (
                ("POST", "/v1/vaults/alpha/nonces", {"hours": 1}),
                ("POST", "/v1/vaults/alpha/ask", {"question": "freedom?", "save": True}),
            ):
                refused = reader.request(method, path, json=body)
                assert refused.status_code == 403, (path, refused.text)
            with open_vault(alpha) as vault:  # revoked: the cached answer is no longer its
                token_store.revoke_token(vault.db, vault.clock, read_info.id, "root")
            refused = reader.get(search)
            assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]
            refused = reader.post("/v1/vaults/alpha/ask", json={"question": "freedom?"})
            assert refused.status_code == 401
        with daemon.tcp() as nobody:
            refused = nobody.post("/v1/vaults/alpha/ask", json={"question": "freedom?"})
            assert refused.status_code == 401 and "claims_given" not in refused.text
        with daemon.tcp(gamma_token) as stranger:
            refused = stranger.post("/v1/vaults/alpha/ask", json={"question": "freedom?"})
            assert refused.status_code == 403 and "claims_given" not in refused.text
    finally:
        assert daemon.stop() == 0


NONCE_FIELDS = {"claims_given", "claims_left_out", "context_tokens"}
"""What two runs of one question may differ in: the budget counts the random nonce's tokens."""


def test_the_ask_lane_answers_as_the_service_and_hands_the_route_what_it_refuses() -> None:
    base = private_dir("afd-asklane-")
    alpha = base / "alpha"
    make_alpha(alpha)
    daemon = start_daemon([alpha], base, name="ask")
    ask = "/v1/vaults/alpha/ask"
    try:
        with daemon.unix() as owner, open_vault(alpha) as vault:
            for question, trust in (("What about freedom?", "untrusted"), ("tower", "trusted")):
                got = owner.post(ask, json={"question": question, "min_trust": trust})
                assert got.status_code == 200, got.text
                want = svc.ask(vault, AskRequest(question=question, min_trust=trust), None, "x")
                mine = {k: v for k, v in got.json().items() if k not in NONCE_FIELDS}
                theirs = json.loads(want.model_dump_json())
                assert mine == {k: v for k, v in theirs.items() if k not in NONCE_FIELDS}
            # what the model refuses, or a body that is not JSON, reaches the route: its 422,
            # which names the field (the lane handed it the body it had read); JSON nested past
            # the parser's depth, the route's 400 (never a 500 from the lane)
            for body, status, field in (
                (b'{"question": ""}', 422, "question"),
                (b'{"question": "x", "saved": true}', 422, "saved"),
                (b'{"question": "x", "min_trust": "nope"}', 422, "min_trust"),
                (b'{"question": ', 422, ""),
                (b"[" * 100_000 + b"]" * 100_000, 400, ""),
            ):
                headers = {"content-type": "application/json"}
                refused = owner.post(ask, content=body, headers=headers)
                assert refused.status_code == status, (body[:40], refused.text)
                error = refused.json()["error"]
                assert (
                    error["type"] in ("ValidationError", "BadRequest") and field in error["message"]
                )
            big = b'{"question": "' + b"x" * 2_100_000 + b'"}'
            refused = owner.post(ask, content=big, headers={"content-type": "application/json"})
            assert refused.status_code == 413
    finally:
        assert daemon.stop() == 0
