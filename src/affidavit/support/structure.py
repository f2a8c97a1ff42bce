"""The support check's structure layer (W11): the text aligned to its quotes, and what it changes.

:func:`read` parses the text and each quote (:mod:`.parse`), aligns the text's words to the
quotes' (:mod:`.align`, with WordNet's synonyms, derivations and hypernyms) and runs the rules
that read what meaning hangs on:

- which noun each number, date and unit belongs to and their order, who does what to whom
  (:mod:`.roles`);
- negation in every surface form, quantifiers and hedges (:mod:`.scope`);
- causal, temporal and exception links, comparatives and superlatives, antonyms, units
  (:mod:`.links`);
- a quote's words edited in place — an opposite, a number moved, a hedge or negation dropped
  or added (:mod:`.edits`).

It returns the changes found (each clear — the text is then unsupported — or only likely), the
text's words that a paraphrase restates (so the coverage rule need not name them), and whether
the parse shows the negations of text and quotes agreeing. :mod:`.rules` combines it with the
facts and coverage rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .align import align
from .amounts import amount_changes
from .brackets import bracket_changes
from .calling import description_changes
from .declined import declined_changes
from .edits import edit_changes
from .exchange import exchange_changes
from .heading import heading_fills, subject_names, subject_words
from .links import change_comparatives, degree_changes, link_changes
from .modifiers import borrowed_modifiers, modifier_as_thing, moved_modifiers
from .order import order_changes
from .overreach import universal_changes
from .parse import parse_many
from .pointing import heading_names, heading_subjects
from .relations import of_changes, possessor_changes
from .roles import (
    attachment_changes,
    cross_quote,
    filler_changes,
    role_changes,
)
from .scope import (
    contrast_changes,
    hedge_changes,
    negation_changes,
    negations_agree,
    quantifier_changes,
    scare_quote_changes,
)
from .spans import title_changes, value_changes
from .together import apart_changes
from .traded import traded_changes
from .tree import Change, Tree
from .units import converted_numbers, converted_units, magnitude_changes, unit_changes

__all__ = ["Structure", "read"]


@dataclass(frozen=True)
class Structure:
    """What the structure layer found about one text against its quotes."""

    changes: tuple[Change, ...]
    restated: frozenset[str]
    """The text's words (casefolded, and their lemmas) that a quote word restates: the same
    lemma ("kept" for "keep"), a synonym, a derivation, a broader word."""
    converted: frozenset[str]
    """The text's numbers (as written) that restate a quoted quantity in another unit."""
    matched: frozenset[str]
    """The text's words (casefolded) the same word or lemma in a quote restates."""
    negations_agree: bool
    """Every negated predicate is restated with its polarity (a negating prefix or antonym
    counting as a negation)."""
    framed: frozenset[str]
    """The text's words (casefolded) from the source's heading that stand where its subject
    belongs (a resolved "it", "the city", or a frame "In Manhattan"): stated, not only
    framed."""
    unstated: tuple[str, ...]
    """Relations of the text no quote states (a word of one quote joined to a predicate of
    another): uncertain."""
    light: frozenset[str] = frozenset()
    """The text's words (casefolded) that carry no fact of their own: prepositions,
    conjunctions, determiners, particles and a few adverbs of manner ("across", "among",
    "though", "together"). One the quotes lack is a rewording, not a statement."""


LIGHT_POS = frozenset(["ADP", "SCONJ", "CCONJ", "DET", "PART", "PRON"])
LIGHT_ADVERBS = frozenset(["together", "ever", "also", "both", "either", "instead", "thereby"])


def read(text: str, quotes: Sequence[str], context: Sequence[str] = ()) -> Structure:
    return _read(text, tuple(quotes), tuple(context))


@lru_cache(maxsize=4096)
def _read(text: str, quotes: tuple[str, ...], context: tuple[str, ...]) -> Structure:
    parsed = parse_many([text, *quotes])
    mine = Tree(parsed[0])
    theirs = [Tree(p) for p in parsed[1:]]
    a = align(parsed[0], parsed[1:])
    known = frozenset(w.casefold() for c in context for w in c.replace("_", " ").split())
    heading_names(a, mine, theirs, known)
    heading_subjects(a, mine, theirs, known)
    change_comparatives(a, mine, theirs)
    changes: list[Change] = []
    changes += negation_changes(a, mine, theirs)
    changes += contrast_changes(a, mine, theirs)
    changes += declined_changes(a, mine, theirs)
    reported = {
        t.i
        for t in mine
        for c in changes
        if t.text in c.words and c.kind in ("negation", "opposite")
    }
    changes += role_changes(a, mine, theirs)
    changes += order_changes(a, mine, theirs)
    changes += attachment_changes(a, mine, theirs)
    if not any(c.kind == "number" for c in changes):
        changes += amount_changes(mine, theirs)
    changes += moved_modifiers(a, mine, theirs)
    changes += borrowed_modifiers(a, mine, theirs)
    changes += modifier_as_thing(a, mine, theirs)
    changes += exchange_changes(a, mine, theirs)
    changes += description_changes(a, mine, theirs)
    changes += bracket_changes(a, mine, theirs)
    changes += of_changes(a, mine, theirs)
    changes += possessor_changes(a, mine, theirs)
    fillers, bridged = filler_changes(a, mine, theirs, known)
    changes += fillers
    changes += apart_changes(a, mine, theirs)
    unstated = cross_quote(a, mine, theirs, bridged)
    changes += quantifier_changes(a, mine, theirs)
    changes += hedge_changes(a, mine, theirs)
    if not any(c.kind == "quantifier" for c in changes):
        changes += universal_changes(mine, theirs)
    changes += scare_quote_changes(a, mine, theirs)
    changes += link_changes(a, mine, theirs)
    changes += degree_changes(a, mine, theirs, reported)
    changes += unit_changes(mine, theirs)
    changes += magnitude_changes(mine, theirs)
    changes += title_changes(text, list(quotes), list(context))
    changes += value_changes(text, list(quotes))
    if not any(c.clear for c in changes):  # a last resort: the rules above name it better
        changes += traded_changes(mine, theirs)
    found = {c.kind for c in changes}  # edits in place the rules above missed
    changes += [c for c in edit_changes(mine, theirs) if c.kind not in found]
    restated = (
        frozenset(mine[i].lower for i in a.matches)
        | frozenset(mine[i].lemma for i in a.matches)
        | frozenset(converted_units(mine, theirs))
    )
    return Structure(
        changes=tuple(_dedupe(changes)),
        restated=restated,
        converted=frozenset(converted_numbers(mine, theirs)),
        matched=frozenset(mine[i].lower for i, m in a.matches.items() if m.how in ("same", "stem")),
        negations_agree=negations_agree(a, mine, theirs),
        unstated=tuple(unstated),
        framed=frozenset(
            heading_fills(a, mine, theirs, known, subject_words(context), subject_names(context))
        ),
        light=frozenset(t.lower for t in mine if t.pos in LIGHT_POS or t.lower in LIGHT_ADVERBS),
    )


def _dedupe(changes: list[Change]) -> list[Change]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for c in changes:
        key = (c.kind, c.words)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
