"""Answers by the span's syntactic role (issue 24 item 4): a who-answer is the one who does what
the question asks (the subject of its verb, the agent of a passive, a name beside its agent noun),
not any name of the right kind in a sentence that holds the verb; a how-many answer is a number
that counts what the question counts, not "two" in "the following two lines". Each reproduced on
our own sentences first: main answered "Government of France", "Spain" and "two" here."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker, render_answer
from affidavit.ask.extractive import extractive_answer
from affidavit.ask.roles import asked_role, counted
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.vault import Vault

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "affidavit" / "samples" / "sotu"
SOURCE = "ab" * 32


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef(SOURCE, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def short(question: str, *texts: str) -> str | None:
    reply = extractive_answer(question, [hit(n, t) for n, t in enumerate(texts)], "n")
    answer = reply["short_answer"]
    return None if answer is None else str(answer["text"])


def test_the_role_a_question_asks_about() -> None:
    assert asked_role("Who commanded the French squadron?") == ("command", "doer")
    assert asked_role("By whom was the tower designed?") == ("design", "doer")
    assert asked_role("Who was the tower designed by?") == ("design", "doer")
    assert asked_role("Which company built the bridge?") == ("build", "doer")
    assert asked_role("Who was elected president of the guild?") == ("elect", "done")
    assert asked_role("Who was president in 1823?") is None  # "be" says nothing of a role


def test_a_name_beside_the_verb_is_not_its_doer() -> None:
    # main: "Government of France" (an organisation near "commander" and "squadron")
    text = (
        "In approaching that port the frigate was warned off by the commander of the French "
        "squadron. This act will form a just cause of complaint to the Government of France "
        "against the officer by whom it was committed."
    )
    assert short("Who commanded the French squadron?", text) is None
    # main: "Spain" (in the war, beside the declaring; "we" declared)
    text = (
        "In the war between those new Governments and Spain we declared our neutrality at the "
        "time of their recognition."
    )
    assert short("Who declared war on the new Governments?", text) is None


def test_the_doer_is_found_however_the_sentence_says_it() -> None:
    # attacker: the check must not refuse the one who did it, in any of the usual forms
    question = "Who commanded the French squadron?"
    for text in (
        "The French squadron was commanded by Admiral de Grasse, and the Government of France "
        "paid for it.",
        "Admiral de Grasse, who commanded the French squadron, wrote to the Government of France.",
        "The commander of the French squadron, Admiral de Grasse, wrote to the Government of "
        "France.",
        "The Government of France thanked the French squadron that Admiral de Grasse commanded.",
    ):
        assert short(question, text) == "Admiral de Grasse", text
    text = "Spain declared war on Ruritania after the Government of France refused to mediate."
    assert short("Who declared war on Ruritania?", text) == "Spain"


def test_who_was_done_to_is_the_object_not_the_subject() -> None:
    # attacker: "Who was elected ...?" asks for the one elected, not the one electing
    text = "In 1904 Tomas Berg and the weavers elected Ada Whitcombe president of the guild."
    assert short("Who was elected president of the guild?", text) == "Ada Whitcombe"
    text = "Ada Whitcombe was elected president of the guild after Tomas Berg stepped down."
    assert short("Who was elected president of the guild?", text) == "Ada Whitcombe"


def test_a_sentence_without_the_verb_is_not_judged_by_it() -> None:
    # attacker: a paraphrase ("led" for "commanded") still names the commander
    text = "Admiral de Grasse led the French squadron out of the harbour in March."
    assert short("Who commanded the French squadron?", text) == "Admiral de Grasse"


def test_a_number_that_counts_something_else_is_no_count() -> None:
    # main: "two" (the lines of an example) for how many columns a table may have
    assert counted("How many columns can a table have by default?") == "column"
    question = "How many columns can a table have by default?"
    text = "The following two lines create a table whose columns have default values."
    assert short(question, text) is None
    # attacker: a bare number, or one that counts the asked noun, still answers
    assert short(question, "The default limit on the columns of a table is 2000.") == "2000"
    text = "By default a table can have 2000 columns and the following two lines show one."
    assert short(question, text) == "2000 columns" or short(question, text) == "2000"
    text = "SQLite supports joins of up to 64 tables, read by the following two lines of code."
    assert short("How many tables can a single join contain?", text) in ("64", "64 tables")


def test_a_phrase_that_does_it_answers_when_no_name_does() -> None:
    # main: no short answer (no named person or organisation does it)
    text = "In colonial times, assemblies and county governments handled most public business."
    question = "Who handled public business in colonial times?"
    assert short(question, text) == "assemblies and county governments"
    # attacker: the phrase must do what the question asks to what it asks ("declared their
    # independence" declares no war), and a pronoun is no answer
    text = "The new Governments who have declared their independence maintained it for years."
    assert short("Who declared war on the new Governments?", text) is None
    text = "In the war between those Governments and Spain we declared war on the pirates."
    assert short("Who declared war on the pirates?", text) is None


def test_a_sentence_with_the_verb_and_no_one_doing_it_is_not_in_the_wiki() -> None:
    # main: "Government of France", from the sentence with every word of the question
    question = "Who commanded the French squadron?"
    texts = (
        "The frigate was warned off by the commander of the French squadron near the port.",
        "The incident will be a cause of complaint to the Government of France.",
    )
    reply = extractive_answer(question, [hit(n, t) for n, t in enumerate(texts)], "n")
    assert reply["not_in_wiki"] and reply["short_answer"] is None, reply
    # attacker: the same sentences with the commander named answer it
    texts = (
        "The frigate was warned off by the commander of the French squadron, Admiral de Grasse.",
        texts[1],
    )
    reply = extractive_answer(question, [hit(n, t) for n, t in enumerate(texts)], "n")
    assert reply["short_answer"]["text"] == "Admiral de Grasse", reply


def test_the_quick_starts_who_questions_name_no_one_wrongly(vault: Vault, tmp_path: Path) -> None:
    """The quick start's wiki answered "Who commanded the French squadron?" with "Government of
    France" (complained to, in the sentence about "the commander of the French squadron") and
    "Who declared war on the United States?" with "Spain" (in "the war between those new
    Governments and Spain we declared our neutrality"), then "Napoleonic" (the struggles that
    "did threaten interests of the United States": a doer of another verb, on another object).
    No speech names either."""
    folder = tmp_path / "sotu"
    folder.mkdir()
    for name in ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md"):
        (folder / name).write_text((SAMPLES / name).read_text(encoding="utf-8"))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    asker = Asker(vault, None)
    answer = asker.ask("Who commanded the French squadron?")
    assert answer.verdict == "not_in_wiki", render_answer(answer)
    answer = asker.ask("Who declared war on the United States?")
    assert answer.short_answer is None, render_answer(answer)
    # attacker: a log that names a commander answers who commanded what it commanded
    log = "# The frigate's log\n\nIn 1823 Captain Ada Whitcombe commanded the frigate Essex.\n"
    (folder / "log.md").write_text(log)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder / "log.md")], "trusted")
    answer = asker.ask("Who commanded the frigate Essex?")
    assert answer.short_answer is not None, render_answer(answer)
    assert "Ada Whitcombe" in answer.short_answer.text, render_answer(answer)


def test_the_man_who_did_it_is_named_by_his_apposition() -> None:
    # attacker: "X, the man who founded ..." names X as the founder
    text = (
        "William Penn, the man who founded the colony of Pennsylvania in 1682, attracted an "
        "influx of British Quakers."
    )
    assert short("Who founded the colony of Pennsylvania?", text) == "William Penn"


def test_a_sentence_naming_others_is_shown_without_a_short_answer() -> None:
    # main: "New Hampshire" (a place near the question's words) as who sold the land
    question = "Who sold farmers plots of land in New Hampshire?"
    text = "Some farmers bought plots of land from speculators in New Hampshire and Vermont."
    reply = extractive_answer(question, [hit(0, text)], "n")
    assert reply["short_answer"] is None, reply
    assert not reply["not_in_wiki"] and reply["sentences"][0]["text"] == text, reply


def test_a_people_named_by_an_adjective_answers_with_its_noun() -> None:
    # main: "British" (the recogniser's people), where the doers are "British merchants"
    text = (
        "Because British merchants offered generous credit to their customers, Americans "
        "began buying British goods."
    )
    assert short("Who offered generous credit to customers?", text) == "British merchants"
    # attacker: a people named as a noun stays as it is
    text = "The British offered generous credit to their customers in the colonies."
    assert short("Who offered generous credit to customers?", text) == "British"


def test_a_doer_of_another_verb_on_another_object_is_no_answer() -> None:
    # main: "Napoleonic" for who declared war, from a sentence without "declared"
    text = (
        "While the Napoleonic struggles did threaten interests of the United States, we engaged "
        "in the War of 1812 to vindicate our right to peaceful trade."
    )
    assert short("Who declared war on the United States?", text) is None
    # attacker: another verb on the question's object still names its doer
    text = "Admiral de Grasse led the French squadron out of the harbour in March."
    assert short("Who commanded the French squadron?", text) == "Admiral de Grasse"
