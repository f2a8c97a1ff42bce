"""Packing retrieved claims into a token budget, fenced in the call's nonce (W2, W8)."""

from __future__ import annotations

from dataclasses import dataclass

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


def pack(hits: list[Hit], budget: int, nonce: str) -> Packed:
    """The best ``hits`` whose fenced block fits in ``budget`` tokens (counted exactly)."""
    head, tail = f"<<<CLAIMS {nonce}>>>\n", f"<<<END {nonce}>>>"
    chosen: list[Hit] = []
    used = count_tokens(head + tail)
    for hit in hits:
        cost = count_tokens(claim_block(hit))
        if used + cost > budget:
            continue
        chosen.append(hit)
        used += cost
    text = head + "".join(claim_block(h) for h in chosen) + tail
    tokens = count_tokens(text)
    while tokens > budget and chosen:  # BPE merges across block edges can shift a count or two
        chosen.pop()
        text = head + "".join(claim_block(h) for h in chosen) + tail
        tokens = count_tokens(text)
    return Packed(tuple(chosen), text, tokens, len(hits) - len(chosen))
