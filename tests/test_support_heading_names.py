"""Issue 22 (branch sup22f): a first name only the heading gives stays for a person.

Tried and not kept: reading the heading's full name for the part of it a quote gives ("Freddie
Highmore starred" for "Highmore starred" under the heading "Freddie Highmore"). On VitaminC's
tuning pages it admitted 25 more True items and 4 False ones, each a hole elsewhere the heading's
first name had held for a person (docs/benchmarks.md, sup22f). These are the attacker's texts
it was built against; they must stay out whatever a later rule does with headings. Our own
sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, check

QUOTE = "For five seasons, Highmore starred in Bates Motel"


@pytest.mark.parametrize(
    ("quote", "context"),
    [
        ("For five seasons, Jane Highmore starred in Bates Motel", ["Freddie Highmore"]),
        (QUOTE, ["Highmore"]),
        (QUOTE, []),
        ("For five seasons, Mary Highmore starred in Bates Motel", ["Freddie Highmore"]),
    ],
)
def test_a_first_name_neither_heading_nor_quote_gives_is_not_supported(
    quote: str, context: list[str]
) -> None:
    text = "Freddie Highmore starred in Bates Motel."
    assert check(text, [quote], context=context).verdict != SUPPORTED


def test_the_quotes_own_name_is_supported() -> None:
    text = "Highmore starred in Bates Motel."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict == SUPPORTED
