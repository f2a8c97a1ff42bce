"""``POST …/ask`` on a PostgreSQL vault (issue 26): the same answerer and checks as on SQLite,
over the daemon's API with the same tokens and roles; every citation's quote is its source's own
words; "Not in the wiki" when the claims don't answer; a token of another vault refused;
questions shaped like SQL or tsquery read as plain text; an answer's nonce never a plan's; the
answer log stored; and the same answers as a SQLite vault holding the same claims."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from affidavit.config import Config
from affidavit.inbox import approve, propose
from affidavit.service import vaults as sqlite_service
from affidavit.service.models import AskRequest
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

pytestmark = pytest.mark.xdist_group("postgres")

psycopg = pytest.importorskip("psycopg")

from affidavit.server.pg_app import create_pg_app  # noqa: E402
from affidavit.server.pg_registry import PgRegistry  # noqa: E402
from affidavit.service.pg_vaults import PgVault  # noqa: E402
from affidavit.storage.pg_ask import MENTIONS_COUNTED, PgAskWiki  # noqa: E402
from affidavit.storage.postgres import PostgresStorage  # noqa: E402

from .pg_cluster import drop_vaults  # noqa: E402

NOW = "2026-11-30T09:00:00Z"
LIGHTHOUSE = (
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    "The present tower was designed by James Douglass and lit in 1882.\n"
    "Its light can be seen 17 nautical miles away.\n"
)
RUMOUR = "The Eddystone Lighthouse was painted bright purple by pranksters in 1999.\n"
RULES = (
    "The harbour has three rules for visiting boats.\n"
    "The first is to moor only at the east quay.\n"
    "The second is to report to the harbour master on arrival.\n"
    "The third is to leave before the evening tide.\n"
)
FERRY = "The ferry crossed the strait twice a day until 1950.\n"
TRAP = "x'); DROP TABLE v_team.claims; -- & | ! :* <-> \\ %s {s} $$"


def page(good: str, bad: str) -> dict[str, Any]:
    """The one page both backends hold: three trusted claims and an untrusted one."""
    return {
        "op": "create_page",
        "slug": "eddystone",
        "title": "Eddystone Lighthouse",
        "summary": "The Eddystone Lighthouse stands on the Eddystone Rocks",
        "claims": [
            claim(
                "The Eddystone Lighthouse stands 14 kilometres south of Rame Head.",
                good,
                "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south "
                "of Rame Head",
            ),
            claim(
                "Its present tower was designed by James Douglass and lit in 1882.",
                good,
                "The present tower was designed by James Douglass and lit in 1882",
            ),
            claim(
                "Its light can be seen 17 nautical miles away.",
                good,
                "Its light can be seen 17 nautical miles away",
            ),
            claim(
                "The lighthouse was painted purple by pranksters in 1999.",
                bad,
                "The Eddystone Lighthouse was painted bright purple by pranksters in 1999",
            ),
        ],
    }


def rules_page(source: str) -> dict[str, Any]:
    """A page of an enumeration: its introduction, then its items in the source's order."""
    lines = RULES.splitlines()
    return {
        "op": "create_page",
        "slug": "harbour",
        "title": "Harbour rules",
        "summary": lines[0],
        "claims": [claim(line, source, line.rstrip(".")) for line in lines],
    }


def apply_on_pg(vault: PgVault, plan_op: dict[str, Any]) -> None:
    plan = {"nonce": vault.new_nonce(1).nonce, "operations": [plan_op]}
    out = vault.propose(plan, "ann", "cli")
    if out.status == "pending":
        vault.approve(out.plan_id, None, "ann")
    assert vault.counts()["claims"] >= len(plan_op["claims"])


class Team:
    """Vaults team (the lighthouse) and other (a ferry) in one database, served in-process."""

    def __init__(self, url: str) -> None:
        drop_vaults(url)
        storage = PostgresStorage(url)
        try:
            for name in ("team", "other"):
                storage.create_vault(name, "nobody-here")
            add = storage.add_source
            self.good = add("team", LIGHTHOUSE.encode(), origin="/test/lighthouse.md",
                            name="lighthouse.md", added_at=NOW, media_type="text/markdown",
                            trust="trusted")  # fmt: skip
            self.bad = add("team", RUMOUR.encode(), origin="/test/rumour.md", name="rumour.md",
                           added_at=NOW, media_type="text/markdown", trust="untrusted")  # fmt: skip
            self.rules = add("team", RULES.encode(), origin="/test/rules.md", name="rules.md",
                             added_at=NOW, media_type="text/markdown", trust="trusted")  # fmt: skip
            ferry = add("other", FERRY.encode(), origin="/f", name="ferry.md", added_at=NOW)
        finally:
            storage.close()
        self.registry = PgRegistry.open(url, Config())
        self.client = TestClient(create_pg_app(self.registry))
        self.client.__enter__()
        self.team: PgVault = self.registry.get("team").service
        other: PgVault = self.registry.get("other").service
        apply_on_pg(self.team, page(self.good, self.bad))
        apply_on_pg(self.team, rules_page(self.rules))
        ferry_claim = claim("The ferry crossed the strait until 1950.", ferry,
                            "The ferry crossed the strait twice a day until 1950")  # fmt: skip
        apply_on_pg(other, {"op": "create_page", "slug": "ferry", "title": "Ferry",
                            "summary": "The ferry", "claims": [ferry_claim]})  # fmt: skip
        self.tokens = {
            role: self.team.create_token(role, timedelta(days=1), role, "test")[1]
            for role in ("read", "propose", "approve")
        }
        self.other_read = other.create_token("read", timedelta(days=1), "x", "test")[1]

    def close(self) -> None:
        self.client.__exit__(None, None, None)

    def ask(self, question: str, token: str | None = "read", **more: Any) -> Any:
        secret = self.tokens.get(token, token) if token else None
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        body = {"question": question, **more}
        return self.client.post("/v1/vaults/team/ask", headers=headers, json=body)

    def rows(self, query: str, *params: Any) -> list[dict[str, Any]]:
        with self.team.storage.pool.connection() as conn:
            return list(conn.execute(query, params).fetchall())


@pytest.fixture(scope="module")
def wiki(pg_url: str) -> Iterator[Team]:
    made = Team(pg_url)
    yield made
    made.close()


def test_an_answer_cites_claims_whose_quotes_are_the_sources_words(wiki: Team) -> None:
    got = wiki.ask("Who designed the present tower of the Eddystone Lighthouse?")
    assert got.status_code == 200, got.text
    answer = got.json()
    assert answer["verdict"] == "answered"
    assert "James Douglass" in " ".join(s["text"] for s in answer["answer"])
    assert answer["citations"] and answer["provider"] == "extractive"
    texts = {wiki.good: LIGHTHOUSE, wiki.bad: RUMOUR}
    for hit in answer["citations"]:
        for e in hit["evidence"]:
            assert texts[e["source_id"]][e["start"] : e["end"]] == e["quote"]
            assert e["quote"] in answer["markdown"]
    cited = {c for s in answer["answer"] for c in s["claims"]}
    assert cited <= {h["claim_id"] for h in answer["citations"]}
    assert all(s["verdict"] == "supported" for s in answer["support"] if s["text"] in {
        a["text"] for a in answer["answer"]})  # fmt: skip
    (logged,) = wiki.rows(
        "SELECT * FROM v_team.questions WHERE question = %s",
        "Who designed the present tower of the Eddystone Lighthouse?",
    )
    assert logged["verdict"] == "answered" and logged["provider"] == "extractive"
    assert all(c in logged["retrieved"] for c in cited)


def test_an_enumeration_is_answered_whole(wiki: Team) -> None:
    """The claims that follow the introduction in its source (``PgAskWiki.following``)."""
    answer = wiki.ask("What are the three rules for visiting boats?").json()
    assert [s["text"] for s in answer["answer"]] == RULES.splitlines()


def test_not_in_the_wiki_when_no_claim_answers(wiki: Team) -> None:
    answer = wiki.ask("What is the capital of Mongolia?").json()
    assert answer["verdict"] == "not_in_wiki" and answer["answer"] == []
    assert answer["unknown_names"] == ["Mongolia"]
    assert answer["markdown"].startswith("Not in the wiki")
    assert answer["citations"] == [] and answer["short_answer"] is None


def test_trust_filters_what_an_answer_may_cite(wiki: Team) -> None:
    question = "Who painted the lighthouse purple in 1999?"
    (rumour,) = wiki.rows("SELECT id FROM v_team.claims WHERE trust = 'untrusted'")
    trusted = wiki.ask(question, min_trust="trusted").json()
    assert rumour["id"] not in trusted["claims_given"]
    assert all(h["trust"] == "trusted" for h in trusted["citations"])
    anyone = wiki.ask(question).json()
    assert rumour["id"] in anyone["claims_given"]


def test_tokens_and_roles_are_the_sqlite_routes(wiki: Team) -> None:
    question = "Who designed the present tower?"
    assert wiki.ask(question, token=None).status_code == 401
    assert wiki.ask(question, token="not-a-token").status_code == 401
    other = wiki.ask(question, token=wiki.other_read)  # a valid token of another vault
    assert other.status_code == 403, other.text
    assert "Douglass" not in other.text
    ok = wiki.client.post(
        "/v1/vaults/other/ask",
        headers={"Authorization": f"Bearer {wiki.other_read}"},
        json={"question": question},
    )
    assert ok.status_code == 200 and "Douglass" not in ok.text  # its own vault's claims only
    saving = wiki.ask(question, save=True)  # read may ask, not save
    assert saving.status_code == 403 and "propose" in saving.json()["error"]["message"]
    assert wiki.ask("").status_code == 422
    assert wiki.ask("x" * 2001).status_code == 422


def test_a_saved_answer_is_the_callers_plan_in_the_inbox(wiki: Team) -> None:
    got = wiki.ask("Who designed the present tower?", token="propose", save=True)
    assert got.status_code == 200, got.text
    plan_id = got.json()["saved_plan"]
    assert plan_id and "inbox" in got.json()["save_message"]
    inbox = wiki.client.get(
        "/v1/vaults/team/plans", headers={"Authorization": f"Bearer {wiki.tokens['read']}"}
    ).json()
    (shown,) = [p for p in inbox if p["id"] == plan_id]
    assert shown["status"] == "pending" and shown["proposer"] == "agent"  # a token's waits (W13)
    assert shown["author"].startswith("token:") and shown["origin"].startswith("ask:")


@pytest.mark.parametrize(
    "question",
    [
        TRAP,
        "Who designed it'); DELETE FROM v_team.claims; --",
        "tower & !lit | 1882:* <-> 'designed'",
        "Douglass\\' OR 1=1 -- %s %(x)s {s}",
        "What is 'The Eddystone' ; SELECT pg_sleep(5) ;",
    ],
)
def test_questions_shaped_like_sql_are_plain_text(wiki: Team, question: str) -> None:
    before = wiki.rows("SELECT count(*) AS n FROM v_team.claims")[0]["n"]
    got = wiki.ask(question)
    assert got.status_code == 200, got.text
    assert got.json()["question"] == question
    assert wiki.rows("SELECT count(*) AS n FROM v_team.claims")[0]["n"] == before
    logged = wiki.rows("SELECT question FROM v_team.questions WHERE question = %s", question)
    assert [r["question"] for r in logged] == [question]


def test_an_answers_nonce_is_never_a_plans(wiki: Team) -> None:
    """The nonce fencing an answer's claims is shown to the model that answers; a plan that
    presents it (a model that was told it, or anyone who read the log) is refused."""
    wiki.ask("When was the present tower lit?")
    (row,) = wiki.rows(
        "SELECT nonce FROM v_team.nonces WHERE purpose = 'ask' ORDER BY issued_at DESC, nonce "
        "LIMIT 1"
    )
    text = "Its light can be seen 17 nautical miles away."
    op = {"op": "create_page", "slug": "light", "title": "Light", "summary": text,
          "claims": [claim(text, wiki.good, "Its light can be seen 17 nautical miles away")]}  # fmt: skip
    got = wiki.client.post(
        "/v1/vaults/team/plans",
        headers={"Authorization": f"Bearer {wiki.tokens['propose']}"},
        json={"plan": {"nonce": row["nonce"], "operations": [op]}},
    )
    assert got.status_code in (400, 422), got.text
    assert "never issued" in got.text
    assert wiki.rows("SELECT used_by FROM v_team.nonces WHERE nonce = %s", row["nonce"]) == [
        {"used_by": None}
    ]


def test_the_wikis_words_on_postgresql(wiki: Team) -> None:
    words = PgAskWiki(wiki.team.storage, "team")
    assert words.mentions("Douglass") == 1 and words.mentions("Mongolia") == 0
    assert words.mentions("Eddystone Lighthouse") == 1  # the phrase, in order
    assert words.mentions("lighthouse") == 2
    assert words.mentions("Lighthouse Eddystone") == 0
    assert words.mentions("the") == MENTIONS_COUNTED  # a stopword: never unknown, never rare
    assert words.mentions(TRAP) == 0
    assert words.misspelt("Douglasss") and words.misspelt("Lighthuose")  # the wiki's words
    assert not words.misspelt("Zorblaxian") and not words.misspelt("Mongolia")
    assert words.claims_stored() >= 8
    after_intro = words.following(wiki.rules, RULES.index("\n"), len(RULES), 10)
    assert [h.text for h in words.hits(after_intro)] == RULES.splitlines()[1:]
    assert len(words.following(wiki.rules, 0, len(RULES), 2)) == 2
    assert words.following(wiki.rules, len(RULES), len(RULES) + 600, 10) == []
    assert words.following(TRAP, 0, 10**6, 10) == []
    assert words.source_texts([wiki.good, "0" * 64]) == {wiki.good: LIGHTHOUSE}


def test_an_altered_source_text_is_never_quoted_from(wiki: Team, pg_url: str) -> None:
    storage = PostgresStorage(pg_url)
    try:
        from affidavit.ask.texts import forget

        forget()  # texts kept by their hash: this one must be read (and re-hashed) again
        with storage.pool.connection() as conn:
            conn.execute(
                "UPDATE v_other.sources SET text = replace(text, '1950', '1990')",
            )
        words = PgAskWiki(storage, "other")
        (source,) = [r["id"] for r in conn_rows(storage, "SELECT id FROM v_other.sources")]
        assert words.source_texts([source]) == {}
    finally:
        storage.close()


def conn_rows(storage: PostgresStorage, query: str) -> list[dict[str, Any]]:
    with storage.pool.connection() as conn:
        return list(conn.execute(query).fetchall())


# --- the same answers as SQLite ---------------------------------------------------------------

QUESTIONS = [
    "Who designed the present tower of the Eddystone Lighthouse?",
    "When was the present tower lit?",
    "How far away can its light be seen?",
    "How far is the Eddystone Lighthouse from Rame Head?",
    "What is the capital of Mongolia?",
    "Who painted the lighthouse purple?",
    "Is the Eddystne Lighthouse tall?",
    "What are the three rules for visiting boats?",
    "Who must visiting boats report to?",
]


@pytest.fixture
def sqlite_twin(vault: Vault) -> Vault:
    good = add_text(vault, "lighthouse.md", LIGHTHOUSE, "trusted")
    bad = add_text(vault, "rumour.md", RUMOUR, "untrusted")
    rules = add_text(vault, "rules.md", RULES, "trusted")
    for op in (page(good, bad), rules_page(rules)):
        plan = make_plan(vault, op)
        result = approve(vault, propose(vault, plan, "ann", "cli").plan_id, None, "ann")
        assert len(result.claims) == 4
    return vault


def _same(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer with each claim id replaced by its claim's text (ids are each vault's own)."""
    text_of = {h["claim_id"]: h["text"] for h in answer["citations"]}

    def named(ids: list[str]) -> list[str]:
        return [text_of.get(c, "?") for c in ids]

    markdown = re.sub(r"claim `[^`]+`", "claim", answer["markdown"])
    return {
        "verdict": answer["verdict"],
        "answer": [(s["text"], named(s["claims"])) for s in answer["answer"]],
        "short": answer["short_answer"] and answer["short_answer"]["text"],
        # the sentences the extractive answerer weighed, in the order retrieval ranked them:
        # ts_rank and BM25 may order two near-equal claims differently
        "support": sorted((s["text"], s["verdict"]) for s in answer["support"]),
        "quotes": [[e["quote"] for e in h["evidence"]] for h in answer["citations"]],
        "closest": answer["closest_pages"],
        "unknown": answer["unknown_names"],
        "markdown": markdown,
    }


@pytest.mark.parametrize("question", QUESTIONS)
def test_answers_equal_the_sqlite_backends(wiki: Team, sqlite_twin: Vault, question: str) -> None:
    on_sqlite = sqlite_service.ask(sqlite_twin, AskRequest(question=question), None, "ann")
    on_pg = wiki.ask(question)
    assert on_pg.status_code == 200, on_pg.text
    assert _same(on_pg.json()) == _same(on_sqlite.model_dump(mode="json"))


def test_a_nul_in_a_question_is_refused_not_a_server_error(wiki: Team) -> None:
    got = wiki.ask("Who designed\x00 the present tower?")
    assert got.status_code in (409, 422), got.text
    assert "NUL" in got.text or "control" in got.text.lower()


def test_the_kept_words_follow_a_new_claim(wiki: Team) -> None:
    """The words a misspelling is looked for among are kept until a claim is added."""
    other = PgAskWiki(wiki.team.storage, "other")
    assert not other.misspelt("Zorblaxian")
    assert not other.misspelt("Zorblaxian")  # kept: the same answer
    text = "The Zorblaxia sails at noon."
    source = wiki.team.storage.add_source(
        "other", text.encode(), origin="/z", name="z.md", added_at=NOW, trust="trusted"
    )
    vault: PgVault = wiki.registry.get("other").service
    apply_on_pg(vault, {"op": "create_page", "slug": "zorblaxia", "title": "Zorblaxia",
                        "summary": text, "claims": [claim(text, source, text[:-1])]})  # fmt: skip
    assert other.misspelt("Zorblaxian")  # one letter from a word the wiki now holds
    assert PgAskWiki(wiki.team.storage, "team").misspelt("Zorblaxian") is False  # its own words


def test_a_models_uncited_or_foreign_sentences_never_reach_the_user(wiki: Team) -> None:
    """The model's reply goes through the same citation and support checks on PostgreSQL; its
    call is logged in the vault's model_calls."""
    import json

    from affidavit.ask import Asker
    from affidavit.providers.base import ModelRequest
    from affidavit.providers.scripted import ScriptedProvider

    (designed,) = wiki.rows("SELECT id FROM v_team.claims WHERE text LIKE '%%Douglass%%'")

    def reply(request: ModelRequest) -> str:
        text = request.messages[-1].content
        nonce = text.split("<<<CLAIMS ", 1)[1].split(">>>", 1)[0]
        return json.dumps({"nonce": nonce, "sentences": [
            {"text": "James Douglass designed the present tower.", "claims": [designed["id"]]},
            {"text": "It was built of solid gold.", "claims": []},
            {"text": "It was sold to Italy.", "claims": ["c-0123456789abcdef"]},
            {"text": "Douglass painted it purple.", "claims": [designed["id"]]},
        ]})  # fmt: skip

    calls = len(wiki.rows("SELECT id FROM v_team.model_calls"))
    wiki_reads = PgAskWiki(wiki.team.storage, "team", Config())
    answer = Asker(wiki_reads, ScriptedProvider(replies=[reply])).ask(
        "Who designed the present tower?"
    )
    assert [s.text for s in answer.sentences] == ["James Douglass designed the present tower."]
    reasons = {d.text: d.reason for d in answer.dropped}
    assert reasons["It was built of solid gold."] == "cites no claim"
    assert "not given" in reasons["It was sold to Italy."]
    assert "Douglass painted it purple." in reasons
    assert len(wiki.rows("SELECT id FROM v_team.model_calls WHERE purpose = 'ask'")) == calls + 1


def test_pages_named_by_their_title_on_postgresql(wiki: Team) -> None:
    """The how-do-I rule's page lookup (``ask.sections.title_instructions``) on PostgreSQL:
    titles by their words, a page's active claims in order, another vault's page never, and
    a term shaped like tsquery or SQL read as words."""
    pages = PgAskWiki(wiki.team.storage, "team")
    assert ("eddystone", "Eddystone Lighthouse") in pages.titled_pages(["lighthouse"], 20)
    assert [s for s, _ in pages.titled_pages(["harbour", "rules"], 20)] == ["harbour"]
    assert pages.titled_pages(["ferry"], 20) == []  # the other vault's page
    assert pages.titled_pages([TRAP], 20) == [] and pages.titled_pages([], 20) == []
    ids = pages.page_claims("harbour", 400)
    assert [h.text for h in pages.hits(ids)] == RULES.splitlines()
    assert pages.page_claims(TRAP, 400) == []
    assert wiki.rows("SELECT count(*) AS n FROM v_team.claims")[0]["n"] >= 8


def test_a_speakers_own_page_on_postgresql(wiki: Team) -> None:
    """``ask.speakers`` on PostgreSQL: how many sources a page's active claims quote (a speech's
    own page quotes one), and the question kept to the page whose title names who says."""
    from affidavit.ask.speakers import speakers

    pages = PgAskWiki(wiki.team.storage, "team")
    assert pages.page_sources("harbour") == 1
    assert pages.page_sources("eddystone") == 2  # the rumour's source too
    assert pages.page_sources("ferry") == 0  # the other vault's page
    assert speakers(pages, "What did Harbour say about boats?") == {"Harbour": ["harbour"]}
    assert speakers(pages, "What did Eddystone say about its light?") == {}  # gathered


def test_a_cited_claim_a_pending_plan_would_retract_is_said_on_postgresql(wiki: Team) -> None:
    """As on SQLite (tests/test_ask_pending.py): the answer names the pending plan."""
    question = "Who designed the present tower of the Eddystone Lighthouse?"
    first = wiki.ask(question).json()
    assert first["pending_changes"] == []
    cited = first["answer"][0]["claims"][0]
    plan = {
        "nonce": wiki.team.new_nonce(1).nonce,
        "operations": [{"op": "retract_claim", "claim": cited, "reason": "checking the date"}],
    }
    proposed = wiki.team.propose(plan, "ann", "cli")
    assert proposed.status == "pending"
    try:
        answer = wiki.ask(question).json()
        assert answer["pending_changes"] == [
            {"claim": cited, "plan": proposed.plan_id, "op": "retract_claim", "origin": "cli"}
        ]
        assert f"plan {proposed.plan_id[:12]} would retract" in answer["markdown"]
    finally:
        wiki.team.reject(proposed.plan_id, "test over", "ann")
    assert wiki.ask(question).json()["pending_changes"] == []
