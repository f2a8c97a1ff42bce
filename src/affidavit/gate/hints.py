"""Readings made ahead of the gate: what its checks derive from a text alone, computed by the
ingest's worker process for the texts a chunk's plan may show (:mod:`affidavit.ingest.reading`).

The support check reads each claim text and quote (:func:`.support_reading._read`: numbers,
dates, names, negations, stems) and the consistency check compares a claim by its normalised
text and stems (:func:`comparable`). Both are pure functions of the text, so the worker's
values are the ones this process would compute: :func:`seeded` offers them to the checks, which
take a text's value when they meet that text (keyed by the text itself, nothing else), and
compute the rest as always. Whatever the worker sent that the gate never asked for is dropped
when the block ends. A hint can make the gate faster, never decide anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..evidence import normalize_quote
from ..support.reading import SEEDED_READINGS, _Reader, _Reading
from ..words import stems

Comparable = tuple[str, frozenset[str]]
SEEDED_COMPARABLES: dict[str, Comparable] = {}
"""Comparable forms offered by :func:`seeded` (taken by the consistency check)."""


def comparable(text: str) -> Comparable:
    """A claim's text as the consistency check compares it: normalised, and its word stems."""
    return normalize_quote(text), frozenset(stems(text))


@dataclass(frozen=True)
class Hints:
    """What the gate's checks would derive from each of some texts."""

    readings: dict[str, _Reading] = field(default_factory=dict)
    comparables: dict[str, Comparable] = field(default_factory=dict)


def read_texts(texts: Iterable[str]) -> Hints:
    """The readings and comparable forms of ``texts`` (the worker's side)."""
    distinct = list(dict.fromkeys(texts))
    return Hints(
        readings={text: _Reader(text).reading() for text in distinct},
        comparables={text: comparable(text) for text in distinct},
    )


@contextmanager
def seeded(hints: Hints | None) -> Iterator[None]:
    """Offer ``hints`` to the checks run inside the block; drop what they did not take."""
    if hints is None:
        yield
        return
    SEEDED_READINGS.update(hints.readings)
    SEEDED_COMPARABLES.update(hints.comparables)
    try:
        yield
    finally:
        SEEDED_READINGS.clear()
        SEEDED_COMPARABLES.clear()
