"""Results sized for agents: lines fitted into a token cap, continued with a cursor.

Every tool result is a list of lines; :func:`fit` takes as many as fit under the cap (counted with
the project's token counter, cl100k) from the cursor on and says how to get the rest. A cursor is
the index of the next line, as text; anything else is refused with the fix.

The numbered sentences of a source come from the project's one sentence splitter
(:func:`affidavit.extractive.segment.segment`) over the source's whole stored text, numbered from 1,
so ``[s17]`` means the same sentence wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import AffidavitError
from ..extractive.segment import collapse
from ..retrieval.tokens import count_tokens
from ..sources.sentences import number_sentences

FOOTER_TOKENS = 40
"""Kept free under the cap for the "more: cursor=…" line."""


class CursorError(AffidavitError):
    """A cursor that no earlier result handed out."""


@dataclass(frozen=True)
class Page:
    text: str
    next_cursor: str | None


def parse_cursor(cursor: str | None, prefix: str = "") -> int:
    """The line index a cursor names (``None`` or ``""``: the start)."""
    if not cursor:
        return 0
    value = cursor.strip()
    if prefix and value.startswith(prefix):
        value = value[len(prefix) :]
    if not value.isdigit() or len(value) > 9:
        raise CursorError(
            f"cursor {cursor[:40]!r} is not one this server gave; pass the `cursor` value from "
            "the previous result, or omit it to start at the beginning."
        )
    return int(value)


def _clip(line: str, budget: int) -> str:
    """``line`` cut to about ``budget`` tokens (a single line longer than a whole result)."""
    keep = max(budget * 3, 16)
    while keep > 16 and count_tokens(line[:keep]) > budget:
        keep = keep * 3 // 4
    return line[:keep] + " …[cut: line longer than mcp.max_result_tokens]"


def fit(lines: list[str], start: int, cap: int, header: str = "", prefix: str = "") -> Page:
    """Lines ``start…`` that fit in ``cap`` tokens after ``header``, and the cursor of the rest.
    A header (it may carry a name the agent chose) gets at most half the cap."""
    if header and count_tokens(header) > cap // 2:
        header = _clip(header, cap // 2)
    budget = cap - FOOTER_TOKENS - count_tokens(header)
    out: list[str] = [header] if header else []
    index = start
    while index < len(lines):
        cost = count_tokens(lines[index]) + 1
        if cost > budget:
            if index == start:  # never return nothing: cut the one line that is too long
                out.append(_clip(lines[index], budget))
                index += 1
            break
        out.append(lines[index])
        budget -= cost
        index += 1
    more = index < len(lines)
    cursor = f"{prefix}{index}" if more else None
    if more:
        out.append(f"[more: {len(lines) - index} line(s) left; call again with cursor={cursor!r}]")
    elif start > len(lines):
        out.append(f"[the cursor is past the end: there are {len(lines)} line(s)]")
    return Page("\n".join(out), cursor)


def numbered_sentences(text: str) -> list[tuple[int, int, int]]:
    """``(n, start, end)`` of each sentence of a stored text, numbered from 1: the numbers the
    gate resolves sentence citations by (:mod:`affidavit.sources.sentences`)."""
    return [(s.n, s.start, s.end) for s in number_sentences(text)]


def sentence_lines(text: str) -> list[str]:
    """``[s17] …`` lines: each sentence of ``text`` on one line, whitespace collapsed."""
    return [f"[s{n}] {collapse(text[a:b])}" for n, a, b in numbered_sentences(text)]


def sentences_at(spans: list[tuple[int, int, int]], start: int, end: int) -> list[int]:
    """Numbers of the sentences overlapping ``[start, end)``."""
    return [n for n, a, b in spans if a < max(end, start + 1) and b > start]


__all__ = [
    "CursorError",
    "Page",
    "fit",
    "numbered_sentences",
    "parse_cursor",
    "sentence_lines",
    "sentences_at",
]
