"""Split long texts into consecutive chunks at natural boundaries; never truncate.

The chunks cover the text exactly: ``text[c.start:c.end]`` for consecutive chunks concatenate to
the whole text. A boundary is the last paragraph break in the window's final 40 %, else the last
sentence end, else the last whitespace, else a hard cut at the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"[.!?][\"')\]]*\s+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int


def _last_match(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    last = None
    for match in pattern.finditer(text, lo, hi):
        last = match.end()
    return last


def chunk_text(text: str, max_chars: int) -> list[Chunk]:
    """Consecutive chunks of at most ``max_chars`` characters covering all of ``text``."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    chunks: list[Chunk] = []
    start = 0
    n = len(text)
    while start < n:
        hard = min(start + max_chars, n)
        end = hard
        if hard < n:
            floor = start + int(max_chars * 0.6)
            for pattern in (_PARAGRAPH, _SENTENCE, _SPACE):
                found = _last_match(pattern, text, floor, hard)
                if found is not None and found > start:
                    end = found
                    break
        chunks.append(Chunk(len(chunks), start, end))
        start = end
    return chunks
