"""Definition lists: a term (an option, a subcommand, a setting) and the description under it.

Reference manuals are made of them: a man page's ``-a, --all`` over "Tell the command to
automatically stage files...", an HTML ``<dt>``/``<dd>`` pair, asciidoc's ``--amend::``, a
configuration reference's ``core.quotePath``. Extraction leaves the term on lines of its own
just above its description; the description's first sentence alone ("Replace the tip of the
current branch by creating a new commit.") no longer says what it describes. Here it becomes
one claim, "`--amend`: Replace the tip of the current branch by creating a new commit.", whose
evidence quotes the term and the sentence (one quote spanning both when the term alone is
shorter than a quote may be), so the claim says nothing its quotes don't (W3, W11).

A term block is one to four short lines right above the description's block (a blank line or a
line break between them), that no sentence unit holds, that end with no sentence punctuation,
and that read as a name rather than prose: they open with a dash (an option), hold a
placeholder, bracket, equals sign, dot or underscore, end with ``::``, or are a single word in
lower case ("verbatim", a mode's name; "Introduction" over a paragraph is a title, not a term).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .segment import MAX_CLAIM, MAX_QUOTE, MIN_QUOTE
from .units import WORD, Unit

MAX_TERM_LINES = 4
MAX_TERM_LINE = 120
MAX_TERM = 200
_ENDS_SENTENCE = re.compile(r"""[.!?;,]["'”’)\]]*$""")
_NAME_LIKE = re.compile(r"^-|[<>\[\]=_./(){}]|::$|^[a-z0-9]\S*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def _term_lines(chunk: str, before: int) -> tuple[int, int, list[str]] | None:
    """The term block ending just before offset ``before`` (the description's start): its start,
    its end and its lines, stripped; None when the text there is no term block."""
    end = before
    while end > 0 and chunk[end - 1].isspace():
        end -= 1
    if end == 0 or chunk.count("\n", end, before) not in (1, 2):
        return None  # the description starts a line, at most one blank line below the term
    lines: list[str] = []
    line_end, start = end, end
    while True:
        line_start = chunk.rfind("\n", 0, line_end) + 1
        line = chunk[line_start:line_end]
        if not line.strip():
            break
        lines.append(line.strip())
        start = line_start + len(line) - len(line.lstrip())
        if len(lines) > MAX_TERM_LINES or line_start == 0:
            break
        line_end = line_start - 1
    lines.reverse()
    if not lines or len(lines) > MAX_TERM_LINES:
        return None
    return start, end, lines


def is_term(lines: Sequence[str]) -> bool:
    """True if ``lines`` read as a definition list's term (the module docstring)."""
    if not lines or sum(map(len, lines)) > MAX_TERM:
        return False
    for line in lines:
        if len(line) > MAX_TERM_LINE or line.startswith(("#", ">", "|", "(")) or _FENCE.match(line):
            return False
        if _ENDS_SENTENCE.search(line) and not line.endswith("::"):
            return False
        if len(line.split()) > 12:
            return False
    return bool(_NAME_LIKE.search(lines[0]))


def term_text(lines: Sequence[str]) -> str:
    """The term as a claim shows it: its lines joined ("-a, --all"), asciidoc's ``::`` and a
    trailing colon dropped."""
    return ", ".join(line.rstrip(":").strip() for line in lines)


_TERM_PREFIX = re.compile(r"`[^`]+`: (?=\S)")


def description(text: str) -> str:
    """A claim text without the term :func:`with_terms` put in front of it."""
    match = _TERM_PREFIX.match(text)
    return text[match.end() :] if match else text


MIN_DESCRIBED = 24
"""Shortest claim a term and a short description make ("`-d, --delete`: Delete a branch.")."""


def short_descriptions(chunk: str, units: list[Unit], short: list[Unit]) -> list[Unit]:
    """``units`` with the ``short`` sentences (too short to be claims alone: "Delete a branch.")
    that open a definition's description under a term ("-d, --delete"): with the term in front
    (:func:`with_terms`) they say what the option does, which the description's later
    sentences ("The branch must be fully merged...") never say again. In document order."""
    taken = [(u.start, u.end) for u in units]
    added = []
    for unit in short:
        if not unit.sentence.first_in_block or any(
            a < unit.end and unit.start < b for a, b in taken
        ):
            continue
        found = _term_lines(chunk, unit.start)
        if found is None or not is_term(found[2]):
            continue
        if len(term_text(found[2])) + len(unit.text) + 4 < MIN_DESCRIBED:
            continue
        added.append(unit)
    if not added:
        return units
    return sorted([*units, *added], key=lambda u: u.start)


def with_terms(
    chunk: str, units: list[Unit], excluded: Sequence[tuple[int, int]] = ()
) -> list[Unit]:
    """Each unit that opens a definition's description, with its term in front: the claim
    "`term`: description", quoting the term too (see the module docstring). ``excluded``: spans
    no quote may touch (hidden or flagged text)."""
    out = list(units)
    taken = [(u.start, u.end) for u in units]
    for at, unit in enumerate(units):
        if not unit.sentence.first_in_block or unit.text.startswith("`"):
            continue
        found = _term_lines(chunk, unit.start)
        if found is None:
            continue
        start, end, lines = found
        if not is_term(lines) or any(a < end and start < b for a, b in [*taken, *excluded]):
            continue
        term = term_text(lines)
        if not term or "`" in term:
            continue
        text = f"`{term}`: {unit.text}"
        first_end = unit.quotes[0][1]
        if end - start >= MIN_QUOTE and len(unit.quotes) < 5:
            quotes = ((start, end), *unit.quotes)  # the term quoted apart reads best
        elif first_end - start <= MAX_QUOTE:
            quotes = ((start, first_end), *unit.quotes[1:])  # "--amend" is shorter than a quote
        else:
            continue
        if len(text) > MAX_CLAIM:
            continue
        tokens = tuple(WORD.findall(term)) + unit.tokens
        out[at] = Unit(unit.sentence, start, unit.end, quotes, text, tokens, unit.score + 0.2)
    return out


__all__ = ["description", "is_term", "short_descriptions", "term_text", "with_terms"]
