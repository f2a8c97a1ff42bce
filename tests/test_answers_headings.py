"""Issue 24 item 4 (branch answers7): SQLite's limits.html writes its sections' headings as bold
paragraphs opening list items (``<li><p><b>Maximum Number Of Columns</b></p><p>...``); read as
headings, the claims under them keep their subject. And a heading retrieved best is answered
with what its section says, not shown alone. Each reproduced first on pages of our own."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.extract import extract
from affidavit.support.context import headings_above
from affidavit.vault import Vault

LIMITS = b"""<html><head><title>Widget Limits</title></head><body>
<h2>Limits In Widgets</h2>
<p>Widgets have limits that can be changed at compile-time.</p>
<ol>
<li><p><b>Maximum Number Of Columns</b></p>
<p>The default setting for WIDGET_MAX_COLUMN is 2000.</p>
<li><p><b>Maximum Depth Of A Tree</b></p><p>The default setting for WIDGET_MAX_DEPTH is 10.</p></li>
<li><p><b>Bold</b> words open this item, which has no heading.</p><p>Plain text here.</p></li>
</ol>
</body></html>"""


def test_a_list_item_opened_by_a_bold_paragraph_is_a_heading() -> None:
    text = extract(LIMITS, "text/html", render=False).text
    assert "\n### Maximum Number Of Columns\n" in text, text
    assert "\n### Maximum Depth Of A Tree\n" in text, text
    # a bold word followed by more text in its paragraph is not a heading
    assert "#" not in text[text.index("Bold") - 5 : text.index("Bold")], text
    column = text.index("The default setting for WIDGET_MAX_COLUMN")
    assert headings_above(text, column) == ("Widget Limits", "Maximum Number Of Columns")
    depth = text.index("The default setting for WIDGET_MAX_DEPTH")
    assert headings_above(text, depth) == ("Widget Limits", "Maximum Depth Of A Tree")
    # the section above the list is untouched
    first = text.index("Widgets have limits")
    assert headings_above(text, first) == ("Widget Limits", "Limits In Widgets")


def test_bold_text_in_a_list_item_of_a_table_or_code_is_not_a_heading() -> None:
    page = b"""<html><body><h2>Code</h2><pre><ol><li><p><b>Not A Heading</b></p></li></ol></pre>
<ul><li><p><b>Heading</b></p><p>Text.</p></li></ul></body></html>"""
    text = extract(page, "text/html", render=False).text
    assert "# Not A Heading" not in text, text
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
