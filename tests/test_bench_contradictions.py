"""The miss report of ``bench/bench_contradictions.py --misses``: why a changed fact got no finding.

Own sentence pairs, one per reason, and the page split shared with ``bench/bench_support.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_contradictions import held_out, why_missed  # noqa: E402
from bench_support import _held_out  # noqa: E402


def test_no_claim_on_one_side_is_an_ingest_loss() -> None:
    assert why_missed([], ["The bridge carries 40,000 vehicles a day."]).startswith("no claim")
    assert why_missed(["The bridge carries 40,000 vehicles a day."], []).startswith("no claim")


def test_the_same_claims_on_both_sides_lost_the_change() -> None:
    same = ["The bridge carries 40,000 vehicles a day."]
    assert why_missed(same, same).startswith("the same claims")


def test_a_missed_changed_number_is_told_apart_from_a_wordless_change() -> None:
    number = why_missed(
        ["The Tamar Bridge carries 40,000 vehicles a day across the river."],
        ["The Tamar Bridge carries 16,000 vehicles a day across the river."],
    )
    assert number == "a changed fact, judged not one subject or reworded"
    word = why_missed(
        ["The Salt River Valley is a valley in central Arizona."],
        ["The Salt River Valley is a valley in northern Arizona."],
    )
    assert word == "one word replaced by another (no number, date or name)"
    added = why_missed(
        ["The valley contains the Phoenix area."],
        ["The valley contains the whole Phoenix area."],
    )
    assert added == "words only added or removed"


def test_unrelated_claims_with_different_numbers_share_too_few_words() -> None:
    why = why_missed(
        ["The Tamar Bridge carries 40,000 vehicles a day."],
        ["Honolulu reported 396 cases of measles in 2019 among school children."],
    )
    assert why == "a changed fact, but the claims share under a quarter of their words"


def test_the_page_split_is_the_support_benchmarks() -> None:
    pages = ["Salt_River_Valley", "Thor_-LRB-film-RRB-", "2020_coronavirus_pandemic_in_Oman"]
    for page in pages:
        assert held_out(page) == _held_out(page.replace("-LRB-", "(").replace("-RRB-", ")"))
