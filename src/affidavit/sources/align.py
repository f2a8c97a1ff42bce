"""Map a renderer's characters onto Affidavit's extracted text (W12).

A rendering engine (PDFium for a PDF page, chromium for an HTML document) reports the characters
it laid out, in its own order, each with a verdict (seen, or why not). The extracted text was
made by another reader (pypdf, the HTML extractor), so the two differ in whitespace, ligatures,
hyphens and sometimes order. :func:`verdicts_for` aligns them on their non-space characters
(NFKC, case-folded): first in order (runs that agree, short detours resynchronised), then each
run still unmatched is looked for anywhere among the renderer's characters (columns read in
another order). Each character of the text gets the verdict of the character it matched;

* a run of fewer than ``SHORT`` unmatched characters (a hyphen, a ``©`` one reader dropped)
  takes its neighbours' verdict;
* a longer unmatched run is not seen: the renderer drew no such characters (``MISSING``).

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
_K = 6  # characters that must agree to resynchronise after a difference
_WINDOW = 48  # how far past a difference a resynchronisation is looked for
_PIECE = 24  # unmatched runs are looked for elsewhere in pieces of this many characters
_FIXES = {"\x02": "-", "\u2010": "-", "\u2011": "-", "\u00ad": "-"}


def _normal(chars: str, keep: list[int] | None = None) -> tuple[str, list[int]]:
    """The non-space characters of ``chars`` NFKC-normalised and case-folded, and for each the
    index it came from."""
    out: list[str] = []
    where: list[int] = []
    for index, char in enumerate(chars):
        if char.isspace():
            continue
        char = _FIXES.get(char, char)
        folded = unicodedata.normalize("NFKC", char).casefold()
        for piece in folded:
            if not piece.isspace():
                out.append(piece)
                where.append(index if keep is None else keep[index])
    return "".join(out), where


def _in_order(a: str, b: str) -> list[int]:
    """For each character of ``b``, the index of the character of ``a`` it matches, or -1."""
    match = [-1] * len(b)
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            match[j] = i
            i += 1
            j += 1
            continue
        found = None
        for skip in range(1, _WINDOW):
            for da in range(skip + 1):
                db = skip - da
                if (
                    i + da < len(a)
                    and j + db < len(b)
                    and a[i + da : i + da + _K] == b[j + db : j + db + _K]
                    and (len(a) - i - da >= _K or a[i + da :] == b[j + db :])
                ):
                    found = (da, db)
                    break
            if found:
                break
        if found is None:
            rest = SequenceMatcher(None, a[i:], b[j:], autojunk=False)
            for block in rest.get_matching_blocks():
                for k in range(block.size):
                    match[j + block.b + k] = i + block.a + k
            break
        i += found[0]
        j += found[1]
    return match


def _elsewhere(a: str, b: str, match: list[int]) -> None:
    """Look for each unmatched run of ``b`` anywhere in ``a`` (in pieces)."""
    j = 0
    while j < len(b):
        if match[j] >= 0:
            j += 1
            continue
        end = j
        while end < len(b) and match[end] < 0:
            end += 1
        start = j
        while start < end and end - start >= SHORT:
            piece = b[start : min(end, start + _PIECE)]
            at = a.find(piece)
            if at >= 0:
                for k in range(len(piece)):
                    match[start + k] = at + k
            start += len(piece)
        j = end


def verdicts_for(text: str, chars: str, verdicts: str) -> list[str]:
    """A verdict for each character of ``text`` ("" for whitespace) from the renderer's
    ``chars`` and their ``verdicts`` (see the module docstring)."""
    a, a_at = _normal(chars)
    b, b_at = _normal(text)
    match = _in_order(a, b) if a != b else list(range(len(b)))
    if a != b:
        _elsewhere(a, b, match)
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
        if end - k >= SHORT or not near:
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
    two unseen characters of one verdict joins their run."""
    runs: list[tuple[int, int, str]] = []
    for index, verdict in enumerate(per_char):
        if not verdict or verdict == SEEN:
            continue
        if runs and runs[-1][2] == verdict and all(
            not v for v in per_char[runs[-1][1] : index]
        ):
            runs[-1] = (runs[-1][0], index + 1, verdict)
        else:
            runs.append((index, index + 1, verdict))
    return runs


__all__ = ["MISSING", "SEEN", "SHORT", "hidden_runs", "verdicts_for"]
