"""The support check's stated rules (W11): what follows from a quote by a simple rule is supported,
what the check can't tell goes to a person, and what a quote contradicts is refused — tried as an
attacker would, with the number rounded the wrong way, the bound the quote breaks, the date moved,
the name borrowed from another section's heading."""

from __future__ import annotations

import pytest

from affidavit.gate.admission import quote_context
from affidavit.inbox import propose
from affidavit.sources.store import SourceStore
from affidavit.support import check
from affidavit.support.context import WINDOW, headings_above
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

# --- numbers: bounds, approximation, rounding, forms ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("More than 398 people were diagnosed.", "399 people were diagnosed"),
        ("There are less than 150 active cases.", "there are 88 active cases"),
        ("Shipments of more than 150,000 units.", "denoting shipments of over 150,000 units"),
        ("An approval rating of at least 78 %.", "an approval rating of 78 %"),
        ("An approval rating higher than 77 %.", "an approval rating of 78 %"),
        ("About 1.5 million people live there.", "1,523,000 people live there"),
        ("Pirri has around 30,000 inhabitants.", "Pirri has about 30.000 inhabitants"),
        ("The DVD sold 3.61 million units.", "the DVD release sold 3.61million units"),
        ("Turnout was forty per cent.", "turnout was 40%"),
        ("He finished twenty-first.", "He finished 21st"),
    ],
)
def test_a_number_that_follows_by_a_stated_rule_is_supported(text: str, quote: str) -> None:
    assert check(text, [quote]).supported, check(text, [quote])


@pytest.mark.parametrize(
    ("text", "quote", "named"),
    [
        ("More than 100 people came.", "90 people came", "100"),
        ("Less than 27 cases were confirmed.", "27 cases were confirmed", "27"),
        ("At most 77 % approved.", "78 % approved", "77"),
        # the quote's closest number is the one restated: another number can't satisfy the bound
        (
            "More than 1,320 remain in operation.",
            "1,348 have been delivered and 1,318 remain in operation",
            "1,320",
        ),
        ("About 1 million people live there.", "1,523,000 people live there", "1"),
        ("1.6 million people live there.", "1,523,000 people live there", "1.6"),
        ("Pirri has about 300 inhabitants.", "Pirri has about 30.000 inhabitants", "300"),
    ],
)
def test_a_number_the_quote_contradicts_is_refused(text: str, quote: str, named: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported", verdict
    assert named in verdict.missing


def test_a_rounding_the_check_cannot_confirm_goes_to_a_person() -> None:
    near = check("About 1.6 million people live there.", ["1,523,000 people live there"])
    assert (near.verdict, near.missing) == ("uncertain", ("1.6",))
    bare = check("1.5 million people live there.", ["1,523,000 people live there"])
    assert (bare.verdict, bare.missing) == ("uncertain", ("1.5",))
    other_bound = check(
        "It has sold under 2.5 million copies.", ["it has sold over 2.4 million copies"]
    )
    assert other_bound.verdict == "uncertain"
    since = check("Congress has been dominant since 1947.", ["Congress became dominant in 1947"])
    assert (since.verdict, since.missing) == ("uncertain", ("1947",))
    straddled = check(
        "The terminal was built before 1925.", ["The terminal was built in the 1920s"]
    )
    assert straddled.verdict == "uncertain"


# --- dates ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("EA Sports announced it on August 3, 2018.", "On 3 August 2018, EA Sports announced it"),
        ("Uta Hagen was born on June 12th, 1919.", "Uta Hagen was born on 12 June 1919"),
        ("It was released in September 2013.", "It was released on 23 September 2013"),
        (
            "Before April 11, 2020, there were fewer than 900 cases in Bosnia.",
            "As of 10 April 2020, in Bosnia there were 898 cases",
        ),
        ("Staff returned to work after March 25.", "On 29 March, staff returned to work"),
        ("My Neighbor sold DVDs before July 2018.", "My Neighbor sold DVDs as of April 2018"),
        ("The terminal was built before 1930.", "The terminal was built in the late 1920s"),
        ("It was drawn since March 4th, 1817.", "moneys drawn since March 4th, 1817"),
    ],
)
def test_a_date_that_follows_by_a_stated_rule_is_supported(text: str, quote: str) -> None:
    assert check(text, [quote]).supported, check(text, [quote])


@pytest.mark.parametrize(
    ("text", "quote", "named"),
    [
        ("It was released on April 11, 2020.", "It was released on 10 April 2020", "11"),
        ("Bosnia had 898 cases before April 9, 2020.", "As of 10 April 2020, 898 cases", "9"),
        ("Staff returned to work after March 30.", "On 29 March, staff returned to work", "30"),
        ("It was released in October 2013.", "released on 23 September 2013", "October"),
        ("The terminal was built before 1915.", "The terminal was built in the late 1920s", "1915"),
    ],
)
def test_a_moved_date_is_refused(text: str, quote: str, named: str) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported", verdict
    assert named in verdict.missing


# --- names ---------------------------------------------------------------------------------------


def test_names_written_another_way_are_the_same_name() -> None:
    assert check(
        "Foot Locker is a Canadian store chain.", ["Foot Locker is a store chain in Canada"]
    )
    assert check("Morocco has 333 COVID-19 cases.", ["Morocco has 333 coronavirus cases"]).supported
    assert check("It opened in the U.S. first.", ["It opened in the United States first"]).supported
    wrong = check("Morocco has 333 COVID-20 cases.", ["Morocco has 333 COVID-19 cases"])
    assert not wrong.supported and "COVID-20" in wrong.missing


def test_a_longer_form_of_a_quoted_name_waits_for_a_person_a_changed_one_is_refused() -> None:
    quote = "Caesar died suddenly in 65 BC, in Rome"
    fuller = check("Gaius Julius Caesar died in 65 BC.", [quote])
    assert fuller.verdict == "uncertain" and "Julius" in fuller.missing
    designed = "The present tower was designed by James Douglass"
    swapped = check("The present tower was designed by James Smeaton.", [designed])
    assert swapped.verdict == "unsupported" and "Smeaton" in swapped.missing
    # a comma parts two names: "Caesar, Brutus" does not lengthen "Caesar"
    listed = check("Caesar, Brutus and Rome fell.", ["Caesar was killed by Cassius in Rome"])
    assert listed.verdict == "unsupported" and "Brutus" in listed.missing


# --- words: what the check can't tell goes to a person; an added statement is refused ----------


def test_a_paraphrase_with_no_fact_contradicted_goes_to_a_person() -> None:
    verdict = check(
        "During the pandemic, golf courses were allowed to open.",
        ["Empire State Development modified that order to allow courses to open"],
    )
    assert verdict.verdict == "uncertain"
    assert {"pandemic", "golf"} <= set(verdict.missing)


def test_a_text_or_a_clause_with_nothing_in_common_with_its_quotes_is_refused() -> None:
    nothing = check(
        "Estelle Getty was a performer.", ["In her later years, she battled Lewy body dementia"]
    )
    assert nothing.verdict == "unsupported"
    added = check(
        "The present tower was designed by James Douglass, a notorious embezzler.",
        ["The present tower was designed by James Douglass"],
    )
    assert added.verdict == "unsupported" and "notorious embezzler" in added.reason


def test_a_negation_the_quotes_also_contradict_elsewhere_goes_to_a_person() -> None:
    quote = "Bosnia reported 90 cases, and Brcko District reported no cases"
    assert check("Bosnia reported 90 cases.", [quote]).verdict == "uncertain"
    flipped = check("Brcko District reported cases.", ["Brcko District reported no cases"])
    assert flipped.verdict == "unsupported"
    # only the negated words count: the quote asserting *some* of them elsewhere is not enough
    partly = check("Brcko had reported cases.", ["90 cases in Bosnia, no reported cases in Brcko"])
    assert partly.verdict == "unsupported"


# --- host-known context: the headings a quote stands under ---------------------------------------

ARTIST = (
    "# Snow Tha Product\n\n"
    "## Career\n\n"
    "She is best known for the singles Holy Shit and Drunk Love.\n\n"
    "## Kate Walsh\n\n"
    "She played Addison Montgomery on ABC.\n"
)
SINGLES = "She is best known for the singles Holy Shit and Drunk Love."


def test_the_headings_above_a_quote_are_its_context_and_no_other_heading_is() -> None:
    assert headings_above(ARTIST, ARTIST.index("She is")) == ("Snow Tha Product", "Career")
    assert headings_above(ARTIST, ARTIST.index("She played")) == ("Snow Tha Product", "Kate Walsh")
    assert headings_above("# After\n", 0) == ()
    assert headings_above("no headings here. She is.", 17) == ()
    assert headings_above("#hashtag, not a heading\nShe is.", 24) == ()
    far = "# Far above\n" + "x" * (WINDOW + 10) + "\nShe is."
    assert headings_above(far, len(far) - 7) == ()  # the cost per claim stays bounded


def test_the_headings_subject_resolves_the_quotes_pronoun_and_nothing_else() -> None:
    # issue 22: the name the source's title gives, standing where the quote says "She", is the
    # quote's own statement; the same name added anywhere else only makes the text uncertain
    text = "Snow Tha Product is best known for the singles Holy Shit and Drunk Love."
    framed = check(text, [SINGLES], context=headings_above(ARTIST, ARTIST.index("She is")))
    assert framed.supported, framed
    added = check(
        "She is best known for the singles Holy Shit and Drunk Love by Snow Tha Product.",
        [SINGLES],
        context=headings_above(ARTIST, ARTIST.index("She is")),
    )
    assert added.verdict == "uncertain" and "title or heading" in added.reason
    borrowed = check(
        "Kate Walsh is best known for the singles Holy Shit and Drunk Love.",
        [SINGLES],
        context=headings_above(ARTIST, ARTIST.index("She is")),
    )
    assert not borrowed.supported
    assert {"Kate", "Walsh"} <= set(borrowed.missing)
    assert "title or heading" not in borrowed.reason


def test_at_the_door_a_claim_gets_its_quotes_headings_not_the_plans(vault: Vault) -> None:
    src = add_text(vault, "artist.md", ARTIST, "trusted")
    own = claim(
        "Snow Tha Product is best known for the singles Holy Shit and Drunk Love.", src, SINGLES
    )
    other = claim(
        "Kate Walsh is best known for the singles Holy Shit and Drunk Love.", src, SINGLES
    )
    page = {
        "op": "create_page",
        "slug": "snow-tha-product",
        "title": "Snow Tha Product",
        "summary": "She is best known for the singles Holy Shit and Drunk Love.",
        "claims": [own, other],
    }
    op = propose(vault, make_plan(vault, page), "t", "t").admission.ops[0]
    first, second = op.claims
    assert first.support == "supported", first.support_reason
    assert second.support != "supported" and "Walsh" in second.unsupported
    assert "title or heading" not in second.support_reason
    assert quote_context(SourceStore(vault), first.evidence) == ["Snow Tha Product", "Career"]
