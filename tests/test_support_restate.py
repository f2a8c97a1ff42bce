"""Restatements that keep their facts (issue 22 item 2, sup22a): "every second year" for "every
two years", and a verb of prohibition for a negation ("forbids damaging" for "is not to be
damaged", "no one should allow the flag to touch" for "the flag should never be allowed to
touch"). Each faithful sentence failed on the code before this change; each attack beside it —
another interval, another unit, the prohibition dropped or reversed — is still not supported.
Our own sentences, none from the writer set."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, SupportChecker
from affidavit.support.restate import every_nth

pytest.importorskip("spacy")

FAIR = "The county fair has been held every two years since 1954."
CODE = "The charter protects a member's land, which is not to be sold or leased"
FLAG = "The banner should never be allowed to touch the floor and must be folded at night"


@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker()


def test_every_nth_is_every_n_units() -> None:
    assert every_nth("held every second year") == "held every two years"
    assert every_nth("Every third Day it rained") == "Every three days it rained"
    assert every_nth("every other month") == "every two months"
    assert every_nth("the second year of every war") == "the second year of every war"
    assert every_nth("no interval here") == "no interval here"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The county fair has been held every second year since 1954.", FAIR),
        ("The county fair has been held every other year since 1954.", FAIR),
        ("The charter forbids selling a member's land.", CODE),
        ("The charter prohibits selling a member's land.", CODE),
        ("No one should ever allow the banner to touch the floor.", FLAG),
    ],
)
def test_restatement_is_supported(checker: SupportChecker, text: str, quote: str) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == SUPPORTED, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The county fair has been held every third year since 1954.", FAIR),
        ("The county fair has been held every second month since 1954.", FAIR),
        # the prohibition dropped, reversed, or put on what the quote allows
        ("A member's land is to be sold.", CODE),
        ("The charter allows selling a member's land.", CODE),
        ("The charter forbids protecting a member's land.", CODE),
        ("The banner may touch the floor.", FLAG),
        ("Everyone should allow the banner to touch the floor.", FLAG),
        (
            "The charter forbids selling a member's land.",
            "The charter allows selling a member's land",
        ),
    ],
)
def test_changed_fact_is_not_supported(checker: SupportChecker, text: str, quote: str) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == UNSUPPORTED, verdict


def test_a_finite_clause_after_a_negation_keeps_its_polarity(checker: SupportChecker) -> None:
    """Only an infinitive stands in its governor's negation: "had no single style; brick and
    stone were both common" does not negate the second clause."""
    verdict = checker.check(
        "The city had no single unified style; brick and stone were both common materials.",
        ["the city did not have one unified style", "brick and stone were both common materials"],
    )
    assert verdict.verdict == SUPPORTED, verdict


def test_a_restated_interval_keeps_its_year(checker: SupportChecker) -> None:
    verdict = checker.check("The county fair has been held every second year since 1944.", [FAIR])
    assert verdict.verdict != SUPPORTED, verdict
    assert "1944" in verdict.missing
