"""The engine's first half: all that a chunk's plan takes from the chunk alone.

:func:`analyse` reads the chunk, its offsets, index and count, the source's id and name, its
flagged spans and the fence it opens inside — nothing of the wiki (not ``task.pages``, not
``task.pending_slugs``, not the nonce) — and returns an :class:`Analysis`: the chunk's claims
(segmentation, sanitizer regions, units, scores), the source page's title, sections and
summary, and every name or key phrase that may become a topic, with the page it would make.
:func:`.engine.plan_from` then does what depends on the known pages, cheaply. The analysis is
plain frozen dataclasses of strings, numbers and tuples: it pickles, so a host may compute it
ahead of time in another process; its ``key`` names the inputs it was computed from
(:func:`analysis_key`), and :func:`.engine.plan_from` refuses it for any other task.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..plan.schema import MAX_OPERATIONS
from ..providers.base import IngestTask
from .code import code_units
from .lexicon import ANAPHORIC_STARTS, SUBJECTLESS_STARTS
from .markdown import code_spans
from .segment import MAX_CLAIM, MIN_QUOTE, Segmented, segment
from .tables import table_units
from .terms import description, short_descriptions, with_terms
from .titles import fit, name_title, slugify
from .topics import TopicCandidate, name_key, topic_candidates
from .units import (
    MIN_CHARS_FALLBACK,
    Unit,
    build_units,
    claim_text,
    excluded_regions,
    shows_placeholders,
)

MAX_TOPIC_CLAIMS = 4
MAX_CLAIMS_PER_OP = 30
"""The plan schema's limit on claims per operation: a longer section is split over operations."""
DEFAULT_SECTION = "Overview"
_TERMINAL = re.compile(r"""[.!?…]["'”’)\]]*$""")


class Claim(NamedTuple):
    """One claim of the chunk: its text, its quotes (verbatim slices of the chunk) and its
    near-duplicate group (claims whose :func:`dedup_key` is the same share it). Claims are
    numbered by position, in document order. (A named tuple: an analysis holds dozens, and a
    tuple unpickles several times faster than a dataclass.)"""

    text: str
    quotes: tuple[str, ...]
    dedup: int


@dataclass(frozen=True)
class TopicDraft:
    """A name or key phrase that may become a topic, and the page it would fill: the slug it
    would create, the best claims about it (positions, document order) and its summary."""

    candidate: TopicCandidate
    slug: str
    best: tuple[int, ...]
    summary: str


@dataclass(frozen=True)
class Analysis:
    """What :func:`analyse` found in one chunk (see the module docstring)."""

    key: str  # analysis_key(task) of the task it was computed from
    part: str  # "part 2 of 5"
    claims: tuple[Claim, ...]  # empty: the chunk has nothing usable
    title: str  # the source page's title
    title_key: str  # name_key(title)
    name_key: str  # name_key(name_title(source_name))
    base_slug: str  # the source page's slug from the source's name
    own_slug: str  # the slug it gets when the base slug names another subject
    sections: tuple[tuple[str, tuple[int, ...]], ...]  # the source page's sections
    summary: str  # the source page's summary
    lead: int  # the claim of the context entry (first chunk), else -1
    topics: tuple[TopicDraft, ...]
    mentions: str | None  # " name keys of every claim " (first chunk only; None: not computed)

    def texts(self) -> list[str]:
        """Every text a plan from this analysis may show, whatever pages are known: the claims'
        texts and quotes, the source page's title, summary and sections, the topics' titles and
        summaries (a host may read them ahead of time, e.g. for its checks)."""
        out = [self.title, self.summary, *(name for name, _ in self.sections)]
        for claim in self.claims:
            out.append(claim.text)
            out.extend(claim.quotes)
        for topic in self.topics:
            out += (topic.candidate.title, topic.summary)
        return list(dict.fromkeys(text for text in out if text))


class AnalysisMismatch(ValueError):
    """An analysis given for a task it was not computed from (another chunk or source)."""


def analysis_key(task: IngestTask) -> str:
    """A digest of every field of ``task`` that :func:`analyse` reads, the chunk's text by its
    SHA-256: an analysis belongs to the tasks with its key and no other."""
    fields = [
        task.source_id,
        task.source_name,
        task.chunk_start,
        task.chunk_start + len(task.chunk),
        task.chunk_index,
        task.chunk_count,
        [list(span) for span in task.flagged],
        task.open_fence,
        task.open_section,
        hashlib.sha256(task.chunk.encode("utf-8", "surrogatepass")).hexdigest(),
    ]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


def dedup_key(text: str) -> str:
    """Near-duplicate key of a claim text: its words, case-folded ("Use venv." = "use venv")."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _summary(units: list[Unit], chunk: str) -> str:
    """The first of ``units`` short enough to be a summary, else the first clause of the first;
    a definition ("`--amend`: Replace...", :mod:`.terms`) only when nothing else is left, and
    then its description alone: a summary reads as prose, checked against every claim's quotes."""
    for unit in sorted(units, key=lambda u: u.text.startswith("`")):
        if len(unit.text) <= 300:
            return description(unit.text)
    a, b = units[0].quotes[0]
    return fit(claim_text(chunk[a:b]) + " …", 300)


def _summary_rank(unit: Unit, title: str) -> tuple[bool, bool, bool, bool, float, int]:
    """Sort key of a topic's summary candidates: best first. A sentence that opens with the
    topic's name ("Tin is a chemical element..."), stands on its own, names the topic early and is
    not too long reads best as a summary; then the score decides."""
    lower = unit.text.casefold()
    at = lower.find(title.casefold())
    head = unit.tokens[0].casefold() if unit.tokens else ""
    return (
        not (lower.startswith(title.casefold()) or lower.startswith("the " + title.casefold())),
        head in ANAPHORIC_STARTS,
        at < 0 or at > 80,
        len(unit.text) > 220,
        -unit.score,
        unit.index,
    )


_DEFINES = re.compile(
    r"\b(?:is|are|was|were)\s+(?:a|an|the|one)\b|\s[-–—]\s|\b(?:provides?|describes?|explains?"
    r"|introduces?|covers?|lists?|shows?\s+how|defines?|documents?)\b",
    re.IGNORECASE,
)
_OPENING_ADVERB = re.compile(r"^[A-Z][a-z]+ly,")
_NUMBERED_END = re.compile(r"\s\d+(?:\.\d+)+\.?$")
_LABEL = re.compile(r"^[A-Z][\w-]*(?: [A-Z]?[\w-]+){0,2}: ")
"""A labelled aside: "Update: As of version...", "Compatibility Note: The behavior..."."""
_NAME_LINE = re.compile(r"^\S+(?:, \S+)* [-–—] ")
"""A man page's NAME line ("git-add - Add file contents to the index"): no full stop needed."""
_POINTER = re.compile(r"^(?:See|Refer to|For (?:more|further|details|additional))\b")
LEAD_WINDOW = 10
"""Units of a chunk's start among which its first plain sentence is its lead (below)."""


def _lead_order(units: list[Unit], title: str) -> list[Unit]:
    """The units in the order they suit the overview's line for this source and its summary:
    one that says what the document is about ("git-commit - Record changes to the repository",
    "SQLite is a C-language library that implements...", a speech's sentence richest in its key
    terms), not merely its first or a sentence leaning on the one before ("Fortunately, only one
    of these..."). Its definitions ("`--amend`: ...") come last."""
    title_words = {w for w in re.findall(r"[a-z0-9][\w.+-]*", title.lower()) if len(w) > 2}

    def penalty(unit: Unit, lower: list[str]) -> float:
        """What makes a unit a poor line about the whole document."""
        value = 0.0
        if lower and (lower[0] in ANAPHORIC_STARTS or _OPENING_ADVERB.match(unit.text)):
            value += 1.0
        if any(w in ("this", "these", "those", "such") for w in lower[1:6]):
            value += 0.5
        if not 5 <= len(lower) <= 45:
            value += 0.5
        alpha = [t for t in unit.tokens if t[:1].isalpha()]
        if "►" in unit.text or (alpha and sum(t[0].isupper() for t in alpha) > 0.6 * len(alpha)):
            value += 2.0  # "Advanced Foreign Key Constraint Features 4.1.": a contents line
        if " , " in unit.text:
            value += 2.0  # "WITH RECURSIVE common-table-expression , SELECT": a syntax diagram
        if _NUMBERED_END.search(unit.text):
            value += 1.0  # "VIRTUAL versus STORED columns 2.2.": the next section's number
        if unit.text.rstrip().endswith(":") or _LABEL.match(unit.text) or _POINTER.match(unit.text):
            value += 1.0  # it introduces a list, is a labelled aside or points elsewhere
        if not _TERMINAL.search(unit.text) and not _NAME_LINE.search(unit.text):
            value += 1.0  # "Special commands to sqlite3 (dot-commands)": a heading, a fragment
        return value

    lowers = {unit.index: [t.lower() for t in unit.tokens] for unit in units}
    plain = [
        unit
        for unit in units[:LEAD_WINDOW]
        if not unit.text.startswith("`") and penalty(unit, lowers[unit.index]) == 0.0
    ]
    lead = plain[0].index if plain else -1

    def rank(unit: Unit) -> tuple[bool, float, int]:
        lower = lowers[unit.index]
        value = unit.score - 0.02 * unit.index - penalty(unit, lower)
        if _DEFINES.search(unit.text):
            value += 0.5
        if title_words & set(lower):
            value += 0.5
        if unit.index == lead:
            value += 0.8  # a document's opening sentence most often says what it is about
        return unit.text.startswith("`"), -value, unit.index

    return sorted(units, key=rank)


def _best(units: list[Unit], limit: int) -> list[Unit]:
    """The ``limit`` best units, back in document order."""
    ranked = sorted(units, key=lambda u: (-u.score, u.index))[:limit]
    return sorted(ranked, key=lambda u: u.index)


def _source_title(task: IngestTask, seg: Segmented) -> tuple[str, str]:
    """The source page's title, and the heading it came from ("" when it came from the name)."""
    if task.chunk_index == 0 and seg.headings:
        first = seg.headings[0]
        before = [s for s in seg.sentences if s.start < first.start]
        hidden = any(a < first.end and first.start < max(b, a + 1) for a, b in task.flagged)
        if not before and not hidden and first.level <= 2 and first.text:
            return fit(first.text, 120), first.text
    return name_title(task.source_name), ""


def _visible(chunk: str, flagged: tuple[tuple[int, int], ...]) -> str:
    """``chunk`` with its flagged spans blanked out (same length), for counting key phrases."""
    if not flagged:
        return chunk
    chars = list(chunk)
    for a, b in flagged:
        chars[a:b] = " " * len(chars[a:b])
    return "".join(chars)


_FENCED_LINE = re.compile(
    r"^[ \t]*(?:```|~~~)[^\n]*\n[ \t]*([^\n]+?)[ \t]*\n((?:[ \t]*[^\n`~][^\n]*\n){0,3})"
    r"[ \t]*(?:```|~~~)[ \t]*$",
    re.M,
)
"""A fence of one to four lines: the first (group 1) and the rest (group 2), for signatures."""
_SIGNATURE = re.compile(
    r"(?:(?:class|exception|async|def|function|method)\s+)?[A-Za-z_][\w.]*\s*\(.*\)"
)


def _with_signatures(chunk: str, units: list[Unit]) -> list[Unit]:
    """API reference style: a fenced signature line ("rmtree(path, ignore_errors=False)"; the
    first, when the fence lists overloads one a line) followed by its description. The description's first sentence becomes the claim
    "rmtree(path, ignore_errors=False): Delete an entire directory tree; ...", quoting the
    signature too, so the claim names what it describes."""
    if "```" not in chunk and "~~~" not in chunk:
        return units
    out = list(units)
    starts = [u.start for u in units]
    for fence in _FENCED_LINE.finditer(chunk):
        signature = fence.group(1)
        if not _SIGNATURE.fullmatch(signature) or not MIN_QUOTE <= len(signature) <= 200:
            continue
        others = fence.group(2).split("\n")[:-1]  # overloads: "lru_cache(user_function)" and
        if not all(
            _SIGNATURE.fullmatch(line.strip()) for line in others
        ):  # "lru_cache(maxsize=..."
            continue
        at = bisect.bisect_left(starts, fence.end())
        if at >= len(units) or chunk[fence.end() : units[at].start].strip():
            continue
        unit = out[at]
        text = f"{signature}: {unit.text}"
        if len(text) > MAX_CLAIM or len(unit.quotes) >= 5 or unit.text.startswith(signature):
            continue
        quotes = ((fence.start(1), fence.end(1)), *unit.quotes)
        tokens = tuple(signature.replace("(", " ").split()[:1]) + unit.tokens
        out[at] = Unit(unit.sentence, unit.start, unit.end, quotes, text, tokens, unit.score)
    return out


def _with_subjects(units: list[Unit], limit_quotes: int = 5) -> list[Unit]:
    """A sentence that opens with a pronoun or demonstrative ("It has a period of 2**19937-1.")
    leaves its subject in the sentence before: when that sentence is a unit too, directly
    before it and under the same heading, the two become one claim quoting both ("Python uses
    the Mersenne Twister as the core generator. It produces ... and has a period of ..."), so
    the claim names what it is about and says nothing its quotes don't (W3, W11). Chains of
    such sentences join while the claim stays within the schema's limits."""
    out: list[Unit] = []
    last: list[int] = []  # the index of the last sentence each unit of ``out`` holds
    for unit in units:
        head = unit.tokens[0].casefold() if unit.tokens else ""
        if (
            out
            and head in SUBJECTLESS_STARTS
            and last[-1] == unit.index - 1
            and out[-1].sentence.section == unit.sentence.section
            and len(out[-1].quotes) + len(unit.quotes) <= limit_quotes
            and len(out[-1].text) + 1 + len(unit.text) <= MAX_CLAIM
        ):
            before = out[-1]
            out[-1] = Unit(
                before.sentence,
                before.start,
                unit.end,
                before.quotes + unit.quotes,
                f"{before.text} {unit.text}",
                before.tokens + unit.tokens,
                max(before.score, unit.score),
            )
            last[-1] = unit.index
            continue
        out.append(unit)
        last.append(unit.index)
    return out


_NAME_WORD = re.compile(r"[a-z][\w.+-]*[a-z0-9+]")


def _own_names(task: IngestTask, seg: Segmented) -> frozenset[str]:
    """Lower-case names the document is about: the first word of its file name and of its
    title headings when written in lower case ("grep" of ``grep.1`` and "# grep, egrep - print
    lines..."), which may start a sentence as a command's name does."""
    found: set[str] = set()
    for text in (name_title(task.source_name), *(h.text for h in seg.headings if h.level == 1)):
        match = _NAME_WORD.match(text)
        if match and (match.end() == len(text) or not text[match.end()].isalnum()):
            found.add(match.group())
    return frozenset(found)


def _drop_cut_sentence(task: IngestTask, units: list[Unit]) -> list[Unit]:
    """Drop the last unit when the chunk ends in the middle of it (not the source's last chunk)."""
    if not units or task.chunk_index >= task.chunk_count - 1:
        return units
    tail = task.chunk.rstrip()
    last = units[-1]
    if last.end >= len(tail) and not _TERMINAL.search(tail):
        return units[:-1]
    return units


def _fit_sections(sections: dict[str, list[int]], budget: int) -> dict[str, list[int]]:
    """Merge the smallest section into the one before it until the page fits in ``budget``
    operations: sentences are never dropped to make room, sections are."""
    names = list(sections)
    groups = [list(sections[n]) for n in names]
    while len(groups) > 1 and sum(math.ceil(len(g) / MAX_CLAIMS_PER_OP) for g in groups) > budget:
        smallest = min(range(len(groups)), key=lambda i: (len(groups[i]), -i))
        into = smallest - 1 if smallest > 0 else 1
        groups[into] = sorted(groups[into] + groups[smallest])
        del groups[smallest]
        del names[smallest]
    return dict(zip(names, groups, strict=True))


def _hidden_headings(seg: Segmented, chunk: str, flagged: tuple[tuple[int, int], ...]) -> set[str]:
    """Headings that touch a flagged span or a sanitizer flag, or whose words a flagged span
    holds too (an SVG diagram's "REPLACE" over the visible "REPLACE" heading): never a section
    name — the gate would find the name inside hidden text and hold the operation back."""
    regions = excluded_regions(chunk, flagged)
    hidden_text = " ".join(" ".join(chunk[a:b].casefold().split()) for a, b in flagged if b > a)
    return {
        h.text
        for h in seg.headings
        if any(a < h.end and h.start < max(b, a + 1) for a, b in regions)
        or (hidden_text and _holds(hidden_text, " ".join(h.text.casefold().split())))
    }


def _holds(text: str, phrase: str) -> bool:
    """True if ``text`` holds ``phrase`` as whole words."""
    return bool(phrase) and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def _source_sections(
    units: list[Unit], dedups: list[str], title_heading: str, budget: int, hidden: set[str]
) -> dict[str, list[int]]:
    """The source page's sections: every unit of the chunk (near-duplicates once, by position),
    in document order, grouped under the document's own headings (none that a flag touches)."""
    sections: dict[str, list[int]] = {}
    seen: set[str] = set()
    for pos, unit in enumerate(units):
        if dedups[pos] in seen:
            continue
        seen.add(dedups[pos])
        name = unit.sentence.section
        if not name or name == title_heading or name in hidden:
            name = DEFAULT_SECTION
        sections.setdefault(fit(name, 80), []).append(pos)
    return _fit_sections(sections, budget)


SHORT_SENTENCE = 40
"""A sentence this short may open a definition's description too briefly to be a claim alone."""


def _with_short_descriptions(
    task: IngestTask, seg: Segmented, units: list[Unit], names: frozenset[str]
) -> list[Unit]:
    """``units`` and the short first sentences of definitions' descriptions ("Delete a branch."
    under "-d, --delete"; :func:`~.terms.short_descriptions`), read only where there are any."""
    starts = {u.sentence.start for u in units}
    few = [
        s
        for s in seg.sentences
        if s.first_in_block and s.end - s.start <= SHORT_SENTENCE and s.start not in starts
    ]
    if not few:
        return units
    short = build_units(
        task.chunk,
        replace(seg, sentences=tuple(few)),
        MIN_QUOTE,
        task.flagged,
        names,
        min_words=1,
        placeholders=shows_placeholders(task.source_name),
    )
    return short_descriptions(task.chunk, units, short)


def _units(task: IngestTask) -> tuple[list[Unit], Segmented]:
    chunk = task.chunk
    code = code_spans(chunk, task.open_fence)
    seg = segment(
        chunk, hidden=task.flagged, fence=task.open_fence, code=code, section=task.open_section
    )
    names = _own_names(task, seg)
    literal = shows_placeholders(task.source_name)
    units = _drop_cut_sentence(
        task, build_units(chunk, seg, flagged=task.flagged, names=names, placeholders=literal)
    )
    if not units:
        units = _drop_cut_sentence(
            task,
            build_units(
                chunk,
                seg,
                MIN_CHARS_FALLBACK,
                flagged=task.flagged,
                names=names,
                placeholders=literal,
            ),
        )
    excluded = excluded_regions(chunk, task.flagged)
    units = code_units(
        chunk,
        seg,
        _with_signatures(chunk, units),
        excluded,
        task.open_fence,
        nested=code_spans(chunk, task.open_fence, nested_only=True) if code else (),
    )
    units = table_units(chunk, seg, units, excluded, task.open_fence)
    units = with_terms(chunk, _with_short_descriptions(task, seg, units, names), excluded)
    return _with_subjects(units), seg


def analyse(task: IngestTask) -> Analysis:
    """Everything the plan for ``task`` takes from the chunk alone (the module docstring)."""
    chunk = task.chunk
    key = analysis_key(task)
    part = f"part {task.chunk_index + 1} of {task.chunk_count}"
    units, seg = _units(task)
    title, title_heading = _source_title(task, seg)
    title_key, source_key = name_key(title), name_key(name_title(task.source_name))
    base = slugify(name_title(task.source_name))
    own = f"{base[:55].rstrip('-')}-{task.source_id[:8]}"
    if not units:
        return Analysis(
            key, part, (), title, title_key, source_key, base, own, (), "", -1, (), None
        )
    dedups = [dedup_key(u.text) for u in units]
    groups: dict[str, int] = {}
    claims = tuple(
        Claim(u.text, tuple(chunk[a:b] for a, b in u.quotes), groups.setdefault(dedups[i], i))
        for i, u in enumerate(units)
    )
    budget = MAX_OPERATIONS - (1 if task.chunk_index == 0 else 0)
    hidden = _hidden_headings(seg, chunk, task.flagged)
    sections = _source_sections(units, dedups, title_heading, budget, hidden)
    lead = _lead_order(units, title)
    position = {u.index: i for i, u in enumerate(units)}
    candidates = topic_candidates(units, (title_key, source_key), _visible(chunk, task.flagged))
    drafts = []
    for candidate in candidates:
        mentions = [units[i] for i in candidate.units]
        best = tuple(position[u.index] for u in _best(mentions, MAX_TOPIC_CLAIMS))
        ranked = sorted(mentions, key=lambda u: _summary_rank(u, candidate.title))
        slug = slugify(candidate.title)
        drafts.append(TopicDraft(candidate, slug, best, _summary(ranked, chunk)))
    first = task.chunk_index == 0
    return Analysis(
        key=key,
        part=part,
        claims=claims,
        title=title,
        title_key=title_key,
        name_key=source_key,
        base_slug=base,
        own_slug=own,
        sections=tuple((name, tuple(group)) for name, group in sections.items()),
        summary=_summary(lead, chunk),
        lead=position[lead[0].index] if first else -1,
        topics=tuple(drafts),
        mentions=unit_mentions(claims) if first else None,
    )


def unit_mentions(claims: tuple[Claim, ...]) -> str:
    """The name keys of every claim's text, space-padded: where a page's title is looked for."""
    return " " + " ".join(name_key(c.text) for c in claims) + " "


__all__ = [
    "Analysis",
    "AnalysisMismatch",
    "Claim",
    "TopicDraft",
    "analyse",
    "analysis_key",
    "dedup_key",
    "unit_mentions",
]
