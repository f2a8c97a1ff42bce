"""Issue 22 (branch sup22w): a quote with a few words changed in place (``support/edits.py``)
and names that trade places inside a name or a span (``support/traded.py``).

Each rule has the attacker's text (the quote with one word flipped, dropped or added: refused or
sent to a person, never *supported*) and the faithful text of the same shape beside it (still
*supported*). Our own sentences, over our own source text.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNCERTAIN, UNSUPPORTED, check

BRIDGE = (
    "The old bridge carried most of the town's traffic above the river, and its toll rose "
    "slowly after the war"
)
RAIN = "The valley receives about 600 mm of rain a year, and the hills almost never see snow"
PORT = "The harbour handled 40 ships in 1921 and 75 ships in 1930, mainly from Norway"
SPEED = "Trucks on the coast road may not exceed 50 mph, and cars 65 mph"
LIGHTHOUSE = "The lighthouse is one of the oldest stone towers on the coast"
RIVER = "The Amber River floods in spring"
MILL = "The mill closed in 1950"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # a word replaced by its opposite where the quote has the other one elsewhere
        ("The old bridge carried most of the town's traffic below the river, and its toll "
         "rose slowly after the war.", "opposite"),
        ("The old bridge carried most of the town's traffic above the river, and its toll "
         "rose slowly before the war.", "opposite"),
        # a partial quantifier made universal
        ("The old bridge carried all of the town's traffic above the river, and its toll rose "
         "slowly after the war.", "quantifier"),
        # a negation added
        ("The old bridge carried most of the town's traffic above the river, and its toll "
         "never rose slowly after the war.", "negation"),
    ],
)  # fmt: skip
def test_a_word_flipped_in_place_is_refused(text: str, kind: str) -> None:
    found = check(text, [BRIDGE])
    assert found.verdict == UNSUPPORTED, found
    assert kind in found.changes


def test_the_quote_in_its_own_words_is_supported() -> None:
    faithful = (
        "The old bridge carried most of the town's traffic above the river, and its toll rose "
        "slowly after the war."
    )
    assert check(faithful, [BRIDGE]).verdict == SUPPORTED


def test_a_dropped_negation_is_refused_and_a_dropped_clause_is_not() -> None:
    attack = "The valley receives about 600 mm of rain a year, and the hills almost see snow."
    found = check(attack, [RAIN])
    assert found.verdict == UNSUPPORTED and "negation" in found.changes, found
    faithful = "The valley receives about 600 mm of rain a year."
    assert check(faithful, [RAIN]).verdict == SUPPORTED


@pytest.mark.parametrize(
    "text",
    [
        "The valley receives about 600 mm of rain a year, and the hills never see snow.",
        "The valley receives 600 mm of rain a year, and the hills almost never see snow.",
    ],
)
def test_a_dropped_hedge_is_not_supported(text: str) -> None:
    found = check(text, [RAIN])
    assert found.verdict != SUPPORTED, found
    assert "hedge" in found.changes


def test_a_hedge_said_another_way_is_not_a_dropped_hedge() -> None:
    quote = "Small farms can sometimes be run by one family"
    faithful = "Some small farms can be run by one family."
    found = check(faithful, [quote])
    assert "hedge" not in found.changes, found


def test_a_modal_made_plain_waits() -> None:
    quote = "The eastern wall may be older than the tower"
    found = check("The eastern wall is older than the tower.", [quote])
    assert found.verdict != SUPPORTED and "hedge" in found.changes, found


def test_numbers_that_trade_slots_are_refused_and_in_their_slots_supported() -> None:
    attack = "The harbour handled 75 ships in 1921 and 40 ships in 1930, mainly from Norway."
    found = check(attack, [PORT])
    assert found.verdict == UNSUPPORTED and "number" in found.changes, found
    faithful = "The harbour handled 40 ships in 1921 and 75 ships in 1930, mainly from Norway."
    assert check(faithful, [PORT]).verdict == SUPPORTED


def test_a_range_read_backwards_is_refused() -> None:
    quote = "Adults of the species weigh between 12 and 20 kg"
    found = check("Adults of the species weigh between 20 and 12 kg.", [quote])
    assert found.verdict == UNSUPPORTED and "number" in found.changes, found
    assert check("Adults of the species weigh between 12 and 20 kg.", [quote]).supported


def test_a_unit_taken_from_elsewhere_in_the_quote_is_refused() -> None:
    attack = "Trucks on the coast road may not exceed 50 km/h, and cars 65 mph."
    found = check(attack, [SPEED])
    assert found.verdict == UNSUPPORTED and "unit" in found.changes, found
    faithful = "Trucks on the coast road may not exceed 50 mph, and cars 65 mph."
    assert check(faithful, [SPEED]).verdict == SUPPORTED
    scaled = "The fund holds 3 million dollars and owes 2 billion dollars"
    found = check("The fund holds 3 billion dollars and owes 2 billion dollars.", [scaled])
    assert found.verdict == UNSUPPORTED, found


def test_one_of_the_oldest_made_the_oldest_is_refused() -> None:
    found = check("The lighthouse is the oldest stone towers on the coast.", [LIGHTHOUSE])
    assert found.verdict == UNSUPPORTED and "comparative" in found.changes, found
    faithful = "The lighthouse is one of the oldest stone towers on the coast."
    assert check(faithful, [LIGHTHOUSE]).verdict == SUPPORTED


def test_a_cause_joined_between_two_quotes_is_refused_and_an_and_is_not() -> None:
    attack = "The Amber River floods in spring because the mill closed in 1950."
    found = check(attack, [RIVER, MILL])
    assert found.verdict == UNSUPPORTED and "link" in found.changes, found
    faithful = "The Amber River floods in spring, and the mill closed in 1950."
    assert "link" not in check(faithful, [RIVER, MILL]).changes


def test_a_restatement_that_moves_words_is_at_most_uncertain_not_refused_by_the_flip() -> None:
    quote = "Exports rose in the north while imports fell in the south"
    faithful = "Imports fell in the south while exports rose in the north."
    found = check(faithful, [quote])
    assert found.verdict in (SUPPORTED, UNCERTAIN), found


# names that trade places inside one name, or across the ends of a span


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a person's name cut in two
        ("In 1990 Anna Lars Berg and Holm wrote the survey.",
         "In 1990 Anna Holm and Lars Berg wrote the survey"),
        # a list inside an organisation's name
        ("The Office of Roads and Marine Safety issued the permit.",
         "The Office of Marine Safety and Roads issued the permit"),
        # the ends of a span of months
        ("The pass is open only between October and May.",
         "The pass is open only between May and October"),
        # a list a later word counts off
        ("The lakes of Verna and Oska, the first one being the deepest in the region.",
         "The lakes of Oska and Verna, the first one being the deepest in the region"),
    ],
)  # fmt: skip
def test_names_traded_inside_a_name_or_span_are_not_supported(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict != SUPPORTED


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Visitors come from Sweden, Norway and Finland.",
         "Visitors come from Norway, Sweden and Finland"),
        ("The survey was written by Lars Berg and Anna Holm in 1990.",
         "The survey was written by Anna Holm and Lars Berg in 1990"),
    ],
)  # fmt: skip
def test_a_plain_list_in_another_order_is_still_supported(text: str, quote: str) -> None:
    found = check(text, [quote])
    assert found.verdict == SUPPORTED, found


# what the quote says a thing is, and how many


def test_a_description_restated_outside_the_quotes_description_waits() -> None:
    quote = "Harbour Lights is an album by the singer Mara Lind, featuring guest vocals from Tom Ek"
    found = check("Harbour Lights is a song by Mara Lind.", [quote])
    assert found.verdict != SUPPORTED and "role" in found.changes, found
    assert check("Harbour Lights is an album by Mara Lind.", [quote]).verdict == SUPPORTED


def test_a_broader_word_for_the_quotes_description_is_kept() -> None:
    quote = "Mara Lind is a Swedish singer and songwriter"
    found = check("Mara Lind is a Swedish singer.", [quote])
    assert found.verdict == SUPPORTED, found
    assert "role" not in check("Mara Lind is a person.", [quote]).changes


def test_many_for_only_one_is_refused() -> None:
    quote = "Despite its size, the island has only one paved road"
    found = check("The island has many paved roads.", [quote])
    assert found.verdict == UNSUPPORTED and "quantifier" in found.changes, found
    assert check("The island has one paved road.", [quote]).verdict != UNSUPPORTED


def test_a_modifier_taken_from_elsewhere_in_the_quote_waits() -> None:
    quote = "Ola Berg is a Norwegian television quiz host who was banned from radio in 2009"
    found = check("Ola Berg is a radio quiz host.", [quote])
    assert found.verdict != SUPPORTED and "role" in found.changes, found
    assert check("Ola Berg is a television quiz host.", [quote]).verdict == SUPPORTED


def test_a_modifier_the_quote_gives_another_description_of_the_same_noun_is_kept() -> None:
    quote = "At some other colleges (older institutions such as Lund), the degree is rare"
    found = check("At some older colleges, such as Lund, the degree is rare.", [quote])
    assert "role" not in found.changes, found


def test_an_amount_the_quote_gives_another_noun_is_refused() -> None:
    counted = "The forest holds one hundred million trees and three billion insects"
    found = check("The forest holds 3 billion trees.", [counted])
    assert found.verdict == UNSUPPORTED and "number" in found.changes, found
    assert check("The forest holds 100 million trees.", [counted]).verdict == SUPPORTED
    assert check("The forest holds three billion insects.", [counted]).verdict == SUPPORTED


def test_a_description_the_quote_only_reports_is_not_stated_as_fact() -> None:
    quote = "In 1998 the council passed the Harbour Act, which is touted by some as the most ambitious port reform in a century"
    found = check(
        "The 1998 Harbour Act, the most ambitious port reform in a century, was passed by the council.",
        [quote],
    )
    assert found.verdict != SUPPORTED and "hedge" in found.changes, found
    faithful = "The Harbour Act, passed in 1998, is touted by some as the most ambitious port reform in a century."
    assert check(faithful, [quote]).verdict != UNSUPPORTED


def test_a_description_the_quote_gives_in_another_clause_is_kept() -> None:
    quote = "Tidewater was also a commercial success, making it the best-selling novel of May"
    found = check("Tidewater is a novel.", [quote])
    assert "role" not in found.changes, found


def test_two_names_that_share_a_word_keep_a_lists_free_order() -> None:
    quote = "With the Bergen County Council and Bergen Harbour Authority sharing the port, little is left to the state"
    text = "With the Bergen Harbour Authority and Bergen County Council sharing the port, little is left to the state."
    assert check(text, [quote]).verdict == SUPPORTED
