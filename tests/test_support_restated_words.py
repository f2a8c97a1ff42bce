"""Issue 22 (sup22i): two restatements a faithful writer makes that waited for a person.

"One unit of length" for the quote's "a single unit of length" (``restate.one_as_single``), and
"widely perceived" for "largely perceived" (``align.EQUIVALENT``: adverbs of how many hold a
view). Beside each, the attacker's twin: another number, another noun, a stronger word, a dropped
hedge — "perceived" is a verb of opinion (``hedging.HEDGE_VERBS``), so dropping "it was perceived
that" is a dropped hedge, as dropping "it was believed that" was. Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, check
from affidavit.support.restate import one_as_single

GRID = "The grid is drawn with a single unit of length for both axes"


def test_one_for_a_single_is_supported() -> None:
    assert check("The grid is drawn with one unit of length for both axes.", [GRID]).supported


@pytest.mark.parametrize(
    "text",
    [
        "The grid is drawn with two units of length for both axes.",
        "The grid is drawn with one scale of length for both axes.",
        "The grid is drawn with one unit of length for all three axes.",
    ],
)
def test_another_number_or_noun_for_a_single_is_not_supported(text: str) -> None:
    assert check(text, [GRID]).verdict != SUPPORTED


def test_one_is_rewritten_only_before_the_quotes_word() -> None:
    assert one_as_single("One unit, one scale", (GRID,)) == "A single unit, one scale"
    assert one_as_single("one unit", ("a unit of length",)) == "one unit"


VIEW = "By 1980 it was largely perceived that the reform had met its goals"


@pytest.mark.parametrize("adverb", ["largely", "generally"])
def test_widely_for_largely_is_supported(adverb: str) -> None:
    text = "By 1980 it was widely perceived that the reform had met its goals."
    assert check(text, [VIEW.replace("largely", adverb)]).supported


@pytest.mark.parametrize(
    "text",
    [
        "By 1980 it was universally perceived that the reform had met its goals.",
        "By 1980 it was always perceived that the reform had met its goals.",
        "By 1980 the reform had met its goals.",
        "By 1980 it was widely perceived that the reform had missed its goals.",
    ],
)
def test_a_stronger_word_or_a_dropped_view_is_not_supported(text: str) -> None:
    assert check(text, [VIEW]).verdict != SUPPORTED
