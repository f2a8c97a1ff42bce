"""Issue 22 (branch sup22f): a quote's pointing phrase resolved to the other quote it points
back to (``support/antecedent.py``, used by ``roles.cross_quote``).

"the weight … counteracts that instability" points back to the quote that says where the
instability is; a writer who joins the two says "counteracts instability at the neck
connection". Each faithful text has the attacker's beside it: a dependent from another noun, an
antecedent two quotes could give, a quote that names the noun without pointing, and the usual
changes of fact the other rules catch. Also: a thing a quote renames right after
("vulcanized rubber (sometimes called hard rubber)", ``antecedent.renamed``), and a noun derived
as the person who does it ("saxophonist" / "saxophone", ``align._doer_of``), which is another
thing. Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

NECK = "Instability at the neck connection moves harmonic frequencies off series"
WEIGHT = "The weight of a metal mouthpiece counteracts that instability"
NAMES = "The meanings of some names are unknown or unclear"
RYAN = "The most common European name in this category may be the Irish name Ryan"


def test_a_demonstrative_noun_takes_its_antecedents_words() -> None:
    text = "The weight of a metal mouthpiece counteracts instability at the neck connection."
    assert check(text, [NECK, WEIGHT]).verdict == SUPPORTED


def test_a_noun_pointed_at_by_its_phrase_takes_its_antecedents_words() -> None:
    text = "Ryan may be the most common European name of unknown meaning."
    assert check(text, [NAMES, RYAN]).verdict == SUPPORTED


@pytest.mark.parametrize(
    ("text", "quotes"),
    [
        # the quote points at a wobble, not at the instability the other quote places
        ("The weight of a metal mouthpiece counteracts wobble at the neck connection.",
         [NECK, "The weight of a metal mouthpiece counteracts that wobble"]),
        # two quotes could be the antecedent: which instability is meant is not said
        ("The weight of a metal mouthpiece counteracts instability at the neck connection.",
         [NECK, "Instability at the bell dampens the tone", WEIGHT]),
        # the second quote names the noun without pointing back: another instability
        ("The weight of a metal mouthpiece counteracts instability at the neck connection.",
         [NECK, "The weight of a metal mouthpiece counteracts instability at the bell"]),
        # the word is in the antecedent's quote, but not said of the antecedent
        ("The weight of a metal mouthpiece counteracts instability at the bell.",
         ["Instability at the neck connection moves frequencies off series and the bell "
          "resonates", WEIGHT]),
        # two quotes speak of names: the category may be either
        ("Ryan may be the most common European name of Norse origin.",
         ["Some names are of Norse origin", NAMES, RYAN]),
        # no pointing phrase at all
        ("Ryan may be the most common European name of Norse origin.",
         ["Some names are of Norse origin",
          "The most common European name in the Irish list may be Ryan"]),
    ],
)  # fmt: skip
def test_a_relation_no_quote_points_to_is_not_supported(text: str, quotes: list[str]) -> None:
    assert check(text, quotes).verdict != SUPPORTED


@pytest.mark.parametrize(
    ("text", "quotes"),
    [
        ("The weight of a metal mouthpiece causes instability at the neck connection.",
         [NECK, WEIGHT]),
        ("The weight of a metal mouthpiece does not counteract instability at the neck "
         "connection.", [NECK, WEIGHT]),
        ("Ryan is the most common European name of unknown meaning.", [NAMES, RYAN]),
        ("Ryan may be the least common European name of unknown meaning.", [NAMES, RYAN]),
        ("Ryan may be the most common European name of known meaning.", [NAMES, RYAN]),
    ],
)  # fmt: skip
def test_a_resolved_antecedent_keeps_every_other_check(text: str, quotes: list[str]) -> None:
    assert check(text, quotes).verdict == UNSUPPORTED


RUBBER = (
    "Mouthpieces are made of vulcanized rubber (sometimes called hard rubber or ebonite), "
    "plastic, or metal"
)


def test_a_thing_the_quote_renames_takes_the_words_of_both_names() -> None:
    assert check("Mouthpieces are made of vulcanized (hard) rubber.", [RUBBER]).verdict == SUPPORTED
    assert check("Mouthpieces are made of vulcanized hard rubber.", [RUBBER]).verdict == SUPPORTED


@pytest.mark.parametrize(
    "quote",
    [
        # two things: the reeds' rubber is hard, the mouthpieces' vulcanized
        "Mouthpieces are made of vulcanized rubber, and reeds of hard rubber",
        # a name the quote denies
        "Mouthpieces are made of vulcanized rubber (wrongly called hard rubber)",
        "Mouthpieces are made of vulcanized rubber (never to be called hard rubber)",
        # a name others give, far from the thing: reported, not stated
        "Mouthpieces are made of vulcanized rubber, which players in the south have long called "
        "hard rubber",
    ],
)
def test_words_of_another_thing_or_a_denied_name_are_not_supported(quote: str) -> None:
    assert check("Mouthpieces are made of vulcanized hard rubber.", [quote]).verdict != SUPPORTED


def test_a_word_neither_name_has_is_not_supported() -> None:
    assert check("Mouthpieces are made of vulcanized (soft) rubber.", [RUBBER]).verdict != SUPPORTED


# --- a derivation that names the person who does it is another thing (align._doer_of) ----------


def test_the_headings_thing_owns_what_the_quote_says_the_thing_has() -> None:
    quote = (
        "Sax's patent expired in 1866; thereafter, numerous saxophonists and instrument "
        "manufacturers implemented their own improvements to the design and keywork"
    )
    text = (
        "After Sax's patent expired in 1866, numerous saxophonists and instrument manufacturers "
        "made their own improvements to the saxophone's design and keywork."
    )
    assert check(text, [quote], context=["Saxophone"]).verdict == SUPPORTED
    assert check("Players improved the saxophone's keywork.", ["Players improved the keywork"],
                 context=["Saxophone"]).verdict == SUPPORTED  # fmt: skip


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The saxophonist's design was patented in 1846.",
         "The design of the saxophone was patented in 1846"),
        ("The science of the lab was praised.", "The scientists of the lab were praised"),
        ("The musician was recorded in 1950.", "The music was recorded in 1950"),
    ],
)  # fmt: skip
def test_the_person_is_not_the_thing_they_play_or_study(text: str, quote: str) -> None:
    assert check(text, [quote]).verdict != SUPPORTED


def test_the_thing_naming_a_persons_kind_still_restates_the_person() -> None:
    quote = "Saxophone players such as John Coltrane defined the forefront of creative exploration"
    text = "Saxophonists such as John Coltrane defined the forefront of creative exploration."
    assert check(text, [quote]).verdict == SUPPORTED
