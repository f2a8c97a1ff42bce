"""Issue 22 round 3 (branch supfast): paraphrase knowledge that keeps every fact, each with the
attacker's test — "a billion" is one billion, a negated factive verb's clause is asserted ("let
us not forget that we suffered"), and "while" gives no cause."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

FARM = "American farmers took heart in 1961-from a billion dollar rise in farm income"
RECESSIONS = "let us not forget that we have suffered three recessions in the last 7 years"
AMERICAS = (
    "And while the blight of communism has been increasingly exposed and isolated in the "
    "Americas, liberty has scored a gain."
)


@pytest.mark.parametrize(
    "text",
    [
        "In 1961 farm income rose by one billion dollars.",
        "In 1961 farm income rose by 1 billion dollars.",
        "In 1961 farm income rose by 1,000,000,000 dollars.",
    ],
)
def test_a_scale_word_after_a_is_one_of_it(text: str) -> None:
    assert check(text, [FARM]).verdict == SUPPORTED


@pytest.mark.parametrize(
    "text",
    [
        "In 1961 farm income rose by two billion dollars.",
        "In 1961 farm income rose by a million dollars.",
        "In 1961 farm income rose by one million dollars.",
    ],
)
def test_a_scale_word_after_a_is_still_a_number_to_contradict(text: str) -> None:
    assert check(text, [FARM]).verdict == UNSUPPORTED


def test_a_bound_before_a_scale_word_is_kept() -> None:
    """ "more than a million" is a bound: the exact "one million" is not what it says."""
    found = check("One million people came.", ["More than a million people came"])
    assert found.verdict != SUPPORTED
    assert "number" in found.changes


def test_a_negated_factive_verb_asserts_its_clause() -> None:
    found = check("We have suffered three recessions in the last seven years.", [RECESSIONS])
    assert found.verdict == SUPPORTED, found.reason


@pytest.mark.parametrize(
    "text",
    [
        "We have not suffered three recessions in the last seven years.",
        "We have never suffered three recessions in the last seven years.",
        "We have suffered no recessions in the last seven years.",
        "We have forgotten that we suffered three recessions in the last seven years.",
    ],
)
def test_the_clause_of_a_negated_factive_verb_keeps_its_polarity(text: str) -> None:
    assert check(text, [RECESSIONS]).verdict == UNSUPPORTED


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # "know" is not factive under negation: "don't know that" doubts it
        ("The treatment works.", "We do not know that the treatment works"),
        # the clause's own negation still counts
        ("The war was won.", "Nobody should forget that the war was not won"),
    ],
)
def test_no_clause_is_asserted_under_other_negations(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == UNSUPPORTED


def test_while_gives_no_cause() -> None:
    found = check(
        "Because communism was exposed in the Americas, liberty scored a gain.", [AMERICAS]
    )
    assert found.verdict != SUPPORTED
    assert "link" in found.changes


def test_while_still_gives_an_order_of_time() -> None:
    quote = "While the bridge was being built, the ferry carried all traffic across the river"
    found = check(
        "The ferry carried all traffic across the river while the bridge was built.", [quote]
    )
    assert found.verdict == SUPPORTED, found.reason


PRICES = "Consumer prices held steady in 1961, and wholesale prices declined."
SCHOOLS = (
    "State schools must follow the national curriculum, while independent schools set their own"
)
BRIDGE = "The old bridge was replaced by a new bridge, and the new bridge opened in 1990"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("In 1961 wholesale prices held steady and consumer prices declined.", PRICES),
        (
            "Independent schools must follow the national curriculum and state schools set their own.",
            SCHOOLS,
        ),
    ],
)
def test_modifiers_exchanged_between_two_occurrences_of_a_noun_are_refused(
    text: str, quote: str
) -> None:
    found = check(text, [quote])
    assert found.verdict == UNSUPPORTED, found.reason
    assert "role" in found.changes


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Consumer prices declined in 1961.", PRICES),
        ("Wholesale prices held steady in 1961.", PRICES),
        ("Independent schools must follow the national curriculum.", SCHOOLS),
        ("The old bridge opened in 1990.", BRIDGE),
    ],
)
def test_a_modifier_moved_to_another_occurrence_of_its_noun_is_never_supported(
    text: str, quote: str
) -> None:
    found = check(text, [quote])
    assert found.verdict != SUPPORTED, found.reason
    assert "role" in found.changes


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("In 1961 consumer prices held steady and wholesale prices declined.", PRICES),
        ("Wholesale prices declined while consumer prices held steady in 1961.", PRICES),
        ("Consumer prices held steady in 1961.", PRICES),
        ("State schools must follow the national curriculum.", SCHOOLS),
        ("The new bridge opened in 1990.", BRIDGE),
    ],
)
def test_a_modifier_kept_on_its_noun_is_no_change(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == SUPPORTED


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # the quote's argument is bare: "live albums" may be the albums it released
        (
            "The band released three live albums.",
            "The band recorded two live albums and released three albums",
        ),
        # a conjunct is the predicate's argument too
        (
            "The band released two live albums.",
            "The band released seven studio albums and two live albums",
        ),
        # a name's words are the exchange rules', not this one's
        ("Veep won the Critics Choice Television Award.", "Veep won the Television Critics Award"),
    ],
)
def test_no_moved_modifier_against_a_bare_noun_or_in_a_name(text: str, quote: str) -> None:
    found = check(text, [quote])
    assert not any("said of another" in r for r in found.reason.split("; ")), found.reason


def test_a_modifier_another_predicate_restates_is_at_most_uncertain() -> None:
    """ "received negative reviews from critics" for "critics gave it negative reviews": true,
    though the quote's "received" has positive ones — a person decides."""
    quote = "It received positive reviews from audiences but critics gave it negative reviews"
    found = check("The film received negative reviews from critics.", [quote])
    assert found.verdict != UNSUPPORTED or "said of another" not in found.reason
