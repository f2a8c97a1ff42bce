"""The support check's rules, round 2 (issue 22): a rejection is for a clear changed fact, role
or scope; a fact the quotes neither state nor contradict waits for a person. Each rule has an
attacker's test (the changed fact is never supported) and a faithful control (the restatement is
never refused). Our own sentences, not data-set sentences."""

from __future__ import annotations

import pytest

from affidavit.support import check

# --- numbers and dates: refused only against a rival the quotes state -----------------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a count of a list the quote gives whole
        (
            "The college has four campuses: Alton, Brill, Corfe and Dunmow.",
            "The college keeps campuses in Alton, Brill, Corfe, and Dunmow",
        ),
        # a date the quote leaves out (the source may give it elsewhere)
        ("The jobless rate was 4.1% in March 2019.", "the jobless rate was 4.1%"),
        ("The jobless rate was 4.1% in 2019.", "the jobless rate was 4.1%"),
        # an ordinal of a name the quote leaves out
        ("The Second Reform Act widened the vote.", "The Reform Act widened the vote"),
    ],
)
def test_a_fact_no_quote_states_or_contradicts_waits_for_a_person(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "uncertain", verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "The college has four campuses: Alton, Brill and Corfe.",
            "The college keeps 3 campuses, in Alton, Brill and Corfe",
        ),
        ("The jobless rate was 4.1% in March 2019.", "the jobless rate was 4.1% in 2018"),
        ("The jobless rate was 4.1% in 2019.", "the jobless rate was 4.1% in 2018"),
        ("The Second Reform Act widened the vote.", "The Third Reform Act widened the vote"),
        ("It weighed 500 pounds per vessel.", "It weighed 1500 pounds per vessel"),
    ],
)
def test_a_fact_changed_against_a_rival_in_the_quotes_is_refused(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported", verdict


def test_a_numeric_date_with_a_plain_order_is_a_date() -> None:
    quote = "the show was axed as of 14/05/2013"
    assert check("The show was axed as of 14 May 2013.", [quote]).supported
    assert check("The show was axed as of May 14, 2013.", [quote]).supported
    assert check("The show was axed as of 15 May 2013.", [quote]).verdict == "unsupported"
    assert not check("The show was axed as of 14 June 2013.", [quote]).supported
    # an ambiguous order (both under 13) is never read as one date or the other
    assert not check("The show was axed as of 3 April 2013.", ["axed as of 03/04/2013"]).supported


def test_a_number_glued_to_a_name_is_part_of_the_name() -> None:
    quote = "Her show on 6Music ended in 2012"
    assert check("Her show on 6Music ended in 2012.", [quote]).supported
    verdict = check("Her show on 6Music ended in 2012.", ["Her show ended on 6 March 2012"])
    assert not verdict.supported


# --- names: a singular or plural of a quoted name ------------------------------------------------


def test_a_plural_or_singular_of_a_quoted_name_waits_never_refused() -> None:
    quote = "The revival spread among Methodists in the 1790s"
    verdict = check("The revival spread among Methodist farmers in the 1790s.", [quote])
    assert verdict.verdict != "unsupported", verdict


def test_a_name_one_letter_longer_is_another_name() -> None:
    quote = "The present tower was designed by James Douglass"
    assert check("The tower was designed by James Douglas.", [quote]).verdict == "unsupported"
    edwards = check("The sermon was preached by Edward.", ["The sermon was preached by Edwards"])
    assert not edwards.supported


# --- hedges: a description reported, a modal on a copula, a hedge on an unrestated verb ----------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "The Corn Riot was the first truly national protest.",
            "The Corn Riot has been called the first truly national protest",
        ),
        ("The bridge is the finest in Wales.", "The bridge is regarded as the finest in Wales"),
        (
            "The value of f is the sum of its two arguments.",
            "the value of f may be the sum of its two arguments",
        ),
        (
            "In winter the moor has fog in the form of low banks.",
            "In winter the moor has fog that most likely takes the form of low banks",
        ),
    ],
)
def test_a_dropped_report_or_modal_is_never_supported(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported" and "hedge" in verdict.changes, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "The Corn Riot has been called the first truly national protest.",
            "The Corn Riot has been called the first truly national protest",
        ),
        # a name given is no description
        ("The area is the Nevada Gap.", "an area dubbed the Nevada Gap"),
        # a title is a noun phrase: it asserts nothing a modal could hedge
        ("Stamped clay and stucco", "reliefs may be stamped clay and stucco"),
        # another hedge of the same strength keeps it
        (
            "The coast has fairly steady winds.",
            "The coast has relatively steady winds",
        ),
    ],
)
def test_a_kept_report_a_name_or_a_restated_hedge_is_never_refused(text: str, quote: str) -> None:
    share = 0.5 if text == "Stamped clay and stucco" else 0.0
    verdict = check(text, [quote], share=share)
    assert verdict.verdict != "unsupported", verdict


# --- quantifiers ---------------------------------------------------------------------------------


def test_only_a_little_restates_little() -> None:
    quote = "The reform had little impact on farmers and millers"
    assert check("The reform had only a small effect on farmers and millers.", [quote]).verdict != (
        "unsupported"
    )
    # the attacker: "only" where the quote says "much" / "all"
    many = check("The reform had only a small effect.", ["The reform had a large effect on all"])
    assert not many.supported


def test_some_in_a_condition_may_be_dropped_but_not_in_a_statement() -> None:
    cond = "If some guest arrives late, the door must be opened by the porter"
    verdict = check("If a guest arrives late, the porter must open the door.", [cond])
    assert verdict.verdict != "unsupported", verdict
    plain = check("Guests arrive late.", ["Some guests arrive late"])
    assert plain.verdict == "unsupported"


# --- links: "as a result" states a cause ---------------------------------------------------------

RESULT = [
    "Some towns may have over 80 stalls on their market days, and traders must individually "
    "register every single stall for a licence to count",
    "As a result, the block licence was implemented",
]


def test_as_a_result_states_the_cause_a_because_restates() -> None:
    text = (
        "Because traders must register every stall for a licence to count, the block licence "
        "was implemented."
    )
    assert check(text, RESULT).supported


@pytest.mark.parametrize(
    "text",
    [
        "Because the block licence was implemented, traders must register every stall for a "
        "licence to count.",
        "Because traders must register every stall, some towns have over 80 stalls.",
    ],
)
def test_a_cause_reversed_or_invented_against_as_a_result_is_refused(text: str) -> None:
    verdict = check(text, RESULT)
    assert verdict.verdict == "unsupported" and "link" in verdict.changes, verdict


# --- names and numbers that trade places ---------------------------------------------------------

LEEDS = "The club recorded the 1998 loss to Leeds and the 2001 win over Hull"
HOLM = "The report was written by Anna Holm and reviewed by Peter Berg in Oslo"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The club recorded the 1998 loss to Hull and the 2001 win over Leeds.", LEEDS),
        ("The report was written by Peter Berg and reviewed by Anna Holm in Oslo.", HOLM),
        ("The report was written by Anna Berg and reviewed by Peter Holm in Oslo.", HOLM),
        ("The rivals play for the Cup-Harris Carr.", "The rivals play for the Carr-Harris Cup"),
        (
            "The bill had the support of the Coalition/National Liberal.",
            "The bill had the support of the Liberal/National Coalition",
        ),
        (
            "The Welsh quarter lies east of the Irish market.",
            "The Irish quarter lies east of the Welsh market",
        ),
    ],
)
def test_names_that_trade_places_are_refused(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported" and "role" in verdict.changes, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a list's order is free
        (
            "Its campuses are in Corfe, Alton and Brill.",
            "Its campuses are in Alton, Brill and Corfe",
        ),
        # the voice changes, the roles stay
        ("Anna Holm wrote the report and Peter Berg reviewed it in Oslo.", HOLM),
        ("The club recorded the 1998 loss to Leeds and the 2001 win over Hull.", LEEDS),
        ("The rivals play for the Carr-Harris Cup.", "The rivals play for the Carr-Harris Cup"),
    ],
)
def test_names_in_their_own_places_are_never_refused(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict != "unsupported", verdict


# --- a universal word against a partial one; an open-ended number; a recipient made the doer ---


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "Divers found over two hundred wrecks in the bay, all of them from the Armada.",
            "Divers found over two hundred wrecks, cannon and other material, mainly from the "
            "Armada, in the bay",
        ),
        (
            "The letters of forty medieval abbots have survived in full.",
            "The letters of forty medieval abbots have survived in whole or in part",
        ),
    ],
)
def test_a_universal_word_against_a_partial_one_is_never_supported(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert not verdict.supported and "quantifier" in verdict.changes, verdict


def test_a_universal_word_the_quote_states_is_kept() -> None:
    quote = "Divers found over two hundred wrecks in the bay, all of them from the Armada"
    assert check(
        "All of the wrecks divers found in the bay were from the Armada.", [quote]
    ).verdict != ("unsupported")
    # "at all" is no quantity
    plain = check("The wreck was not found at all.", ["the wreck was not found at all, mostly"])
    assert "quantifier" not in plain.changes


def test_a_number_whose_open_end_is_dropped_is_never_supported() -> None:
    quote = "copper once formed a small share (usually five percent or less) of the coins"
    dropped = check("Copper once formed five percent of the coins.", [quote])
    assert not dropped.supported and "five … or less" in dropped.reason
    kept = check("Copper once formed five percent or less of the coins.", [quote])
    assert "number" not in kept.changes


def test_the_one_a_gift_is_bestowed_upon_is_not_its_giver() -> None:
    quote = "at the convocation, prizes and honours are bestowed upon pupils and teachers"
    swapped = check("At the convocation, pupils bestow prizes and honours on teachers.", [quote])
    assert not swapped.supported and "role" in swapped.changes, swapped
    kept = check("At the convocation, prizes are bestowed upon pupils and teachers.", [quote])
    assert kept.verdict != "unsupported"


# --- absences in other words; numbers in names; a number's comma is no clause --------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The robin is absent from the novel's plot.", "The robin was not in the novel's plot"),
        (
            "As of May, the board has reported no losses.",
            "As of May, the board has 4 wins and zero losses",
        ),
        ("The rule allows searches without a warrant.", "the rule permits warrantless searches"),
    ],
)
def test_an_absence_said_in_other_words_waits_never_refused(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict != "unsupported", verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The robin is in the novel's plot.", "The robin was not in the novel's plot"),
        ("The rule allows searches without a warrant.", "the rule permits searches with a warrant"),
    ],
)
def test_a_negation_flipped_with_no_absence_said_is_refused(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict == "unsupported"


def test_a_number_of_a_name_or_of_another_occurrence_is_not_moved() -> None:
    quote = "Roads near Kent include Interstate 5, State Route 167, and State Route 18"
    assert check("State Route 18 is near Kent.", [quote]).verdict != "unsupported"
    chart = "the album debuted at number one on the Billboard 200"
    assert check("The album debuted at number one on the Billboard 200.", [chart]).supported
    # two quotes, one word: the numbers trade places across them
    swapped = check(
        "Bronze holds 22% tin, while bell metal holds 12% tin.",
        ["Bronze holds 12% tin", "Bell metal holds 22% tin"],
    )
    assert not swapped.supported


def test_a_number_with_a_thousands_comma_is_one_clause() -> None:
    quote = (
        "orders stand at 1,707, of which 1,390 have been delivered and 1,358 remain in operation"
    )
    verdict = check(
        "Of 1,707 orders, 1,390 have been delivered and 1,358 remain in operation.", [quote]
    )
    assert "says nothing its quotes state" not in verdict.reason, verdict


# --- paraphrase that keeps its facts ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a preposition for a relative clause
        (
            "Steep cliffs made roads across the ridge too costly for the two villages.",
            "Steep cliffs made roads that cross the ridge too costly for the two villages",
        ),
        # an adverb the tagger reads where the quote has its adjective's synonym
        (
            "Fog on the pass is common but hard to forecast.",
            "Fog on the pass is common, although difficult to forecast",
        ),
        # a derivation's synonym ("finished" / "completion" through "finish" ~ "complete")
        ("The survey was finished in 1998.", "Completion of the survey came in 1998"),
    ],
)
def test_a_paraphrase_keeping_every_fact_is_supported(text: str, quote: str) -> None:
    verdict = check(text, [quote])
    assert verdict.supported, verdict


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # a preposition is free, the fact it carries is not
        (
            "Steep cliffs made roads across the ridge too cheap for the two villages.",
            "Steep cliffs made roads that cross the ridge too costly for the two villages",
        ),
        ("The survey was finished in 1999.", "Completion of the survey came in 1998"),
        ("The survey was started in 1998.", "Completion of the survey came in 1998"),
        (
            "Fog on the pass is rare but hard to forecast.",
            "Fog on the pass is common, although difficult to forecast",
        ),
    ],
)
def test_a_paraphrase_that_changes_a_fact_is_never_supported(text: str, quote: str) -> None:
    assert not check(text, [quote]).supported


def test_a_title_joining_words_of_two_quotes_is_read_for_its_relations() -> None:
    quotes = [
        "The treaty between the Company and the Raja was signed in 1762",
        "The Shan called the area Cassay, and the Burmese called it Kathe",
    ]
    verdict = check("The Raja's 1762 Treaty with the Burmese", quotes, share=0.5)
    assert not verdict.supported, verdict
    assert check("The Raja's 1762 Treaty", quotes, share=0.5).verdict != "unsupported"


def test_a_phrase_filled_from_another_quote_is_never_supported() -> None:
    quotes = [
        "The bay includes the Gulf of Tarn and the Sound of Brill",
        "The river drains through the Danish marshes into the bay by way of three channels",
    ]
    merged = check("The river drains into the bay through the Gulf of Tarn.", quotes)
    assert not merged.supported and "merge" in merged.changes, merged
    kept = check("The river drains through the Danish marshes into the bay.", quotes)
    assert kept.verdict != "unsupported"


def test_a_range_restated_in_another_unit_is_never_refused() -> None:
    quotes = ["The moor is a wet upland", "with rainfall between 850 and 1,420 mm a year"]
    kept = check("The moor gets between 85 and 142 cm of rainfall a year.", quotes)
    assert kept.verdict != "unsupported" and "fact" not in kept.changes, kept
    changed = check("The moor gets between 95 and 142 cm of rainfall a year.", quotes)
    assert changed.verdict == "unsupported"


def test_a_quantifier_a_quote_states_on_the_same_word_is_kept() -> None:
    quotes = [
        "In birds, the gut can be split into two parts, the crop and the gizzard",
        "with most of the grinding taking place in the gizzard",
    ]
    kept = check(
        "The bird gut splits into the crop and the gizzard, and most of its grinding takes "
        "place in the gizzard.",
        quotes,
    )
    assert "quantifier" not in kept.changes, kept
    widened = check(
        "The bird gut splits into the crop and the gizzard, and all of its grinding takes "
        "place in the gizzard.",
        quotes,
    )
    assert not widened.supported
