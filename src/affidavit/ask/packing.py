"""Packing retrieved claims into a token budget, fenced in the call's nonce (W2, W8)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..retrieval.search import Hit
from ..retrieval.tokens import count_tokens


@dataclass(frozen=True)
class Packed:
    hits: tuple[Hit, ...]  # the claims that fit, best first
    text: str  # the fenced block sent to the model
    tokens: int  # its exact cl100k token count, never above the budget
    left_out: int  # retrieved claims that did not fit


def claim_block(hit: Hit) -> str:
    lines = [f"[{hit.claim_id}] ({hit.page_title}) {hit.text}"]
    lines += [f'    quote: "{e.quote}" — {e.source_name}, {e.location}' for e in hit.evidence]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=16384)
def _block_tokens(block: str) -> int:
    return count_tokens(block)


def pack(hits: list[Hit], budget: int, nonce: str) -> Packed:
    """The best ``hits`` whose fenced block fits in ``budget`` tokens (counted exactly).

    The count of the whole text is the sum of its parts' counts: cl100k splits text into
    pre-tokens before merging, and every part ends in a newline that closes a pre-token (no
    pattern reaches past a newline into a part that starts with ``[`` or ``<``), so no merge
    crosses a part's edge (tests/test_retrieval_packing.py checks it on adversarial text). Each
    claim's block is counted once and remembered."""
    head, tail = f"<<<CLAIMS {nonce}>>>\n", f"<<<END {nonce}>>>"
    chosen: list[str] = []
    kept: list[Hit] = []
    used = count_tokens(head) + count_tokens(tail)
    for hit in hits:
        block = claim_block(hit)
        cost = _block_tokens(block)
        if used + cost > budget:
            continue
        chosen.append(block)
        kept.append(hit)
        used += cost
    return Packed(tuple(kept), head + "".join(chosen) + tail, used, len(hits) - len(kept))
