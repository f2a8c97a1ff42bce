"""A text's doer and the one it acts on must fill one statement of the quotes (issue 22's
"Lauren Oliver wrote The Good War"): each fails on the code before support/together.py and
roles._in_filler; the faithful ones beside them stay supported."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, SupportChecker

pytest.importorskip("spacy")

TERKEL = "The Good War was written by Studs Terkel, who interviewed Lauren Oliver."
PAIR = "Studs Terkel wrote The Good War, and Lauren Oliver wrote Delirium."
PLAYS = "Smith wrote the novel, while Jones wrote the play that Smith directed."
WARS = "The French defeated the Dutch in 1672, and the British defeated the French in 1759."


@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker()


@pytest.mark.parametrize(
    ("text", "quote", "says"),
    [
        # a name in a clause hung on the doer is not the doer
        ("Lauren Oliver wrote The Good War.", TERKEL, "'Studs Terkel' as the doer"),
        # each argument fills its slot of a "wrote", never of the same one
        ("Lauren Oliver wrote The Good War.", PAIR, "pair them with others"),
        ("Smith wrote the play.", PLAYS, "pair them with others"),
        # the two arguments in each other's slots of one statement
        ("The French defeated the British.", WARS, "roles reversed"),
    ],
)
def test_arguments_of_two_statements_are_not_one_statement(
    checker: SupportChecker, text: str, quote: str, says: str
) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == UNSUPPORTED, verdict
    assert says in verdict.reason


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Studs Terkel wrote The Good War.", TERKEL),
        ("Studs Terkel wrote The Good War.", PAIR),
        ("Lauren Oliver wrote Delirium.", PAIR),
        ("Jones wrote the play.", PLAYS),
        ("Smith wrote the novel.", PLAYS),
        # the second "wrote" shares the first one's subject
        ("Smith wrote the novel.", "Smith wrote the play in 1920 and wrote the novel in 1925."),
        (
            "The novel was written by Smith.",
            "Smith wrote the play in 1920 and wrote the novel in 1925.",
        ),
    ],
)
def test_arguments_of_one_statement_stay_supported(
    checker: SupportChecker, text: str, quote: str
) -> None:
    verdict = checker.check(text, [quote])
    assert verdict.verdict == SUPPORTED, verdict
