"""Grounding of a page's own words: title, summary and section headings (W3, W11).

Claims carry quotes; a page's title, summary and headings are written by the proposer too, so they
must not say what no quote says. The support check (:mod:`affidavit.support.rules`) judges them
against the quotes of the page's admitted claims — never the claims' own text — with two
allowances from here: the cited sources' names (a title may name its source) and, for headings, a
small set of generic words. A text the cited sources contain verbatim outside any sanitizer flag
(a heading of the source) is grounded too; one found only inside a flagged span (a planted
instruction's payload) is quarantined. Titles may name what the claims describe ("The Four
Freedoms"), so they need half of their words; a summary is a sentence and needs three quarters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..evidence import Verifier
from ..words import stems
from .reads import GateSources

_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_NON_WORD = re.compile(r"[\W_]+")


def _name_words(text: str) -> str:
    """A name's words, lower case, one space apart."""
    return _NON_WORD.sub(" ", text.casefold()).strip()


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

    def __init__(self, sources: GateSources, verifier: Verifier) -> None:
        self.sources = sources
        self.verifier = verifier
        self._names: dict[str, set[str]] = {}  # source id -> its name's stems, read once

    def name_stems(self, source_ids: Iterable[str]) -> set[str]:
        """The stems of the cited sources' names (a title may name its source)."""
        found: set[str] = set()
        for source_id in source_ids:
            known = self._names.get(source_id)
            if known is None:
                known = self._names[source_id] = stems(
                    self.sources.get(source_id).name.replace("-", " ")
                )
            found |= known
        return found

    def names_source(self, text: str, source_ids: Iterable[str]) -> bool:
        """True if ``text`` is a cited source's own name as a title writes it (the file name
        without its extension, any punctuation between its words): metadata the host has from
        the source, not a statement its quotes must support ("2019-03-14 Harbour report
        1887-1902" for ``2019-03-14 Harbour report 1887-1902.txt``)."""
        wanted = _name_words(text)
        if not wanted:
            return False
        for source_id in source_ids:
            name = self.sources.get(source_id).name
            stem = _EXTENSION.sub("", name.rsplit("/", 1)[-1])
            if _name_words(stem) == wanted:
                return True
        return False

    def verbatim(self, text: str, source_ids: list[str]) -> Verdict | None:
        """Grounded if a cited source has ``text`` verbatim outside flagged spans; flagged if only
        inside one; None if no cited source has it."""
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
