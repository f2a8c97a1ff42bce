"""Answers a person wants (issue 24 item 4): enumerations kept whole, "Not in the wiki" for what the
wiki never names (with the closest pages), a heading's or FAQ question's answer read under it, the
command a how-do-I question asks for, acronyms of the question's phrases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from affidavit.ask import Asker, render_answer
from affidavit.ask.context import question_names, unknown_names, with_acronyms
from affidavit.ask.manuals import asks_how, commands, statement
from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

FREEDOMS = """# The Four Freedoms

The speech was delivered to the Congress in the first week of January of that year.

In the future days, which we seek to make secure, we look forward to a world founded upon four
essential human freedoms. The first is freedom of speech and expression, everywhere in the world.
The second is freedom of every person to worship God in his own way, everywhere in the world.
The third is freedom from want, which means economic understandings for every nation. The fourth
is freedom from fear, which means a reduction of armaments to such a point that no nation can
commit an act of aggression.

Freedom means the supremacy of human rights everywhere, and our support goes to those who fight.
"""

MANUAL = """# Limits of the Widget Store

The widget store keeps every widget in one file on the local disk of the machine.

## Maximum number of widgets per crate

The number of widgets a crate holds is limited by the compile-time constant WIDGET_MAX_CRATE.
The default value of this constant is 2500, and it can be raised at compile time.

## Shrinking the store file

If you delete many widgets and want a smaller store file, run the COMPACT command.
Deleting widgets alone leaves the free pages inside the store file for later reuse.

## Write-ahead journal

The store can keep a write-ahead journal (WAJ) beside the store file for safer commits.
To turn it on, use the following setting: store_mode=WAJ in the configuration of the store.
"""


def ingest(vault: Vault, folder: Path, **docs: str) -> None:
    folder.mkdir()
    for name, text in docs.items():
        (folder / f"{name}.md").write_text(text)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")


def test_the_four_freedoms_are_four(vault: Vault, tmp_path: Path) -> None:
    ingest(vault, tmp_path / "docs", freedoms=FREEDOMS)
    answer = Asker(vault, None).ask("What were the four freedoms?")
    assert answer.verdict == "answered"
    said = " ".join(s.text for s in answer.sentences)
    for item in ("The first is", "The second is", "The third is", "The fourth is"):
        assert item in said  # main printed the introduction and the fourth only
    assert answer.sentences[0].text.startswith("In the future days")
    assert all(len(s.claims) == 1 for s in answer.sentences)


def test_a_name_the_wiki_never_mentions_is_not_in_the_wiki_with_the_closest_pages(
    vault: Vault, tmp_path: Path
) -> None:
    ingest(vault, tmp_path / "docs", manual=MANUAL)
    question = "How do I compact the store file in MongoDB?"
    answer = Asker(vault, None).ask(question)
    assert answer.verdict == "not_in_wiki"  # main answered with the COMPACT sentence
    assert answer.unknown == ["MongoDB"]
    assert answer.closest and answer.closest[0][0]
    shown = render_answer(answer)
    assert "It never mentions MongoDB." in shown and "Closest pages:" in shown
    result = CliRunner().invoke(main, ["--vault", str(vault.root), "ask", question, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "not_in_wiki" and data["unknown_names"] == ["MongoDB"]
    assert data["closest_pages"]


def test_a_misspelt_word_is_not_an_unknown_name(vault: Vault, tmp_path: Path) -> None:
    ingest(vault, tmp_path / "docs", manual=MANUAL)
    assert unknown_names(vault.db, "How many widgtes can a crate hold?") == []
    assert unknown_names(vault.db, "Does the Zorblax work with Redis?") == ["Zorblax", "Redis"]
    assert question_names("How do I use nginx with PostgreSQL?") == ["nginx", "PostgreSQL"]
    assert unknown_names(vault.db, "How many widgets does one Crte hold?") == []  # "crate"
    assert unknown_names(vault.db, "Where does the Widget Stoar keep its file?") == []  # in a name
    assert unknown_names(vault.db, "Is the widget store sold in the USA?") == []  # abbreviation


def test_the_sentence_under_a_heading_answers_the_headings_question(
    vault: Vault, tmp_path: Path
) -> None:
    ingest(vault, tmp_path / "docs", manual=MANUAL)
    answer = Asker(vault, None).ask("What is the maximum number of widgets per crate?")
    assert answer.verdict == "answered"
    assert answer.short_answer is not None and answer.short_answer.text == "2500"
    # the short answer first, then at most two sentences, the one it is taken from first
    assert len(answer.sentences) <= 2 and "2500" in answer.sentences[0].text
    assert answer.sentences[0].claims == answer.short_answer.claims


def test_how_do_i_gets_the_command_as_its_short_answer(vault: Vault, tmp_path: Path) -> None:
    ingest(vault, tmp_path / "docs", manual=MANUAL)
    answer = Asker(vault, None).ask("I deleted many widgets; how do I make the store file smaller?")
    assert answer.verdict == "answered"
    assert "COMPACT command" in answer.sentences[0].text
    assert answer.short_answer is not None and answer.short_answer.text == "COMPACT"


def test_an_acronym_of_the_questions_phrase_is_searched(vault: Vault, tmp_path: Path) -> None:
    ingest(vault, tmp_path / "docs", manual=MANUAL)
    asked = with_acronyms(vault.db, "How do I switch the store to write-ahead journaling?")
    assert asked == "How do I switch the store to write-ahead journaling (WAJ)?"
    answer = Asker(vault, None).ask("How do I switch the store to write-ahead journaling?")
    assert any("store_mode=WAJ" in s.text for s in answer.sentences)


def test_commands_headings_and_questions() -> None:
    text = "To convert, use the pragma: PRAGMA journal_mode=WAL; or run the VACUUM command."
    assert commands("How do I convert?", text) == ["PRAGMA journal_mode=WAL", "VACUUM"]
    assert commands("How?", 'Use the ".import" command or the --dryrun option.') == [
        ".import",
        "--dryrun",
    ]
    assert asks_how("I deleted data; how do I shrink it?") and asks_how("Which option sets it?")
    assert not asks_how("Who designed the tower?")
    assert not statement("Maximum length of a string or BLOB")
    assert not statement("How do I list all tables?")
    assert statement("The default value of this macro is 1 billion.")


def test_how_do_i_turn_on_prefers_the_instruction_over_the_state() -> None:
    from affidavit.ask.extractive import extractive_answer, ranked
    from affidavit.retrieval.search import EvidenceRef, Hit

    def hit(n: int, text: str) -> Hit:
        ref = EvidenceRef("ab" * 32, "m.md", text, f"line {n}", 100 * n, 100 * n + len(text))
        return Hit(f"c-{n:016x}", "manual", "Manual", text, "trusted", 1.0, (ref,))

    hits = [
        hit(0, "But journal enforcement of widget crates is turned off by default."),
        hit(1, "Journal enforcement of crates is disabled by default in the store."),
        hit(2, "To enable journal enforcement for crates, run PRAGMA crate_journal=ON first."),
    ]
    question = "How do I turn on journal enforcement for crates?"
    assert ranked(question, hits)[0][3].text.startswith("To enable journal enforcement")
    reply = extractive_answer(question, hits, "n")
    assert reply["sentences"][0]["text"].startswith("To enable journal enforcement")
    assert reply["short_answer"]["text"] == "PRAGMA crate_journal=ON"


def test_a_read_only_connection_never_abstains_for_want_of_the_vocabulary(
    vault: Vault, tmp_path: Path
) -> None:
    from affidavit.ask.context import misspelt

    ingest(vault, tmp_path / "docs", manual=MANUAL)
    vault.db.execute("PRAGMA query_only = ON")
    try:
        assert misspelt(vault.db, "Zorblaxian") is True  # can't tell: not an unknown name
    finally:
        vault.db.execute("PRAGMA query_only = OFF")
    assert misspelt(vault.db, "Zorblaxian") is False


HARBOUR = """# The Harbour Report

Therefore, as your harbour master, I report that the harbour of our town is in good order.

The usual orders were given to all our patrol boats, and not one smuggler has been discovered.
"""
WALL = """# The Harbour Wall

The harbour wall was rebuilt in 1904 by the engineer Mara Quell after a great storm.
"""


def test_a_word_that_only_opens_a_sentence_answers_no_who_question(
    vault: Vault, tmp_path: Path
) -> None:
    """ "Therefore, as your harbour master, ..." names nobody: main gave **Therefore** as the short
    answer to "who was harbour master"; a sentence with no name near the question and not all of
    its words is no answer either."""
    ingest(vault, tmp_path / "docs", harbour=HARBOUR)
    answer = Asker(vault, None).ask("Who was harbour master in 1823?")
    assert answer.verdict == "not_in_wiki", render_answer(answer)
    assert answer.closest  # the closest pages are still shown
    ingest(vault, tmp_path / "more", wall=WALL)
    rebuilt = Asker(vault, None).ask("Who rebuilt the harbour wall?")
    assert rebuilt.verdict == "answered"
    assert rebuilt.short_answer is not None and rebuilt.short_answer.text == "Mara Quell"


def test_a_denied_number_is_no_count(vault: Vault, tmp_path: Path) -> None:
    """ "not one smuggler has been discovered" says none: "one" is no answer to "how many"."""
    ingest(vault, tmp_path / "docs", harbour=HARBOUR)
    answer = Asker(vault, None).ask("How many smugglers have been discovered?")
    assert answer.short_answer is None or answer.short_answer.text != "one", render_answer(answer)


def test_a_dictionary_word_is_no_misspelling_of_another_only_of_its_own_forms() -> None:
    """ "How do I resolve a merge conflict in Perforce?" on git's manual: no claim says
    "Perforce", but its stem ("perforc") is one letter from "perform", so main took it for a
    misspelling and answered about git merge; "Alaskan" of a wiki that says "Alaska" still is
    one of its forms, and a real misspelling still counts."""
    from affidavit.ask.context import misspelt_among

    def vocabulary(*terms: str) -> Callable[[str], list[str]]:
        return lambda first: [t for t in terms if t.startswith(first)]

    git = vocabulary("perform", "merg", "conflict")
    assert misspelt_among("Perforce", git) is False  # an English word, spelled right
    assert misspelt_among("Perfrom", git) is True  # a misspelling of the wiki's word
    assert misspelt_among("Alaskan", vocabulary("alaska")) is True  # a form of the wiki's word
    assert misspelt_among("Parliment", vocabulary("parliament")) is True
