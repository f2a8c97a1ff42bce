"""A verified quote shown in its source (``inbox show``, the web desk's plan screen): the lines
around it, and which of those characters a reader of the document does not see.

The context is the source's stored text, which keeps what the document hides (a Word run marked
hidden, white text, an HTML comment: W12 flags it, and no claim may quote it). A reviewer who
read that text as the document's would be misled — "the dose was changed to 10 mg" in a hidden
run reads like the document's own words beside the quote — so each unseen span in the context is
given with the reason, and every surface marks it.
"""

from __future__ import annotations

from itertools import pairwise

from ..sources.extract import location
from ..sources.sanitizer import UNSEEN_KINDS
from ..sources.store import SourceRecord
from .models import ContextSpan, QuoteContext

CONTEXT_CHARS = 240
"""At most this many characters of context either side of a quote (a source written as one long
line would otherwise be shown whole)."""


def _bounds(text: str, start: int, end: int, lines: int) -> tuple[int, int, bool, bool]:
    """Where the context around ``text[start:end]`` begins and ends, and whether it was cut
    there (to :data:`CONTEXT_CHARS` at a space)."""
    left = start
    for _ in range(lines + 1):
        left = text.rfind("\n", 0, max(left - 1, 0)) + 1 if left > 0 else 0
    right = end
    for _ in range(lines + 1):
        nxt = text.find("\n", right + 1)
        right = len(text) if nxt == -1 else nxt
    cut_left = cut_right = False
    if start - left > CONTEXT_CHARS:
        left, cut_left = start - CONTEXT_CHARS, True
        space = text.find(" ", left, start)
        left = space + 1 if space != -1 else left
    if right - end > CONTEXT_CHARS:
        right, cut_right = end + CONTEXT_CHARS, True
        space = text.rfind(" ", end, right)
        right = space if space != -1 else right
    return left, right, cut_left, cut_right


def quote_context(
    source: SourceRecord, text: str, start: int, end: int, *, op: int, claim: int, evidence: int
) -> QuoteContext:
    """The quote ``text[start:end]`` of ``source`` in its context, with the context's unseen
    spans (offsets into ``before + quote + after``)."""
    left, right, cut_left, cut_right = _bounds(text, start, end, 2)
    before = ("…" if cut_left else "") + text[left:start]
    after = text[end:right] + ("…" if cut_right else "")
    shift = left - (1 if cut_left else 0)  # a text offset minus this is a shown offset
    hidden = [
        ContextSpan(
            start=max(flag.start, left) - shift, end=min(flag.end, right) - shift, why=flag.detail
        )
        for flag in source.flags
        if flag.kind in UNSEEN_KINDS and flag.start < right and flag.end > left
    ]
    return QuoteContext(
        op=op,
        claim=claim,
        evidence=evidence,
        source_id=source.id,
        source_name=source.name,
        location=location(text, source.text_map, start),
        before=before,
        quote=text[start:end],
        after=after,
        hidden=sorted(hidden, key=lambda span: (span.start, span.end)),
    )


def pieces(context: QuoteContext) -> list[tuple[str, str, str]]:
    """``context`` as ``(part, text, why)`` pieces in order: part is ``before``, ``quote`` or
    ``after``; ``why`` is empty for what a reader sees, else why the piece is unseen."""
    shown = context.before + context.quote + context.after
    parts = [
        ("before", 0, len(context.before)),
        ("quote", len(context.before), len(context.before) + len(context.quote)),
        ("after", len(context.before) + len(context.quote), len(shown)),
    ]
    cuts = {0, len(shown)} | {b for _, _, b in parts}
    for span in context.hidden:
        cuts |= {min(max(span.start, 0), len(shown)), min(max(span.end, 0), len(shown))}
    edges = sorted(cuts)
    out: list[tuple[str, str, str]] = []
    for a, b in pairwise(edges):
        if a == b:
            continue
        part = next(name for name, lo, hi in parts if lo <= a < hi)
        why = next((s.why or "hidden" for s in context.hidden if s.start <= a and b <= s.end), "")
        if out and out[-1][0] == part and out[-1][2] == why:
            out[-1] = (part, out[-1][1] + shown[a:b], why)
        else:
            out.append((part, shown[a:b], why))
    return out


__all__ = ["CONTEXT_CHARS", "pieces", "quote_context"]
