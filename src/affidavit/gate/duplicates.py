"""The consistency check's view of a page's live claims, kept across admissions.

A new claim is a duplicate of a live claim on its page with the same normalised text, or a near
duplicate of one whose word stems it shares by Jaccard similarity >= ``threshold``. Comparing it with
every claim on the page costs the page's size per claim, which grows with the wiki; this index
finds the only claims that can match (same normalised text, or sharing one of the new claim's
rarest stems: a set with similarity >= t to ``A`` misses at most ``(1 - t)·|A|`` of ``A``'s stems)
and hands them back in the page's order, so the check decides exactly as a full scan would.

The index is synced to the rows the gate reads for each admission (claims added, ended or changed
since are added or dropped by id and text), so it is never stale; a claim's derived form (its
normalised text and stems) is computed once, when it first appears.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

Comparable = tuple[str, frozenset[str]]


class PageIndex:
    """The live claims of one page: normalised text and word stems by claim id, indexed."""

    def __init__(self, comparable: Callable[[str], Comparable], min_words: int) -> None:
        self.comparable = comparable
        self.min_words = min_words
        self.items: dict[str, tuple[str, str, frozenset[str]]] = {}  # id -> text, normal, stems
        self.order: dict[str, int] = {}  # id -> place in the rows last synced
        self.exact: dict[str, set[str]] = {}
        self.postings: dict[str, set[str]] = {}
        self.rows: list[tuple[str, str]] = []  # the rows last synced (made strings)

    def sync(self, rows: list[tuple[Any, Any]]) -> None:
        """Make the index hold exactly ``rows`` (id, text as read: each made a ``str``), in their
        order. Rows equal to the last ones synced change nothing; rows that only add to them
        (a page's new claims come last) are added, without looking at the others again."""
        known = len(self.rows)
        if len(rows) >= known and rows[:known] == self.rows:
            for n, (claim_id, text) in enumerate(rows[known:], known):
                pair = (str(claim_id), str(text))
                if pair[0] not in self.items:
                    self._add(*pair)
                self.order[pair[0]] = n
                self.rows.append(pair)
            return
        pairs = [(str(claim_id), str(text)) for claim_id, text in rows]
        now = dict(pairs)
        gone = [c for c, item in self.items.items() if now.get(c) != item[0]]
        for claim_id in gone:
            self._remove(claim_id)
        for claim_id, text in pairs:
            if claim_id not in self.items:
                self._add(claim_id, text)
        self.order = {claim_id: n for n, (claim_id, _) in enumerate(pairs)}
        self.rows = pairs

    def _add(self, claim_id: str, text: str) -> None:
        normal, stems = self.comparable(text)
        self.items[claim_id] = (text, normal, stems)
        _put(self.exact, normal, claim_id)
        if len(stems) >= self.min_words:
            postings = self.postings
            for stem in stems:
                ids = postings.get(stem)
                if ids is None:
                    postings[stem] = {claim_id}
                else:
                    ids.add(claim_id)

    def _remove(self, claim_id: str) -> None:
        _, normal, stems = self.items.pop(claim_id)
        _discard(self.exact, normal, claim_id)
        if len(stems) >= self.min_words:
            for stem in stems:
                _discard(self.postings, stem, claim_id)

    def candidates(self, normal: str, mine: frozenset[str], threshold: float) -> list[str]:
        """The ids of every live claim that is an exact copy of ``normal`` or could be a near
        copy of ``mine`` at ``threshold``, in page order: a superset of the claims that match."""
        found = set(self.exact.get(normal, ()))
        if len(mine) >= self.min_words:
            # +2: one more than the most stems a near copy can miss, and one for float rounding
            need = min(len(mine), int(len(mine) * (1 - threshold)) + 2)
            postings = self.postings
            rarest = sorted([(len(postings.get(s, ())), s) for s in mine])[:need]
            for _, stem in rarest:
                found.update(postings.get(stem, ()))
        return sorted(found, key=self.order.__getitem__)


def _put(index: dict[str, set[str]], key: str, claim_id: str) -> None:
    ids = index.get(key)
    if ids is None:
        index[key] = {claim_id}
    else:
        ids.add(claim_id)


def _discard(index: dict[str, set[str]], key: str, claim_id: str) -> None:
    ids = index.get(key)
    if ids is not None:
        ids.discard(claim_id)
        if not ids:
            del index[key]


class PageIndexes:
    """A bounded set of page indexes (least recently used dropped first)."""

    def __init__(self, comparable: Callable[[str], Comparable], min_words: int, size: int) -> None:
        self.comparable = comparable
        self.min_words = min_words
        self.size = size
        self.pages: OrderedDict[tuple[int, str], PageIndex] = OrderedDict()

    def get(self, key: tuple[int, str], rows: list[tuple[Any, Any]]) -> PageIndex:
        """The index of page ``key`` synced to ``rows``."""
        index = self.pages.pop(key, None) or PageIndex(self.comparable, self.min_words)
        self.pages[key] = index
        while len(self.pages) > self.size:
            self.pages.popitem(last=False)
        index.sync(rows)
        return index
