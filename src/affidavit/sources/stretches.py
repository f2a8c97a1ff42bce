"""Where two versions of a text are the same bytes: cheap pieces aligned (issue 27).

A new version of a document is mostly the old one: what a re-ingest does with it should cost what
changed. Both the carry (:mod:`affidavit.gate.carry`: a quote in an unchanged stretch is at its
shifted offsets) and the alignment of what changed (:mod:`affidavit.ingest.lineage`: only the
differing stretches are cut into sentences) start from the same step: each text is cut into
**pieces** — a line, or the part of a line up to a sentence-ending mark and the spaces after it,
found by one regular expression (no sentence segmenter: a piece boundary inside an abbreviation
costs nothing, since both texts are cut alike) — and the two piece sequences are aligned with
:class:`difflib.SequenceMatcher`. A run of equal pieces is the same bytes in both texts, whatever
the alignment chose: that is all a caller relies on.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise

__all__ = ["piece_opcodes", "piece_starts", "same_stretches"]

_PIECE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*[ \t]+|\n")


def piece_starts(text: str) -> list[int]:
    """The offset of each piece of ``text`` (see the module doc), and ``len(text)`` last."""
    out = [0]
    for match in _PIECE_END.finditer(text):
        if match.end() > out[-1]:
            out.append(match.end())
    if out[-1] != len(text):
        out.append(len(text))
    return out


@lru_cache(maxsize=4)
def piece_opcodes(
    old: str, new: str
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[str, int, int, int, int], ...]]:
    """Both texts' :func:`piece_starts` and the opcodes aligning their pieces (indices into
    the pieces, as :meth:`difflib.SequenceMatcher.get_opcodes` gives them). Kept for the last
    few pairs: a re-ingest aligns the same two versions for the carry's gate and for what
    changed."""
    old_at, new_at = tuple(piece_starts(old)), tuple(piece_starts(new))
    matcher = SequenceMatcher(
        None,
        [old[a:b] for a, b in pairwise(old_at)],
        [new[a:b] for a, b in pairwise(new_at)],
        autojunk=False,
    )
    codes = tuple((str(tag), i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes())
    return old_at, new_at, codes


def same_stretches(old: str, new: str) -> list[tuple[int, int, int]]:
    """The stretches of text ``old`` found byte for byte in text ``new``, in order:
    ``(start, end, shift)``, sorted, where ``old[start:end] == new[start + shift:end + shift]``."""
    old_at, new_at, codes = piece_opcodes(old, new)
    return [
        (old_at[i1], old_at[i2], new_at[j1] - old_at[i1])
        for tag, i1, i2, j1, _ in codes
        if tag == "equal" and i2 > i1
    ]
