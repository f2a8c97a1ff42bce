"""Issue 22 (branch sup22f): holes a wrong text got through once the heading's name no longer
held it for a person — each with the faithful text of the same shape beside it.

- a bound is read against the quoted numbers of its own scale (``numbers.bound_found``): "under
  $100 million" against "$800 million", not against "ten-year";
- "before the year 2009" is a bound on the year (``reading.year_bound``);
- a frequency word restricting a phrase ("and *rarely* for adults") dropped is uncertain
  (``quantifying._rarely_on_phrase``);
- a bare noun standing as a thing where the quote has it only as a kind of another noun ("was in
  a film" / "his film career") is uncertain (``modifiers.modifier_as_thing``).

Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Maclin signed a contract for under $100 million.",
         "In 2015 Maclin signed a ten-year $800 million contract"),
        ("The band has more than 100 singles as a lead artist.",
         "The band has released 200 singles, including 44 as a lead artist"),
        ("After the year 2009, Ross founded a record label.",
         "In 2007, Ross founded the record label Maybach Music Group"),
    ],
)  # fmt: skip
def test_a_bound_the_quoted_number_breaks_is_refused(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == UNSUPPORTED


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Maclin signed a contract for under $100 million.",
         "In 2015 Maclin signed a five-year $55 million contract"),
        ("Before the year 2009, Ross founded a record label.",
         "In 2007, Ross founded the record label Maybach Music Group"),
    ],
)  # fmt: skip
def test_a_bound_the_quoted_number_keeps_is_supported(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == SUPPORTED


def test_a_year_bound_on_the_year_itself_is_not_supported() -> None:
    quote = "In 2009, Ross founded the record label Maybach Music Group"
    assert check("Before the year 2009, Ross founded a record label.", [quote]).verdict != SUPPORTED


MOVIES = (
    "The movies Zemeckis has directed have ranged across a wide variety of genres, for both "
    "families and kids, and rarely for adults"
)
FERRY = "The ferry sails daily to the town and seldom to the island"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Zemeckis has made movies for adults.", MOVIES),
        ("The ferry sails to the island.", FERRY),
    ],
)
def test_the_rare_stated_as_the_rule_is_not_supported(text: str, quote: str) -> None:
    found = check(text, [quote])
    assert found.verdict != SUPPORTED
    assert "quantifier" in found.changes


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Zemeckis has rarely made movies for adults.", MOVIES),
        ("Zemeckis has made movies for families.", MOVIES),
        ("The ferry seldom sails to the island.", FERRY),
    ],
)
def test_the_rare_kept_rare_is_supported(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == SUPPORTED


CAREER = "Ledger left for the United States in 1998 to develop his film career"


def test_a_kind_of_career_is_not_the_thing() -> None:
    found = check("Ledger was in a film.", [CAREER])
    assert found.verdict != SUPPORTED
    assert "'film' stands in the quote only as a kind of 'career'" in found.reason


def test_the_thing_itself_and_the_phrase_restated_are_supported() -> None:
    assert check("Ledger was in a film.", ["Ledger starred in a film in 1998"]).verdict == SUPPORTED
    text = "Ledger left to develop his career in film."
    assert check(text, [CAREER]).verdict == SUPPORTED


def test_a_measure_restated_is_not_a_kind_of_thing() -> None:
    quote = "the Dietary Modification Trial, an eight-year study of 49,000 women"
    found = check("The Dietary Modification Trial studied 49,000 women over eight years.", [quote])
    assert "stands in the quote only as a kind" not in found.reason
