"""Issue 22 (branch supqual): faithful restatements the rules held back, each with the attacker's
sentence of the same shape that must stay short of *supported*.

- a text's "so" after a clause the parser hangs on the verb that follows: the clause before "so"
  is the cause ("A was spoken but not written, so B was written in Greek");
- a quote's "Thus, …" links to the quote right before it, never to any earlier one;
- a word a quote sets apart ("in Latin *rather than* Frisian") made the object of the text's
  preposition ("written in Frisian") is not the quote's statement.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

SPOKEN = "Before the 9th century, the Frisians had a spoken language, but it was not written"
THUS = "Thus, their laws and charters were written in Latin or Saxon rather than Frisian"
ALPHABET = "The Frisian runes were carved on combs and coins by local craftsmen"


def test_so_after_a_clause_hung_on_the_next_verb_reads_the_cause_before_it() -> None:
    text = (
        "Before the 9th century Frisian was spoken but not written, so the laws and charters "
        "were written in Latin or Saxon."
    )
    found = check(text, [SPOKEN, THUS])
    assert found.verdict == SUPPORTED, found.reason


def test_so_the_other_way_round_is_refused() -> None:
    text = (
        "Because the laws and charters were written in Latin or Saxon, Frisian was not "
        "written before the 9th century."
    )
    found = check(text, [SPOKEN, THUS])
    assert found.verdict == UNSUPPORTED
    assert "link" in found.changes


@pytest.mark.parametrize("quotes", [[SPOKEN, THUS, ALPHABET], [ALPHABET, SPOKEN, THUS]])
def test_thus_links_only_to_the_quote_right_before_it(quotes: list[str]) -> None:
    """ "Thus" in the third quote says nothing about the first: a cause drawn from it is the
    attacker's merged fact."""
    text = (
        "The Frisian runes were carved on combs and coins by local craftsmen, so the laws and "
        "charters were written in Latin or Saxon."
    )
    found = check(text, quotes)
    assert found.verdict != SUPPORTED
    assert "link" in found.changes


def test_a_quotes_then_keeps_its_subject_on_the_later_side() -> None:
    """Reading the clause before "so" as the cause must not make a quote's "then" an order
    between its subject and its predicate: "before" against "after" stays a reversal."""
    quote = "A bride would then take her husband's family name after the wedding"
    found = check("A bride would then take her husband's family name before the wedding.", [quote])
    assert found.verdict == UNSUPPORTED


def test_so_parsed_as_a_preposition_still_needs_a_stated_cause() -> None:
    """spaCy reads ", so the laws …" as a preposition: the link is read all the same."""
    text = (
        "The Frisian runes were carved on combs and coins by local craftsmen, so the laws and "
        "charters were written in Latin or Saxon."
    )
    quotes = [ALPHABET, "Their laws and charters were written in Latin or Saxon"]
    found = check(text, quotes)
    assert found.verdict == UNSUPPORTED
    assert "link" in found.changes


@pytest.mark.parametrize(
    "text",
    [
        "Their laws were written in Frisian.",
        "The laws and charters were written in Frisian.",
    ],
)
def test_what_rather_than_sets_apart_is_not_what_the_text_may_state(text: str) -> None:
    found = check(text, [THUS])
    assert found.verdict != SUPPORTED
    assert "negation" in found.changes


def test_a_merge_of_the_cause_keeps_what_rather_than_sets_apart() -> None:
    text = (
        "Before the 9th century Frisian was spoken but not written, so the laws and charters "
        "were written in Frisian."
    )
    assert check(text, [SPOKEN, THUS]).verdict != SUPPORTED


def test_the_statement_rather_than_sets_apart_from_stays_supported() -> None:
    assert check("The laws and charters were written in Latin or Saxon.", [THUS]).verdict == (
        SUPPORTED
    )


PAPER = (
    "The paper publishes The Daily Courier Weekend Guide, a listing of the concerts and plays "
    "in the region"
)
FESTIVALS = (
    "It also sponsors The Daily Courier Book Fair, held each spring, and The Daily Courier "
    "Science Prize, which is awarded every year at the town hall"
)
HEADING = "The Daily Courier"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "The Daily Courier publishes The Daily Courier Weekend Guide, a listing of the "
            "concerts and plays in the region.",
            PAPER,
        ),
        (
            "The Daily Courier sponsors The Daily Courier Book Fair, held each spring, and The "
            "Daily Courier Science Prize, which is awarded every year at the town hall.",
            FESTIVALS,
        ),
    ],
)
def test_the_heading_name_stands_where_the_quote_says_the_paper(text: str, quote: str) -> None:
    """The heading's name as the subject, where the quote says "the paper" or "it", is not the
    longer name of the object that happens to contain it."""
    found = check(text, [quote], context=[HEADING])
    assert found.verdict == SUPPORTED, found.reason


@pytest.mark.parametrize(
    ("text", "quote", "heading"),
    [
        ("The Daily Courier Weekend Guide publishes The Daily Courier.", PAPER, HEADING),
        (
            "The Daily Courier overtook it in circulation in 1990.",
            "It overtook The Daily Courier in circulation in 1990",
            HEADING,
        ),
        (
            "The Daily Courier praised The Daily Courier Weekend Guide as the best listing.",
            "It praised The Daily Courier Weekend Guide as the best listing",
            "The Evening Herald",
        ),
    ],
)
def test_a_heading_name_the_quote_makes_the_object_stays_the_object(
    text: str, quote: str, heading: str
) -> None:
    """The attacker's: the heading's name where the quote has it as the one done to (itself,
    not inside a longer name), or a name the heading doesn't give."""
    found = check(text, [quote], context=[heading])
    assert found.verdict != SUPPORTED
    assert "role" in found.changes


TRIALS = "Two trials have suggested that night shifts are linked to an increased risk of ulcers"
HARBOUR = "Trade grew quickly thanks to a deeper harbour, improving rail links and cheap land"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "Two trials have suggested a link between night shifts and a higher risk of ulcers.",
            TRIALS,
        ),
        (
            "Two trials have suggested a link between night shifts and a greater risk of ulcers.",
            TRIALS,
        ),
        (
            "Trade grew quickly thanks to a deeper harbour, better rail links and cheap land.",
            HARBOUR,
        ),
    ],
)
def test_a_comparative_restates_the_quotes_word_of_change(text: str, quote: str) -> None:
    found = check(text, [quote])
    assert found.verdict == SUPPORTED, found.reason


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "Two trials have suggested a link between night shifts and a lower risk of ulcers.",
            TRIALS,
        ),
        (
            "Trade grew quickly thanks to a deeper harbour, worse rail links and cheap land.",
            HARBOUR,
        ),
    ],
)
def test_a_comparative_against_a_change_the_other_way_is_refused(text: str, quote: str) -> None:
    found = check(text, [quote])
    assert found.verdict == UNSUPPORTED
    assert "opposite" in found.changes


def test_a_comparative_with_than_still_compares_what_the_quote_does_not() -> None:
    text = (
        "Two trials have suggested that night shifts carry a higher risk of ulcers than day shifts."
    )
    assert check(text, [TRIALS]).verdict != SUPPORTED


RAIN = "The valley receives 810 millimeters of rain a year, mostly in winter"


@pytest.mark.parametrize(
    "text",
    [
        "The valley receives 81 centimetres of rain a year, mostly in winter.",
        "The valley receives 0.81 metres of rain a year, mostly in winter.",
    ],
)
def test_a_quantity_in_another_unit_restates_the_unit_word_too(text: str) -> None:
    found = check(text, [RAIN])
    assert found.verdict == SUPPORTED, found.reason


@pytest.mark.parametrize(
    "text",
    [
        "The valley receives 810 centimetres of rain a year, mostly in winter.",
        "The valley receives 81 metres of rain a year, mostly in winter.",
        "The valley receives 81 millimetres of rain a year, mostly in winter.",
    ],
)
def test_a_quantity_that_does_not_convert_is_refused(text: str) -> None:
    assert check(text, [RAIN]).verdict == UNSUPPORTED


def test_a_quantifier_the_parser_hung_elsewhere_is_still_stated() -> None:
    """ "Modules for all supported input languages, …" is misparsed ("all" the object of "for",
    "supported" a clause): the same quantifier right before the same noun states it."""
    quote = (
        "Modules for all supported input languages, such as keyboard layouts, are automatically "
        "installed during setup"
    )
    text = (
        "Setup automatically installs modules for all supported input languages, such as "
        "keyboard layouts."
    )
    found = check(text, [quote])
    assert found.verdict == SUPPORTED, found.reason


def test_a_quantifier_before_another_noun_is_not_the_texts() -> None:
    quote = "Modules for some languages and all supported input devices are installed during setup"
    found = check("Setup installs modules for all supported languages.", [quote])
    assert found.verdict != SUPPORTED
    assert "quantifier" in found.changes
