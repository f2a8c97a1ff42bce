"""Full-text search over claims on PostgreSQL (issue 26 item 5, ``pg005_full_text``): stemmed
OR queries over a tsvector with a GIN index, the same result records as the SQLite fallback,
trust and page filters, in step with the door, and queries that carry tsquery syntax, quotes or
SQL read as plain words (every value a bound parameter)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.hashing import sha256_hex
from affidavit.retrieval.search import EvidenceRef, Hit, query_terms
from affidavit.storage import open_storage

from .pg_appliers import ACTOR, EXPIRES, NOW

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

psycopg = pytest.importorskip("psycopg")

from affidavit.storage.pg_search import PgFullText  # noqa: E402

from .pg_cluster import drop_vaults  # noqa: E402

TRAP = "x'); DROP TABLE v_main.claims; -- & | ! :* <-> \\ %s {s} $$"
RIVER = (
    "The river flows north past the old mill.\n"
    "Salmon return to the river every autumn to spawn.\n"
    f"A strange line: {TRAP}\n"
)
MILL = b"The mill was built in 1821 and burned in 1902.\n"


@pytest.fixture
def vault(pg_url: str) -> Iterator[tuple[Any, PgFullText, dict[str, str]]]:
    drop_vaults(pg_url)
    storage = open_storage(pg_url)
    storage.create_vault("main", "ann")
    ids = {
        "river": storage.add_source(
            "main", RIVER.encode(), origin="/r", name="River notes", added_at=NOW,
            media_type="text/markdown", trust="trusted",
        ),
        "mill": storage.add_source(
            "main", MILL, origin="/m", name="Mill", added_at=NOW, media_type="text/plain",
            trust="untrusted",
        ),
    }  # fmt: skip
    yield storage, PgFullText(storage, "main"), ids
    storage.close()


def _apply(storage: Any, n: int, op: dict[str, Any]) -> None:
    plan_id = f"{n:064x}"
    plan = {"nonce": f"nonce-{n}-0123456789abcdef", "operations": [op]}
    storage.propose(
        "main", plan_id, author="ann", origin="cli", plan_json=json.dumps(plan),
        created_at=NOW, expires_at=EXPIRES,
    )  # fmt: skip
    with storage.door("main", f"b-{n}") as door:
        door.apply_plan(plan_id, now=NOW, actor=ACTOR)


def _claim(text: str, source: str, quote: str) -> dict[str, Any]:
    return {"text": text, "evidence": [{"source": source, "quote": quote}]}


def _fill(storage: Any, ids: dict[str, str]) -> None:
    river, mill = ids["river"], ids["mill"]
    _apply(storage, 1, {
        "op": "create_page", "slug": "river", "title": "The river", "summary": "Where it flows",
        "claims": [
            _claim("The river flows north.", river, "The river flows north"),
            _claim("Salmon spawn in the river each autumn.", river, "Salmon return to the river"),
            _claim(f"Strange: {TRAP}", river, TRAP),
        ],
    })  # fmt: skip
    _apply(storage, 2, {
        "op": "create_page", "slug": "mill", "title": "The old mill", "summary": "Its history",
        "claims": [_claim("The mill burned in 1902.", mill, "burned in 1902")],
    })  # fmt: skip


def test_search_finds_stemmed_words_with_the_fallbacks_records(vault: Any) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    hits = search.search("Which way is the river flowing?", k=5)
    assert hits and all(type(h) is Hit for h in hits)
    first = hits[0]
    assert first.text == "The river flows north." and first.page == "river"  # "flowing" ~ "flows"
    assert (first.page_title, first.trust, first.section) == ("The river", "trusted", "Overview")
    (ev,) = first.evidence
    assert type(ev) is EvidenceRef
    assert (ev.source_id, ev.source_name, ev.quote) == (ids["river"], "River notes", ev.quote)
    assert RIVER[ev.start : ev.end] == ev.quote == "The river flows north"
    assert ev.location == "line 1"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_trust_and_page_filters(vault: Any) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    assert [h.page for h in search.search("when did the mill burn")][:1] == ["mill"]
    assert all(h.trust == "trusted" for h in search.search("mill burned", min_trust="trusted"))
    assert "mill" not in {h.page for h in search.search("mill burned", min_trust="trusted")}
    terms = query_terms("river mill")
    on_river = search.claims(terms, ("trusted",), 10, page="river")
    assert on_river and all(cid for cid, _ in on_river)
    assert {cid for cid, _ in search.claims(terms, ("untrusted",), 10, page="river")} == set()
    assert [slug for slug, _ in search.pages(query_terms("old mill history"), 5)] == ["mill"]
    with pytest.raises(ValueError, match="unknown trust tier"):
        search.search("river", min_trust="'; DROP TABLE x; --")


def test_new_claims_are_found_as_soon_as_their_batch_commits(vault: Any) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    assert search.search("salmon autumn spawning")[0].page == "river"
    assert search.search("trout") == []
    _apply(storage, 3, {
        "op": "add_claims", "page": "river",
        "claims": [_claim("Trout are strange here.", ids["river"], "A strange line")],
    })  # fmt: skip
    assert search.search("trout")[0].text == "Trout are strange here."
    with psycopg.connect(storage.pool.conninfo) as conn:
        names = {
            r[0]
            for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'v_main'")
        }
        assert {"claims_tsv", "pages_tsv"} <= names
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(
            r[0] for r in conn.execute(
                "EXPLAIN SELECT id FROM v_main.claims WHERE tsv @@ plainto_tsquery('english', 'trout')"
            )
        )  # fmt: skip
        assert "claims_tsv" in plan


@pytest.mark.parametrize(
    "query",
    [
        TRAP,
        "river' | !north",
        "river & ! mill",
        "flow:* <-> north",
        "'); DROP TABLE v_main.claims; --",
        '"river" OR "mill"',
        "(river | mill) & !!salmon",
        "river\\ %s {s} $1 ?",
    ],
)
def test_tsquery_syntax_quotes_and_sql_in_a_query_are_plain_words(vault: Any, query: str) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    words = " ".join(query_terms(query))
    found = [h.claim_id for h in search.search(query)]
    assert found == [h.claim_id for h in search.search(words)]  # the words, and only them
    # the terms straight to the engine, syntax and all: read as words, never as a tsquery
    raw = query.split()
    assert isinstance(search.claims(raw, ("untrusted", "semi-trusted", "trusted"), 10), list)
    assert isinstance(search.pages(raw, 5), list)
    assert search.search("salmon")[0].page == "river"  # nothing dropped or changed
    with psycopg.connect(storage.pool.conninfo) as conn:
        assert conn.execute("SELECT count(*) FROM v_main.claims").fetchone()[0] == 4


def test_a_claim_quoting_tsquery_syntax_is_found_by_its_words(vault: Any) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    hits = search.search("strange line drop table")
    assert hits[0].text == f"Strange: {TRAP}"
    assert hits[0].evidence[0].quote == TRAP


def test_bad_input_is_refused_with_the_fix(vault: Any) -> None:
    storage, search, ids = vault
    _fill(storage, ids)
    with pytest.raises(ConflictError, match="NUL"):
        search.claims(["river\x00"], ("trusted",), 5)
    with pytest.raises(ConflictError, match="not a vault name"):
        PgFullText(storage, "main; DROP SCHEMA v_main")
    assert search.search("") == [] and search.search("the of and") == []
    assert sha256_hex(MILL) == ids["mill"]


def test_a_rare_word_weighs_more_than_a_common_one(vault: Any) -> None:
    storage, search, ids = vault
    river = ids["river"]
    common = [
        _claim(f"The river is {word}, a {word} river.", river, "The river flows north")
        for word in ("wide", "long", "cold", "deep", "slow", "brown", "old", "calm")
    ]
    rare = _claim("Salmon come back in autumn.", river, "Salmon return to the river")
    _apply(storage, 1, {
        "op": "create_page", "slug": "notes", "title": "Notes", "summary": "Field notes",
        "claims": [*common, rare],
    })  # fmt: skip
    hits = search.search("river salmon")
    assert (
        hits[0].text == "Salmon come back in autumn."
    )  # 1 claim of 9 says salmon; 8 say river, twice
    assert len(hits) == 9
