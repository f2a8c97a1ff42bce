"""Deterministic rendering of the wiki from the database: same DB state ⇒ byte-identical files.

Pages use standard markdown links (``[Title](slug.md)``), which Obsidian resolves like wikilinks and
any markdown viewer follows; citations are footnotes carrying the verbatim quote and a link into the
stored source file (marked "(source retracted)" once that source is). Past claims leave the body for
two generated lists at the end of their page: "Superseded" (struck through, with the successor's id
and, when it lives on another page, a link there) and "Retracted" (struck through, with the reason
the audit log recorded). A page left with no active claim still renders.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import OrderedDict
from functools import lru_cache
from itertools import groupby
from typing import NamedTuple

import yaml

from ..evidence.spans import UNREADABLE
from .overview import overview_head
from .paths import page_relpath, wiki_name

CONTEXT_ARCHIVE = "context-archive"
SUPERSEDED_HEADING = "Superseded"
RETRACTED_HEADING = "Retracted"
"""Generated lists of a page's past claims: they carry no citations and can't be edited into plans."""
GENERATED = ("index.md", "log.md", "context.md")
# Every alternative starts with the character it escapes (a lookbehind comes after it, so
# ``(?<=%)%`` is ``%(?<=%%)``): the regex engine then skips to candidate characters in C, which
# makes escaping 2-3x cheaper than with the lookbehinds first (the same matches: a test holds
# it to the lookbehind-first spelling).
_SYNTAX = (
    r"[\\`*\[\]<>|~!#&$^]"  # CommonMark and Obsidian syntax wherever it stands
    r"|_(?<![^\W_]_)|_(?![^\W_])"  # "_" but inside a word (CHERRY_PICK_HEAD): no emphasis there
    r"|%(?=%)|%(?<=%%)|=(?==)|=(?<===)"  # Obsidian comments %%…%% and highlights ==…==
)
_LINKABLE = r"|\.(?<=\w\.)(?=[^\W\d_])(?![^\W\d_](?:[^\w-]|$))|:(?<=[^\W\d_]:)(?=\S)|/(?<=//)"  # what a linkifier takes
_ESCAPE = re.compile(_SYNTAX + _LINKABLE)
_ESCAPE_LINK_TEXT = re.compile(_SYNTAX)  # inside [link text] no linkifier runs
_LINE_START = re.compile(r"^([-+=>]|\d+[.)])")
_SPACES = re.compile(r"\s+")


def escape_inline(text: str, *, link_text: bool = False) -> str:
    """See :func:`_escape` (kept by text: a page re-rendered per batch escapes only what's new)."""
    return _escape(text, link_text)


@lru_cache(maxsize=1 << 17)
def _escape(text: str, link_text: bool) -> str:
    """Escape markdown so model-written text renders as itself, in CommonMark and in Obsidian: no
    links (not even the ones a linkifier makes of ``https://…``, ``www.…`` or ``evil.com/x``),
    images, HTML, emphasis, code, tables, footnotes, wikilinks, tags, comments, highlights or math.

    Only backslash escapes of ASCII punctuation are added, so a reader undoes them all the same way
    (:mod:`affidavit.handedits`): a domain's dots and a scheme's colon are escaped, which is enough
    to break the linkifier without changing the text shown. ``link_text``: the text goes between
    ``[`` and ``](…)``, where no linkifier runs, so dots and colons stay as they are.
    """
    pattern = _ESCAPE_LINK_TEXT if link_text else _ESCAPE
    escaped = pattern.sub(lambda m: "\\" + m.group(), _SPACES.sub(" ", text).strip())
    # A leading "- ", "+ ", "= " or "1. " would turn the line into a list or a heading.
    return _LINE_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], escaped)


class _Quoted(str):
    """A free-text frontmatter value: always written double-quoted."""


class _FrontmatterDumper(yaml.SafeDumper):
    """PyYAML's safe dumper; free text double-quoted, with every non-printable escaped."""


def _represent_quoted(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style='"')


_FrontmatterDumper.add_representer(_Quoted, _represent_quoted)


def frontmatter(fields: dict[str, object]) -> list[str]:
    """The ``---`` block of a page: YAML that parses back to exactly ``fields`` (str, int).

    Each top-level key of a block mapping is emitted on its own, so the block is the keys'
    YAML one after another, each dumped once per value (a page re-rendered per batch changes
    only its claim count and date)."""
    lines = ["---"]
    for key, value in fields.items():
        lines += _field(key, type(value).__qualname__, value)
    return [*lines, "---"]


#: Frontmatter values PyYAML writes in one known way, written here without its pure-Python
#: emitter (a page's claim count and date change with every batch that touches it): these
#: keys (plain scalars: none of them reads as a bool or null), then an int as it is, or one of
#: our timestamps single-quoted (PyYAML quotes a string its resolver would read as a
#: timestamp). ``tests/test_render_frontmatter.py`` holds these to ``yaml.dump``.
_PLAIN_KEYS = frozenset(["claims", "created", "updated"])
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _field(key: str, kind: str, value: object) -> tuple[str, ...]:
    """One key of the frontmatter as YAML lines (``kind`` keeps ``_Quoted`` apart from ``str``)."""
    if key in _PLAIN_KEYS:
        if kind == "int":
            return (f"{key}: {value}",)
        if kind == "str" and _TIMESTAMP.fullmatch(str(value)):
            return (f"{key}: '{value}'",)
    return _dumped(key, kind, value)


@lru_cache(maxsize=1 << 14)
def _dumped(key: str, kind: str, value: object) -> tuple[str, ...]:
    """:func:`_field` through PyYAML."""
    text = yaml.dump(
        {key: value},
        Dumper=_FrontmatterDumper,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,  # never fold a long title over lines
        default_flow_style=False,
    )
    return tuple(text.rstrip("\n").split("\n"))


_Evidence = tuple[str, str, int, int, str, str, str, str]
"""source id, quote, start, end, location, source name, source file, source status."""


class _Claim(NamedTuple):  # a tuple: a big page re-rendered per batch makes thousands
    id: str
    section: str
    text: str
    status: str
    superseded_by: str | None
    evidence: tuple[_Evidence, ...]


_LIVE_AND_PAST = ("active", "superseded", "retracted")


def _claims(
    db: sqlite3.Connection, page: str, statuses: tuple[str, ...]
) -> dict[str, list[_Claim]]:
    """The page's claims with these statuses, in page order, with their evidence, by status:
    one query for the claims and their evidence as plain tuples, one for the few sources they
    cite (an evidence row whose source is gone is left out, as a join would)."""
    cursor = db.cursor()
    cursor.row_factory = None  # tuples: a big page has thousands of rows
    marks = ",".join("?" * len(statuses))
    query = (
        "SELECT c.id, c.section, c.text, c.status, c.superseded_by, e.source_id, {quote}, "
        'e.start, e."end", e.location, e.idx FROM claims c LEFT JOIN evidence e '
        f"ON e.claim_id = c.id WHERE c.page_slug = ? AND c.status IN ({marks}) "
        "ORDER BY c.position, c.id, e.idx"
    )
    try:
        shown = _cited(cursor, page, marks, statuses)
    except sqlite3.OperationalError:  # no evidence_cited: the mirror's shadow of PostgreSQL
        shown = {}
    # a carried quote's words are read where the page cites them (shown), not twice
    quote = _UNLESS_CITED if shown else "e.quote"
    rows = cursor.execute(query.format(quote=quote), (page, *statuses)).fetchall()
    cited = list({r[5] for r in rows if r[5] is not None} | {v[0] for v in shown.values()})
    sources: dict[str, tuple[str, str, str]] = {}
    for start in range(0, len(cited), 500):
        part = cited[start : start + 500]
        for source_id, name, original_file, status in cursor.execute(
            "SELECT id, name, original_file, status FROM sources "
            f"WHERE id IN ({','.join('?' * len(part))})",
            part,
        ):
            sources[source_id] = (name, original_file, status)
    out: dict[str, list[_Claim]] = {status: [] for status in statuses}
    first: tuple[object, ...] | None = None
    evidence: list[_Evidence] = []
    for row in rows:
        if first is None or row[0] != first[0]:
            if first is not None:
                out[str(first[3])].append(_claim(first, evidence))
            first, evidence = row, []
        source = sources.get(row[5])
        if source is not None:
            at = shown.get((row[0], row[10]))
            if at is None:
                evidence.append((row[5], row[6], row[7], row[8], row[9], *source))
            else:  # carried: the version it was verified in; "retracted" as its source now is
                name, file, _ = sources.get(at[0], source)
                evidence.append((*at, name, file, source[2]))
    if first is not None:
        out[str(first[3])].append(_claim(first, evidence))
    return out


_UNLESS_CITED = (
    "CASE WHEN EXISTS (SELECT 1 FROM evidence_cited t WHERE t.claim_id = e.claim_id "
    "AND t.idx = e.idx) THEN '' ELSE e.quote END"
)


def _cited(
    cursor: sqlite3.Cursor, page: str, marks: str, statuses: tuple[str, ...]
) -> dict[tuple[str, int], tuple[str, str, int, int, str]]:
    """The places the page's footnotes cite for evidence a ``carry_source`` moved to a newer
    version (``evidence_cited``, m030): (claim, idx) -> source id, its words there, offsets and
    location. None at all (no carry yet, the first ingest): one lookup, no scan of the page."""
    if cursor.execute("SELECT 1 FROM evidence_cited LIMIT 1").fetchone() is None:
        return {}
    rows = cursor.execute(
        "SELECT t.claim_id, t.idx, k.source_id, evidence_span(s.text_file, s.text_sha256, "
        't.start, t."end", t.crc), t.start, t."end", t.location FROM evidence_cited t '
        "JOIN claims c ON c.id = t.claim_id JOIN source_keys k ON k.key = t.source_key "
        f"JOIN sources s ON s.id = k.source_id WHERE c.page_slug = ? AND c.status IN ({marks})",
        (page, *statuses),
    ).fetchall()
    return {(r[0], r[1]): (r[2], r[3] or UNREADABLE, r[4], r[5], r[6]) for r in rows}


def _claim(row: tuple[object, ...], evidence: list[_Evidence]) -> _Claim:
    claim_id, section, text, status, superseded_by = row[:5]
    return _Claim(claim_id, section, text, status, superseded_by, tuple(evidence))  # type: ignore[arg-type]


@lru_cache(maxsize=1 << 17)
def _footnote_text(claim_id: str, ev: _Evidence) -> str:
    """A footnote after its ``[^n]: ``: the same for a claim's evidence whatever its number, so
    a page re-rendered per batch builds only the new claims' footnotes."""
    source_id, quote, start, end, where, source_name, source_file, source_status = ev
    retracted = " (source retracted)" if source_status == "retracted" else ""
    return (
        f"“{escape_inline(quote)}” — [{escape_inline(source_name, link_text=True)}]"
        f"(../{source_file}), {where}, chars {start}–{end} · source `{source_id[:12]}` · "
        f"claim `{claim_id}`{retracted}"
    )


def _claim_paragraphs(claims: list[_Claim], counter: list[int], notes: list[str]) -> list[str]:
    lines: list[str] = []
    add, note = lines.append, notes.append
    number = counter[0]
    for claim_id, _, text, _, _, evidence in claims:
        refs = ""
        for ev in evidence:
            number += 1
            refs += f"[^{number}]"
            note(f"[^{number}]: {_footnote_text(claim_id, ev)}")
        add(f"{_escape(text, False)}{refs}")
        add("")
    counter[0] = number
    return lines


def _title(db: sqlite3.Connection, slug: str) -> str:
    row = db.execute("SELECT title FROM pages WHERE slug = ?", (slug,)).fetchone()
    return str(row[0]) if row else slug


def _successor(db: sqlite3.Connection, slug: str, successor: str | None) -> str:
    """`` → superseded by `c-…` ``, with a link to the page it is on when that is another one."""
    if not successor:
        return ""
    text = f" → superseded by `{successor}`"
    row = db.execute("SELECT page_slug FROM claims WHERE id = ?", (successor,)).fetchone()
    if row is None or row[0] == slug:
        return text
    target, title = ("context", "Context") if row[0] == "" else (row[0], _title(db, row[0]))
    return f"{text} in [{escape_inline(title, link_text=True)}]({target}.md)"


_CLAIM_ID = re.compile(r"c-[0-9a-f]{16}")
_HEX = re.compile(r"[0-9a-f]{12,64}")


def _retraction_fact(plan_id: str | None, detail: dict[str, object], why: str) -> str:
    """What the host knows about one retracted claim, in its own words. The proposer's
    ``reason`` is never rendered (W13: an agent's free text may say anything, e.g. to a reviewer):
    it stays in the plan and the audit log. The audit entry's values are told apart by exact
    structure, not by what the reason says."""
    reason, source = str(detail.get("reason", "")), detail.get("source")
    if isinstance(source, str) and _HEX.fullmatch(source):
        if why == f"source {source[:12]} retracted: {reason}":
            return f"source {source[:12]} retracted"
    elif why == reason:
        return f"retracted by plan {plan_id[:12]}" if plan_id and _HEX.fullmatch(plan_id) else ""
    rests = why.removeprefix("rests on retracted claim ")
    if rests != why and _CLAIM_ID.fullmatch(rests):
        return f"rests on retracted claim {rests}"
    return "retracted"


def retraction_reasons(db: sqlite3.Connection, claim_ids: list[str]) -> dict[str, str]:
    """Why each claim was retracted, as the host knows it (:func:`_retraction_fact`), from the
    audit log's ``retracted`` entries (the latest)."""
    wanted = set(claim_ids)
    out: dict[str, str] = {}
    if not wanted:
        return out
    rows = db.execute(
        "SELECT plan_id, detail FROM audit WHERE action = 'retracted' ORDER BY seq DESC"
    )
    for plan_id, text in rows:
        detail = json.loads(text)
        for claim_id, why in detail.get("claims", {}).items():
            if claim_id in wanted and claim_id not in out:
                out[claim_id] = _retraction_fact(plan_id, detail, str(why))
        if len(out) == len(wanted):
            break
    return out


def render_page(db: sqlite3.Connection, slug: str) -> str | None:
    """The markdown of page ``slug``, or None when no such page exists."""
    page = db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()
    if page is None:
        return None
    by_status = _claims(db, slug, _LIVE_AND_PAST)
    active, old = by_status["active"], by_status["superseded"]
    withdrawn = by_status["retracted"]
    meta: dict[str, object] = {
        "title": _Quoted(page["title"]),
        "summary": _Quoted(page["summary"]),
        "category": str(page["category"]),
        "slug": slug,
        "claims": len(active),
        "created": str(page["created_at"]),
        "updated": str(page["updated_at"]),
        "generator": "affidavit",
    }
    out = [
        *frontmatter(meta),
        "",
        f"# {escape_inline(page['title'])}",
        "",
        f"*{escape_inline(page['summary'])}*",
        "",
    ]
    sections: OrderedDict[str, list[_Claim]] = OrderedDict()
    for claim in active:
        sections.setdefault(claim.section, []).append(claim)
    counter = [0]
    notes: list[str] = []
    for section, claims in sections.items():
        out += [f"## {escape_inline(section)}", ""]
        out += _claim_paragraphs(claims, counter, notes)
    outgoing = [
        r[0] for r in db.execute("SELECT dst FROM links WHERE src = ? ORDER BY dst", (slug,))
    ]
    incoming = [
        r[0] for r in db.execute("SELECT src FROM links WHERE dst = ? ORDER BY src", (slug,))
    ]
    for heading, slugs in (("See also", outgoing), ("Linked from", incoming)):
        if slugs:
            out += [f"## {heading}", ""]
            out += [f"- [{escape_inline(_title(db, s), link_text=True)}]({s}.md)" for s in slugs]
            out.append("")
    if old:
        out += [f"## {SUPERSEDED_HEADING}", ""]
        for claim in old:
            successor = _successor(db, slug, claim.superseded_by)
            out.append(f"- ~~{escape_inline(claim.text)}~~ `{claim.id}`{successor}")
        out.append("")
    if withdrawn:
        out += [f"## {RETRACTED_HEADING}", ""]
        reasons = retraction_reasons(db, [c.id for c in withdrawn])
        for claim in withdrawn:
            why = reasons.get(claim.id, "")
            why = f" — {escape_inline(why)}" if why else ""
            out.append(f"- ~~{escape_inline(claim.text)}~~ `{claim.id}`{why}")
        out.append("")
    if notes:
        out += notes
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def render_index(db: sqlite3.Connection) -> str:
    cursor = db.cursor()
    cursor.row_factory = None  # tuples: a line per page, rendered again in every batch
    rows = cursor.execute(
        "SELECT slug, title, summary, category FROM pages ORDER BY category, slug"
    ).fetchall()
    out = [  # no count of claims: the catalog changes when its pages do, not with every apply
        "# Index",
        "",
        f"{len(rows)} pages. Generated by Affidavit from its database; "
        "hand edits are detected by `affidavit doctor`.",
        "",
        "- [Context](context.md) · [Log](log.md)",
        "",
    ]
    for category, group in groupby(rows, key=lambda r: str(r[3])):
        out += [f"## {category}", ""]
        out += [
            f"- [{_escape(title, True)}]({slug}.md) — {_escape(summary, False)}"
            for slug, title, summary, _ in group
        ]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


LOG_HEAD = "# Log\n\nChronology of applied plans, generated from the audit log.\n"


def log_entries(db: sqlite3.Connection, after_seq: int = 0) -> str:
    """The log's entries for the "applied" audit entries after ``after_seq``, as appended to
    ``wiki/log.md``: ``render_log(db) == LOG_HEAD + log_entries(db)``, so the door appends a
    batch's entries instead of rebuilding a file that grows with every plan."""
    out: list[str] = []
    rows = db.execute(
        "SELECT seq, at, plan_id, actor, detail FROM audit WHERE action = 'applied' AND seq > ? "
        "ORDER BY seq",
        (after_seq,),
    )
    for row in rows:
        detail = json.loads(row["detail"])
        day = row["at"][:10]
        approved = f"Approved by {escape_inline(row['actor'])}."
        for op in detail.get("ops", []):
            out.append(f"\n## [{day}] {op['kind']} | {escape_inline(op['title'])}\n\n{approved}\n")
    return "".join(out)


def render_log(db: sqlite3.Connection) -> str:
    return LOG_HEAD + log_entries(db)


def context_claims(db: sqlite3.Connection) -> list[_Claim]:
    """The entries of ``wiki/context.md`` (its active claims), in order, with their evidence."""
    return _claims(db, "", ("active",))["active"]


def render_context(db: sqlite3.Connection) -> str:
    return context_markdown(context_claims(db), context_head(db))


def context_head(db: sqlite3.Connection) -> list[str]:
    """What the wiki covers and its main topics (:mod:`.overview`), above context.md's entries."""
    return overview_head(db, lambda text: escape_inline(text, link_text=True))


def context_markdown(entries: list[_Claim], head: list[str]) -> str:
    """``wiki/context.md`` with these entries (:func:`context_claims`) under ``head``
    (:func:`context_head`)."""
    out = [
        "# Context",
        "",
        "The overview of this wiki, to read first: what it covers, its main topics, then what "
        "each source is about. Every entry is a claim with a verified quote; older entries "
        f"spill into [Context archive]({CONTEXT_ARCHIVE}.md) when this file reaches its line cap.",
        "",
        *head,
    ]
    notes: list[str] = []
    out += _claim_paragraphs(entries, [0], notes)
    if notes:
        out += notes
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def render_path(db: sqlite3.Connection, relpath: str) -> str | None:
    """Render one file of ``wiki/`` by its path relative to the vault; None if it shouldn't exist."""
    name = wiki_name(relpath)  # anything but wiki/<slug or generated>.md renders nothing
    if name is None:
        return None
    if name == "index":
        return render_index(db)
    if name == "log":
        return render_log(db)
    if name == "context":
        return render_context(db)
    return render_page(db, name)


def expected_files(db: sqlite3.Connection) -> dict[str, str]:
    """Every file under ``wiki/`` as the database renders it, keyed by vault-relative path."""
    files = {f"wiki/{name}": render_path(db, f"wiki/{name}") or "" for name in GENERATED}
    for (slug,) in db.execute("SELECT slug FROM pages ORDER BY slug"):
        files[page_relpath(slug)] = render_page(db, slug) or ""  # a forged slug is refused
    return files
