"""Issue 22 (branch supqual): faithful restatements the rules held back, each with the attacker's
sentence of the same shape that must stay short of *supported*.

- a text's "so" after a clause the parser hangs on the verb that follows: the clause before "so"
  is the cause ("A was spoken but not written, so B was written in Greek");
- a quote's "Thus, …" links to the quote right before it, never to any earlier one;
- a word a quote sets apart ("in Greek *rather than* Armenian") made the object of the text's
  preposition ("written in Armenian") is not the quote's statement.
"""

from __future__ import annotations

import pytest

from affidavit.support import SUPPORTED, UNSUPPORTED, check

SPOKEN = "Before the 5th century, Armenians had a spoken language, but it was not written"
THUS = "Thus, the Bible and Liturgy were written in Greek or Syriac rather than Armenian"
ALPHABET = "The Armenian alphabet was invented in 405 by Mesrop Mashtots"


def test_so_after_a_clause_hung_on_the_next_verb_reads_the_cause_before_it() -> None:
    text = (
        "Before the 5th century Armenian was spoken but not written, so the Bible and Liturgy "
        "were written in Greek or Syriac."
    )
    found = check(text, [SPOKEN, THUS])
    assert found.verdict == SUPPORTED, found.reason


def test_so_the_other_way_round_is_refused() -> None:
    text = (
        "Because the Bible and Liturgy were written in Greek or Syriac, Armenian was not "
        "written before the 5th century."
    )
    found = check(text, [SPOKEN, THUS])
    assert found.verdict == UNSUPPORTED
    assert "link" in found.changes


@pytest.mark.parametrize("quotes", [[SPOKEN, THUS, ALPHABET], [ALPHABET, SPOKEN, THUS]])
def test_thus_links_only_to_the_quote_right_before_it(quotes: list[str]) -> None:
    """ "Thus" in the third quote says nothing about the first: a cause drawn from it is the
    attacker's merged fact."""
    text = (
        "The Armenian alphabet was invented in 405 by Mesrop Mashtots, so the Bible and "
        "Liturgy were written in Greek or Syriac."
    )
    found = check(text, quotes)
    assert found.verdict != SUPPORTED
    assert "link" in found.changes


@pytest.mark.parametrize(
    "text",
    [
        "The Bible was written in Armenian.",
        "The Bible and Liturgy were written in Armenian.",
    ],
)
def test_what_rather_than_sets_apart_is_not_what_the_text_may_state(text: str) -> None:
    found = check(text, [THUS])
    assert found.verdict != SUPPORTED
    assert "negation" in found.changes


def test_a_merge_of_the_cause_keeps_what_rather_than_sets_apart() -> None:
    text = (
        "Before the 5th century Armenian was spoken but not written, so the Bible and Liturgy "
        "were written in Armenian."
    )
    assert check(text, [SPOKEN, THUS]).verdict != SUPPORTED


def test_the_statement_rather_than_sets_apart_from_stays_supported() -> None:
    assert check("The Bible and Liturgy were written in Greek or Syriac.", [THUS]).verdict == (
        SUPPORTED
    )
