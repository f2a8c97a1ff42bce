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

The work is in two halves: :func:`.analysis.analyse` reads the chunk alone (a host may run it ahead
of time, in another process), :func:`plan_from` adds what depends on the known pages;
:func:`propose_plan` is the two in a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..plan.schema import MAX_OPERATIONS
from ..providers.base import IngestTask
from .analysis import (
    MAX_CLAIMS_PER_OP,
    Analysis,
    AnalysisMismatch,
    Claim,
    analyse,
    analysis_key,
    unit_mentions,
)
from .known import KnownKeys, known_keys
from .titles import fit, name_title, slugify
from .topics import choose_topics, joined_name_key, name_key

VERSION = "5"
"""Bumped whenever the same task would give a different plan."""
ENGINE = f"extractive-{VERSION}"

MAX_TOPICS = 5
MAX_RELATED_LINKS = 3
SOURCE_CATEGORY = "sources"
TOPIC_CATEGORY = "topics"
EMPTY_SUMMARY = "nothing to propose"


def is_empty_plan(plan: dict[str, Any]) -> bool:
    """True for the engine's "nothing to propose" reply: a plan object with no operations."""
    return isinstance(plan, dict) and plan.get("operations") == []


@dataclass
class _Page:
    slug: str
    title: str
    summary: str
    category: str
    create: bool
    sections: dict[str, list[int]] = field(default_factory=dict)  # claims by position


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


def _source_slug(ctx: _Context, analysis: Analysis) -> tuple[str, bool]:
    """The source page's slug and whether this plan creates it."""
    base, own = analysis.base_slug, analysis.own_slug
    if ctx.task.source_page:  # a new version's changed sentences: its earlier version's page,
        return ctx.task.source_page, False  # whose heading the changed stretch may leave out
    if ctx.known(own):
        return own, False
    if not ctx.known(base):
        return base, True
    if ctx.task.chunk_index > 0 or base in ctx.pending:
        return base, False
    # The first chunk of a new source, and its slug is taken: the same subject (by title) is
    # extended, a different one gets a slug of its own.
    if name_key(ctx.existing[base]) in (analysis.title_key, analysis.name_key):
        return base, False
    return own, True


def _topic_pages(ctx: _Context, analysis: Analysis, source: _Page) -> list[_Page]:
    drafts = {d.candidate.key: d for d in analysis.topics}
    # the name key of the shown pages' titles and summaries, " . "-joined
    shown = [text for p in ctx.task.pages for text in (p.title, p.summary)]
    named = f" {joined_name_key(shown)} " if shown else ""
    candidates = [d.candidate for d in analysis.topics]
    topics = choose_topics(candidates, ctx.keys.slug_for, MAX_TOPICS, named)
    pages: dict[str, _Page] = {}
    section = fit(source.title, 80)
    for topic in topics:
        draft = drafts[topic.key]
        slug = topic.slug or draft.slug
        if slug == source.slug:
            continue
        chosen = list(draft.best)
        if slug in pages:
            merged = set(pages[slug].sections[section]) | set(chosen)
            pages[slug].sections[section] = sorted(merged)
            continue
        create = not ctx.known(slug)
        title = ctx.existing.get(slug, fit(topic.title, 120))
        pages[slug] = _Page(slug, title, draft.summary, TOPIC_CATEGORY, create, {section: chosen})
    return list(pages.values())


def _claim(claim: Claim, source_id: str) -> dict[str, Any]:
    evidence = [{"source": source_id, "quote": quote} for quote in claim.quotes]
    return {"text": claim.text, "evidence": evidence}


def _page_ops(page: _Page, claims: tuple[Claim, ...], source_id: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for i, (section, group) in enumerate(page.sections.items()):
        seen: set[int] = set()
        out = []
        for pos in group:
            claim = claims[pos]
            if claim.dedup not in seen:
                seen.add(claim.dedup)
                out.append(_claim(claim, source_id))
        for j in range(0, max(1, len(out)), MAX_CLAIMS_PER_OP):
            part = out[j : j + MAX_CLAIMS_PER_OP]
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


def _related(ctx: _Context, analysis: Analysis, taken: set[str]) -> list[str]:
    """Existing pages (given in the task) whose title the chunk's sentences mention."""
    if not ctx.existing:
        return []
    text = analysis.mentions
    if text is None:
        text = unit_mentions(analysis.claims)
    out = []
    for slug in sorted(ctx.existing):
        key = name_key(ctx.existing[slug])
        if slug not in taken and len(key) >= 4 and f" {key} " in text:
            out.append(slug)
    return out[:MAX_RELATED_LINKS]


def propose_plan(task: IngestTask) -> dict[str, Any]:
    """The plan for one chunk of one source (see the module docstring). Never raises on text."""
    return plan_from(analyse(task), task)


def plan_from(analysis: Analysis, task: IngestTask) -> dict[str, Any]:
    """The plan for ``task`` from its :func:`.analysis.analyse`: the known pages (``task.pages``,
    ``task.pending_slugs``) decide the source page's slug, which topics become pages and which
    pages are created or extended. Raises :class:`.analysis.AnalysisMismatch` for an analysis of
    another task (its key, :func:`.analysis.analysis_key`, differs)."""
    if analysis.key != analysis_key(task):
        raise AnalysisMismatch(
            f"this analysis is of another chunk or source than {task.source_id[:12]} "
            f"part {task.chunk_index + 1} ({task.chunk_start}-{task.chunk_start + len(task.chunk)})"
        )
    claims = analysis.claims
    if not claims:
        return {
            "nonce": task.nonce,
            "summary": f"{EMPTY_SUMMARY}: {analysis.part} of this source has no usable sentence",
            "operations": [],
        }
    ctx = _context(task)
    slug, create = _source_slug(ctx, analysis)
    sections = {name: list(group) for name, group in analysis.sections}
    source = _Page(slug, analysis.title, analysis.summary, SOURCE_CATEGORY, create, sections)
    topic_pages = _topic_pages(ctx, analysis, source)

    ops = _page_ops(source, claims, task.source_id)
    if task.chunk_index == 0:
        entry = _claim(claims[analysis.lead], task.source_id)
        ops.append({"op": "update_context", "mode": "append", "entries": [entry]})
    links: list[dict[str, Any]] = []
    placed: list[_Page] = []
    for page in topic_pages:
        page_ops = _page_ops(page, claims, task.source_id)
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
        for slug in _related(ctx, analysis, taken)[: max(0, MAX_OPERATIONS - len(ops))]:
            ops.append({"op": "link_pages", "page": source.slug, "to": slug})
    count = sum(len(o.get("claims", o.get("entries", []))) for o in ops)
    pages = len({o.get("slug") or o.get("page") for o in ops if o["op"] != "update_context"})
    summary = (
        f"Extractive digest of {source.title}, {analysis.part}: {count} claims on {pages} pages."
    )
    return {"nonce": task.nonce, "summary": fit(summary, 300), "operations": ops}


def _topic_links(pages: list[_Page], budget: int) -> list[dict[str, Any]]:
    """Links between topic pages that share at least two sentences of the chunk."""
    members = {p.slug: {pos for group in p.sections.values() for pos in group} for p in pages}
    out: list[dict[str, Any]] = []
    for i, a in enumerate(pages):
        for b in pages[i + 1 :]:
            if len(out) >= budget:
                return out
            if (a.create or b.create) and len(members[a.slug] & members[b.slug]) >= 2:
                out.append({"op": "link_pages", "page": b.slug, "to": a.slug})
    return out


__all__ = [
    "ENGINE",
    "VERSION",
    "analyse",
    "is_empty_plan",
    "name_title",
    "plan_from",
    "propose_plan",
    "slugify",
]
