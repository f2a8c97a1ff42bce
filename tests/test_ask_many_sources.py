"""One sentence, many sources (issue 24 item 2): a sentence twenty sources state is answered as one
claim with quotes from each (up to the limit of 5, the rest counted), and no answer crashes on many
citations (main: one answer sentence cited 20 claims, over the limit of 8, and the CLI printed a
pydantic traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from affidavit.ask import Asker, render_answer
from affidavit.ask.answer import AnswerReply, read_reply
from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit, merge_identical
from affidavit.vault import Vault

SHARED = "All rights reserved by the Acme Widget Corporation of Springfield since long ago."


def twenty_tools(vault: Vault, folder: Path) -> None:
    folder.mkdir()
    for n in range(1, 21):
        (folder / f"tool{n}.md").write_text(
            f"# Tool {n}\n\nThe frobnicator {n} reads the calibration table every morning "
            f"before the plant opens.\n\n{SHARED}\n"
        )
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")


def test_a_sentence_in_twenty_sources_is_one_cited_claim_with_five_quotes_and_a_count(
    vault: Vault, tmp_path: Path
) -> None:
    twenty_tools(vault, tmp_path / "tools")
    stored = vault.db.execute("SELECT count(*) FROM claims WHERE text = ?", (SHARED,)).fetchone()
    assert stored[0] >= 20  # the situation: one claim per source's page
    answer = Asker(vault, None).ask("Which corporation reserved all rights since long ago?")
    assert answer.verdict == "answered"
    assert [s.text for s in answer.sentences].count(SHARED) == 1
    (cited,) = [h for h in answer.cited() if h.text == SHARED]
    assert len({e.source_id for e in cited.evidence}) == 5
    assert cited.more_sources == 15 and len(cited.same) == 19
    shown = render_answer(answer)
    assert "and 15 more source(s) say the same" in shown
    assert shown.count(f"“{SHARED}”") == 1  # the quote once, with each place it stands


def test_the_cli_answers_instead_of_a_traceback(vault: Vault, tmp_path: Path) -> None:
    twenty_tools(vault, tmp_path / "tools")
    base = ["--vault", str(vault.root), "ask"]
    result = CliRunner().invoke(main, [*base, "Who reserved all rights?", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "answered"
    assert all(len(s["claims"]) <= 8 for s in data["answer"])
    assert CliRunner().invoke(main, [*base, "Who reserved all rights?"]).exit_code == 0


def test_a_reply_citing_more_than_eight_claims_loses_that_sentence_not_the_answer() -> None:
    many = {"text": SHARED, "claims": [f"c-{n:016x}" for n in range(12)]}
    fine = {"text": "The frobnicator reads the table.", "claims": ["c-0000000000000001"]}
    reply, dropped = read_reply({"nonce": "n", "sentences": [many, fine]})
    assert isinstance(reply, AnswerReply)
    assert [s.text for s in reply.sentences] == [fine["text"]]
    assert dropped and "claims" in dropped[0].reason


def _hit(n: int, source: str, page: str = "p") -> Hit:
    ref = EvidenceRef(source, f"{source}.md", SHARED, "line 1", 10, 10 + len(SHARED))
    return Hit(f"c-{n:016x}", page, "P", SHARED, "trusted", 1.0, (ref,))


def test_merging_keeps_the_page_claim_over_a_context_entry_and_counts_nothing_twice() -> None:
    context_entry = _hit(0, "s0", page="")
    page_claim = _hit(1, "s0", page="tools")
    (merged,) = merge_identical([context_entry, page_claim])
    assert merged.page == "tools" and merged.more_sources == 0 and len(merged.evidence) == 1
    other = Hit("c-00000000000000ff", "q", "Q", "Another sentence entirely.", "trusted", 0.5, ())
    assert [h.claim_id for h in merge_identical([_hit(2, "a"), other, _hit(3, "b")])] == [
        "c-0000000000000002",
        other.claim_id,
    ]
