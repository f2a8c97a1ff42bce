"""Where a chunk's code is, as a CommonMark renderer sees it (markdown-it-py's token maps).

The segmenter finds fenced code itself; what it does not know is the rest of CommonMark's code:
indented code blocks (four spaces after a blank line) and fences inside list items and block
quotes. A reader of the rendered page sees those as code, so no sentence claim may come from them.
The token maps give line ranges, turned here into character offsets of the chunk itself, so every
quote still slices the stored text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_INDENTED = re.compile(r"^(?: {4}|\t)[ \t]*\S", re.M)
"""A cheap test first: a chunk with no fence marker and no line indented by four has no code
block at all, and is not parsed."""


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def code_spans(
    chunk: str, open_fence: str = "", nested_only: bool = False
) -> tuple[tuple[int, int], ...]:
    """Offsets ``(start, end)`` of ``chunk`` that CommonMark renders as code blocks (fenced or
    indented, at any depth). ``open_fence``: the chunk begins inside that fence.
    ``nested_only``: only those that are not top-level fences (indented blocks, fences inside
    list items and block quotes)."""
    if not open_fence and "```" not in chunk and "~~~" not in chunk and not _INDENTED.search(chunk):
        return ()
    prefix = open_fence + "\n" if open_fence else ""
    text = prefix + chunk
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for token in _parser().parse(text):
        if token.type in ("fence", "code_block") and token.map:
            if nested_only and token.type == "fence" and token.level == 0:
                continue
            first, last = token.map
            start = max(0, starts[first] - len(prefix))
            end = min(len(chunk), starts[min(last, len(starts) - 1)] - len(prefix))
            if end > start:
                spans.append((start, end))
    return tuple(spans)
