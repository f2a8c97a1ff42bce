"""Marking the words a text's quotes don't support, for a surface to highlight (W11)."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["mark"]


def mark(text: str, words: Iterable[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (segment, lacks support) pieces: each whole-word occurrence of ``words``
    is its own marked piece, for a surface to highlight (``inbox show`` brackets and bolds it)."""
    wanted = sorted({w for w in words if w.strip()}, key=len, reverse=True)
    if not wanted:
        return [(text, False)]
    pattern = re.compile(
        r"(?<![^\W_])(?:" + "|".join(re.escape(w) for w in wanted) + r")(?![^\W_])",
        re.IGNORECASE,
    )
    pieces: list[tuple[str, bool]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.start() > at:
            pieces.append((text[at : m.start()], False))
        pieces.append((m.group(0), True))
        at = m.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces
