"""Citations by sentence (issue 10, part 2; SPEC §3 W1, W3).

Evidence may cite a host-numbered sentence (``{"source", "sentence"}``) or a short range
(``"sentences": [first, last]``), optionally narrowed by a ``quote`` inside it; the host fills in
the verbatim text and offsets. Malformed forms fail the whole plan.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import PlanValidationError
from affidavit.inbox import get_plan, plan_id_of, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.plan.compact import compact_plan_schema
from affidavit.plan.schema import parse_plan, plan_json_schema
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.sources.sentences import SourceSentences, sentences_of
from affidavit.sources.store import SourceStore
from affidavit.store.apply import claim_id
from affidavit.vault import Vault

from .conftest import SAMPLES, add_text, make_plan, snapshot

DOC = (
    "# Lighthouse notes\n\n"
    "The first tower on the rock was built of wood in 1698. It burned down in 1755.\n\n"
    "The present tower was designed by James Douglass and lit in 1882. "
    "Its lamp can be seen for eighteen nautical miles.\n"
)
FIRST = "The first tower on the rock was built of wood in 1698."
THIRD = "The present tower was designed by James Douglass and lit in 1882."


def page(
    source: str, *evidence: dict[str, Any], text: str = "The tower dates from 1882."
) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": "lighthouse",
        "title": "Lighthouse",
        "summary": "The lighthouse on the rock.",
        "claims": [{"text": text, "evidence": [{"source": source, **e} for e in evidence]}],
    }


def admitted_evidence(vault: Vault, plan: dict[str, Any]) -> list[Any]:
    proposal = propose(vault, plan, "test", "test")
    (op,) = proposal.admission.ops
    (claim,) = op.claims
    return [claim, *claim.evidence]


def test_a_sentence_citation_is_admitted_with_the_sources_own_text_and_offsets(
    vault: Vault,
) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    text = SourceStore(vault).text(sid)
    claim, quote = admitted_evidence(vault, make_plan(vault, page(sid, {"sentence": 3})))
    assert claim.status == "admitted", claim.reason
    start = text.index(THIRD)
    assert (quote.verified, quote.quote, quote.start, quote.end) == (
        True,
        THIRD,
        start,
        start + len(THIRD),
    )
    assert text[quote.start : quote.end] == quote.quote


def test_applied_sentence_citation_stores_the_exact_sentence(vault: Vault) -> None:
    vault.config_path.write_text(
        vault.config_path.read_text().replace('auto_apply = "never"', 'auto_apply = "trusted"')
    )
    from affidavit.vault import open_vault

    v = open_vault(vault.root, clock=vault.clock)
    sid = add_text(v, "lighthouse.md", DOC)
    text = SourceStore(v).text(sid)
    proposal = propose(
        v,
        make_plan(v, page(sid, {"sentences": [1, 2]}, text="The first tower burned down in 1755.")),
        "test",
        "test",
    )
    if proposal.status == "pending":
        from affidavit.inbox import approve

        approve(v, proposal.plan_id, None, "test")
    rows = v.db.execute('SELECT quote, start, "end" FROM evidence').fetchall()
    start = text.index(FIRST)
    end = text.index("in 1755.") + len("in 1755.")
    assert [tuple(r) for r in rows] == [(text[start:end], start, end)]
    assert "It burned down in 1755." in (v.wiki_dir / "lighthouse.md").read_text()
    v.close()


def test_a_sub_span_inside_the_sentence_is_verified_there(vault: Vault) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    text = SourceStore(vault).text(sid)
    claim, quote = admitted_evidence(
        vault,
        make_plan(
            vault,
            page(
                sid,
                {"sentence": 3, "quote": "designed by James Douglass"},
                text="James Douglass designed it.",
            ),
        ),
    )
    assert claim.status == "admitted", claim.reason
    assert quote.quote == "designed by James Douglass"
    assert text[quote.start : quote.end] == "designed by James Douglass"
    assert text.index(THIRD) <= quote.start < quote.end <= text.index(THIRD) + len(THIRD)


def test_a_sub_span_outside_the_cited_sentence_is_refused(vault: Vault) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    # The words are in the source (sentence 1), but not in the sentence cited.
    claim, quote = admitted_evidence(
        vault, make_plan(vault, page(sid, {"sentence": 3, "quote": "built of wood in 1698"}))
    )
    assert claim.status == "rejected" and claim.check == "evidence"
    assert not quote.verified and "inside sentence s3" in quote.reason


def test_a_sentence_beyond_the_source_is_refused_with_the_count(vault: Vault) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    count = len(SourceSentences(SourceStore(vault).text(sid)))
    assert count == 4
    claim, quote = admitted_evidence(vault, make_plan(vault, page(sid, {"sentence": 5})))
    assert claim.status == "rejected" and claim.check == "evidence"
    assert not quote.verified and "the source has 4 sentences" in quote.reason
    claim, _ = admitted_evidence(vault, make_plan(vault, page(sid, {"sentences": [3, 5]})))
    assert claim.status == "rejected" and "the source has 4 sentences" in claim.reason


def test_a_range_reaching_past_the_end_is_refused_even_with_a_quote(vault: Vault) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    plan = make_plan(vault, page(sid, {"sentences": [4, 6], "quote": "eighteen nautical miles"}))
    claim, quote = admitted_evidence(vault, plan)
    assert claim.status == "rejected" and "4 sentences" in quote.reason


SRC = "ab" * 32
MALFORMED: dict[str, dict[str, Any]] = {
    "extra key": {"source": SRC, "sentence": 3, "page": 2},
    "sentence and sentences": {"source": SRC, "sentence": 3, "sentences": [3, 4]},
    "nothing cited": {"source": SRC},
    "null quote": {"source": SRC, "sentence": 3, "quote": None},
    "range of four": {"source": SRC, "sentences": [3, 6]},
    "reversed range": {"source": SRC, "sentences": [4, 3]},
    "range of one item": {"source": SRC, "sentences": [3]},
    "range of three items": {"source": SRC, "sentences": [3, 4, 5]},
    "range as a string": {"source": SRC, "sentences": "3-5"},
    "float": {"source": SRC, "sentence": 3.0},
    "bool": {"source": SRC, "sentence": True},
    "string number": {"source": SRC, "sentence": "3"},
    "s-number": {"source": SRC, "sentence": "s3"},
    "zero": {"source": SRC, "sentence": 0},
    "negative": {"source": SRC, "sentence": -1},
    "huge": {"source": SRC, "sentence": 10**12},
    "float in a range": {"source": SRC, "sentences": [3.0, 4]},
    "quote too short": {"source": SRC, "sentence": 3, "quote": "tower"},
    "quote not a string": {"source": SRC, "sentence": 3, "quote": 17},
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_citations_fail_the_whole_plan(vault: Vault, name: str) -> None:
    sid = add_text(vault, "lighthouse.md", DOC)
    good = page(sid, {"sentence": 1})
    bad = {**page(sid, {"sentence": 1}), "slug": "other"}
    bad["claims"][0]["evidence"] = [MALFORMED[name] | {"source": sid}]
    parse_plan(make_plan(vault, good))  # the well-formed citation alone is a valid plan
    plan = make_plan(vault, good, bad)
    before = snapshot(vault)
    with pytest.raises(PlanValidationError):
        parse_plan(plan)
    with pytest.raises(PlanValidationError):
        propose(vault, plan, "test", "test")
    assert snapshot(vault) == before


OLD_PLAN: dict[str, Any] = {
    "nonce": "n" * 24,
    "operations": [
        {
            "op": "add_claims",
            "page": "p",
            "claims": [{"text": "A claim.", "evidence": [{"source": SRC, "quote": "a quote x"}]}],
        }
    ],
}
MAIN_PLAN_ID = "14ac0177032dd1c2faedae332931ad0fe7f72ea1e92d3fe64c5d2c435da589d5"
MAIN_CLAIM_ID = "c-14e3468b2e557f8e"
"""The ids main gave OLD_PLAN and its claim, before sentence citations existed."""


def test_old_plans_and_claims_keep_their_ids() -> None:
    plan = parse_plan(OLD_PLAN)
    assert plan_id_of(plan) == MAIN_PLAN_ID
    assert claim_id("p", plan.operations[0].claims[0]) == MAIN_CLAIM_ID  # type: ignore[union-attr]
    assert "null" not in json.dumps(plan.to_json())


def test_cited_evidence_serialises_without_nulls_and_gets_its_own_id() -> None:
    op = dict(OLD_PLAN["operations"][0])
    op["claims"] = [{"text": "A claim.", "evidence": [{"source": SRC, "sentence": 2}]}]
    cited = parse_plan({**OLD_PLAN, "operations": [op]})
    evidence = cited.to_json()["operations"][0]["claims"][0]["evidence"]
    assert evidence == [{"source": SRC, "sentence": 2}]
    assert plan_id_of(cited) != MAIN_PLAN_ID
    assert parse_plan(cited.to_json()) == cited


def test_affidavit_schema_shows_the_sentence_form() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    evidence = schema["$defs"]["Evidence"]
    assert set(evidence["properties"]) == {"source", "quote", "sentence", "sentences"}
    assert evidence["required"] == ["source"]
    assert evidence["properties"]["sentences"]["maxItems"] == 2
    assert evidence["additionalProperties"] is False
    assert "null" not in json.dumps(evidence)
    assert schema == plan_json_schema()


def test_the_small_model_schema_offers_only_sentences_it_was_shown() -> None:
    schema = compact_plan_schema("n" * 24, [SRC], [], sentences=(12, 19))
    evidence = schema["$defs"]["Evidence"]
    assert evidence["required"] == ["source", "sentence"]
    assert evidence["properties"]["sentence"] == {"type": "integer", "enum": list(range(12, 20))}
    assert evidence["additionalProperties"] is False
    # without sentence numbers a small model is offered free quotes only, as on main
    quotes = compact_plan_schema("n" * 24, [SRC], [])["$defs"]["Evidence"]
    assert set(quotes["properties"]) == {"source", "quote"}
    assert quotes["required"] == ["source", "quote"]
    # SmolLM2 invented derived_from ids ("c-1913121112111111"), failing whole plans: not offered
    assert "derived_from" not in schema["$defs"]["ClaimDraft"]["properties"]


def test_numbering_is_global_to_the_source_and_stable() -> None:
    text = (SAMPLES / "sotu" / "1790-washington.md").read_text()
    numbered = SourceSentences(text)
    assert len(numbered) > 20
    assert [s.n for s in numbered.sentences] == list(range(1, len(numbered) + 1))
    assert SourceSentences(text).sentences == numbered.sentences  # deterministic
    middle = len(text) // 2
    # two halves render every sentence exactly once, with the whole-source numbers
    lines = numbered.render(0, middle).splitlines() + numbered.render(middle).splitlines()
    shown = [int(m.group(1)) for line in lines if (m := re.match(r"\[s(\d+)\] ", line))]
    assert shown == list(range(1, len(numbered) + 1))
    for s in numbered.sentences:
        assert numbered.numbers_at(s.start, s.end) == [s.n]
        assert numbered.span(s.n) == (s.start, s.end)
    with pytest.raises(IndexError, match=f"has {len(numbered)} sentences"):
        numbered.span(len(numbered) + 1)
    assert sentences_of("x" * 64, text).sentences == numbered.sentences
    page_lines = numbered.numbered_lines(2, 4)
    assert [line.split(" ", 1)[0] for line in page_lines] == ["[s2]", "[s3]", "[s4]"]
    assert numbered.numbered_lines(len(numbered), len(numbered) + 5)[0].startswith(
        f"[s{len(numbered)}] "
    )
    assert sentences_of("x" * 64, text + "More. Words here.").sentences != numbered.sentences


def _cite_first_two(request: ModelRequest) -> str:
    """A model that cites by number: it reads the [sN] lines of the prompt."""
    assert request.task is not None
    fenced = request.messages[1].content.split(f"<<<SOURCE {request.task.nonce}>>>")[1]
    numbers = re.findall(r"^\[s(\d+)\] ", fenced, re.M)
    sid = request.task.source_id
    return json.dumps(
        {
            "nonce": request.task.nonce,
            "operations": [
                {
                    "op": "create_page",
                    "slug": "lighthouse",
                    "title": "Lighthouse",
                    "summary": "The first tower on the rock was built of wood in 1698.",
                    "claims": [
                        {
                            "text": "The first tower on the rock was built of wood in 1698.",
                            "evidence": [{"source": sid, "sentence": int(numbers[0])}],
                        },
                        {
                            "text": "The present tower was designed by James Douglass.",
                            "evidence": [
                                {
                                    "source": sid,
                                    "sentence": int(numbers[2]),
                                    "quote": "The present tower was designed by James Douglass",
                                }
                            ],
                        },
                    ],
                }
            ],
        }
    )


def test_the_ingest_prompt_numbers_sentences_like_sentences_py(
    vault: Vault, tmp_path: Path
) -> None:
    doc = tmp_path / "lighthouse.md"
    doc.write_text(DOC)
    provider = ScriptedProvider(replies=[_cite_first_two])
    Ingestor(vault, provider).run([str(doc)], "trusted")
    (request,) = provider.requests
    assert request.task is not None
    numbered = sentences_of(request.task.source_id, SourceStore(vault).text(request.task.source_id))
    fenced = request.messages[1].content
    for s in numbered.sentences:
        assert f"[s{s.n}] {numbered.text[s.start : s.end]}" in fenced
    assert '"sentence": N} for the line [sN]' in request.messages[0].content  # the form
    assert "Lighthouse notes" in fenced  # the heading is shown, unnumbered


def test_later_chunks_continue_the_sources_numbering(vault: Vault, tmp_path: Path) -> None:
    text = (SAMPLES / "sotu" / "1790-washington.md").read_text()
    doc = tmp_path / "speech.md"
    doc.write_text(text)
    vault.config_path.write_text(
        vault.config_path.read_text().replace("chunk_chars = 6000", "chunk_chars = 2000")
    )
    from affidavit.vault import open_vault

    v = open_vault(vault.root, clock=vault.clock)
    empty = lambda r: json.dumps({"nonce": r.task.nonce, "operations": []})  # noqa: E731
    provider = ScriptedProvider(replies=[empty] * 20)
    Ingestor(v, provider).run([str(doc)], "trusted")
    assert len(provider.requests) > 2
    shown: list[int] = []
    for request in provider.requests:
        shown += [int(n) for n in re.findall(r"^\[s(\d+)\] ", request.messages[1].content, re.M)]
    assert shown == list(range(1, len(SourceSentences(text)) + 1))
    v.close()


def test_sentence_citations_reach_the_wiki_through_affidavit_ingest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    root = tmp_path / "v"
    assert runner.invoke(main, ["init", str(root)]).exit_code == 0
    doc = tmp_path / "lighthouse.md"
    doc.write_text(DOC)
    provider = ScriptedProvider(replies=[_cite_first_two])
    monkeypatch.setattr(
        "affidavit.cli.ingest_cmd.provider_from_config", lambda config, model=None: provider
    )
    result = runner.invoke(
        main, ["--vault", str(root), "ingest", str(doc), "--trust", "trusted", "--yes", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["totals"]["claims"]["admitted"] == 2
    assert report["totals"]["chunks"] == {"applied": 1}
    markdown = (root / "wiki" / "lighthouse.md").read_text()
    assert FIRST in markdown and "designed by James Douglass" in markdown
    from affidavit.vault import open_vault

    v = open_vault(root)
    record = get_plan(v, report["sources"][0]["chunks"][0]["plan_id"])
    quotes = [q.quote for op in record.admission.ops for c in op.claims for q in c.evidence]
    assert quotes == [FIRST, "The present tower was designed by James Douglass"]
    v.close()


def test_the_small_model_sentence_schema_compiles_to_a_grammar() -> None:
    pytest.importorskip("llama_cpp")
    from affidavit.providers.local import schema_to_gbnf

    grammar = schema_to_gbnf(compact_plan_schema("n" * 24, [SRC], ["p"], sentences=(12, 19)))
    assert '\\"sentence\\"' in grammar and '\\"quote\\"' not in grammar
    # the number is bounded in the grammar itself: 12 to 19 are its only literals
    (rule,) = [line for line in grammar.splitlines() if line.startswith("Evidence-sentence-kv")]
    assert "integer" not in rule


def test_a_one_word_sentence_is_no_evidence(vault: Vault) -> None:
    sid = add_text(vault, "acronym.txt", "Acronym\n\n" + DOC.split("\n\n", 1)[1])
    numbered = SourceSentences(SourceStore(vault).text(sid))
    assert numbered.sentence_text(1) == "Acronym"
    claim, quote = admitted_evidence(vault, make_plan(vault, page(sid, {"sentence": 1})))
    assert claim.status == "rejected" and "too short to be evidence" in quote.reason


def test_a_citation_longer_than_a_quote_must_be_narrowed(vault: Vault) -> None:
    long = "The keepers " + "and their families " * 18 + "lived on the rock until 1910."
    sid = add_text(vault, "keepers.md", long + " They left by boat.\n")
    assert len(long) > 300
    claim, quote = admitted_evidence(vault, make_plan(vault, page(sid, {"sentence": 1})))
    assert claim.status == "rejected" and "add a 'quote'" in quote.reason
    claim, quote = admitted_evidence(
        vault,
        make_plan(
            vault,
            page(
                sid,
                {"sentence": 1, "quote": "lived on the rock until 1910"},
                text="They lived on the rock until 1910.",
            ),
        ),
    )
    assert claim.status == "admitted" and quote.quote == "lived on the rock until 1910"
