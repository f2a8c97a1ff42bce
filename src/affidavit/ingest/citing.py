"""What a new version's chunk may cite: its changed text, never the unchanged text around it.

A re-ingest reads a new version's changed stretches (:func:`.chunking.changed_chunks`); a part of
such a chunk may take in unchanged text around a stretch (the block it lies in, a short gap to the
next one), and a model is shown it with sentence numbers. Its claims were carried from the version
before (:mod:`.lineage`): a claim the model writes from it is not new, and would sit beside the
carried one as a second copy — or, written by a model that was told to, pass an unchanged sentence
off as what the new version changed. So before a new version's plan goes to the gate, every claim
citing this source outside the chunk's changed stretches (:attr:`.chunking.Chunk.cite`) is left
out, counted in the chunk's reasons; a cited sentence must lie inside them whole, a free quote must
be found inside one of them; a citation of an older version of the same origin is left out too.
Citations of other sources are the gate's to judge, as always.
"""

from __future__ import annotations

from typing import Any

from ..evidence.verify import locate
from ..sources.sentences import SourceSentences

UNCHANGED = "left out: cites unchanged text of the new version (carried, not new)"
"""The reason counted for each claim left out (:attr:`.report.ChunkOutcome.reasons`)."""

__all__ = ["UNCHANGED", "keep_changed"]


def keep_changed(
    plan: dict[str, Any],
    source_id: str,
    numbered: SourceSentences,
    cite: tuple[tuple[int, int], ...],
    older: tuple[str, ...] = (),
) -> tuple[dict[str, Any], int]:
    """``plan`` without its claims that cite source ``source_id`` (its full id, or a prefix of
    12 or more hex digits) outside the spans ``cite`` of its text, or cite one of its ``older``
    versions (whose words are carried or proposed by the lineage, never new), and how many were
    left out.
    An ``add_claims`` or ``update_context`` left with no claims is left out, as is a
    ``supersede_claim`` whose new claim is; a ``create_page`` keeps its page. ``plan`` itself
    when nothing is left out."""
    ops = plan.get("operations")
    if not cite or not isinstance(ops, list):
        return plan, 0
    inside = _Inside(source_id, numbered, cite, older)
    dropped = 0
    out: list[Any] = []
    for op in ops:
        if not isinstance(op, dict):
            out.append(op)
            continue
        kept = dict(op)
        for key in ("claims", "entries"):
            claims = op.get(key)
            if isinstance(claims, list):
                good = [c for c in claims if inside.claim(c)]
                dropped += len(claims) - len(good)
                kept[key] = good
        by = op.get("by")
        if isinstance(by, dict) and not inside.claim(by):
            dropped += 1
            continue
        emptied = [k for k in ("claims", "entries") if op.get(k) and not kept[k]]
        if emptied and op.get("op") != "create_page":
            continue
        out.append(kept)
    if not dropped:
        return plan, 0
    return {**plan, "operations": out}, dropped


class _Inside:
    def __init__(
        self,
        source_id: str,
        numbered: SourceSentences,
        cite: tuple[tuple[int, int], ...],
        older: tuple[str, ...],
    ) -> None:
        self.source_id = source_id
        self.numbered = numbered
        self.cite = cite
        self.older = older

    @staticmethod
    def _names(source: object, source_id: str) -> bool:
        return (
            isinstance(source, str) and len(source) >= 12 and source_id.startswith(source.lower())
        )

    def _ours(self, source: object) -> bool:
        return self._names(source, self.source_id)

    def claim(self, claim: object) -> bool:
        """Whether every evidence item of ``claim`` citing this source lies inside ``cite``."""
        if not isinstance(claim, dict) or not isinstance(claim.get("evidence"), list):
            return True  # not a claim the schema accepts: the gate refuses it
        return all(self._evidence(e) for e in claim["evidence"])

    def _evidence(self, item: object) -> bool:
        if not isinstance(item, dict):
            return True
        if any(self._names(item.get("source"), old) for old in self.older):
            return False  # an older version's words: carried, or the lineage's to propose
        if not self._ours(item.get("source")):
            return True
        numbers = item.get("sentences")
        if numbers is None and item.get("sentence") is not None:
            numbers = [item["sentence"], item["sentence"]]
        if isinstance(numbers, list) and len(numbers) == 2:
            try:
                start, end = self.numbered.span(int(numbers[0]), int(numbers[1]))
            except (IndexError, TypeError, ValueError):
                return True  # no such sentence: the gate refuses it, with the count
            return any(lo <= start and end <= hi for lo, hi in self.cite)
        quote = item.get("quote")
        if not isinstance(quote, str):
            return True
        text = self.numbered.text
        return any(locate(text[lo:hi], quote) is not None for lo, hi in self.cite)
