"""Facts in a claim: what two versions of a sentence disagree on."""

from __future__ import annotations

from affidavit.facts import analyse, compare, show_fact


def test_numbers_are_compared_by_value_not_by_spelling() -> None:
    assert analyse("It cost 1,200 dollars.").facts == analyse("It cost 1200 dollars.").facts
    assert "#2.5" in analyse("A rise of 2.50 percent.").facts


def test_a_changed_number_on_both_sides_conflicts() -> None:
    c = compare(
        "Of those diagnosed, 396 were in Honolulu and seven outside the State.",
        "Of those diagnosed, 399 were in Honolulu and eight outside the State.",
    )
    assert c.similarity == 1.0 and c.conflicting
    assert c.only_a == {"#396", "#seven"} and c.only_b == {"#399", "#eight"}


def test_a_swapped_name_conflicts() -> None:
    c = compare(
        "Cristian Pavón is an Argentine footballer who plays as a forward for Boca Juniors.",
        "Cristian Pavón is an Argentine footballer who plays as a forward for Arsenal.",
    )
    assert c.conflicting and c.only_b == {"@arsenal"}


def test_adding_a_detail_refines_and_does_not_conflict() -> None:
    c = compare("The bridge opened in 1961.", "The bridge opened in May 1961.")
    assert not c.conflicting and c.only_b == {"#may"}


def test_a_negation_on_one_side_conflicts() -> None:
    c = compare("Golf courses were allowed to open.", "Golf courses were not allowed to open.")
    assert c.negation_differs and c.conflicting


def test_sentence_initial_capitals_are_not_names() -> None:
    assert analyse("The museum opened.").facts == frozenset()


def test_facts_are_shown_as_the_text_writes_them() -> None:
    assert show_fact("#40000", "It carries 40,000 cars") == "40,000"
    assert show_fact("@arsenal", "plays for Arsenal.") == "Arsenal"
    assert show_fact("#7") == "7"
