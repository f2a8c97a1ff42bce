"""Lint checks of the wiki itself: links, orphans, empty pages, and rendered files that differ from
the database (index.md, log.md, context.md over its cap, pages, unknown files)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from ..handedits import link_targets  # the reader doctor --propose uses for links
from ..store.render import CONTEXT_ARCHIVE
from .checks_context import (
    CONTEXT,
    GENERATED_SLUGS,
    INDEX,
    LOG,
    CheckContext,
    diff_excerpt,
    slug_of,
)
from .findings import Finding

# --- links and pages ----------------------------------------------------------------------------


def _page_targets(markdown: str) -> Iterator[str]:
    """Targets of the wikilinks and markdown links of ``markdown`` that name a wiki page: URLs,
    files outside wiki/ (``../sources/…``), attachments (``x.png``) and bare anchors are skipped."""
    for target in link_targets(markdown):
        if target and ":" not in target and not target.startswith("../") and "." not in target:
            yield target


def check_broken_link(ctx: CheckContext) -> list[Finding]:
    """Links to pages that don't exist: rows of ``links`` whose end is not a page (rendered as a
    link on the other end's page), and wikilinks or markdown links in hand-edited or unknown files
    under wiki/. Files equal to their rendering hold only the database's links, checked already."""
    known = ctx.pages | GENERATED_SLUGS | {CONTEXT_ARCHIVE}  # context.md links the archive early
    found: dict[tuple[str, str], list[str]] = {}
    for src, dst in ctx.links:
        if dst not in ctx.pages:
            found.setdefault((f"wiki/{src}.md", dst), []).append("the links table")
        if src not in ctx.pages:  # shown under "Linked from" on dst's page
            found.setdefault((f"wiki/{dst}.md", src), []).append("the links table")
    for problem in ctx.files:
        if problem.kind == "missing":
            continue
        text = ctx.disk_text(problem.path) or ""
        for target in _page_targets(text):
            if target not in known:
                where = found.setdefault((problem.path, target), [])
                if "the file on disk" not in where:
                    where.append("the file on disk")
    findings = []
    for (relpath, target), where in sorted(found.items()):
        slug = slug_of(relpath)
        in_db = "the links table" in where
        fix_hint = (
            f"create the page '{target}' with a plan (create_page), or restore the database from "
            "a backup"
            if in_db
            else f"edit {relpath} to link an existing page, or propose a page '{target}' "
            "(create_page) first"
        )
        findings.append(
            Finding(
                kind="broken_link",
                severity="warning",
                subject=relpath,
                message=f"{relpath} links to '{target}', which is not a page (found in "
                f"{' and '.join(where)})",
                pages=sorted({target} | ({slug} & ctx.pages if slug else set())),
                fix_hint=fix_hint,
            )
        )
    return findings


def check_orphan_page(ctx: CheckContext) -> list[Finding]:
    """Pages no other page links to (index.md doesn't count; context.md links the archive)."""
    inbound = {dst for src, dst in ctx.links if src != dst and src in ctx.pages}
    inbound.add(CONTEXT_ARCHIVE)
    outgoing: dict[str, list[str]] = {}
    for src, dst in ctx.links:
        if dst in ctx.pages and dst != src:
            outgoing.setdefault(src, []).append(dst)
    findings = []
    for slug in sorted(ctx.pages - inbound):
        targets = outgoing.get(slug, [])
        fix = {"op": "link_pages", "page": targets[0], "to": slug} if targets else None
        hint = (
            f"link it from '{targets[0]}' (it links there already) with a link_pages plan"
            if targets
            else f"link it from a related page with a plan: "
            f'{{"op": "link_pages", "page": "<related>", "to": "{slug}"}}'
        )
        findings.append(
            Finding(
                kind="orphan_page",
                severity="info",
                subject=slug,
                message=f"no other page links to '{slug}' (only the index lists it)",
                pages=[slug],
                fix=fix,
                fix_hint=hint,
            )
        )
    return findings


def check_empty_page(ctx: CheckContext) -> list[Finding]:
    """Pages without a single active claim (all retracted or superseded, or never any)."""
    rows = ctx.db.execute(
        "SELECT p.slug, count(c.id) FROM pages p LEFT JOIN claims c ON c.page_slug = p.slug "
        "GROUP BY p.slug HAVING sum(CASE WHEN c.status = 'active' THEN 1 ELSE 0 END) = 0 "
        "ORDER BY p.slug"
    ).fetchall()
    findings = []
    for slug, total in rows:
        history = f" ({total} claim(s) in its history, none active)" if total else ""
        findings.append(
            Finding(
                kind="empty_page",
                severity="warning",
                subject=slug,
                message=f"page '{slug}' has no active claims{history}",
                pages=[slug],
                fix_hint=f"add claims to it with a plan "
                f'({{"op": "add_claims", "page": "{slug}", ...}}) or `affidavit ingest` a source '
                "about it",
            )
        )
    return findings


# --- rendered files -----------------------------------------------------------------------------


def _generated_drift(
    ctx: CheckContext, relpath: str, kind: Literal["index_drift", "log_drift"]
) -> list[Finding]:
    rendered = ctx.expected[relpath]
    actual = ctx.disk_text(relpath)
    if actual == rendered:
        return []
    if actual is None:
        message = f"{relpath} is missing"
    else:
        message = (
            f"{relpath} differs from what the database renders:\n"
            f"{diff_excerpt(rendered, actual, relpath)}"
        )
    return [
        Finding(
            kind=kind,
            severity="warning",
            subject=relpath,
            message=message,
            fix_hint=f"it is generated: the next applied plan rewrites it; "
            f"`git -C {ctx.root} checkout -- {relpath}` restores the committed copy now",
        )
    ]


def check_index_drift(ctx: CheckContext) -> list[Finding]:
    """wiki/index.md missing or different from what the database renders."""
    return _generated_drift(ctx, INDEX, "index_drift")


def check_log_drift(ctx: CheckContext) -> list[Finding]:
    """wiki/log.md missing or different from what the database renders."""
    return _generated_drift(ctx, LOG, "log_drift")


def check_context_over_cap(ctx: CheckContext) -> list[Finding]:
    """wiki/context.md, as rendered, longer than ``context.max_lines`` (counted as apply does)."""
    cap = ctx.vault.config.context_max_lines
    lines = ctx.expected[CONTEXT].count("\n")
    if lines <= cap:
        return []
    return [
        Finding(
            kind="context_over_cap",
            severity="warning",
            subject=CONTEXT,
            message=f"{CONTEXT} has {lines} lines, over its cap of {cap} (context.max_lines)",
            fix_hint=f"the next applied plan moves the oldest entries into the page "
            f"'{CONTEXT_ARCHIVE}'; or raise [context] max_lines in {ctx.vault.config_path}",
        )
    ]


def check_file_drift(ctx: CheckContext) -> list[Finding]:
    """Pages and context.md that differ from what the database renders, are missing, or are
    unknown files under wiki/ (index.md and log.md are index_drift and log_drift)."""
    findings = []
    for problem in ctx.files:
        relpath = problem.path
        if relpath in (INDEX, LOG):
            continue
        slug = slug_of(relpath)
        pages = [slug] if slug is not None and slug in ctx.pages else []
        restore = f"`git -C {ctx.root} checkout -- {relpath}`"
        if problem.kind == "missing":
            findings.append(
                Finding(
                    kind="file_drift",
                    severity="error",
                    subject=relpath,
                    message=f"{relpath} is missing: the database renders it but there is no file",
                    pages=pages,
                    fix_hint=f"{restore} restores it",
                )
            )
            continue
        if problem.kind == "unknown":
            message = f"{relpath} is an unknown file: no page in the database renders it"
            hint = "`affidavit doctor --propose` turns it into a create_page plan, or delete it"
        else:
            actual = ctx.disk_text(relpath) or ""
            message = (
                f"{relpath} differs from what the database renders (hand edit?):\n"
                f"{diff_excerpt(problem.text, actual, relpath)}"
            )
            hint = (
                f"`affidavit doctor --propose` turns the edit into a plan; {restore} restores "
                "the rendered file"
            )
        findings.append(
            Finding(
                kind="file_drift",
                severity="warning",
                subject=relpath,
                message=message,
                pages=pages,
                fix_hint=hint,
            )
        )
    return findings
