"""A date is no amount, and a year in a name is no date (issue 24 item 4): on the quick start's
speeches "How large was the public debt?" was answered **1825** from "On January 1st, 1825, a
large amount of the war debt … become redeemable", and "When was the Louisiana purchase?"
**1812** from "the French foothold … in Louisiana, and … the War of 1812"."""

from __future__ import annotations

from affidavit.ask import measures
from affidavit.ask.extractive import extractive_answer
from affidavit.retrieval.search import EvidenceRef, Hit


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef("ab" * 32, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def short(question: str, *texts: str) -> str | None:
    reply = extractive_answer(question, [hit(n, t) for n, t in enumerate(texts)], "n")
    found = reply["short_answer"]
    return None if found is None else str(found["text"])


DEBT = (
    "On January 1st, 1825, a large amount of the war debt and a part of the Revolutionary "
    "debt become redeemable."
)


def test_a_year_or_a_day_of_a_date_is_no_amount() -> None:
    assert short("How large was the public debt?", DEBT) not in ("1825", "1")
    assert measures.dated_year(DEBT, DEBT.index("1825"), "1825")
    assert measures.dated_year(DEBT, DEBT.index("1st"), "1")
    text = "The mill was sold in 1798, and the debt was paid."
    assert measures.dated_year(text, text.index("1798"), "1798")


def test_an_amount_that_looks_like_a_year_is_still_an_amount() -> None:
    # the attacker's side of the rule: a count after "in" is no date, nor one without a date's
    # context, nor a number with a unit
    text = "The company shipped orders in 1500 crates that year."
    assert not measures.dated_year(text, text.index("1500"), "1500")
    text = "The fleet counted 1800 ships."
    assert not measures.dated_year(text, text.index("1800"), "1800")
    assert short("How many ships did the fleet count?", text) in ("1800 ships", "1800")
    loan = "A loan of 3,000,000 florins was completed in Holland in 1790."
    assert short("How large was the loan completed in Holland?", loan) in (
        "3,000,000 florins",
        "3,000,000",
    )


def test_a_year_in_a_name_dates_nothing_but_the_name_asked_about() -> None:
    text = (
        "The French held Louisiana, and we engaged in the War of 1812 to vindicate our right "
        "to peaceful trade."
    )
    assert measures.named_year(text, text.index("1812"), "When was the Louisiana purchase?")
    assert short("When was the Louisiana purchase?", text) != "1812"
    pueblo = "Local Indians expelled the Spanish following the Pueblo Revolt of 1680."
    assert not measures.named_year(
        pueblo, pueblo.index("1680"), "In which year did the Pueblo revolt occur?"
    )
    assert short("In which year did the Pueblo revolt occur?", pueblo) == "1680"
    july = "The treaty was signed in July of 1812 at Ghent."
    assert not measures.named_year(july, july.index("1812"), "When was the treaty signed?")
    assert short("When was the treaty signed?", july) in ("July of 1812", "1812")
