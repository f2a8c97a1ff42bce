"""A text that is its quote's own words with two names exchanged (support/traded.py): each wrong
case is admitted on the code before it (the attack generator's names_swapped kind); the faithful
ones beside them — a list in another order, a name moved with its role, the quote itself —
stay supported."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, SupportChecker

pytest.importorskip("spacy")

FLAGS = "Both flags were documented by the Dutch government in October 1779"
PRESIDENTS = "The second half of the century saw the election of Republican presidents Dwight D"
DOCTORS = "At some universities, such as Oxford, Dublin and Cambridge, the MD is a higher doctorate"


@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker()


@pytest.mark.parametrize(
    ("text", "quote", "says"),
    [
        (
            "Both flags were documented by the October government in Dutch 1779.",
            FLAGS,
            "'Dutch' and 'October' traded places",
        ),
        (
            "The second half of the century saw the election of Dwight presidents Republican D.",
            PRESIDENTS,
            "'Republican' and 'Dwight' traded places",
        ),
    ],
)
def test_two_names_exchanged_are_refused(
    checker: SupportChecker, text: str, quote: str, says: str
) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == UNSUPPORTED, verdict
    assert says in verdict.reason


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (FLAGS + ".", FLAGS),
        ("The Dutch government documented both flags in October 1779.", FLAGS),
        (
            "At some universities, such as Dublin, Oxford and Cambridge, the MD is a higher doctorate.",
            DOCTORS,
        ),
        ("Tea and coffee are grown there.", "Coffee and tea are grown there"),
        ("Hyphenated compound surnames", "compound surnames hyphenated"),
    ],
)
def test_a_list_in_another_order_or_words_moved_with_their_role_stay_supported(
    checker: SupportChecker, text: str, quote: str
) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == SUPPORTED, verdict
