"""ask (W7, W8): the user never sees an uncited or foreign-cited sentence; trust and budget hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.ask import Asker, render_answer
from affidavit.ask.packing import pack
from affidavit.cli import main
from affidavit.inbox import approve, get_plan, propose
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.retrieval.search import Retriever
from affidavit.retrieval.tokens import count_tokens
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

from .conftest import SAMPLES, add_text, claim, make_plan

TRUSTED = (
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    "The present tower was designed by James Douglass and lit in 1882.\n"
)
RUMOUR = "The Eddystone Lighthouse was painted bright purple by pranksters in 1999.\n"


@pytest.fixture
def wiki(vault: Vault) -> dict[str, str]:
    good = add_text(vault, "lighthouse.md", TRUSTED, "trusted")
    bad = add_text(vault, "rumour.md", RUMOUR, "untrusted")
    plan = make_plan(
        vault,
        {
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
                    "The lighthouse was painted purple by pranksters in 1999.",
                    bad,
                    "The Eddystone Lighthouse was painted bright purple by pranksters in 1999",
                ),
            ],
        },
    )
    result = approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t")
    designed, painted = result.claims[1], result.claims[2]
    return {"designed": designed, "painted": painted, "source": good}


def scripted(reply: Any) -> ScriptedProvider:
    def answer(request: ModelRequest) -> str:
        text = request.messages[-1].content
        nonce = text.split("<<<CLAIMS ", 1)[1].split(">>>", 1)[0]
        return json.dumps(reply(nonce, text))

    return ScriptedProvider(replies=[answer])


def test_foreign_and_missing_citations_never_reach_the_user(
    vault: Vault, wiki: dict[str, str]
) -> None:
    def reply(nonce: str, text: str) -> dict[str, Any]:
        return {
            "nonce": nonce,
            "sentences": [
                {
                    "text": "James Douglass designed the present tower.",
                    "claims": [wiki["designed"]],
                },
                {"text": "It was built of solid gold.", "claims": []},
                {"text": "It was sold to Italy.", "claims": ["c-0123456789abcdef"]},
                {"text": "It glows at night.", "claims": [wiki["designed"], "c-aaaaaaaaaaaaaaaa"]},
            ],
            "short_answer": {"text": "Queen Victoria", "claims": ["c-bbbbbbbbbbbbbbbb"]},
        }

    answer = Asker(vault, scripted(reply)).ask("Who designed the Eddystone Lighthouse tower?")
    shown = render_answer(answer)
    assert answer.verdict == "answered"
    assert "James Douglass designed the present tower." in shown
    for invented in ("solid gold", "sold to Italy", "glows at night", "Queen Victoria"):
        assert invented not in shown.split("(4 sentence(s) removed")[0]
    assert "4 sentence(s) removed by the citation check" in shown
    assert "cites no claim" in shown and "which it was not given" in shown
    # the footnote carries the verbatim quote from the source
    assert "“The present tower was designed by James Douglass and lit in 1882”" in shown
    row = vault.db.execute("SELECT verdict, dropped FROM questions").fetchone()
    assert tuple(row) == ("answered", 4)


def test_an_answer_with_only_bad_citations_is_not_in_the_wiki(
    vault: Vault, wiki: dict[str, str]
) -> None:
    def reply(nonce: str, text: str) -> dict[str, Any]:
        return {"nonce": nonce, "sentences": [{"text": "Invented.", "claims": []}]}

    answer = Asker(vault, scripted(reply)).ask("Who designed the tower?")
    assert answer.verdict == "not_in_wiki"
    assert render_answer(answer).startswith("Not in the wiki")


def test_claims_below_min_trust_never_reach_the_model(vault: Vault, wiki: dict[str, str]) -> None:
    seen: list[str] = []

    def reply(nonce: str, text: str) -> dict[str, Any]:
        seen.append(text)
        return {"nonce": nonce, "not_in_wiki": True}

    Asker(vault, scripted(reply)).ask("Was the lighthouse painted purple?", min_trust="trusted")
    claims_sent = seen[0].split("\n\nQuestion:")[0]
    assert "purple" not in claims_sent and wiki["painted"] not in claims_sent
    Asker(vault, scripted(reply)).ask("Was the lighthouse painted purple?", min_trust="untrusted")
    assert wiki["painted"] in seen[1]


def test_not_in_the_wiki_when_nothing_is_retrieved(vault: Vault, wiki: dict[str, str]) -> None:
    provider = ScriptedProvider(replies=[])
    answer = Asker(vault, provider).ask("What is the capital of Mongolia?")
    assert answer.verdict == "not_in_wiki" and provider.requests == []


def test_extractive_answer_with_short_span(vault: Vault, wiki: dict[str, str]) -> None:
    answer = Asker(vault, None).ask("When was the present tower of the Eddystone Lighthouse lit?")
    assert answer.verdict == "answered"
    assert answer.short_answer is not None and answer.short_answer.text == "1882"
    assert answer.short_answer.claims == [wiki["designed"]]


def test_budget_holds_on_a_wiki_of_100k_claims(vault: Vault, wiki: dict[str, str]) -> None:
    source = wiki["source"]
    rows = [
        (
            f"c-{n:016x}",
            "eddystone",
            "Bulk",
            10 + n,
            f"Lighthouse fact {n}: the keeper logged storm {n % 97} and lamp {n % 13} at the rocks.",
            "active",
            "trusted",
            "bulk",
            "2026-11-30T09:00:00Z",
            "[]",
        )
        for n in range(100_000)
    ]
    vault.db.execute("BEGIN")
    vault.db.executemany(
        "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
        "created_at, derived_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    span = SourceStore(vault).text(source)[0:10]  # a quote is its source's words (m021)
    vault.db.executemany(
        'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
        "VALUES (?, 0, ?, ?, 0, 10, 'line 2')",
        [(r[0], source, span) for r in rows],
    )
    vault.db.execute("COMMIT")
    hits = Retriever(vault.db).search("keeper storm lamp rocks lighthouse", k=200)
    assert len(hits) == 200
    for budget in (300, 1000, 3000):
        packed = pack(hits, budget, "n" * 24)
        assert packed.tokens <= budget
        assert packed.tokens == count_tokens(packed.text)
        assert 0 < len(packed.hits) < 200
    seen: list[str] = []

    def reply(nonce: str, text: str) -> dict[str, Any]:
        seen.append(text)
        return {"nonce": nonce, "not_in_wiki": True}

    Asker(vault, scripted(reply)).ask("What did the keeper log about storms at the rocks?")
    assert count_tokens(seen[0].split("\n\nQuestion:")[0]) <= vault.config.context_tokens


def test_save_proposes_a_synthesis_page(vault: Vault, wiki: dict[str, str]) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "--vault",
            str(vault.root),
            "ask",
            "Who designed the Eddystone Lighthouse tower?",
            "--save",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "answered" and data["saved_plan"]
    record = get_plan(vault, data["saved_plan"])
    op = record.plan.operations[0]
    assert op.op == "create_page" and op.claims[0].derived_from == [wiki["designed"]]
    assert record.status == "pending"
    approve(vault, record.id, None, "t")
    derived = vault.db.execute(
        "SELECT derived_from FROM claims WHERE page_slug = ?", (op.slug,)
    ).fetchone()[0]
    assert json.loads(derived) == [wiki["designed"]]


def test_cli_search_and_ask(vault: Vault, wiki: dict[str, str]) -> None:
    runner = CliRunner()
    base = ["--vault", str(vault.root)]
    out = runner.invoke(main, [*base, "search", "Douglass tower", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)[0]["claim_id"] == wiki["designed"]
    out = runner.invoke(main, [*base, "ask", "Who designed the present tower?"])
    assert out.exit_code == 0 and "James Douglass" in out.output and "[^1]:" in out.output
    out = runner.invoke(
        main, [*base, "chat"], input="Who designed the present tower?\nWhen was it lit?\n\n"
    )
    assert out.exit_code == 0 and "1882" in out.output
    assert (
        vault.db.execute(
            "SELECT count(DISTINCT conversation) FROM questions WHERE conversation IS NOT NULL"
        ).fetchone()[0]
        == 1
    )


def test_cli_reindex_then_dense_search(vault: Vault, wiki: dict[str, str]) -> None:
    pytest.importorskip("onnxruntime")
    runner = CliRunner()
    base = ["--vault", str(vault.root)]
    out = runner.invoke(main, [*base, "reindex", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["embedded"] == 3
    again = json.loads(runner.invoke(main, [*base, "reindex", "--json"]).output)
    assert again["embedded"] == 0 and again["reused"] == 3
    # a question sharing no word with the claim, found by meaning
    out = runner.invoke(main, [*base, "search", "Which engineer created the beacon?", "--json"])
    ids = [hit["claim_id"] for hit in json.loads(out.output)]
    assert wiki["designed"] in ids


def test_a_context_entry_repeating_a_page_claim_is_retrieved_once_as_the_page_claim(
    tmp_path: Path,
) -> None:
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.retrieval.search import Retriever
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(SAMPLES / "sotu" / "1790-washington.md")], "trusted"
    )
    twins = vault.db.execute(
        "SELECT count(*) FROM claims a JOIN claims b ON a.text = b.text "
        "WHERE a.page_slug = '' AND b.page_slug != '' AND a.text LIKE '%abundant fruits%'"
    ).fetchone()[0]
    assert twins == 1  # the engine records the sentence on a page and in context.md
    hits = Retriever(vault.db).search("What have the abundant fruits of another year done?", k=5)
    fruits = [h for h in hits if "abundant fruits" in h.text]
    assert len(fruits) == 1 and fruits[0].page != ""
    vault.close()


def test_an_unsure_extractive_answer_prints_only_cited_checked_claims_it_was_given(
    vault: Vault, wiki: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # no claim holds "granite": the answerer is unsure and fills the answer with the retrieved
    # claims that hold enough of the question; each is cited, support-checked, of the tier asked
    # (the fill here scores far below the pick, which brevity would leave out: kept to check it)
    from affidavit.ask import brevity

    monkeypatch.setattr(brevity, "BRIEF", False)
    answer = Asker(vault, None).ask(
        "How far south of Rame Head is the granite Eddystone tower?", min_trust="trusted"
    )
    assert answer.verdict == "answered"
    assert len(answer.sentences) == 2 and not answer.dropped
    given = {h.claim_id for h in answer.given}
    assert all(len(s.claims) == 1 and s.claims[0] in given for s in answer.sentences)
    assert wiki["designed"] in {s.claims[0] for s in answer.sentences}
    assert wiki["painted"] not in given
    assert all(v.verdict == "supported" for v in answer.support)
    rendered = render_answer(answer)
    assert "[^1]" in rendered and "[^2]" in rendered
