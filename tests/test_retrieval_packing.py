"""Packing's token count is the exact count of the text it sends, never above the budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.ask.packing import pack
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.retrieval.tokens import count_tokens

# Text that stresses cl100k's pre-tokeniser at block edges: newlines, carriage returns,
# trailing spaces and punctuation, digits, contractions, non-Latin letters.
EDGY = st.text(
    alphabet=st.sampled_from(list("ab Z9'\r\n\t.,;:!?\"()[]<>—é漢 ")) | st.characters(),
    max_size=60,
)


def hit(n: int, text: str, quote: str, location: str) -> Hit:
    evidence = (EvidenceRef("s" * 64, "source.md", quote, location, 0, len(quote)),)
    return Hit(f"c-{n:016x}", "page", "Page Title", text, "trusted", 0.0, evidence)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(EDGY, EDGY, EDGY), min_size=0, max_size=8),
    st.integers(min_value=20, max_value=400),
)
def test_the_packed_count_is_exact_and_within_budget(
    parts: list[tuple[str, str, str]], budget: int
) -> None:
    hits = [hit(n, text, quote, loc) for n, (text, quote, loc) in enumerate(parts)]
    packed = pack(hits, budget, "n0nce" * 4)
    assert packed.tokens == count_tokens(packed.text)
    assert packed.tokens <= budget or not packed.hits
    assert len(packed.hits) + packed.left_out == len(hits)
