"""Which spans of a document's extracted text does a reader see? Decided by rendering (W12).

:func:`seen` is the one place that answers it. The fast rules run first, at extraction (CSS
cascade in :mod:`.css`, PDF graphics state in :mod:`.pdf`, markdown in :mod:`.hidden_markdown`);
then the document is rendered by the engine its reader uses and every character that leaves no
readable ink is flagged too:

    application/pdf  PDFium rasterises every page (:mod:`.render_pdf`, the core ``pypdfium2``
                     wheel), in a child process with limits
    text/html        chromium lays the page out and screenshots it (:mod:`.render_html`, the
                     ``[render]`` extra and Debian's chromium: scripts/setup_browser.sh)
    .docx, .odt      LibreOffice lays the document out and exports PDF, which PDFium
                     rasterises as above (:mod:`.render_office`, Debian's
                     ``libreoffice-writer-nogui``) — only when ``sources.render_office`` is on
                     (off by default: LibreOffice's layout differs from Word's on page
                     backgrounds, filled text boxes and some OpenDocument styles, whose visible
                     text it would flag)

The renderer's characters are mapped onto the extracted text's offsets (:mod:`.align`). The
answer says whether a renderer decided (``checked = "rendered"``) or only the rules did
(``"rules"``: no renderer installed, with the command that installs one in ``note``); a plan
whose evidence comes from such a source below ``trusted`` waits for a person, and says why
(:mod:`affidavit.gate.admission`). A renderer that fails on a document (damaged, past a limit)
flags all of its text: what a reader's software can't show is not taken as seen.

Results are cached by the document's SHA-256 (and the engine and this module's version) in the
vault's ``.affidavit/cache/sight/``, so a document is rendered once.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hashing import sha256_hex
from .align import MISSING, hidden_runs, verdicts_for
from .sanitizer import UNSEEN_KINDS, Flag

HIDDEN = "hidden"
PDF = "application/pdf"
HTML = "text/html"
OFFICE = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.oasis.opendocument.text",
)
"""Word and OpenDocument texts: rendered by LibreOffice, then as a PDF."""
RENDERED_TYPES = (PDF, HTML, *OFFICE)
PAGE_SEPARATOR = "\n\f\n"
VERSION = 1
"""Bumped when what a cached verdict means changes (the cache is then not read)."""
RENDERED, RULES, NOT_NEEDED = "rendered", "rules", "not needed"
SIGHT_CACHE = "cache/sight"
"""Where, under a vault's ``.affidavit/``, what rendering decided is kept by content hash."""


def owner_of(root: Path) -> tuple[int, int] | None:
    """Whom to render a vault's sources as: its owner, when this process is root (W10)."""
    if os.geteuid() != 0:
        return None
    info = os.stat(root)
    return (info.st_uid, info.st_gid)


@dataclass(frozen=True)
class Sight:
    """What a renderer decided about a document's text: ``flags`` over the unseen text,
    ``checked`` (``rendered``, ``rules`` when no renderer could run, ``not needed`` for formats
    with nothing to render), the ``engine`` that decided, a ``note`` for a person."""

    flags: list[Flag] = field(default_factory=list)
    checked: str = NOT_NEEDED
    engine: str = ""
    note: str = ""

    def record(self) -> dict[str, str]:
        """What a source's text map keeps of it (``visibility``)."""
        out = {"checked": self.checked}
        if self.engine:
            out["engine"] = self.engine
        if self.note:
            out["note"] = self.note
        return out


def _pdf_pages(text: str, text_map: dict[str, Any]) -> list[tuple[int, str]]:
    """Each page's text and its offset, from the PDF text map."""
    starts = [int(mark[0]) for mark in text_map.get("pages") or []]
    pages = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - len(PAGE_SEPARATOR) if index + 1 < len(starts) else len(text)
        pages.append((start, text[start:end]))
    return pages


def flags_for(
    text: str,
    base: int,
    chars: str,
    verdicts: str,
    reasons: dict[str, str],
    where: str,
    ignore: str = "",
) -> list[Flag]:
    """Flags over ``text`` (at ``base`` in the document's text) for the characters a renderer
    did not see, each with its verdict's reason and ``where``."""
    per_char = verdicts_for(text, chars, verdicts, ignore)
    return [
        Flag(HIDDEN, base + start, base + end, f"{reasons.get(code, reasons[MISSING])} {where}")
        for start, end, code in hidden_runs(per_char)
    ]


def _pdf(data: bytes, text: str, text_map: dict[str, Any], owner: tuple[int, int] | None) -> Sight:
    try:
        from . import render_pdf
    except ImportError:  # pragma: no cover - pypdfium2 is a core dependency
        return Sight(checked=RULES, note=f"PDFium is not installed: {PDF_INSTALL}")
    engine = render_pdf.engine_name()
    pages = _pdf_pages(text, text_map)
    reasons = {
        **{code: f"PDF text {why}" for code, why in render_pdf.REASONS.items()},
        MISSING: "PDF text the rendered page draws no characters for",
    }
    try:
        rendered = render_pdf.render_pdf(data, len(pages), owner)
    except render_pdf.RenderFailed as exc:
        return Sight(
            [
                Flag(
                    HIDDEN, 0, len(text), f"PDF text that could not be rendered ({exc}) by {engine}"
                )
            ],
            RENDERED,
            engine,
            f"the renderer failed: {exc}",
        )
    flags: list[Flag] = []
    if len(rendered) == len(pages):
        for number, ((start, page_text), glyphs) in enumerate(
            zip(pages, rendered, strict=True), start=1
        ):
            where = f"on page {number} of the PDF (rendered by {engine})"
            flags += flags_for(page_text, start, glyphs.chars, glyphs.verdicts, reasons, where)
    else:  # the two readers disagree on the pages: align the whole document at once
        chars = "".join(g.chars for g in rendered)
        verdicts = "".join(g.verdicts for g in rendered)
        flags = flags_for(text, 0, chars, verdicts, reasons, f"in the PDF (rendered by {engine})")
    return Sight(flags, RENDERED, engine)


PDF_INSTALL = "pip install pypdfium2"


def _office(data: bytes, media_type: str, text: str, owner: tuple[int, int] | None) -> Sight:
    """A Word or OpenDocument text as LibreOffice lays it out, judged as its PDF export is."""
    from . import render_office, render_pdf

    if render_office.engine() is None:
        return Sight(checked=RULES, note=f"LibreOffice is not installed: {render_office.INSTALL}")
    engine = f"LibreOffice + {render_pdf.engine_name()}"
    kind = "Word" if media_type == OFFICE[0] else "OpenDocument"
    try:
        pdf = render_office.office_pdf(data, media_type, owner)
        rendered = render_pdf.render_pdf(pdf, max(1, pdf.count(b"/Type /Page")), owner)
    except render_pdf.RenderFailed as exc:
        why = f"{kind} text that could not be rendered ({exc}) by {engine}"
        return Sight([Flag(HIDDEN, 0, len(text), why)], RENDERED, engine, str(exc))
    reasons = {
        **{code: f"{kind} text {why}" for code, why in render_pdf.REASONS.items()},
        MISSING: f"{kind} text the laid-out document draws no characters for",
    }
    chars = "".join(g.chars for g in rendered)
    verdicts = "".join(g.verdicts for g in rendered)
    where = f"in the {kind} document (rendered by {engine})"
    return Sight(flags_for(text, 0, chars, verdicts, reasons, where), RENDERED, engine)


def beyond(found: list[Flag], rules: list[Flag]) -> list[Flag]:
    """The parts of the renderer's ``found`` flags that no unseen-text flag of the ``rules``
    covers already (a person reads one reason per span: the rule's, which names the
    technique)."""
    covered = sorted((f.start, f.end) for f in rules if f.kind in UNSEEN_KINDS and f.end > f.start)
    out: list[Flag] = []
    for flag in found:
        start = flag.start
        for a, b in covered:
            if b <= start or a >= flag.end:
                continue
            if a > start:
                out.append(Flag(flag.kind, start, a, flag.detail))
            start = max(start, b)
            if start >= flag.end:
                break
        if start < flag.end:
            out.append(Flag(flag.kind, start, flag.end, flag.detail))
    return [f for f in out if f.end > f.start]


def seen(
    data: bytes,
    media_type: str,
    text: str,
    text_map: dict[str, Any],
    cache: Path | None = None,
    owner: tuple[int, int] | None = None,
    office: bool = False,
) -> Sight:
    """Which spans of ``text`` (extracted from ``data``, a ``media_type`` document, with
    ``text_map``) a reader does not see, by rendering; ``cache`` is a directory to keep the
    answer in (by the document's SHA-256). ``owner`` (user and group id): whom the renderers
    run as when this process is root (a daemon working for someone's vault: W10; no cache is
    read or written then: the files are theirs). ``office``: render a Word or OpenDocument text
    too (``sources.render_office``; off, such texts are judged by the rules alone)."""
    if media_type not in RENDERED_TYPES or (media_type in OFFICE and not office):
        return Sight()
    key = f"{sha256_hex(data)}-{sha256_hex(text.encode('utf-8'))[:16]}-v{VERSION}"
    if owner is not None and os.geteuid() == 0 and owner[0] != 0:
        cache = None  # root works for someone else: no file of theirs is read or written
    if cache is not None:
        known = _read_cache(cache, key)
        if known is not None:
            return known
    if media_type == PDF:
        sight = _pdf(data, text, text_map, owner)
    elif media_type in OFFICE:
        sight = _office(data, media_type, text, owner)
    else:
        from .render_html import html_sight

        sight = html_sight(data, text, text_map, owner)
    if cache is not None and sight.checked == RENDERED:
        _write_cache(cache, key, sight)
    return sight


def unconfirmed(record: Any) -> str:
    """Why a stored source's visibility was not confirmed by rendering ("" if it was, or if its
    format has nothing to render): an HTML or PDF source added without a renderer (a Word or
    OpenDocument text is rendered only when ``sources.render_office`` asks: judged by the rules
    alone, it is what every such text is by default)."""
    if record.media_type not in (PDF, HTML):
        return ""
    seen_as = (record.text_map or {}).get("visibility") or {}
    if seen_as.get("checked") == RENDERED:
        return ""
    how = str(seen_as.get("note") or "it was added before rendering decided visibility")
    return (
        f"source {record.id[:12]} ({record.name}) is {record.trust} and what its reader sees "
        f"was not confirmed by rendering ({how}), so it is never applied by policy"
    )


def _read_cache(cache: Path, key: str) -> Sight | None:
    """A cached answer, if one is there and well formed (the cache is vault state: untrusted,
    so anything odd is ignored and the document rendered again)."""
    try:
        raw = json.loads((cache / f"{key}.json").read_text("utf-8"))
        if not isinstance(raw, dict) or not isinstance(raw.get("flags"), list):
            return None
        if not all(isinstance(f, list) and len(f) == 3 for f in raw["flags"]):
            return None
        flags = [Flag(HIDDEN, int(f[0]), int(f[1]), str(f[2])) for f in raw["flags"]]
        return Sight(flags, RENDERED, str(raw["engine"]), str(raw.get("note", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(cache: Path, key: str, sight: Sight) -> None:
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = {
            "flags": [[f.start, f.end, f.detail] for f in sight.flags],
            "engine": sight.engine,
            "note": sight.note,
        }
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(body, out)
        os.replace(tmp, cache / f"{key}.json")
    except OSError:  # a cache that can't be written costs a render next time, nothing more
        return


__all__ = [
    "NOT_NEEDED",
    "RENDERED",
    "RULES",
    "SIGHT_CACHE",
    "Sight",
    "beyond",
    "flags_for",
    "owner_of",
    "seen",
    "unconfirmed",
]
