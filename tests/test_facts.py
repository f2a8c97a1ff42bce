"""Facts in a claim: what two versions of a sentence disagree on."""

from __future__ import annotations

from affidavit.support.facts import analyse, compare, disagreement, show_fact


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


# --- disagreement: one subject, one changed fact ---------------------------------------------


def test_a_changed_number_about_one_subject_is_a_disagreement_that_says_why() -> None:
    found = disagreement(
        "The Tamar Bridge carries 40,000 vehicles each day between Plymouth and Saltash.",
        "The Tamar Bridge carries 45,000 vehicles each day between Plymouth and Saltash.",
    )
    assert found is not None
    assert (found.fact, found.a, found.b) == ("number", "40,000", "45,000")
    assert "Tamar Bridge" in found.subject
    assert found.describe().startswith("about Tamar Bridge")


def test_a_negation_and_an_opposite_are_disagreements() -> None:
    negated = disagreement(
        "Golf courses were allowed to open in May.", "Golf courses were not allowed to open in May."
    )
    assert negated is not None and (negated.fact, negated.b) == ("negation", "not")
    opposite = disagreement(
        "The film was a success at the box office.", "The film was a failure at the box office."
    )
    assert opposite is not None and (opposite.a, opposite.b) == ("success", "failure")
    named = disagreement(
        "Cristian Pavón is an Argentine footballer who plays as a forward for Boca Juniors.",
        "Cristian Pavón is an Argentine footballer who plays as a forward for Arsenal.",
    )
    assert named is not None and (named.fact, named.a, named.b) == (
        "name",
        "Boca Juniors",
        "Arsenal",
    )


def test_claims_about_different_things_do_not_disagree() -> None:
    """The false alarms lint raised on the Python docs: similar words, different subjects."""
    pairs = [
        # different identifiers: two variables, two parameters
        (
            "Used for VENV_DIR in activation scripts (see install_scripts()).",
            "Used for VENV_NAME in activation scripts (see install_scripts()).",
        ),
        (
            "Changed in version 3.4: Added the with_pip parameter",
            "Changed in version 3.10: Added the key parameter.",
        ),
        # the symbol is the subject: * and + of a regex
        (
            "* Causes the resulting RE to match 0 or more repetitions of the preceding RE.",
            "+ Causes the resulting RE to match 1 or more repetitions of the preceding RE.",
        ),
        # a name that opens the sentence is its subject
        (
            "The UTC offset is not restricted to a whole number of minutes.",
            "The DST offset is restricted to a whole number of minutes.",
        ),
        # another place beside another number
        (
            "As of March 14 there were 44 confirmed cases in Hawaii.",
            "As of March 14 there were 21,157 confirmed cases in Italy.",
        ),
        # unrelated sentences sharing a few words
        (
            "Creates virtual Python environments in one or more target directories.",
            "Python Packaging User Guide: Creating and using virtual environments",
        ),
        # code and program output
        (
            "CacheInfo(hits=3, misses=8, maxsize=32, currsize=8)",
            "CacheInfo(hits=28, misses=16, maxsize=None, currsize=16)",
        ),
        (
            "Token(type='ID', value='price', line=3, column=25) Token(type='OP', value='', line=3)",
            "Token(type='ID', value='tax', line=4, column=8) Token(type='OP', value='', line=4)",
        ),
        # a negation inside a reworded stretch
        (
            "The RFC does not permit the representation of infinite or NaN number values.",
            "Infinite and NaN Number Values are written as they are.",
        ),
        # an added detail refines, it doesn't contradict
        ("The bridge opened in 1961.", "The bridge opened in May 1961."),
    ]
    for a, b in pairs:
        assert disagreement(a, b) is None, (a, b)
        assert disagreement(b, a) is None, (b, a)
