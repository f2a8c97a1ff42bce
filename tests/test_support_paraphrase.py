"""Paraphrase knowledge (issue 22 item 2, sup22a): a phrasal verb WordNet lists, a word's wider
senses when its neighbours are matched, a noun the lemmatiser cut ("means"), and a predicate the
quote states twice judged by the statement that holds the text's arguments. Each faithful
sentence below waited for a person on the code before this change; each attack beside it —
the same paraphrase with a number, a role, a name or a negation changed — is still not
supported. Our own sentences, none from the writer set."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, SupportChecker
from affidavit.support.paraphrase import anchored, phrasal
from affidavit.support.parse import parse

pytest.importorskip("spacy")

WARS = "The French defeated the Dutch in 1672, and the British defeated the French in 1759."
PASS = "The main crossover of the Alps between Italy and Austria is the Brenner Pass."
SCHOOL = "In 1921 the town council established a music school for orphans."
MEANS = "Rationing is a useful means to reduce waste in long winters."
COVER = "The survey is generally recognized as encompassing farms that are small and remote."


@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker()


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # every statement of a repeated predicate counts (item 1's known gap)
        ("The British defeated the French.", WARS),
        ("The French were defeated by the British.", WARS),
        ("The British defeated the French in 1759.", WARS),
        # a word's wider senses where its neighbours are matched
        ("The main crossing of the Alps between Italy and Austria is the Brenner Pass.", PASS),
        # a phrasal verb WordNet lists as one lemma
        ("In 1921 the town council set up a music school for orphans.", SCHOOL),
        # "means" is a noun of its own, not the plural of "mean"
        ("Rationing is a useful way to reduce waste in long winters.", MEANS),
    ],
)
def test_faithful_paraphrase_is_supported(checker: SupportChecker, text: str, quote: str) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == SUPPORTED, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a repeated predicate: a year or a pair that belongs to the other statement
        ("The British defeated the French in 1672.", WARS),
        ("The Dutch defeated the French.", WARS),
        ("The French defeated the British.", WARS),
        ("The British defeated the Dutch.", WARS),
        # the paraphrase keeps no changed number, negation or name
        ("The main crossing of the Alps between Italy and Austria is the Resia Pass.", PASS),
        ("In 1931 the town council set up a music school for orphans.", SCHOOL),
        ("In 1921 the town council never set up a music school for orphans.", SCHOOL),
        ("Rationing is not a useful way to reduce waste in long winters.", MEANS),
        ("The survey is generally recognized as covering farms that are large and remote.", COVER),
        # a verb's or adjective's rare sense never stands for it, nor a noun of a contrast set
        ("In 1950 she taught French at the school.", "In 1950 she learned French at the school"),
        (
            "The king of the island was crowned in 1950.",
            "The queen of the island was crowned in 1950",
        ),
        ("Only a small share of the land was farmed.", "Only a low share of the land was farmed"),
    ],
)
def test_changed_fact_behind_a_paraphrase_is_not_supported(
    checker: SupportChecker, text: str, quote: str
) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict != SUPPORTED, verdict


def test_reversed_roles_of_a_repeated_predicate_are_refused(checker: SupportChecker) -> None:
    verdict = checker.check("The French defeated the British.", [WARS])
    assert verdict.verdict == UNSUPPORTED
    assert "roles reversed" in verdict.reason


def test_wider_senses_need_matched_neighbours(checker: SupportChecker) -> None:
    """ "crossing" restates "crossover" only in the same place: on its own, over eight senses,
    it would match almost anything; in a sentence whose words around it are other words, the
    quote's "crossover" is not taken for it."""
    verdict = checker.check(
        "A crossing of frozen rivers by sledge was common.", ["Sledges were a crossover success."]
    )
    assert verdict.verdict != SUPPORTED
    assert "crossing" in verdict.reason


def test_phrasal_lemmas_come_from_wordnet() -> None:
    found = phrasal(parse("The council set up a school and carried out a survey."))
    assert sorted(found.values()) == ["carry_out", "set_up"]
    # a particle WordNet doesn't list with its verb is no phrasal lemma
    assert phrasal(parse("The children ran around.")) == {}


def test_anchored_reads_senses_not_words() -> None:
    crossing = parse("the main crossing")[2]
    crossover = parse("the main crossover")[2]
    bridge = parse("the main bridge")[2]
    assert anchored(crossing, crossover, "n")
    assert not anchored(crossing, bridge, "n")
    # sisters under one hypernym share a rarer sense, and are still two things
    king, queen = parse("the king")[1], parse("the queen")[1]
    assert not anchored(king, queen, "n")


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # the heading's subject in the slot the quote fills with a pointing phrase, whatever
        # the voice of either
        ("In 1846 the saxophone was patented by Sax.", "In 1846 Sax patented the instrument"),
        ("In 1846 Sax patented the saxophone.", "In 1846 the instrument was patented by Sax"),
        ("In 1846 Sax patented the saxophone.", "In 1846 Sax patented it"),
    ],
)
def test_heading_subject_fills_a_pointing_slot(
    checker: SupportChecker, text: str, quote: str
) -> None:
    verdict = checker.check(text, [quote], context=["Saxophone"])
    assert verdict.verdict == SUPPORTED, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # "the clarinet" is another kind of thing than the heading's saxophone (main admitted
        # the first outright)
        ("The saxophone was patented by Sax in 1846.", "The clarinet was patented by Sax in 1846"),
        ("In 1846 the saxophone was patented by Sax.", "In 1846 Sax patented the clarinet"),
        ("In 1846 Sax patented the saxophone.", "In 1846 Sax patented the clarinet"),
        # roles reversed around the heading's subject
        ("In 1846 the saxophone patented Sax.", "In 1846 Sax patented the instrument"),
    ],
)
def test_heading_subject_never_replaces_another_kind(
    checker: SupportChecker, text: str, quote: str
) -> None:
    verdict = checker.check(text, [quote], context=["Saxophone"])
    assert verdict.verdict != SUPPORTED, verdict
