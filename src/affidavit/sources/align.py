"""Map a renderer's characters onto Affidavit's extracted text (W12).

A rendering engine (PDFium for a PDF page, chromium for an HTML document) reports the characters
it laid out, in its own order, each with a verdict (seen, or why not). The extracted text was
made by another reader (pypdf, the HTML extractor), so the two differ in whitespace, ligatures,
hyphens and sometimes order. :func:`verdicts_for` aligns them on their non-space characters
(NFKC, case-folded): first in order (runs that occur once in each, chained in order and
extended while the two agree), then each run still unmatched is looked for anywhere among the
renderer's characters (columns read in
another order). Each character of the text gets the verdict of the character it matched;

* a run of fewer than ``SHORT`` unmatched characters without a letter or digit (a hyphen, a
  ``©`` one reader dropped) takes its neighbours' verdict;
* any other unmatched run is not seen: the renderer drew no such characters (``MISSING``).

:func:`hidden_runs` turns the verdicts into ``(start, end, code)`` runs of unseen text, spaces
between unseen characters included.
"""

from __future__ import annotations

import unicodedata
from difflib import SequenceMatcher

SHORT = 4
"""Unmatched runs shorter than this take their neighbours' verdict."""
MISSING = "m"
"""The verdict of text the renderer drew no characters for."""
SEEN = "v"
_K = 10  # characters that must agree (once in each text) to anchor the alignment
_PIECE = 24  # unmatched runs are looked for elsewhere in pieces of this many characters
_FIXES = {"\x02": "-", "\u2010": "-", "\u2011": "-", "\u00ad": "-"}


def _normal(chars: str, ignore: str = "") -> tuple[str, list[int]]:
    """The non-space characters of ``chars`` (but those in ``ignore``) NFKC-normalised and
    case-folded, and for each the index it came from."""
    out: list[str] = []
    where: list[int] = []
    for index, char in enumerate(chars):
        if char.isspace() or char in ignore:
            continue
        char = _FIXES.get(char, char)
        folded = unicodedata.normalize("NFKC", char).casefold()
        for piece in folded:
            if not piece.isspace():
                out.append(piece)
                where.append(index)
    return "".join(out), where


def _in_order(a: str, b: str) -> list[int]:
    """For each character of ``b``, the index of the character of ``a`` it matches, or -1:
    anchored on the runs of ``_K`` characters that occur once in each, kept in order (the
    longest increasing chain), each match then extended forward and back while the two
    agree. Linear in practice: no quadratic diff over a long page whose readers disagree."""
    match = [-1] * len(b)
    if len(a) < _K or len(b) < _K:
        for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
            for k in range(block.size):
                match[block.b + k] = block.a + k
        return match
    in_a = _unique_runs(a)
    in_b = _unique_runs(b)
    pairs = [(in_a[run], j) for run, j in in_b.items() if run in in_a]
    pairs.sort(key=lambda pair: pair[1])
    for i, j in _increasing(pairs):
        for k in range(_K):
            match[j + k] = i + k
    _extend(a, b, match)
    return match


def _extend(a: str, b: str, match: list[int]) -> None:
    """Extend each matched run while the two texts agree, forward then back."""
    for j in range(1, len(b)):
        i = match[j - 1]
        if match[j] < 0 and i >= 0 and i + 1 < len(a) and a[i + 1] == b[j]:
            match[j] = i + 1
    for j in range(len(b) - 2, -1, -1):
        i = match[j + 1]
        if match[j] < 0 and i > 0 and a[i - 1] == b[j]:
            match[j] = i - 1


def _unique_runs(text: str) -> dict[str, int]:
    """Each run of ``_K`` characters that occurs once in ``text``, and where."""
    seen: dict[str, int] = {}
    for at in range(len(text) - _K + 1):
        run = text[at : at + _K]
        seen[run] = -1 if run in seen else at
    return {run: at for run, at in seen.items() if at >= 0}


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest chain of ``pairs`` (in their order) whose first items increase."""
    tails: list[int] = []  # tails[n]: the index in pairs ending the best chain of length n+1
    before: list[int] = [-1] * len(pairs)
    for index, (i, _) in enumerate(pairs):
        low, high = 0, len(tails)
        while low < high:
            mid = (low + high) // 2
            if pairs[tails[mid]][0] < i:
                low = mid + 1
            else:
                high = mid
        before[index] = tails[low - 1] if low else -1
        if low == len(tails):
            tails.append(index)
        else:
            tails[low] = index
    chain: list[tuple[int, int]] = []
    at = tails[-1] if tails else -1
    while at >= 0:
        chain.append(pairs[at])
        at = before[at]
    return chain[::-1]


def _elsewhere(a: str, b: str, match: list[int]) -> None:
    """Look for each unmatched run of ``b`` anywhere in ``a``: whole, else in halves, down to
    ``SHORT`` characters (a line the two readers put in another order)."""
    j = 0
    while j < len(b):
        if match[j] >= 0:
            j += 1
            continue
        end = j
        while end < len(b) and match[end] < 0:
            end += 1
        pending = [(start, min(end, start + _PIECE)) for start in range(j, end, _PIECE)]
        while pending:
            start, stop = pending.pop()
            if stop - start < SHORT:
                continue
            at = a.find(b[start:stop])
            if at >= 0:
                for k in range(stop - start):
                    match[start + k] = at + k
            else:
                middle = (start + stop) // 2
                pending += [(start, middle), (middle, stop)]
        j = end


def verdicts_for(text: str, chars: str, verdicts: str, ignore: str = "") -> list[str]:
    """A verdict for each character of ``text`` ("" for whitespace and the characters in
    ``ignore``, which the extraction may have added: the fences and heading marks of its
    conventions) from the renderer's ``chars`` and their ``verdicts`` (see the module
    docstring)."""
    a, a_at = _normal(chars, ignore)
    b, b_at = _normal(text, ignore)
    match = _in_order(a, b) if a != b else list(range(len(b)))
    if a != b:
        _elsewhere(a, b, match)
        _extend(a, b, match)
    per_b = [verdicts[a_at[m]] if m >= 0 else "" for m in match]
    # unmatched runs: short ones take their neighbours' verdict, long ones are missing
    k = 0
    while k < len(per_b):
        if per_b[k]:
            k += 1
            continue
        end = k
        while end < len(per_b) and not per_b[end]:
            end += 1
        near = [v for v in (per_b[k - 1] if k else "", per_b[end] if end < len(per_b) else "") if v]
        wordless = not any(ch.isalnum() for ch in b[k:end])
        if end - k >= SHORT or not near or not wordless:
            fill = MISSING
        else:  # seen only if every neighbour is
            fill = next((v for v in near if v != SEEN), SEEN)
        for n in range(k, end):
            per_b[n] = fill
        k = end
    out = [""] * len(text)
    for index, verdict in zip(b_at, per_b, strict=True):
        if not out[index] or verdict != SEEN:  # a ligature's parts: unseen if any is
            out[index] = verdict
    return out


def hidden_runs(per_char: list[str]) -> list[tuple[int, int, str]]:
    """Runs ``(start, end, verdict)`` of characters whose verdict is not seen; whitespace between
    two unseen characters joins their runs (the run before it takes it, when their verdicts
    differ), so a hidden sentence is one unbroken stretch of flags."""
    runs: list[tuple[int, int, str]] = []
    for index, verdict in enumerate(per_char):
        if not verdict or verdict == SEEN:
            continue
        joined = runs and all(not v for v in per_char[runs[-1][1] : index])
        if joined and runs[-1][2] == verdict:
            runs[-1] = (runs[-1][0], index + 1, verdict)
            continue
        if joined:  # another reason after a space: the space goes with the run before it
            runs[-1] = (runs[-1][0], index, runs[-1][2])
        runs.append((index, index + 1, verdict))
    return runs


__all__ = ["MISSING", "SEEN", "SHORT", "hidden_runs", "verdicts_for"]
