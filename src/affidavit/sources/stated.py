"""The version or date a document states about itself (issue 24 item 3, issue 27).

Two files of *different* origins may be releases of one document: ``git-2.39/git-commit.html``
and ``git-2.43/git-commit.html``. Which is newer is what the documents themselves say —
"Version 3.2", "Last updated: 2024-05-01", a release in the title, front matter or an HTML
``<meta>`` — never which was ingested later. :func:`stated_of` reads that statement when the
source is stored; lint then orders two sources of different origins by it, through the same
``(key, rank)`` pairs as an origin's versions (:func:`affidavit.sources.lineage.version_keys`).

Precision first:

* a statement is read only where a document states its own version: an HTML ``<meta>``, the
  front matter, a line of the document's head that *is* the statement ("Version 3.2",
  "Release: 2.39", "Last updated: 2024-05-01", not a sentence that mentions a version), or
  the title line;
* two statements are compared only when they are of the same kind (a version with a version, a
  date with a date) and name the same **document**: the same file name (or last URL path
  segment) and the same title once its numbers, dates and version words are left out — two
  pages of one release state the same version, so nothing on a single release is ever older;
* what the order decides is lint's: a stale finding and a supersede *proposal*, which waits for
  a person, and only when the newer side is at least as trusted (an attacker's "Version 999"
  retires nothing: :func:`affidavit.lint.candidates.classify`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath
from urllib.parse import urlsplit

__all__ = ["STATED", "Stated", "stated_of"]

STATED = "stated:"
"""Prefix of a stated document's key among a claim's ``(key, rank)`` origins."""
HEAD_CHARS = 3000
"""How much of the head of a document's text (and of its raw bytes) is read for a statement."""
HEAD_LINES = 25

_NUMBER = r"v?(\d{1,4}(?:\.\d{1,4}){0,3})"
_VERSION_LINE = re.compile(
    r"^[#*_\s]*(?:version|release|revision|rev\.)\s*[:=]?\s*" + _NUMBER + r"[*_\s]*$",
    re.I | re.M,
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTH = r"(?:" + "|".join(m[:3] + r"[a-z]*\.?" for m in _MONTHS) + ")"
_DATE = (
    r"(\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}|"
    + _MONTH
    + r"\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+"
    + _MONTH
    + r",?\s+\d{4})"
)
_DATE_LINE = re.compile(
    r"^[#*_\s]*(?:last\s+(?:updated|modified|revised|changed)|updated|revised|modified|"
    r"date(?:\s+of\s+(?:last\s+)?(?:update|revision|publication))?|published)\s*(?:on)?\s*"
    r"[:=]?\s*" + _DATE + r"\.?[*_\s]*$",
    re.I | re.M,
)
_META = re.compile(r"<meta\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_META_VERSION = {"version", "dc.version", "release", "software-version"}
_META_DATE = {
    "dcterms.modified",
    "dc.date.modified",
    "last-modified",
    "article:modified_time",
    "og:updated_time",
    "revised",
    "date",
    "dc.date",
    "dcterms.date",
}
_FRONT = re.compile(r"\A(?:\ufeff)?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FRONT_VERSION = {"version", "release"}
_FRONT_DATE = {"updated", "last_updated", "last-updated", "modified", "last_modified", "date"}
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_TITLE_VERSION = re.compile(r"(?<![\w.])v?(\d{1,4}\.\d{1,4}(?:\.\d{1,4}){0,2})(?![\w.]*\d)")
_DROP = re.compile(r"\bv?\d[\d.\-/]*\b|\b(?:version|release|revision)\b", re.I)


@dataclass(frozen=True)
class Stated:
    """What a document states about its own version or date."""

    kind: str
    """``version`` or ``date``."""
    value: str
    """As stated (``3.2``, ``2024-05-01``), for people."""
    rank: int
    """Orders two statements of one kind (3.10 after 3.9; a date by its day)."""
    document: str
    """The document it is a release of: file name and title without numbers (module doc)."""

    @property
    def key(self) -> str:
        """The key two releases of one document share among a claim's origins."""
        return f"{STATED}{self.kind}:{self.document}"


def stated_of(name: str, origin: str, data: bytes, text: str) -> Stated | None:
    """The version (else the date) the document states about itself, or None (module doc).
    ``name`` and ``origin`` are the source's; ``data`` its original bytes, ``text`` its
    extracted text."""
    raw = data[: HEAD_CHARS * 4].decode("utf-8", "replace")
    head = "\n".join(text[:HEAD_CHARS].splitlines()[:HEAD_LINES])
    title = _title(raw, text)
    document = _document(name, origin, title)
    if not document:
        return None
    metas = _metas(raw)
    front = _front(raw)
    version = (
        next((v for k, v in metas if k in _META_VERSION and _version_rank(v)), None)
        or next((v for k, v in front if k in _FRONT_VERSION and _version_rank(v)), None)
        or _first(_VERSION_LINE, head)
        or _title_version(title)
    )
    if version is not None:
        value = version.strip().lstrip("vV")
        rank = _version_rank(value)
        if rank:
            return Stated("version", value, rank, document)
    when = (
        next((d for k, v in metas if k in _META_DATE and (d := _date(v))), None)
        or next((d for k, v in front if k in _FRONT_DATE and (d := _date(v))), None)
        or _date(_first(_DATE_LINE, head) or "")
    )
    if when is not None:
        return Stated("date", when.isoformat(), int(when.strftime("%Y%m%d")), document)
    return None


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _metas(raw: str) -> list[tuple[str, str]]:
    out = []
    for tag in _META.findall(raw):
        attrs = {m[0].lower(): html.unescape(m[1] or m[2] or m[3]) for m in _ATTR.findall(tag)}
        key = (attrs.get("name") or attrs.get("property") or attrs.get("itemprop") or "").lower()
        if key and "content" in attrs:
            out.append((key, attrs["content"].strip()))
    return out


def _front(raw: str) -> list[tuple[str, str]]:
    match = _FRONT.match(raw)
    if match is None:
        return []
    out = []
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            out.append((key.strip().lower(), value.strip().strip("\"'")))
    return out


def _title(raw: str, text: str) -> str:
    match = _TITLE.search(raw)
    if match is not None and match.group(1).strip():
        return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", match.group(1))).split())
    for line in text[:HEAD_CHARS].splitlines():
        if line.strip() and not line.strip().startswith("---"):
            return " ".join(line.strip().lstrip("#").split())
    return ""


def _title_version(title: str) -> str | None:
    found = _TITLE_VERSION.findall(title)
    return found[0] if len(found) == 1 else None  # two numbers in a title: which is it?


def _document(name: str, origin: str, title: str) -> str:
    """File name (or last URL path segment) and title without numbers or version words."""
    path = urlsplit(origin).path if "://" in origin else origin
    base = PurePosixPath(path.replace("\\", "/")).name or name
    words = " ".join(_DROP.sub(" ", title).casefold().split())
    return f"{base.casefold()}|{words}" if base else ""


def _version_rank(value: str) -> int:
    match = re.fullmatch(r"\s*v?(\d{1,4}(?:\.\d{1,4}){0,3})\s*", value, re.I)
    if match is None:
        return 0
    parts = [int(p) for p in match.group(1).split(".")] + [0, 0, 0]
    rank = 0
    for part in parts[:4]:
        rank = rank * 10_000 + part
    return rank


def _date(value: str) -> date | None:
    value = value.strip()
    iso = re.match(r"(\d{4})[-/](\d{2})[-/](\d{2})", value)
    try:
        if iso:
            return date(int(iso[1]), int(iso[2]), int(iso[3]))
        words = re.findall(r"[A-Za-z]+|\d+", value)
        month = next((_MONTHS[m] for w in words if (m := _month(w))), None)
        numbers = [int(w) for w in words if w.isdigit()]
        years = [n for n in numbers if n >= 1000]
        days = [n for n in numbers if n < 32]
        if month and years and days:
            return date(years[0], month, days[0])
    except ValueError:
        return None
    return None


def _month(word: str) -> str | None:
    low = word.casefold()
    return next((m for m in _MONTHS if len(low) >= 3 and m.startswith(low)), None)
