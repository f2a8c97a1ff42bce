"""Issue 22 item 2: "the city" for the page's own subject ("Rotterdam"), when the heading names
it and WordNet says it is a city — and the attacker's cases: it never restates a name the
heading doesn't give, a kind the name is not, a changed role, order, number, negation or
quantifier."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

SHARE = "In the Netherlands, Rotterdam has the highest share of foreigners"
PORT = "Rotterdam overtook Antwerp as the largest port in 2004"


@pytest.mark.parametrize(
    ("text", "quotes", "heading"),
    [
        ("The city has the highest share of foreigners in the Netherlands.", [SHARE], "Rotterdam"),
        ("The city overtook Antwerp as the largest port in 2004.", [PORT], "Rotterdam"),
        (
            "The city's port is the largest in Europe.",
            ["Rotterdam's port is the largest in Europe"],
            "Rotterdam",
        ),
        ("The river flows through London.", ["The Thames flows through London"], "Thames"),
        (
            "Foreigners, of whom Rotterdam has the highest share in the Netherlands, form a large "
            "part of the city's diversity.",
            [SHARE, "They form a large part of Rotterdam's diversity"],
            "Rotterdam",
        ),
    ],
)
def test_the_pointing_phrase_restates_the_heading_name(
    text: str, quotes: list[str], heading: str
) -> None:
    found = check(text, quotes, context=[heading])
    assert found.verdict == SUPPORTED, found.reason


@pytest.mark.parametrize(
    ("text", "quotes", "heading"),
    [
        # the heading names another place: the quote's Rotterdam is not the page's city
        ("The city has the highest share of foreigners in the Netherlands.", [SHARE], "Amsterdam"),
        # Rotterdam is no country
        (
            "The country has the highest share of foreigners in the Netherlands.",
            [SHARE],
            "Rotterdam",
        ),
        # no heading at all
        ("The city has the highest share of foreigners in the Netherlands.", [SHARE], ""),
        # more than a bare "the city": "the largest city" says more than the name
        (
            "The largest city has the highest share of foreigners in the Netherlands.",
            [SHARE],
            "Rotterdam",
        ),
        # two cities the heading names: which one "the city" is, is unclear
        (
            "The city is larger than Utrecht.",
            ["Rotterdam is larger than Utrecht and Amsterdam is larger than Rotterdam"],
            "Rotterdam Amsterdam",
        ),
    ],
)
def test_no_pointing_phrase_without_one_heading_name_of_that_kind(
    text: str, quotes: list[str], heading: str
) -> None:
    found = check(text, quotes, context=[heading] if heading else [])
    assert found.verdict != SUPPORTED
    assert "city" in found.missing or "country" in found.missing or found.changes


@pytest.mark.parametrize(
    ("text", "quotes", "kind"),
    [
        ("Antwerp overtook the city as the largest port in 2004.", [PORT], "role"),
        ("Amsterdam is larger than the city.", ["Rotterdam is larger than Amsterdam"], "order"),
        (
            "The city's port is not the largest in Europe.",
            ["Rotterdam's port is the largest in Europe"],
            "negation",
        ),
        ("The city has 900,000 inhabitants.", ["Rotterdam has 650,000 inhabitants"], "number"),
        (
            "All of the city is below sea level.",
            ["Part of Rotterdam is below sea level"],
            "quantifier",
        ),
    ],
)
def test_the_pointing_phrase_keeps_every_fact(text: str, quotes: list[str], kind: str) -> None:
    """The attacker's test: aligned to the name, "the city" is read as the name by every rule."""
    found = check(text, quotes, context=["Rotterdam"])
    assert found.verdict != SUPPORTED, (kind, found)
    if kind in ("role", "order", "negation", "number"):
        assert found.verdict == UNSUPPORTED, (kind, found)
