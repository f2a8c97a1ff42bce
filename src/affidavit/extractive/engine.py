"""The extractive engine: a plan for one chunk of one source, built from the chunk's own sentences.

No language model, no network, no clock, no randomness: the same task gives the same plan, byte
for byte. Every claim is a sentence of the chunk, its evidence the sentence itself (or its clause
pieces) sliced straight from the chunk, so every quote verifies (W3) by construction.

What one chunk becomes (at most 20 operations):

- the **source page** (slug and title from the source's name or first heading; summary its best
  lead sentence): the chunk's best sentences, grouped under the document's own headings;
- **topic pages** for the chunk's salient names and key phrases (:mod:`.topics`), each holding the
  sentences that mention it, in a section named after the source;
- links from the source page to its topic pages, and between topics that share sentences;
- on the first chunk, one ``update_context`` entry: the source's best lead sentence.

Pages named in ``task.pages`` or reserved by pending plans (``task.pending_slugs``) are extended
with ``add_claims``, never created again. A chunk with nothing usable gives a plan with no
operations (:func:`is_empty_plan`), which the schema refuses: the caller skips the chunk.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from ..plan.schema import MAX_OPERATIONS, RESERVED_SLUGS
from ..providers.base import IngestTask
from .lexicon import ANAPHORIC_STARTS, SUBJECTLESS_STARTS
from .markdown import code_spans
from .segment import MAX_CLAIM, MIN_QUOTE, Segmented, collapse, segment
from .known import KnownKeys, known_keys
from .topics import Topic, choose_topics, name_key, topic_candidates
from .units import MIN_CHARS_FALLBACK, Unit, build_units, claim_text, excluded_regions

VERSION = "2"
"""Bumped whenever the same task would give a different plan."""
ENGINE = f"extractive-{VERSION}"

MAX_TOPICS = 5
MAX_TOPIC_CLAIMS = 4
MAX_CLAIMS_PER_OP = 30
"""The plan schema's limit on claims per operation: a longer section is split over operations."""
MAX_RELATED_LINKS = 3
SOURCE_CATEGORY = "sources"
TOPIC_CATEGORY = "topics"
DEFAULT_SECTION = "Overview"
EMPTY_SUMMARY = "nothing to propose"

_LATIN = str.maketrans(
    {
        "ı": "i",
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "ß": "ss",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "ð": "d",
    }
)
"""Letters that Unicode decomposition does not bring to ASCII, for slugs."""
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_TERMINAL = re.compile(r"""[.!?…]["'”’)\]]*$""")


def is_empty_plan(plan: dict[str, Any]) -> bool:
    """True for the engine's "nothing to propose" reply: a plan object with no operations."""
    return isinstance(plan, dict) and plan.get("operations") == []


def slugify(text: str) -> str:
    """A valid, unreserved slug for ``text`` (ASCII, lower case, hyphens, at most 64 chars)."""
    spaced = re.sub(r"[^\w]+|_", " ", text).translate(_LATIN)
    ascii_text = unicodedata.normalize("NFKD", spaced).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > 64:
        slug = slug[:64].rsplit("-", 1)[0] or slug[:64]
    if not slug:
        slug = "page-" + hashlib.sha256(text.encode()).hexdigest()[:10]
    if slug in RESERVED_SLUGS:
        slug += "-page"
    return slug


def name_title(source_name: str) -> str:
    """A title from a source's name: the file name without its extension, "_" read as spaces."""
    base = PurePosixPath(unquote(source_name).replace("\\", "/")).name or source_name
    stem = _EXTENSION.sub("", base) or base
    if "_" in stem:
        stem = stem.replace("_", " ")
    elif " " not in stem:
        stem = stem.replace("-", " ")
    title = collapse(stem)
    return _fit(title, 120) or "Untitled source"


def _fit(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary with "…" when longer than ``limit``."""
    text = collapse(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _claim(unit: Unit, chunk: str, source_id: str) -> dict[str, Any]:
    evidence = [{"source": source_id, "quote": chunk[a:b]} for a, b in unit.quotes]
    return {"text": unit.text, "evidence": evidence}


def _summary(units: list[Unit], chunk: str) -> str:
    """The first of ``units`` short enough to be a summary, else the first clause of the first."""
    for unit in units:
        if len(unit.text) <= 300:
            return unit.text
    a, b = units[0].quotes[0]
    return _fit(claim_text(chunk[a:b]) + " …", 300)


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


def _best(units: list[Unit], limit: int) -> list[Unit]:
    """The ``limit`` best units, back in document order."""
    ranked = sorted(units, key=lambda u: (-u.score, u.index))[:limit]
    return sorted(ranked, key=lambda u: u.index)


@dataclass
class _Page:
    slug: str
    title: str
    summary: str
    category: str
    create: bool
    sections: dict[str, list[Unit]] = field(default_factory=dict)


@dataclass
class _Context:
    task: IngestTask
    existing: dict[str, str]  # slug -> title of pages given in the task
    pending: frozenset[str]
    keys: KnownKeys  # name key of a known page's title or slug -> slug

    def known(self, slug: str) -> bool:
        return slug in self.existing or slug in self.pending


def _context(task: IngestTask) -> _Context:
    existing = {p.slug: p.title for p in task.pages}
    pending = frozenset(task.pending_slugs)
    keys = known_keys(pending.union(existing), task.pages)
    return _Context(task, existing, pending, keys)


def _source_title(task: IngestTask, seg: Segmented) -> tuple[str, str]:
    """The source page's title, and the heading it came from ("" when it came from the name)."""
    if task.chunk_index == 0 and seg.headings:
        first = seg.headings[0]
        before = [s for s in seg.sentences if s.start < first.start]
        hidden = any(a < first.end and first.start < max(b, a + 1) for a, b in task.flagged)
        if not before and not hidden and first.level <= 2 and first.text:
            return _fit(first.text, 120), first.text
    return name_title(task.source_name), ""


def _source_slug(ctx: _Context, title_key: str) -> tuple[str, bool]:
    """The source page's slug and whether this plan creates it."""
    task = ctx.task
    base = slugify(name_title(task.source_name))
    suffixed = f"{base[:55].rstrip('-')}-{task.source_id[:8]}"
    if ctx.known(suffixed):
        return suffixed, False
    if not ctx.known(base):
        return base, True
    if task.chunk_index > 0 or base in ctx.pending:
        return base, False
    # The first chunk of a new source, and its slug is taken: the same subject (by title) is
    # extended, a different one gets a slug of its own.
    if name_key(ctx.existing[base]) in (title_key, name_key(name_title(task.source_name))):
        return base, False
    return suffixed, True


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


def _dedup_key(text: str) -> str:
    """Near-duplicate key of a claim text: its words, case-folded ("Use venv." = "use venv")."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _section_levels(seg: Segmented) -> dict[str, int]:
    """Each heading's text and its (shallowest) level."""
    levels: dict[str, int] = {}
    for heading in seg.headings:
        levels[heading.text] = min(levels.get(heading.text, 9), heading.level)
    return levels


def _op_count(sections: dict[str, list[Unit]]) -> int:
    return sum(math.ceil(len(group) / MAX_CLAIMS_PER_OP) for group in sections.values())


def _fit_sections(sections: dict[str, list[Unit]], budget: int) -> dict[str, list[Unit]]:
    """Merge the smallest section into the one before it until the page fits in ``budget``
    operations: sentences are never dropped to make room, sections are."""
    names = list(sections)
    groups = [list(sections[n]) for n in names]
    while len(groups) > 1 and sum(math.ceil(len(g) / MAX_CLAIMS_PER_OP) for g in groups) > budget:
        smallest = min(range(len(groups)), key=lambda i: (len(groups[i]), -i))
        into = smallest - 1 if smallest > 0 else 1
        merged = sorted(groups[into] + groups[smallest], key=lambda u: u.index)
        groups[into] = merged
        del groups[smallest]
        del names[smallest]
    return dict(zip(names, groups, strict=True))


def _hidden_headings(seg: Segmented, chunk: str, flagged: tuple[tuple[int, int], ...]) -> set[str]:
    """Headings that touch a flagged span or a sanitizer flag: never a section name."""
    regions = excluded_regions(chunk, flagged)
    return {
        h.text
        for h in seg.headings
        if any(a < h.end and h.start < max(b, a + 1) for a, b in regions)
    }


def _source_page(
    ctx: _Context,
    units: list[Unit],
    title: str,
    title_heading: str,
    chunk: str,
    budget: int,
    hidden: set[str],
) -> _Page:
    """The source page: every unit of the chunk (near-duplicates once), in document order,
    grouped under the document's own headings (none that a flag touches)."""
    slug, create = _source_slug(ctx, name_key(title))
    sections: dict[str, list[Unit]] = {}
    seen: set[str] = set()
    for unit in units:
        key = _dedup_key(unit.text)
        if key in seen:
            continue
        seen.add(key)
        name = unit.sentence.section
        if not name or name == title_heading or name in hidden:
            name = DEFAULT_SECTION
        sections.setdefault(_fit(name, 80), []).append(unit)
    sections = _fit_sections(sections, budget)
    lead = sorted(units[:5], key=lambda u: (-u.score, u.index)) + _best(units, len(units))
    return _Page(slug, title, _summary(lead, chunk), SOURCE_CATEGORY, create, sections)


def _topic_pages(
    ctx: _Context, units: list[Unit], topics: list[Topic], source: _Page, chunk: str
) -> list[_Page]:
    pages: dict[str, _Page] = {}
    section = _fit(source.title, 80)
    for topic in topics:
        slug = topic.slug or slugify(topic.title)
        if slug == source.slug:
            continue
        mentions = [units[i] for i in topic.units]
        chosen = _best(mentions, MAX_TOPIC_CLAIMS)
        if slug in pages:
            merged = {u.index: u for u in pages[slug].sections[section] + chosen}
            pages[slug].sections[section] = [merged[i] for i in sorted(merged)]
            continue
        ranked = sorted(mentions, key=lambda u: _summary_rank(u, topic.title))
        create = not ctx.known(slug)
        title = ctx.existing.get(slug, _fit(topic.title, 120))
        pages[slug] = _Page(
            slug, title, _summary(ranked, chunk), TOPIC_CATEGORY, create, {section: chosen}
        )
    return list(pages.values())


def _page_ops(page: _Page, chunk: str, source_id: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for i, (section, group) in enumerate(page.sections.items()):
        seen: set[str] = set()
        claims = []
        for unit in group:
            if _dedup_key(unit.text) not in seen:
                seen.add(_dedup_key(unit.text))
                claims.append(_claim(unit, chunk, source_id))
        for j in range(0, max(1, len(claims)), MAX_CLAIMS_PER_OP):
            part = claims[j : j + MAX_CLAIMS_PER_OP]
            if page.create and i == 0 and j == 0:
                ops.append(
                    {
                        "op": "create_page",
                        "slug": page.slug,
                        "title": page.title,
                        "summary": page.summary,
                        "category": page.category,
                        "section": section,
                        "claims": part,
                    }
                )
            elif part:
                ops.append(
                    {"op": "add_claims", "page": page.slug, "section": section, "claims": part}
                )
    return ops


def _related(ctx: _Context, units: list[Unit], taken: set[str]) -> list[str]:
    """Existing pages (given in the task) whose title the chunk's sentences mention."""
    if not ctx.existing:
        return []
    text = " " + " ".join(name_key(u.text) for u in units) + " "
    out = []
    for slug in sorted(ctx.existing):
        key = name_key(ctx.existing[slug])
        if slug not in taken and len(key) >= 4 and f" {key} " in text:
            out.append(slug)
    return out[:MAX_RELATED_LINKS]


def propose_plan(task: IngestTask) -> dict[str, Any]:
    """The plan for one chunk of one source (see the module docstring). Never raises on text."""
    chunk = task.chunk
    code = code_spans(chunk, task.open_fence)
    seg = segment(chunk, hidden=task.flagged, fence=task.open_fence, code=code)
    names = _own_names(task, seg)
    units = _drop_cut_sentence(task, build_units(chunk, seg, flagged=task.flagged, names=names))
    if not units:
        units = _drop_cut_sentence(
            task, build_units(chunk, seg, MIN_CHARS_FALLBACK, flagged=task.flagged, names=names)
        )
    units = _with_subjects(_with_signatures(chunk, units))
    part = f"part {task.chunk_index + 1} of {task.chunk_count}"
    if not units:
        return {
            "nonce": task.nonce,
            "summary": f"{EMPTY_SUMMARY}: {part} of this source has no usable sentence",
            "operations": [],
        }
    ctx = _context(task)
    title, title_heading = _source_title(task, seg)
    budget = MAX_OPERATIONS - (1 if task.chunk_index == 0 else 0)
    hidden = _hidden_headings(seg, chunk, task.flagged)
    source = _source_page(ctx, units, title, title_heading, chunk, budget, hidden)
    exclude = (name_key(title), name_key(name_title(task.source_name)))
    elsewhere = " . ".join(f"{p.title} . {p.summary}" for p in task.pages)
    candidates = topic_candidates(units, exclude, _visible(chunk, task.flagged))
    topics = choose_topics(candidates, ctx.keys.slug_for, MAX_TOPICS, elsewhere)
    topic_pages = _topic_pages(ctx, units, topics, source, chunk)

    ops = _page_ops(source, chunk, task.source_id)
    if task.chunk_index == 0:
        lead = sorted(units[:5], key=lambda u: (-u.score, u.index))[0]
        entry = _claim(lead, chunk, task.source_id)
        ops.append({"op": "update_context", "mode": "append", "entries": [entry]})
    links: list[dict[str, Any]] = []
    placed: list[_Page] = []
    for page in topic_pages:
        page_ops = _page_ops(page, chunk, task.source_id)
        link = source.create or page.create
        need = len(page_ops) + (1 if link else 0)
        if not page_ops or len(ops) + len(links) + need > MAX_OPERATIONS:
            continue
        ops += page_ops
        placed.append(page)
        if link:
            links.append({"op": "link_pages", "page": source.slug, "to": page.slug})
    ops += links
    ops += _topic_links(placed, MAX_OPERATIONS - len(ops))
    if source.create:
        taken = {source.slug} | {p.slug for p in topic_pages}
        for slug in _related(ctx, units, taken)[: max(0, MAX_OPERATIONS - len(ops))]:
            ops.append({"op": "link_pages", "page": source.slug, "to": slug})
    claims = sum(len(o.get("claims", o.get("entries", []))) for o in ops)
    pages = len({o.get("slug") or o.get("page") for o in ops if o["op"] != "update_context"})
    summary = f"Extractive digest of {source.title}, {part}: {claims} claims on {pages} pages."
    return {"nonce": task.nonce, "summary": _fit(summary, 300), "operations": ops}


def _topic_links(pages: list[_Page], budget: int) -> list[dict[str, Any]]:
    """Links between topic pages that share at least two sentences of the chunk."""
    members = {p.slug: {u.index for group in p.sections.values() for u in group} for p in pages}
    out: list[dict[str, Any]] = []
    for i, a in enumerate(pages):
        for b in pages[i + 1 :]:
            if len(out) >= budget:
                return out
            if (a.create or b.create) and len(members[a.slug] & members[b.slug]) >= 2:
                out.append({"op": "link_pages", "page": b.slug, "to": a.slug})
    return out


__all__ = ["ENGINE", "VERSION", "is_empty_plan", "name_title", "propose_plan", "slugify"]
