"""Issue 22 (branch sup22f): the heading's full name for the part of it a quote gives
("Freddie Highmore starred" for "Highmore starred" under the heading "Freddie Highmore",
``heading._part_of_heading``), and the attacker's names beside it: another first name in the
quote, a heading that gives only the surname, no heading. Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, check

QUOTE = "For five seasons, Highmore starred in Bates Motel"


def test_the_headings_full_name_for_its_surname_is_supported() -> None:
    text = "Freddie Highmore starred in Bates Motel."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict == SUPPORTED
    assert check("Highmore starred in Bates Motel.", [QUOTE], context=["Freddie Highmore"]).verdict == SUPPORTED  # fmt: skip


@pytest.mark.parametrize(
    ("quote", "context"),
    [
        ("For five seasons, Jane Highmore starred in Bates Motel", ["Freddie Highmore"]),
        (QUOTE, ["Highmore"]),
        (QUOTE, []),
        # the quote's name has a word the heading lacks: another Highmore
        ("For five seasons, Mary Highmore starred in Bates Motel", ["Freddie Highmore"]),
    ],
)
def test_a_first_name_neither_heading_nor_quote_gives_is_not_supported(
    quote: str, context: list[str]
) -> None:
    text = "Freddie Highmore starred in Bates Motel."
    assert check(text, [quote], context=context).verdict != SUPPORTED


def test_the_headings_name_keeps_every_other_check() -> None:
    text = "Freddie Highmore starred in Bates Motel for six seasons."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict != SUPPORTED
