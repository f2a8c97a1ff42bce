"""Grounding of a page's own words: title, summary and section headings (part of W3).

Claims carry quotes; a page's title, summary and headings are written by the proposer too, so they
must not say what no quote says. A text is grounded when enough of its content words (compared by
stem) appear in the page's admitted claims or their quotes — or, for headings, in a small set of
generic words or the cited sources' names — and every number in it does; or when the text itself
is found verbatim in a cited source outside any sanitizer flag. A text found only inside a flagged
span (a planted instruction's payload) is quarantined; anything else ungrounded rejects the
operation. Titles may name what the claims describe ("The Four Freedoms"), so they need half of
their words; a summary is a sentence and needs three quarters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..evidence import Verifier
from ..sources.store import SourceStore
from ..words import content_words, has_digit, stem, stems

GENERIC_HEADINGS = frozenset(
    [
        "overview",
        "notes",
        "note",
        "summary",
        "background",
        "history",
        "details",
        "detail",
        "facts",
        "fact",
        "key",
        "points",
        "general",
        "introduction",
        "context",
        "related",
        "highlights",
        "timeline",
        "people",
        "places",
        "events",
        "sources",
        "source",
        "archived",
        "see",
        "also",
        "other",
        "more",
        "further",
        "reading",
        "main",
        "topics",
        "topic",
        "claims",
        "answer",
        "answers",
        "question",
        "questions",
    ]
)


@dataclass(frozen=True)
class Verdict:
    grounded: bool
    flagged: bool = False
    reason: str = ""


class Grounding:
    """Checks a page's free text against the claims and sources the plan gives it."""

    def __init__(self, sources: SourceStore, verifier: Verifier) -> None:
        self.sources = sources
        self.verifier = verifier

    def _name_stems(self, source_ids: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for source_id in source_ids:
            found |= stems(self.sources.get(source_id).name.replace("-", " "))
        return found

    def _verbatim(self, text: str, source_ids: list[str]) -> Verdict | None:
        for source_id in source_ids:
            check = self.verifier.check(source_id, text)
            if not check.verified or check.start is None or check.end is None:
                continue
            flags = [
                f
                for f in self.sources.flags(source_id)
                if f.start < check.end and check.start < max(f.end, f.start + 1)
            ]
            if not flags:
                return Verdict(True)
            return Verdict(
                False, True, f"is found only inside a flagged span ({flags[0].kind}) of its source"
            )
        return None

    def check(
        self,
        text: str,
        support: set[str],
        source_ids: list[str],
        *,
        share: float,
        heading: bool = False,
    ) -> Verdict:
        """Is ``text`` grounded in the ``support`` stems or verbatim in one of ``source_ids``?

        ``share`` is the part of its content words that must be supported.
        """
        allowed = support | self._name_stems(source_ids)
        if heading:
            allowed |= {stem(w) for w in GENERIC_HEADINGS}
        words = sorted(content_words(text))
        missing = [w for w in words if stem(w) not in allowed]
        numbers = [w for w in missing if has_digit(w)]
        if not numbers and len(words) - len(missing) >= share * len(words):
            return Verdict(True)
        verbatim = self._verbatim(text, source_ids) if len(text.strip()) >= 3 else None
        if verbatim is not None:
            return verbatim
        shown = ", ".join((numbers or missing)[:6]) + ("…" if len(missing) > 6 else "")
        return Verdict(False, False, f"says what none of its claims says ({shown})")
