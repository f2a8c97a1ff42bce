"""Questions about what someone said (issue 24 item 4): "What did Whitcombe say about the looms?"
asks about the page whose title names her, whose claims are her own sentences and never hold her
name. Main answered "Not in the wiki … It never mentions Whitcombe" although her page was there,
and "What did Berg say about the hall?" from another speech that names a Berg Street."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker
from affidavit.ask.answer import render_answer
from affidavit.ask.speakers import speakers, unsaid
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

WHITCOMBE = """# Address of the Guild's chair, 1904: Ada Whitcombe

Therefore, as your chair, I report to the Council that the accounts of 1904 are in good order.

The new hall on Berg Street was opened in the spring, and the looms were moved there in May.

I am sorry to say that the dyers' strike lasted through the summer.
"""
BERG = """# Address of the Guild's chair, 1911: Tomas Berg

As your chair, I can tell the Council that the weavers' school has doubled its pupils.

The river flooded the lower workshops in March, and the Council paid for their repair.
"""


def guild(vault: Vault, tmp_path: Path) -> Vault:
    folder = tmp_path / "guild"
    folder.mkdir()
    (folder / "1904-whitcombe.md").write_text(WHITCOMBE)
    (folder / "1911-berg.md").write_text(BERG)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    return vault


def cited_pages(vault: Vault, question: str) -> tuple[str, set[str]]:
    answer = Asker(vault, None).ask(question)
    pages = {
        str(vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (c,)).fetchone()[0])
        for s in answer.sentences
        for c in s.claims
    }
    return answer.verdict, pages


def test_a_speaker_named_only_by_a_page_title_is_answered_from_that_page(
    vault: Vault, tmp_path: Path
) -> None:
    guild(vault, tmp_path)
    answer = Asker(vault, None).ask("What did Whitcombe say about the looms?")
    assert answer.verdict != "not_in_wiki" and not answer.unknown  # main: "never mentions"
    assert any("looms were moved" in s.text for s in answer.sentences)
    verdict, pages = cited_pages(vault, "According to Whitcombe, when were the looms moved?")
    assert verdict != "not_in_wiki" and pages and all("whitcombe" in p for p in pages)


def test_the_speaker_s_pages_only_not_a_street_of_that_name(vault: Vault, tmp_path: Path) -> None:
    guild(vault, tmp_path)
    verdict, pages = cited_pages(vault, "What did Berg say about the river?")
    assert verdict != "not_in_wiki" and pages and all("berg" in p for p in pages)
    # main answered from Whitcombe's "hall on Berg Street"; Berg's speech has no hall
    verdict, pages = cited_pages(vault, "What did Berg say about the hall?")
    assert verdict == "not_in_wiki" and not pages


def test_the_verb_of_saying_is_no_word_of_the_answer(vault: Vault, tmp_path: Path) -> None:
    guild(vault, tmp_path)
    answer = Asker(vault, None).ask("What did Whitcombe say about the accounts?")
    assert any("accounts of 1904" in s.text for s in answer.sentences)
    assert not any("sorry to say" in s.text for s in answer.sentences)
    assert unsaid("What did Roosevelt say about France?").split() == [
        "What",
        "did",
        "Roosevelt",
        "about",
        "France?",
    ]


class Titles:
    def __init__(self, *titles: str, gathered: tuple[str, ...] = ()) -> None:
        self.titles = titles
        self.gathered = gathered  # topic pages: claims from many sources

    def titled_pages(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        return [(f"p{n}", t) for n, t in enumerate(self.titles) if any(x in t for x in terms)]

    def page_sources(self, slug: str) -> int:
        return 5 if self.titles[int(slug[1:])] in self.gathered else 1


def test_only_a_name_the_question_makes_the_speaker_and_a_title_holds_whole() -> None:
    wiki = Titles("State of the Union, 1823: James Monroe", "Monroeville", "Fort Washington")
    assert speakers(wiki, "What did Monroe say about France?") == {"Monroe": ["p0"]}
    assert speakers(wiki, "What did James Monroe write about Spain?") == {
        "James": ["p0"],
        "Monroe": ["p0"],
    }
    assert speakers(wiki, "In Monroe's message, what is said of Spain?") == {"Monroe": ["p0"]}
    assert speakers(wiki, "According to Monroe, who governs Spain?") == {"Monroe": ["p0"]}
    assert speakers(wiki, "Who was Monroe?") == {}  # not asked what he said
    assert speakers(wiki, "What did the treaty with Monroe say?") == {}  # the treaty says
    assert speakers(wiki, "What did Washington say about the militia?") == {
        "Washington": ["p2"]
    }  # a title holding the name as a word: the caller keeps to it
    assert speakers(Titles("Monroeville"), "What did Monroe say?") == {}  # not the word
    # a topic page gathered from many sources is about Monroe, not his own words
    assert (
        speakers(Titles("James Monroe", gathered=("James Monroe",)), "What did Monroe say?") == {}
    )
    # a page titled with the name alone is about him (a topic page of claims naming him)
    assert speakers(Titles("Jefferson"), "What did Jefferson say about Spain?") == {}
    # the whole name the question gives: "Armenian Orthodox Church" is not "Armenian Apostolic Church"
    church = Titles("Letter of the Armenian Apostolic Church, 1921")
    assert speakers(church, "What does the Armenian Orthodox Church argue?") == {}
    assert speakers(church, "What does the Armenian Apostolic Church argue?") != {}
    # "United states": a name of the title, not a verb of saying
    assert speakers(Titles("United States"), "What happened when the United states grew?") == {}


def test_a_name_only_a_page_title_holds_is_named_not_never_mentioned(
    vault: Vault, tmp_path: Path
) -> None:
    """ "Who was Whitcombe?": no claim says who she was, but the wiki names her in a title: main
    said "It never mentions Whitcombe", which is false; the answer names the page instead."""
    guild(vault, tmp_path)
    answer = Asker(vault, None).ask("Who was Whitcombe?")
    assert answer.verdict == "not_in_wiki" and not answer.sentences
    assert answer.unknown == [] and answer.titled == ["Whitcombe"]
    assert answer.closest[0] == (
        "1904-whitcombe",
        "Address of the Guild's chair, 1904: Ada Whitcombe",
    )
    text = render_answer(answer)
    assert "never mentions" not in text
    assert "Whitcombe appears only in page titles; no claim says anything about it." in text
    assert answer.to_json()["titled_names"] == ["Whitcombe"]
    # a name no title holds as a word is still never mentioned: "Whit" is in "Whitcombe" only
    other = Asker(vault, None).ask("Who was Whit?")
    assert other.unknown == ["Whit"] and other.titled == []
    assert "It never mentions Whit." in render_answer(other)
