"""Issue 24 item 4 (branch ans24): what a claim's section and page tell the extractive answerer,
and answers of one sentence when one says it all. Each reproduced first on texts of our own
modelled on the SQLite manual's misses (limits.html's columns, wal.html's pragma, pragma.html's
page size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.ask import Asker, brevity, sections
from affidavit.ask.extractive import _matches, extractive_answer, question_type, ranked
from affidavit.ask.manuals import statement
from affidavit.ask.sections import headed_share, key_nouns, named_page, title_instructions
from affidavit.ask.wiki import SqliteWiki
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit, Retriever
from affidavit.vault import Vault

SOURCE = "cd" * 32


def hit(n: int, text: str, section: str = "", title: str = "Widget Limits") -> Hit:
    ref = EvidenceRef(SOURCE, "limits.html", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "limits", title, text, "trusted", 1.0 / (n + 1), (ref,), section)


def _shown(reply: dict[str, object]) -> list[str]:
    sentences = reply["sentences"]
    assert isinstance(sentences, list)
    return [s["text"] for s in sentences]


def test_the_noun_a_question_asks_about() -> None:
    assert key_nouns("How many columns can a table have by default?") == {"column"}
    assert key_nouns("What page size does a new database get by default?") == {"page", "size"}
    # a generic noun gives way to what it is a kind of
    assert key_nouns("What kind of transaction does a plain BEGIN start?") == {"transact"}
    # what a how-do-I question's verb acts on
    assert key_nouns("How do I throw away local changes?") == {"chang"}
    # no noun asked about: no section counts
    assert key_nouns("What is a partial index?") == frozenset()
    assert key_nouns("Why are my writes so slow?") == frozenset()


COLUMNS = "How many columns can a table have by default?"
CONCERNED = (
    "We are concerned with things like the maximum number of bytes in a BLOB or the maximum "
    "number of columns in a table."
)
DEPTH = "The default maximum trigger recursion depth is 1000."
ROWS = "The theoretical maximum number of rows in a table is 264."
SETTING = "The default setting for WIDGET_MAX_COLUMN is 2000."


def _limits() -> list[Hit]:
    return [
        hit(1, CONCERNED, "Limits In Widgets"),
        hit(2, DEPTH, "Maximum Depth Of Trigger Recursion"),
        hit(3, ROWS, "Maximum Number Of Rows In A Table"),
        hit(4, "The maximum number of terms is WIDGET_MAX_TERMS which defaults to 500.", "Terms"),
        hit(5, SETTING, "Maximum Number Of Columns"),
    ]


def test_a_claim_under_the_heading_of_the_asked_noun_answers() -> None:
    # the claim under "Maximum Number Of Columns" holds the question's "columns" only inside a
    # macro's name; it is the answer, and comes first
    reply = extractive_answer(COLUMNS, _limits(), "n")
    assert reply["short_answer"] == {"text": "2000", "claims": ["c-0000000000000005"]}, reply
    assert _shown(reply)[0] == SETTING, reply


def test_the_heading_rule_ranks_the_claim_under_it_first(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ranked(COLUMNS, _limits())[0][3].text == SETTING
    # without it the sentence that names columns but no number ranks first
    monkeypatch.setattr(sections, "HEADED", False)
    assert ranked(COLUMNS, _limits())[0][3].text == CONCERNED


def test_a_heading_with_another_noun_of_the_question_earns_nothing() -> None:
    # "Maximum Number Of Rows In A Table" holds "table", which the question does not ask about
    weights = {"column": 1.0, "tabl": 1.0, "default": 1.0, "maximum": 1.0}
    nouns = key_nouns(COLUMNS)
    rows = hit(3, ROWS, "Maximum Number Of Rows In A Table")
    assert headed_share(weights, nouns, rows, _matches) == 0.0
    setting = hit(5, SETTING, "Maximum Number Of Columns")
    assert headed_share(weights, nouns, setting, _matches) == 1.0
    # a page title is no heading: a topic page's title is a noun its claims already hold
    titled = hit(6, SETTING, "", title="Columns")
    assert headed_share(weights, nouns, titled, _matches) == 0.0


WAL = "How do I switch a database to write-ahead logging?"
CONVERT = "To convert to WAL mode, use the following pragma: `PRAGMA journal_mode=WAL;`"


def test_a_page_the_question_names_by_its_title() -> None:
    assert named_page(WAL, "Write-Ahead Logging") == {"write", "ahead", "log"}
    # every word of the title must be asked: "Write-Ahead Log Files" is another page
    assert named_page(WAL, "Write-Ahead Log Files") == frozenset()
    assert named_page(WAL, "") == frozenset()


def test_an_instruction_on_the_named_page_answers_a_how_question() -> None:
    # main answered with a VACUUM page's sentence that holds "database" and "write-ahead log
    # mode": the instruction on the page "Write-Ahead Logging" leaves its subject to the title
    hits = [
        hit(
            1,
            "However, when not in write-ahead log mode, the page size of an existing database "
            "may be changed and then the database rebuilt with the VACUUM command.",
            "Description",
            "VACUUM",
        ),
        hit(2, "The WAL file is kept beside the database file.", "Files", "Temporary Files"),
        hit(3, CONVERT, "Activating WAL Mode", "Write-Ahead Logging"),
    ]
    reply = extractive_answer(WAL, hits, "n")
    assert _shown(reply)[0] == CONVERT, reply
    # the same page under a title the question doesn't name is read at half weight, as before
    hits[2] = hit(3, CONVERT, "Activating WAL Mode", "Journal Modes")
    reply = extractive_answer(WAL, hits, "n")
    assert _shown(reply)[0] != CONVERT, reply


def test_a_statement_may_end_in_a_code_span() -> None:
    assert statement(CONVERT)
    assert statement("Run this: `ls -l`")
    # a heading or a bare name in code is still no statement
    assert not statement("The `--amend` option")
    assert not statement("`frob-commit`")


PAGES = {
    "wal.html": b"""<html><head><title>Write-Ahead Logging</title></head><body>
<h2>Overview</h2>
<p>The default method by which a widget database implements atomic commit is a rollback
journal. Write-ahead logging is another method that keeps every change in a separate file.</p>
<p>There are advantages and disadvantages to using WAL instead of a rollback journal.</p>
<h2>Activating WAL Mode</h2>
<p>A widget database connection defaults to journal_mode=DELETE.  To convert to WAL mode,
use the following pragma:</p>
<blockquote><pre>
PRAGMA journal_mode=WAL;
</pre></blockquote>
</body></html>""",
    "vacuum.html": b"""<html><head><title>VACUUM</title></head><body>
<h2>Description</h2>
<p>However, when not in write-ahead log mode, the page size of an existing database may be
changed by using the page_size pragma and then immediately vacuuming the database.</p>
</body></html>""",
}


def test_the_instructions_of_a_page_named_by_a_how_question(vault: Vault, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, page in PAGES.items():
        (docs / name).write_bytes(page)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    assert not report.failed
    retriever = SqliteWiki(vault, Retriever(vault.db))
    added = title_instructions(retriever, WAL, [], "untrusted")
    texts = [h.text for h in added]
    assert texts and texts[0].startswith("To convert to WAL mode"), texts
    assert all(h.page_title == "Write-Ahead Logging" for h in added), added
    # a question that names only part of the title, or asks no how-question, gets none
    assert title_instructions(retriever, "How do I switch a database to logging?", [], "") == []
    assert title_instructions(retriever, "What is write-ahead logging?", [], "untrusted") == []
    # a hit already there is left where it is, not added twice
    again = title_instructions(retriever, WAL, added, "untrusted")
    assert [h.claim_id for h in again] == [h.claim_id for h in added]


def test_a_how_question_naming_a_page_is_answered_from_it(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, page in PAGES.items():
        (docs / name).write_bytes(page)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    answer = Asker(vault, None).ask(WAL)
    assert answer.verdict == "answered", answer
    assert answer.sentences[0].text.startswith("To convert to WAL mode"), answer.sentences
    assert answer.short_answer is not None and "journal_mode=WAL" in answer.short_answer.text


def test_what_size_does_asks_for_a_number() -> None:
    assert question_type("What page size does a new database get by default?") == "number"
    assert question_type("What length limit does a name have?") == "number"
    # a question that names no measure is not one
    assert question_type("Which journal mode does a connection use by default?") == ""
    assert question_type("What does the size option do?") == ""


SIZE = "What page size does a new database get by default?"


def test_a_page_size_question_is_answered_by_the_sentence_with_the_size() -> None:
    # main read it as an untyped question and answered with the compile-time option's sentence
    hits = [
        hit(
            1,
            "The WIDGET_DEFAULT_PAGE_SIZE compile-time option can be used to change the default "
            "page size assigned to new databases.",
            "pragma",
            "Page size",
        ),
        hit(
            2,
            "For many years, the default page size was 1024 bytes, but beginning with version "
            "3.12.0 the default page size increased to 4096.",
            "pragma",
            "Page size",
        ),
    ]
    reply = extractive_answer(SIZE, hits, "n")
    assert _shown(reply)[0] == hits[1].text, reply


RELEASED = "The widget was released in 1998."


def test_a_short_answer_from_a_sure_claim_is_shown_with_that_claim_alone() -> None:
    hits = [hit(1, RELEASED), hit(2, "The gadget that followed the widget was released in 2001.")]
    reply = extractive_answer("When was the widget released?", hits, "n")
    assert reply["short_answer"] == {"text": "1998", "claims": [hits[0].claim_id]}, reply
    assert _shown(reply) == [RELEASED], reply


def test_without_brevity_the_second_sentence_is_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brevity, "BRIEF", False)
    hits = [hit(1, RELEASED), hit(2, "The gadget that followed the widget was released in 2001.")]
    reply = extractive_answer("When was the widget released?", hits, "n")
    assert len(_shown(reply)) == 2, reply


def _scored(*scores: tuple[float, float]) -> list[tuple[float, float, int, Hit]]:
    return [(s, sup, n, hit(n, f"Claim {n} says something.")) for n, (s, sup) in enumerate(scores)]


def _sentence(n: int) -> dict[str, object]:
    return {"text": f"Claim {n} says something.", "claims": [f"c-{n:016x}"]}


def test_brevity_keeps_a_second_sentence_that_may_hold_the_answer() -> None:
    scored = _scored((0.9, 0.7), (0.7, 0.6))
    both = [_sentence(0), _sentence(1)]
    # an unsure short answer keeps its second sentence: the first may be the wrong one
    short = {"text": "x", "claims": ["c-0000000000000000"]}
    assert brevity.enough(both, short, scored) == both
    assert brevity.enough(both, None, scored) == both
    # a second sentence far below the first, or one never scored (an unsure answer's fill),
    # is left out
    far = _scored((0.9, 0.7), (0.39, 0.3))
    assert brevity.enough(both, None, far) == both[:1]
    assert brevity.enough(both, None, scored[:1]) == both[:1]
    # a sure claim's short answer says it all; a sure claim without one does not
    sure = _scored((1.2, 1.0), (1.1, 0.9))
    assert brevity.enough(both, short, sure) == both[:1]
    assert brevity.enough(both, None, sure) == both
    # a follower stands at its leader's score: sure only through the heading or question it
    # follows, and the next follower may be the rest of the answer (an FAQ's)
    assert brevity.enough(both, short, sure, followers={"c-0000000000000000"}) == both
    # a short answer taken from the second sentence's claim leaves both
    other = {"text": "x", "claims": ["c-0000000000000001"]}
    assert brevity.enough(both, other, sure) == both


def test_an_instruction_naming_the_short_answer_says_it_all() -> None:
    question = "How do I lock a widget archive on a shared disk?"
    hits = [
        hit(1, "To lock a widget archive, run the SEAL command before you copy it."),
        hit(2, "On a shared disk, a widget archive is locked with the SEAL command."),
    ]
    reply = extractive_answer(question, hits, "n")
    assert reply["short_answer"] == {"text": "SEAL", "claims": [hits[0].claim_id]}, reply
    assert _shown(reply) == [hits[0].text], reply
    # the same sentences without the instruction rule (no question given) stay two
    scored = ranked(question, hits)
    both = [{"text": h.text, "claims": [h.claim_id]} for h in hits]
    short = {"text": "SEAL", "claims": [hits[0].claim_id]}
    assert brevity.enough(both, short, scored) == both
    assert len(brevity.enough(both, short, scored, question=question)) == 1
    # not for another kind of question, nor when the instruction doesn't name the short answer
    assert brevity.enough(both, short, scored, question="Why is the archive locked?") == both
    other = {"text": "UNSEAL", "claims": [hits[0].claim_id]}
    assert brevity.enough(both, other, scored, question=question) == both
