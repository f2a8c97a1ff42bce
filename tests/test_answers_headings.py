"""Issue 24 item 4 (branch answers7): SQLite's limits.html writes its sections' headings as bold
paragraphs opening list items (``<li><p><b>Maximum Number Of Columns</b></p><p>...``); read as
headings, the claims under them keep their subject. And a heading retrieved best is answered
with what its section says, not shown alone. Each reproduced first on pages of our own."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker
from affidavit.ask.extractive import extractive_answer
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.sources.extract import extract
from affidavit.support.context import headings_above
from affidavit.vault import Vault
from tests.test_answers_howto import FAQ

LIMITS = b"""<html><head><title>Widget Limits</title></head><body>
<h2>Limits In Widgets</h2>
<p>Widgets have limits that can be changed at compile-time.</p>
<ol>
<li><p><b>Maximum Number Of Columns</b></p>
<p>The default setting for WIDGET_MAX_COLUMN is 2000.</p>
<li><p><b>Maximum Depth Of A Tree</b></p><p>The default setting for WIDGET_MAX_DEPTH is 10.</p></li>
</ol>
</body></html>"""


def test_a_list_item_opened_by_a_bold_paragraph_is_a_heading() -> None:
    text = extract(LIMITS, "text/html", render=False).text
    assert "\n### Maximum Number Of Columns\n" in text, text
    assert "\n### Maximum Depth Of A Tree\n" in text, text
    column = text.index("The default setting for WIDGET_MAX_COLUMN")
    assert headings_above(text, column) == ("Widget Limits", "Maximum Number Of Columns")
    depth = text.index("The default setting for WIDGET_MAX_DEPTH")
    assert headings_above(text, depth) == ("Widget Limits", "Maximum Depth Of A Tree")
    # the section above the list is untouched
    first = text.index("Widgets have limits")
    assert headings_above(text, first) == ("Widget Limits", "Limits In Widgets")


def test_a_list_that_mixes_headed_items_with_others_has_no_headings() -> None:
    # the item without a bold paragraph would stand under the heading of the one before it
    page = LIMITS.replace(
        b"</ol>", b"<li><p><b>Bold</b> words open this item.</p><p>Plain text.</p></li></ol>"
    )
    text = extract(page, "text/html", render=False).text
    assert "\nMaximum Number Of Columns\n" in text, text
    assert "### " not in text, text
    column = text.index("The default setting for WIDGET_MAX_COLUMN")
    assert headings_above(text, column) == ("Widget Limits", "Limits In Widgets")


def test_bold_text_in_a_list_item_of_a_table_or_code_is_not_a_heading() -> None:
    page = b"""<html><body><h2>Code</h2><pre><ol><li><p><b>Not A Heading</b></p></li></ol></pre>
<table><tr><td>Name</td><td>Value</td></tr><tr><td><ul><li><p><b>Nor This</b></p></li></ul></td>
<td>2</td></tr></table>
<ul><li><p><b>Heading</b></p><p>Text.</p><ul><li>Nested, no heading.</li></ul></li></ul>
</body></html>"""
    text = extract(page, "text/html", render=False).text
    assert "# Not A Heading" not in text, text
    assert "# Nor This" not in text, text
    assert "\n### Heading\n" in text, text


def test_a_default_under_a_bold_item_heading_answers(vault: Vault, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "limits.html").write_bytes(LIMITS)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    assert not report.failed
    answer = Asker(vault, None).ask("What is the maximum number of columns by default?")
    assert answer.verdict == "answered", answer
    shown = " ".join(s.text for s in answer.sentences)
    assert "2000" in shown, shown


SOURCE = "ab" * 32
QUESTION = "How do I list all the tables in a frob archive?"


def hit(n: int, text: str, section: str = "Frequently Asked Questions") -> Hit:
    ref = EvidenceRef(SOURCE, "faq.html", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "faq", "Frob FAQ", text, "trusted", 1.0 / (n + 1), (ref,), section)


def _shown(reply: dict[str, object]) -> list[str]:
    sentences = reply["sentences"]
    assert isinstance(sentences, list)
    return [s["text"] for s in sentences]


def test_a_question_retrieved_best_is_answered_by_what_follows_it() -> None:
    # main answered with the FAQ's question alone: it holds every word asked, its answer few
    hits = [
        hit(1, QUESTION),
        hit(2, "Run the SHOW command from the shell."),
        hit(3, "Each archive keeps its index in a hidden file."),
    ]
    context = {hits[1].claim_id: QUESTION, hits[2].claim_id: QUESTION}
    reply = extractive_answer(QUESTION, hits, "n", context)
    assert _shown(reply) == [
        "Run the SHOW command from the shell.",
        "Each archive keeps its index in a hidden file.",
    ], reply
    assert reply["short_answer"] == {"text": "SHOW", "claims": [hits[1].claim_id]}, reply


def test_a_follower_in_another_section_does_not_answer_for_a_heading() -> None:
    # the claim after the question stands under the next heading: it is not the answer
    hits = [hit(1, QUESTION), hit(2, "Run the SHOW command from the shell.", "Licence")]
    reply = extractive_answer(QUESTION, hits, "n", {hits[1].claim_id: QUESTION})
    assert _shown(reply)[0] == QUESTION, reply
    # nor does a claim that is no follower of it, or a follower that is itself a heading
    hits = [hit(1, QUESTION), hit(2, "Run the SHOW command from the shell."), hit(3, "Licence")]
    reply = extractive_answer(QUESTION, hits, "n", {hits[2].claim_id: QUESTION})
    assert _shown(reply)[0] == QUESTION, reply


def test_a_statement_retrieved_best_keeps_its_place() -> None:
    best = "To list all the tables in a frob archive, run the SHOW command."
    hits = [hit(1, best), hit(2, "Each archive keeps its index in a hidden file.")]
    reply = extractive_answer(QUESTION, hits, "n", {hits[1].claim_id: best})
    assert _shown(reply)[0] == best, reply


def test_an_faq_question_asked_is_answered_by_its_answer(vault: Vault, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.html").write_bytes(FAQ)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    answer = Asker(vault, None).ask("Why is STORE really slow?")
    assert answer.verdict == "answered", answer
    shown = [s.text for s in answer.sentences]
    assert shown and shown[0].startswith("Actually, frob will easily do 50,000"), shown
    assert not [t for t in shown if t.startswith("STORE is really slow")], shown
