"""Issue 22 (sup22i): the heading's own name filling what a quote leaves unsaid.

A page's heading ("2020 flu outbreak in Norway") names the place, the outbreak and the period its
sentences are about; a quote often leaves them out ("there are 88 active cases"). The heading's
own name (no bracket or comma part: ``heading.subject_words``) may stand as the owner of what an
existential *there is* states with no place of its own, as the owner of what the quote's "the
film has" states, as an *of* phrase on a bare noun ("cases of flu"), or as a frame in time ("during
the outbreak"). Beside each, the attacker's twin: the quote gives its own place or owner, the word
comes from the heading's bracket or comma part, a number or a role changed. Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check
from affidavit.support.heading import subject_words

HEADING = ["2031 flu outbreak in Norway"]


def test_the_headings_place_owns_what_there_is_states() -> None:
    quote = "As of 12 March, there are 88 active cases."
    assert check("Norway had 88 active cases.", [quote], context=HEADING).verdict == SUPPORTED


@pytest.mark.parametrize(
    "quote",
    [
        "As of 12 March, there are 88 active cases in Bergen.",  # its own place
        "As of 12 March, Bergen has 88 active cases.",  # its own owner
        "As of 12 March, there are 88 active cases, 40 of them in Sweden.",
    ],
)
def test_a_quote_with_a_place_of_its_own_keeps_the_headings_place_uncertain(quote: str) -> None:
    assert check("Norway had 88 active cases.", [quote], context=HEADING).verdict != SUPPORTED


def test_the_headings_place_keeps_every_other_check() -> None:
    quote = "As of 12 March, there are 88 active cases."
    changed = check("Norway had 98 active cases.", [quote], context=HEADING)
    assert changed.verdict == UNSUPPORTED
    bound = check("Norway had more than 90 active cases.", [quote], context=HEADING)
    assert bound.verdict != SUPPORTED
    assert check("Norway had 88 active cases.", [quote]).verdict != SUPPORTED  # no heading


def test_the_headings_topic_on_a_bare_noun_and_a_frame_in_time() -> None:
    quote = "As of 12 March, there are 88 active cases."
    text = "Norway had 88 active cases of flu during the outbreak."
    assert check(text, [quote], context=HEADING).verdict == SUPPORTED
    owned = "As of 12 March, there are 88 active cases of measles."
    assert check(text, [owned], context=HEADING).verdict != SUPPORTED


def test_a_bracket_or_comma_part_of_the_heading_is_not_its_subject() -> None:
    assert subject_words(["Phoenix, Arizona"]) == {"phoenix"}
    assert subject_words(["Kate Walsh (actress)"]) == {"kate", "walsh"}
    quote = "Phoenix is the capital and largest city of the state."
    text = "Phoenix is the capital of Arizona."
    assert check(text, [quote], context=["Phoenix, Arizona"]).verdict != SUPPORTED


def test_the_headings_title_owns_what_the_film_has() -> None:
    quote = "On Rotten Tomatoes, the film has an approval rating of 58 %."
    text = "Harbour Lights has an approval rating of 58 % on Rotten Tomatoes."
    assert check(text, [quote], context=["Harbour Lights"]).verdict == SUPPORTED
    other = "On Rotten Tomatoes, the sequel Winter Lights has an approval rating of 58 %."
    assert check(text, [other], context=["Harbour Lights"]).verdict != SUPPORTED


def test_the_headings_title_owns_what_the_films_rating_rests_on() -> None:
    quote = "On Metacritic, the film has a score of 71 out of 100 based on 17 reviews."
    text = "Harbour Lights has under 18 reviews on Metacritic."
    assert check(text, [quote], context=["Harbour Lights"]).verdict == SUPPORTED
    other = "On Metacritic, Winter Lights has a score of 71 out of 100 based on 17 reviews."
    assert check(text, [other], context=["Harbour Lights"]).verdict != SUPPORTED
    assert check(text.replace("18", "12"), [quote], context=["Harbour Lights"]).verdict != SUPPORTED


def test_one_of_two_places_the_heading_names_is_not_the_quotes_place() -> None:
    quote = "As of 12 March, there are 88 active cases."
    union = ["2031 flu outbreak in Sweden and Norway"]
    assert check("Norway had 88 active cases.", [quote], context=union).verdict != SUPPORTED
    assert check("Sweden had 88 active cases.", [quote], context=union).verdict != SUPPORTED
    # the heading's whole name is fine, and the page's title beside a section heading too
    whole = ["Harbour Lights"]
    film = "On Rotten Tomatoes, the film has an approval rating of 58 %."
    text = "Harbour Lights has an approval rating of 58 % on Rotten Tomatoes."
    assert check(text, [film], context=[*whole, "Reception"]).verdict == SUPPORTED
    partial = "Harbour has an approval rating of 58 % on Rotten Tomatoes."
    assert check(partial, [film], context=whole).verdict != SUPPORTED
    # a name the heading gives with the noun its "of" hangs on ("the Battle of the Trebia")
    quote = "The battle took place in the dining room of an inn."
    text = "The Battle of the Trebia took place in the dining room of an inn."
    assert check(text, [quote], context=["Battle of the Trebia"]).verdict == SUPPORTED
    assert check(text, [quote], context=["Battle of the Trebia and Cannae"]).verdict != SUPPORTED
