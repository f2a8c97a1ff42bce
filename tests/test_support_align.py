"""The support check reads what meaning hangs on (issue 22, SPEC W11): each kind of wrong
sentence from the issue's "Why" — as a writer or an attacker words it — over our own source text,
and the faithful paraphrases the issue saw wait for a person for nothing.

Every test here failed on main before the structure layer (a bag of words and facts admitted
the wrong sentences and held the faithful ones)."""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNCERTAIN, UNSUPPORTED, SupportChecker, check

# --- wrong sentences a writer sends: refused, the change named ----------------------------------


@pytest.mark.parametrize(
    ("text", "quotes", "named"),
    [
        # a quantifier widened: the quote makes an exception
        (
            "All comb jellies have colloblasts.",
            ["Comb jellies have colloblasts, though a few species lack them"],
            "'All' — the quote says 'a few'",
        ),
        # the year is elsewhere in the quote, but it is not the creation date
        (
            "The Office of Water was created in 1978.",
            ["The Office of Water was created in 1977 and renamed the Water Agency in 1978"],
            "'1978' belongs to 'renamed'",
        ),
        # the unit is elsewhere in the quote, but this limit is in mph
        (
            "The coast road has a speed limit of 55 km/h.",
            ["The coast road has a speed limit of 55 mph, while the bridge allows 90 km/h"],
            "the quote gives 55 in 'mph'",
        ),
        # who ranked above whom
        (
            "Nurses were ranked above teachers in the survey.",
            ["In the survey, teachers were ranked above nurses"],
            "roles reversed",
        ),
        # both names are in the quote; the author is the other one
        (
            "Anna Berg wrote The Long Road.",
            ["The Long Road was written by Peter Holm and reviewed by Anna Berg"],
            "the quote has 'Peter Holm' as the doer of 'written'",
        ),
        # a dropped hedge
        (
            "The harbour is the largest employer in the town.",
            ["The harbour is perhaps the largest employer in the town"],
            "'perhaps'",
        ),
        # a magnitude changed
        (
            "Several thousand tremors are recorded each year.",
            ["Several hundred tremors are recorded each year"],
            "'thousand' — the quotes say 'hundred'",
        ),
        # "Unlike X, Y is …" says X is not
        ("Chess is a sport.", ["Unlike chess, fencing is a sport"], "'Unlike'"),
    ],
)
def test_a_changed_number_role_scope_or_negation_is_refused_and_named(
    text: str, quotes: list[str], named: str
) -> None:
    verdict = check(text, quotes)
    assert verdict.verdict == UNSUPPORTED, verdict
    assert named in verdict.reason, verdict.reason
    assert verdict.changes and not verdict.model_may_settle


# --- an attacker's paraphrases: never admitted ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quotes", "kind"),
    [
        # numbers swapped between their two slots
        ("Unemployment fell from 3 % to 6 %.", ["Unemployment fell from 6 % to 3 %"], "role"),
        # facts of two quotes merged into a relation neither states
        (
            "The museum closed in 2001.",
            ["The museum opened in 1990", "The library closed in 2001"],
            "merge",
        ),
        # every → some, some → every
        (
            "Every member of the club voted for the plan.",
            ["Some members of the club voted for the plan"],
            "quantifier",
        ),
        ("Some members voted for the plan.", ["All members voted for the plan"], "quantifier"),
        # reversed causality
        ("The drought caused the fire.", ["The fire caused the drought"], "role"),
        # a comparison reversed
        (
            "Storms are more frequent in winter than in summer.",
            ["Storms are more frequent in summer than in winter"],
            "role",
        ),
        # a comparative turned into its opposite
        ("The new tax was far more unjust.", ["The new tax was far less unjust"], "opposite"),
        # a negation after a dash, lost
        (
            "For years a single war lasted long.",
            ["For years—no single war lasted long"],
            "negation",
        ),
        (
            "For years a single war lasted long.",
            ["For years-no single war lasted long"],
            "negation",
        ),
        # a cause the quote never states
        (
            "The river froze because the winter was cold.",
            ["The winter was cold, and the river froze"],
            "link",
        ),
    ],
)
def test_an_attackers_paraphrase_is_refused(text: str, quotes: list[str], kind: str) -> None:
    verdict = check(text, quotes)
    assert verdict.verdict == UNSUPPORTED, verdict
    assert kind in verdict.changes, verdict


def test_an_approximation_never_rounds_a_year() -> None:
    verdict = check(
        "The storm destroyed about 2,000 homes.", ["The storm destroyed about 200 homes in 1998"]
    )
    assert verdict.verdict == UNSUPPORTED and "2,000" in verdict.missing


def test_a_wrong_title_is_refused_like_a_claim() -> None:
    quotes = ["In the survey, teachers were ranked above nurses"]
    assert check("Nurses ranked above teachers", quotes, share=0.5).verdict == UNSUPPORTED
    assert check("Teachers ranked above nurses", quotes, share=0.5).supported


# --- faithful sentences: admitted without a person -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "quotes", "context"),
    [
        ("The bridge was finished in 1932.", ["The bridge was completed in 1932"], []),
        (
            "Maria Lopez was appointed director in 2001.",
            ["Maria Lopez was named director in 2001"],
            [],
        ),
        (
            "The tremors are too small to be felt.",
            ["The tremors are so small that they are not felt"],
            [],
        ),
        # the pronoun resolved to the name the source's title gives
        (
            "The Kessel Bridge was completed in 1932.",
            ["It was completed in 1932"],
            ["Kessel Bridge"],
        ),
        # voice changed, roles kept
        ("Peter Holm wrote The Long Road.", ["The Long Road was written by Peter Holm"], []),
        # a number restated in words and in another unit
        (
            "The dam holds back one hundred million litres.",
            ["The dam holds back 100 million litres"],
            [],
        ),
        ("The tunnel is 1.5 km long.", ["The tunnel is 1,500 metres long"], []),
        # a long sentence the extractive engine cut into quotes, joined back
        (
            "The council met in March, and it approved the budget in April.",
            ["The council met in March,", "and it approved the budget in April."],
            [],
        ),
    ],
)
def test_a_faithful_paraphrase_is_admitted(
    text: str, quotes: list[str], context: list[str]
) -> None:
    verdict = check(text, quotes, context=context)
    assert verdict.supported, verdict


def test_an_agents_title_with_a_negation_its_quotes_state_is_not_refused() -> None:
    quotes = ["git cherry shows which commits are not yet upstream, marking each with a plus sign"]
    assert check("Finding commits not yet upstream", quotes, share=0.5).verdict != UNSUPPORTED


def test_a_heading_name_anywhere_but_the_quotes_subject_only_waits() -> None:
    verdict = check(
        "The bridge was completed in 1932 by the Kessel Bridge company.",
        ["It was completed in 1932"],
        context=["Kessel Bridge"],
    )
    assert verdict.verdict == UNCERTAIN


# --- the model layer settles paraphrases, never changes ------------------------------------------


class _Always:
    """An entailment model that is sure of everything."""

    def __init__(self, score: float) -> None:
        self.score = score

    def entailment(self, premise: str, hypothesis: str) -> float:
        return self.score


def test_the_model_may_settle_a_paraphrase_but_never_a_change_a_rule_found() -> None:
    checker = SupportChecker(_Always(1.0))
    paraphrase = check("The lighthouse is unmanned.", ["The lighthouse has never been staffed"])
    assert paraphrase.verdict == UNCERTAIN and paraphrase.model_may_settle
    settled = checker.check(
        "The lighthouse is unmanned.", ["The lighthouse has never been staffed"]
    )
    assert settled.verdict == SUPPORTED
    # "all" over a bare plural is uncertain for the rules, and a quantifier change all the same
    widened = ["Insurers still apply the test as a benchmark"]
    ruled = check("All insurers still apply the test as a benchmark.", widened)
    assert ruled.verdict == UNCERTAIN and ruled.changes == ("quantifier",)
    assert not ruled.model_may_settle
    assert (
        checker.check("All insurers still apply the test as a benchmark.", widened).verdict
        == UNCERTAIN
    )
