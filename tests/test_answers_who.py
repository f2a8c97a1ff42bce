"""Who-questions (issue 24 item 4): people and organisations as spaCy's recogniser reads them, not
any capitalised run, and the page title a source opens with as a cited answer when it holds every
word of the question ("Who was chair of the guild in 1904?" → "Ada Whitcombe", from "Address of the
Guild's chair, 1904: Ada Whitcombe"). Each reproduced on our own documents first: main answered
"Congress", "Hall of Mirrors", nothing for "which company", and the quick start's own question
wrongly; a title that holds only some of the question's words answers nothing."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker, render_answer
from affidavit.ask.extractive import extractive_answer, question_type
from affidavit.ask.save import propose_answer
from affidavit.ask.texts import source_texts
from affidavit.inbox import get_plan
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.vault import Vault

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "affidavit" / "samples" / "sotu"
SOURCE = "ef" * 32

GUILD_1904 = """# Address of the Guild's chair, 1904: Ada Whitcombe

Therefore, as your chair, I report to the Council that the accounts of 1904 are in good order.

The new hall on Mill Street was opened in the spring, and the looms were moved there in May.
"""
GUILD_1911 = """# Address of the Guild's chair, 1911: Tomas Berg

As your chair, I can tell the Council that the weavers' school has doubled its pupils.

The river flooded the lower workshops in March, and the Council paid for their repair.
"""


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef(SOURCE, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def short(question: str, *texts: str) -> str | None:
    reply = extractive_answer(question, [hit(n, t) for n, t in enumerate(texts)], "n")
    answer = reply["short_answer"]
    return None if answer is None else str(answer["text"])


def ingest(vault: Vault, folder: Path, **docs: str) -> None:
    folder.mkdir()
    for name, text in docs.items():
        (folder / f"{name}.md").write_text(text)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")


def test_a_place_or_a_hall_is_no_who_answer_a_person_is() -> None:
    # main: "Hall of Mirrors" (a capitalised run near "signed")
    text = "The treaty was signed in the Hall of Mirrors by the delegates of Ruritania."
    assert short("Who signed the treaty?", text) == "Ruritania"  # a state acting, not the hall
    text = "The treaty was signed in the Hall of Mirrors on a wet morning."
    assert short("Who signed the treaty?", text) is None
    text = "In the Hall of Mirrors the treaty was signed by Ada Whitcombe."
    assert short("Who signed the treaty?", text) == "Ada Whitcombe"


def test_which_company_asks_for_an_organisation_whole() -> None:
    # main: no short answer (not a typed question); the capitalised run stops at "and"
    assert question_type("Which company built the bridge?") == "org"
    assert question_type("What engineering firm built the bridge?") == "org"
    text = (
        "The bridge was built by the Cleveland Bridge and Engineering Company and opened by "
        "King George in 1917."
    )
    assert short("Which company built the bridge?", text) == (
        "Cleveland Bridge and Engineering Company"
    )
    assert short("Who opened the bridge?", text) == "King George"
    # a state or a person is no company
    text = "The canal was built for Ruritania after the war, and King George opened it."
    assert short("Which company built the canal?", text) is None


def test_the_quick_starts_question_is_honestly_not_in_the_wiki(
    vault: Vault, tmp_path: Path
) -> None:
    """The quick start's wiki answered "Who was president in 1823?" with "Congress" (a sentence of
    1941 that holds "President"), then, from the 1823 speech's title, "James Monroe" — which the
    wiki never says was president: the title "State of the Union, 1823: James Monroe" holds
    "1823" but not "president". The honest answer is "Not in the wiki" with that page first
    among the closest. Attacker: the same title must not answer who was king of France."""
    folder = tmp_path / "sotu"
    folder.mkdir()
    for name in ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md"):
        (folder / name).write_text((SAMPLES / name).read_text(encoding="utf-8"))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    asker = Asker(vault, None)
    for question in ("Who was president in 1823?", "Who was king of France in 1823?"):
        answer = asker.ask(question)
        shown = render_answer(answer)
        assert answer.verdict == "not_in_wiki", shown
        assert "Monroe" not in " ".join(s.text for s in answer.sentences), shown
        assert answer.closest and "1823" in answer.closest[0][1], shown


def test_a_person_named_in_a_title_answers_who_with_that_title_cited(
    vault: Vault, tmp_path: Path
) -> None:
    ingest(vault, tmp_path / "docs", guild1904=GUILD_1904, guild1911=GUILD_1911)
    asker = Asker(vault, None)
    answer = asker.ask("Who was chair of the guild in 1904?")
    shown = render_answer(answer)
    assert answer.short_answer is not None and answer.short_answer.text == "Ada Whitcombe", shown
    (claim,) = answer.short_answer.claims
    ref = answer.titles[claim]
    # the title as the source's own words at the offsets the host found
    text = source_texts(vault, [ref.source_id])[ref.source_id]
    assert text[ref.start : ref.end] == "Address of the Guild's chair, 1904: Ada Whitcombe"
    later = asker.ask("Who was chair of the guild in 1911?")
    assert later.short_answer is not None and later.short_answer.text == "Tomas Berg"


def test_a_forged_title_that_its_source_does_not_hold_is_no_answer(
    vault: Vault, tmp_path: Path
) -> None:
    """Attacker: the pages table is rewritten by hand (W10: rows are untrusted) so that a page's
    title names someone its source never names; the title answer is checked against the
    source's own text, which lacks it, and is removed."""
    ingest(vault, tmp_path / "docs", guild1904=GUILD_1904, guild1911=GUILD_1911)
    with vault.db:
        vault.db.execute(
            "UPDATE pages SET title = 'Address of the Guild''s chair, 1904: Ida Forged' "
            "WHERE title LIKE '%Ada Whitcombe%'"
        )
    answer = Asker(vault, None).ask("Who was chair of the guild in 1904?")
    shown = render_answer(answer)
    assert "Ida Forged" not in " ".join(
        [
            *(s.text for s in answer.sentences),
            answer.short_answer.text if answer.short_answer else "",
        ]
    ), shown
    assert not answer.titles


def test_a_title_that_holds_none_of_the_questions_words_is_not_read(
    vault: Vault, tmp_path: Path
) -> None:
    """Attacker: every word of the question is in a sentence that names no person ("the new
    hall on Mill Street was opened"): that sentence is no who-answer, and neither is a person
    from a title that holds none of the question's words."""
    ingest(vault, tmp_path / "docs", guild1904=GUILD_1904)
    answer = Asker(vault, None).ask("Who opened the new hall on Mill Street?")
    shown = render_answer(answer)
    assert answer.short_answer is None or answer.short_answer.text != "Ada Whitcombe", shown
    assert answer.short_answer is None or "Street" not in answer.short_answer.text, shown


HALL = (
    "The new hall on Mill Street was opened in the spring, and the looms were moved there in May."
)


def test_the_sentence_that_names_who_comes_first_not_the_one_with_every_word() -> None:
    """Attacker: every word of the question is in a sentence that doesn't say who; main gave that
    sentence alone. The sentence that names the person, with 0.35 of its support or more, comes
    first and gives the short answer (it holds 0.42 of the question, weighted by rarity)."""
    hits = [
        hit(0, HALL),
        hit(1, "Tomas Berg opened the new hall with a speech to the weavers."),
    ]
    reply = extractive_answer("Who opened the new hall on Mill Street?", hits, "n")
    assert reply["short_answer"]["text"] == "Tomas Berg", reply
    assert reply["sentences"][0]["text"].startswith("Tomas Berg opened"), reply


def test_a_name_that_shares_one_word_with_the_question_is_not_put_first() -> None:
    """Attacker: sentences that name someone but hold one word of the question ("street",
    "mill", "hall", "opened") are not promoted over the sentence that holds it all, and their
    names are no short answer. The sentence that holds it all says the hall "was opened" by no
    one named: the wiki doesn't say who (answers5: "Not in the wiki", where answers4 showed it)."""
    for other in (
        "Ada Whitcombe walked down the street to the river.",
        "Ada Whitcombe opened a shop by the river.",
        "Ada Whitcombe sold the mill to the town.",
        "Ada Whitcombe swept the hall.",
    ):
        reply = extractive_answer(
            "Who opened the new hall on Mill Street?", [hit(0, HALL), hit(1, other)], "n"
        )
        assert reply["not_in_wiki"] and not reply["sentences"], reply
        assert reply["short_answer"] is None, reply


def test_an_answer_shows_at_most_two_sentences() -> None:
    # main: three (the best claim and the first retrieved ones filling an unsure answer)
    hits = [
        hit(0, "The weavers' school was founded by the guild to teach spinning and dyeing."),
        hit(1, "The school teaches spinning to forty pupils every winter in the old hall."),
        hit(2, "Pupils of the guild's school learn dyeing in the summer months."),
        hit(3, "The guild pays for the school from the rents of its shops."),
    ]
    reply = extractive_answer("What does the guild's school teach its pupils in winter?", hits, "n")
    assert not reply["not_in_wiki"]
    assert 1 <= len(reply["sentences"]) <= 2, reply


def test_a_saved_title_answer_quotes_the_title_from_its_source(
    vault: Vault, tmp_path: Path
) -> None:
    """``ask --save`` of an answer taken from a page title: the title sentence carries the title
    as its source's own quote, so the gate can verify it (with only the page's other claim's
    quote, main's save, it could not)."""
    ingest(vault, tmp_path / "docs", guild1904=GUILD_1904, guild1911=GUILD_1911)
    answer = Asker(vault, None).ask("Who was chair of the guild in 1904?")
    assert answer.titles, render_answer(answer)
    proposal = propose_answer(vault, answer, "tester")
    op = get_plan(vault, proposal.plan_id).plan.operations[0]
    assert op.op == "create_page"
    titled = [c for c in op.claims if c.text == "Address of the Guild's chair, 1904: Ada Whitcombe"]
    assert titled, op.claims
    quotes = [e.quote for e in titled[0].evidence]
    assert quotes[0] == "Address of the Guild's chair, 1904: Ada Whitcombe", quotes


def test_a_title_naming_the_questions_subject_is_not_its_answer() -> None:
    """Attacker: the page about Ada Whitcombe holds "Whitcombe" from the question, and names a
    person; but she is what the question is about, not who painted her portrait."""
    hits = [
        hit(0, "The portrait was painted in 1904 and hangs in the guild hall.", "Ada Whitcombe"),
        hit(1, "Her portrait shows her at the loom.", "Ada Whitcombe"),
    ]
    reply = extractive_answer("Who painted Whitcombe's portrait?", hits, "n")
    assert reply["short_answer"] is None or "Whitcombe" not in reply["short_answer"]["text"]


def test_a_title_in_text_the_sanitizer_flagged_is_no_evidence(vault: Vault, tmp_path: Path) -> None:
    """Attacker: the title line stands in text the sanitizer flagged (hidden, or a planted
    instruction: W12); it is not clean evidence, so no answer rests on it."""
    ingest(vault, tmp_path / "docs", guild1904=GUILD_1904, guild1911=GUILD_1911)
    (source_id,) = vault.db.execute("SELECT id FROM sources WHERE name = 'guild1904.md'").fetchone()
    with vault.db:
        vault.db.execute(
            'INSERT INTO source_flags (source_id, kind, start, "end", detail) '
            "VALUES (?, 'hidden_text', 0, 60, 'test')",
            (source_id,),
        )
    answer = Asker(vault, None).ask("Who was chair of the guild in 1904?")
    assert not answer.titles, render_answer(answer)
    assert answer.short_answer is None or answer.short_answer.text != "Ada Whitcombe"
