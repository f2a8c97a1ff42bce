"""Issue 22 (branch sup22h): the holes behind the wrong texts still admitted outright on the
tuning data, each closed by a rule that names its reason.

- a title in quotation marks read as one piece (``support/spans.py``: "Drunk Love" is not
  "Drunk in Love");
- a variable's value ("x = 1" against "x = 0", ``support/spans.py``);
- what a quote says was turned down, taken as done (``support/declined.py``);
- a name in brackets after another name (``support/brackets.py``);
- whose relation an *of* name is (``support/relations.py``: the brother's, not the grandson's);
- a description restated only through a rare sense of the quote's noun (``support/calling.py``:
  a cat is a person only as slang);
- a modifier borrowed from elsewhere while the quote's noun carries another one in that place
  (``support/modifiers.py``).

Each has the attacker's text (never *supported*) and the faithful text of the same shape beside
it (still *supported*). Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

SINGLES = 'The band is best known for the songs "Quiet River Blues" and "Home in Time".'
QUOTE_SINGLES = 'The band is best known for the songs "Quiet River Blues" and "Home in Time"'


@pytest.mark.parametrize(
    "text",
    [
        'The band is best known for the songs "Quiet River" and "Home in Time".',
        'The band is best known for the songs "Quiet River Blues" and "Home Time".',
    ],
)
def test_a_title_cut_or_with_a_word_dropped_is_unsupported(text: str) -> None:
    verdict = check(text, [QUOTE_SINGLES])
    assert verdict.verdict == UNSUPPORTED
    assert "the quote's is" in verdict.reason


def test_the_whole_title_is_supported() -> None:
    assert check(SINGLES, [QUOTE_SINGLES]).verdict == SUPPORTED


def test_a_title_the_heading_gives_is_supported() -> None:
    text = 'Marlow is a lawyer in "Harbour Lights".'
    quote = "It features Anne Kay as Marlow, a lawyer"
    assert check(text, [quote], context=["Harbour Lights"]).verdict == SUPPORTED
    assert check(text, [quote]).verdict != SUPPORTED


def test_a_title_with_its_percent_sign_is_the_quotes_title() -> None:
    text = 'The plan, "aid for the other 90%", was launched in 2004.'
    quote = 'The plan, "aid for the other 90 percent", was launched in 2004'
    assert check(text, [quote]).verdict == SUPPORTED


FUNCTION = "the function g such that g(x) = 2/x has no value at x = 0, since 2/0 is undefined"


def test_a_variables_value_changed_is_unsupported() -> None:
    verdict = check("The function g(x) = 2/x has no value at x = 2.", [FUNCTION])
    assert verdict.verdict == UNSUPPORTED
    assert "'x = 0'" in verdict.reason


def test_the_variables_own_value_is_supported() -> None:
    assert check("The function g(x) = 2/x has no value at x = 0.", [FUNCTION]).verdict == SUPPORTED


DECLINED = (
    "Ann Porter is best known as a member of the band Tidewater, having turned down the "
    "offer to join the Harbour Quartet in 1999"
)


@pytest.mark.parametrize(
    "text",
    [
        "Ann Porter is a Harbour Quartet member.",
        "Ann Porter is a member of the Harbour Quartet.",
    ],
)
def test_what_was_turned_down_is_not_supported(text: str) -> None:
    verdict = check(text, [DECLINED])
    assert verdict.verdict != SUPPORTED
    assert "did not happen" in verdict.reason


@pytest.mark.parametrize(
    "text",
    [
        "Ann Porter is a member of the band Tidewater.",
        "Ann Porter turned down the offer to join the Harbour Quartet.",
    ],
)
def test_what_was_done_and_the_refusal_itself_are_supported(text: str) -> None:
    assert check(text, [DECLINED]).verdict == SUPPORTED


def test_a_refusal_leaves_where_and_when_alone() -> None:
    quote = (
        "Mara Lind has released ten studio albums but has refused to tour during her music career"
    )
    assert check("Mara Lind has released ten studio albums.", [quote]).verdict == SUPPORTED
    assert check("Mara Lind toured during her music career.", [quote]).verdict != SUPPORTED


CAST = (
    "The show follows Nora and her strict father, Walter (Peter Hale), and her quiet "
    "mother, Ruth (Jane Moss)"
)


def test_a_bracketed_name_for_the_one_before_it_is_not_supported() -> None:
    verdict = check("Nora's mother is named Jane Moss.", [CAST])
    assert verdict.verdict != SUPPORTED
    assert "in brackets after 'Ruth'" in verdict.reason


def test_the_name_before_the_brackets_is_supported() -> None:
    assert check("Nora's mother is named Ruth.", [CAST]).verdict == SUPPORTED


FAMILY = "Tom is the younger brother of Karl Brandt and the grandson of Olga Brandt"


def test_an_of_name_moved_to_another_relation_is_unsupported() -> None:
    verdict = check("Tom is the brother of Olga Brandt.", [FAMILY])
    assert verdict.verdict == UNSUPPORTED
    assert "grandson's" in verdict.reason


@pytest.mark.parametrize(
    "text", ["Tom is the grandson of Olga Brandt.", "Tom is the brother of Karl Brandt."]
)
def test_each_relation_with_its_own_name_is_supported(text: str) -> None:
    assert check(text, [FAMILY]).verdict == SUPPORTED


def test_a_description_through_a_rare_sense_is_not_supported() -> None:
    quote = "Rufus Greer was one of Anna Berg's cats"
    verdict = check("Rufus Greer is a person.", [quote], context=["Rufus Greer"])
    assert verdict.verdict != SUPPORTED
    assert "rare sense" in verdict.reason


def test_a_description_through_the_first_sense_is_supported() -> None:
    quote = "Rufus Greer was one of Anna Berg's actors"
    assert check("Rufus Greer is a person.", [quote], context=["Rufus Greer"]).verdict == SUPPORTED


ABILITIES = (
    "Great strength may result from bird training by diet, exercise, rest, or from human "
    "evolution over time"
)


def test_a_modifier_borrowed_over_the_quotes_own_is_not_supported() -> None:
    verdict = check("Great strength may result from human training by diet.", [ABILITIES])
    assert verdict.verdict != SUPPORTED
    assert "'bird training'" in verdict.reason


def test_the_quotes_own_modifier_is_supported() -> None:
    text = "Great strength may result from bird training by diet."
    assert check(text, [ABILITIES]).verdict == SUPPORTED


TECH = [
    '"Soft power", first described as "gentle influence" by the scholar Ada Brook',
    'A related idea is "design for the poorest tenth" - cheap tools for most of the world',
]


def test_a_name_from_one_quote_owning_what_another_names_is_not_supported() -> None:
    verdict = check("Ada Brook's Design for the Poorest Tenth", TECH, share=0.5)
    assert verdict.verdict != SUPPORTED
    assert "with no owner" in verdict.reason


def test_a_name_a_quote_gives_as_a_label_may_own_what_another_says() -> None:
    quotes = [
        "Annual address, 1950: Ada Brook",
        "The first is freedom from hunger everywhere in the world.",
        "we look forward to a world founded upon four essential freedoms",
    ]
    text = "In 1950 Ada Brook's first essential freedom was freedom from hunger."
    assert check(text, quotes).verdict == SUPPORTED
