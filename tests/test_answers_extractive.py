"""The extractive answerer picks the claim that answers, not the first that shares words, keeps
paraphrased questions, and gives short answers of the type the question asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from affidavit.ask import Asker, brevity
from affidavit.ask.extractive import extractive_answer, question_type
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit, Retriever
from affidavit.vault import Vault

SOURCE = "ab" * 32


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef(SOURCE, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def first(reply: dict[str, Any]) -> str:
    assert reply["not_in_wiki"] is False, reply
    return str(reply["sentences"][0]["text"])


def test_the_claim_with_the_rare_words_wins_over_a_better_ranked_one_on_a_matching_page() -> None:
    hits = [
        hit(
            0, "Every generator has a period, and the period bounds its output.", "Mersenne Twister"
        ),
        hit(1, "The Mersenne Twister has a period of 2**19937-1."),
        hit(2, "A generator with a short period repeats itself quickly."),
    ]
    reply = extractive_answer("What is the period of the Mersenne Twister generator?", hits, "n")
    assert first(reply) == "The Mersenne Twister has a period of 2**19937-1."


def test_a_paraphrased_question_still_finds_its_claim() -> None:
    # shares two of the question's seven content words: under the old 0.34 floor, an abstention
    claim = "Two senators never voted on the bill, citing illness."
    reply = extractive_answer(
        "Which senators failed to actually cast a ballot on the final bill?", [hit(0, claim)], "n"
    )
    assert first(reply) == claim


def test_an_unrelated_claim_is_still_not_an_answer() -> None:
    reply = extractive_answer(
        "What is the capital of Mongolia?",
        [hit(0, "The lighthouse keeper logged every storm of the winter in his book.")],
        "n",
    )
    assert reply["not_in_wiki"] is True


def short(question: str, text: str) -> str | None:
    reply = extractive_answer(question, [hit(0, text)], "n")
    answer = reply["short_answer"]
    return None if answer is None else str(answer["text"])


def test_who_takes_the_name_nearest_the_questions_words_not_the_first_capital() -> None:
    text = "After Shirley's recall in 1757, the governor of New France was Pierre de Vaudreuil."
    assert short("Who was the governor of New France?", text) == "Pierre de Vaudreuil"
    text = "The present tower was designed by James Douglass and lit in 1882."
    assert short("Who designed the present tower?", text) == "James Douglass"


def test_a_month_or_weekday_is_never_who_or_where() -> None:
    # the quick start's wiki once answered "Who was president in 1823?" with "July"
    text = "The postage which accrued from July 1st, 1822 to July 1st, 1823 was $1,114,345.12."
    assert short("Who was president in 1823?", text) is None
    assert short("Where was the postage paid in 1823?", text) is None
    text = "On Friday the bill was signed by Senator Adams in Boston."
    assert short("Who signed the bill?", text) == "Senator Adams"
    assert short("Where was the bill signed?", text) == "Boston"


def test_when_takes_the_date_of_the_asked_event() -> None:
    text = "Founded in 1850, the college moved to the hill in 1923 after a fire destroyed it."
    assert short("When did the college move to the hill?", text) == "1923"


def test_how_many_takes_a_number_and_where_a_place() -> None:
    text = "In 2019 the museum in Oslo received 420,000 visitors from abroad."
    assert short("How many visitors did the museum receive from abroad?", text) == "420,000"
    assert short("Where is the museum that received visitors from abroad?", text) == "Oslo"


def test_question_types() -> None:
    assert question_type("In what year was it built?") == "when"
    assert question_type("How many people live there?") == "number"
    assert question_type("Whom did she marry?") == "who"
    assert question_type("Where is the tower?") == "where"
    assert question_type("Why is the sky blue?") == ""


def test_what_is_x_takes_the_claim_that_defines_x() -> None:
    hits = [
        hit(0, "The venv module creates an independent set of Python packages for each project."),
        hit(1, "Python also includes a data type for sets."),
        hit(2, "A set is an unordered collection with no duplicate elements."),
    ]
    reply = extractive_answer("What is a set in Python?", hits, "n")
    assert first(reply) == "A set is an unordered collection with no duplicate elements."


def test_what_does_x_do_takes_the_claim_that_describes_x() -> None:
    hits = [
        hit(0, "Indicates whether the platform provides a symlink attack resistant rmtree."),
        hit(1, "rmtree(path, ignore_errors=False): Delete an entire directory tree."),
    ]
    reply = extractive_answer("What does shutil.rmtree do?", hits, "n")
    assert first(reply) == "rmtree(path, ignore_errors=False): Delete an entire directory tree."


def test_a_definition_with_a_parenthetical_expansion_defines_the_term() -> None:
    hits = [
        hit(0, "Programmers can also describe the CSV formats understood by other applications."),
        hit(1, "The csv module implements classes to read and write tabular data in CSV format."),
        hit(
            2,
            "The so-called CSV (Comma Separated Values) format is the most common import and "
            "export format for spreadsheets and databases.",
        ),
    ]
    assert first(extractive_answer("What is the CSV format?", hits, "n")).startswith(
        "The so-called"
    )


def test_a_manuals_name_line_defines_its_command() -> None:
    hits = [
        hit(0, "This sed program was built with SELinux support."),
        hit(1, "The full documentation for sed is maintained as a Texinfo manual."),
        hit(2, "sed - stream editor for filtering and transforming text"),
    ]
    assert first(extractive_answer("What is sed?", hits, "n")).startswith("sed - stream editor")


def test_how_do_i_prefers_the_instruction_that_says_to_do_it() -> None:
    hits = [
        hit(0, "The module used to create and manage virtual environments is called venv."),
        hit(1, "The venv module supports creating lightweight virtual environments."),
        hit(
            2,
            "To create a virtual environment, decide upon a directory where you want to place "
            "it, and run the venv module as a script with the directory path:",
        ),
    ]
    reply = extractive_answer(
        "How do I create a virtual environment with python -m venv?", hits, "n"
    )
    assert first(reply).startswith("To create a virtual environment")


def test_called_and_named_are_the_same_question() -> None:
    named = 'By the way, the language is named after the BBC show "Monty Python\'s Flying Circus".'
    hits = [
        hit(0, "Python is an interpreted, interactive, object-oriented programming language."),
        hit(1, "Python is just the language for you."),
        hit(2, "You can search online bookstores for the Python language."),
        hit(3, named),
    ]
    reply = extractive_answer("Why is the language called Python?", hits, "n")
    assert first(reply) == named


def test_a_definition_ranked_below_the_candidates_is_still_given(
    vault: Vault, tmp_path: Path
) -> None:
    """Forty claims hold "set" and "Python"; the definition holds only "set": BM25 ranks it
    below every candidate for "What is a set in Python?", the term's own search finds it."""
    things = ["parser", "logger", "socket", "thread", "buffer", "cursor", "header", "window"]
    lines = [
        f"Python scripts set the {thing} option number {n} before the Python run starts."
        for n in range(5)
        for thing in things
    ]
    doc = tmp_path / "notes.md"
    doc.write_text(
        "# Notes\n\n"
        + "\n\n".join(lines)
        + "\n\n## Sets\n\nA set is an unordered collection with no duplicate elements.\n"
    )
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    top = Retriever(vault.db).search("What is a set in Python?", k=vault.config.candidates)
    assert not any("unordered collection" in h.text for h in top)  # the ranking this is about
    answer = Asker(vault, None).ask("What is a set in Python?")
    assert answer.verdict == "answered"
    assert (
        answer.sentences[0].text == "A set is an unordered collection with no duplicate elements."
    )


ZORVIA = "Which river flows through the old capital city of Zorvia?"
VEL = "The Vel river flows through the old capital city, and barges carry grain on it."


def texts(reply: dict[str, Any]) -> list[str]:
    return [str(s["text"]) for s in reply["sentences"]]


def test_an_unsure_answer_also_prints_the_best_retrieved_claims_each_cited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the answerer's pick lacks "Zorvia" (only its page title has it): unsure, so the first
    # retrieved claims (BM25 order) that hold enough of the question fill the answer to two
    # (issue 24: at most two sentences; it was three)
    hits = [
        hit(0, "The old capital of Zorvia stands on a hill above the plain."),
        hit(1, "Zorvia moved its capital to the coast in 1820."),
        hit(2, "A river flows past the eastern hills of Zorvia."),
        hit(3, VEL, "Zorvia"),
    ]
    # a fill that scored 0.5 or more below the pick is left out (ask/brevity.py, branch ans24)
    assert texts(extractive_answer(ZORVIA, hits, "n")) == [VEL]
    monkeypatch.setattr(brevity, "BRIEF", False)
    reply = extractive_answer(ZORVIA, hits, "n")
    assert texts(reply) == [VEL, hits[0].text]
    assert [s["claims"] for s in reply["sentences"]] == [[hits[3].claim_id], [hits[0].claim_id]]


def test_a_sure_answer_is_not_padded() -> None:
    vel = "The Vel river flows through the old capital city of Zorvia, carrying grain barges."
    hits = [
        hit(0, "The old capital of Zorvia stands on a hill above the plain."),
        hit(1, "Zorvia moved its capital to the coast in 1820."),
        hit(2, vel),
    ]
    assert texts(extractive_answer(ZORVIA, hits, "n")) == [vel]


def test_a_retrieved_claim_that_holds_too_little_of_the_question_never_fills() -> None:
    hits = [hit(0, "Grain prices rose sharply in the spring."), hit(1, VEL, "Zorvia")]
    assert texts(extractive_answer(ZORVIA, hits, "n")) == [VEL]


def test_a_name_spelled_without_its_diacritics_still_matches() -> None:
    claim = "Sabiha Gökçen International opened in 2001 to relieve Atatürk."
    reply = extractive_answer(
        "In which year did the Gokcen airport first open to commercial flights?",
        [hit(0, claim)],
        "n",
    )
    assert first(reply) == claim
    assert reply["short_answer"]["text"] == "2001"


def test_a_how_long_answer_is_the_duration_with_its_unit_not_another_number() -> None:
    # main: "80" (a temperature) for how long; "25" dropped by the support check ("about 25")
    text = "Green tea is steeped at 80 degrees Celsius for two minutes."
    assert short("How long is green tea steeped?", text) == "two minutes"
    text = "Espresso is extracted in about 25 seconds at 9 bar."
    assert short("How long does espresso take?", text) == "about 25 seconds"
    reply = extractive_answer("How long does espresso take?", [hit(0, text)], "n")
    assert reply["short_answer"]["text"] == "about 25 seconds"


def test_a_temperature_question_gets_the_degrees() -> None:
    text = "Black tea is steeped at 95 degrees Celsius for four minutes."
    assert short("At what temperature is black tea steeped?", text) == "95 degrees Celsius"
    assert short("How hot is the water for black tea?", text) == "95 degrees Celsius"
    assert question_type("At what temperature does it melt?") == "number"


def test_a_kept_bound_is_the_quotes_own_and_an_answer_the_check_admits(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "coffee.md").write_text(
        "# Coffee notes\n\nEspresso is extracted in about 25 seconds at 9 bar.\n"
        "A French press brews for no more than four minutes.\n"
    )
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    answer = Asker(vault, None).ask("How long does espresso take?")
    assert answer.short_answer is not None and answer.short_answer.text == "about 25 seconds"
    assert not [d for d in answer.dropped if "25" in d.text]  # main: "25" dropped as uncertain
