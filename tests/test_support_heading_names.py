"""Issue 22: the heading's full name for the part of it a quote gives ("Freddie Highmore starred"
for "Highmore starred" under the heading "Freddie Highmore", ``heading._part_of_heading``).

Tried by sup22f and removed (on VitaminC's tuning pages it let in 4 False items, each a hole
elsewhere the first name had held for a person); those holes and the ones sup22h found were
closed, and sup22h brought it back (docs/benchmarks.md, sup22h); the lead turned it off again
(``heading.FULL_NAME``: still 2 more False items on held-out pages), and these tests run it on. The attacker's names beside
it: another first name in the quote, a heading that gives only the surname, no heading, a quote
whose name has a word the heading lacks. Our own sentences.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, check, heading


@pytest.fixture(autouse=True)
def full_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heading, "FULL_NAME", True)


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


def test_the_headings_full_name_for_its_surname_is_supported() -> None:
    text = "Freddie Highmore starred in Bates Motel."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict == SUPPORTED


def test_the_headings_full_name_for_its_first_name_is_supported() -> None:
    quote = "In 2004 Ian meets a new neighbour, Jane Collins"
    text = "Jane Collins is the new neighbour of Ian Beale."
    assert check(text, [quote], context=["Ian Beale"]).verdict == SUPPORTED
    other = "In 2004 Ian Smith meets a new neighbour, Jane Collins"
    assert check(text, [other], context=["Ian Beale"]).verdict != SUPPORTED


def test_the_headings_name_keeps_every_other_check() -> None:
    text = "Freddie Highmore starred in Bates Motel for six seasons."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict != SUPPORTED


def test_the_quotes_own_name_is_supported() -> None:
    text = "Highmore starred in Bates Motel."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict == SUPPORTED


def test_off_by_default_the_headings_full_name_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heading, "FULL_NAME", False)
    text = "For five seasons, Freddie Highmore starred in Bates Motel."
    assert check(text, [QUOTE], context=["Freddie Highmore"]).verdict != SUPPORTED
