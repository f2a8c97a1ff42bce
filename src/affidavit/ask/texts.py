"""The sources' texts an answer's quotes are cut from, read once per process.

A source's stored text never changes: its row names it by its SHA-256 (``text_sha256``). The
daemon answered each question by opening every cited source's file again (through
:func:`~affidavit.store.paths.open_inside`, a few system calls per path component); here a text
read once, and found to hash to its row's ``text_sha256``, is kept under that hash and served
from memory afterwards (at most :data:`MAX_CHARS` characters, least recently used out first).

A file that no longer matches its hash (changed by hand: doctor reports it) is read as it is,
each time, as :meth:`~affidavit.sources.store.SourceStore.text` would, and never kept; a text
kept earlier is the one the hash names, so a later change of the file can't alter what a kept
text shows. A source whose file can't be read is left out (the caller shows the stored quote).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Protocol

from ..errors import AffidavitError
from ..retrieval.search import EvidenceRef, Hit
from ..store.paths import read_inside
from ..vault import Vault

MAX_CHARS = 64_000_000

_TEXTS: OrderedDict[str, str] = OrderedDict()
_CHARS = 0
_LOCK = threading.Lock()


class TextReads(Protocol):
    """The sources' texts and sanitizer flags an answer's quotes and titles are read from."""

    def source_texts(self, source_ids: list[str]) -> dict[str, str]:
        """The stored texts of ``source_ids`` that can be read, by source id."""

    def flagged(self, source_id: str, start: int, end: int) -> bool:
        """A sanitizer flag of ``source_id`` overlaps ``[start, end)``."""


def source_texts(vault: Vault, source_ids: list[str]) -> dict[str, str]:
    """The stored texts of ``source_ids`` (one query for their rows), by source id."""
    if not source_ids:
        return {}
    marks = ",".join("?" * len(source_ids))
    rows = vault.db.execute(
        f"SELECT id, text_file, text_sha256 FROM sources WHERE id IN ({marks})", source_ids
    ).fetchall()
    out: dict[str, str] = {}
    for source_id, text_file, digest in rows:
        text = _kept(digest)
        if text is None:
            text = _read(vault, text_file, digest)
        if text is not None:
            out[source_id] = text
    return out


def kept(digest: str) -> str | None:
    """The text kept under its SHA-256 ``digest``, if any (a backend that reads and verifies a
    text itself keeps it with :func:`keep`)."""
    return _kept(digest)


def keep(digest: str, text: str) -> None:
    """Keep ``text``, which its caller found to hash to ``digest``."""
    _keep(digest, text)


def _kept(digest: str) -> str | None:
    with _LOCK:
        text = _TEXTS.get(digest)
        if text is not None:
            _TEXTS.move_to_end(digest)
        return text


def _read(vault: Vault, text_file: str, digest: str) -> str | None:
    try:
        data = read_inside(vault.base, text_file, under="sources")
    except (OSError, AffidavitError):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if hashlib.sha256(data).hexdigest() == digest:
        _keep(digest, text)
    return text


def _keep(digest: str, text: str) -> None:
    global _CHARS
    if len(text) > MAX_CHARS:
        return
    with _LOCK:
        if digest in _TEXTS:
            return
        _TEXTS[digest] = text
        _CHARS += len(text)
        while _CHARS > MAX_CHARS:
            _, old = _TEXTS.popitem(last=False)
            _CHARS -= len(old)


def forget() -> None:
    """Drop every kept text (tests)."""
    global _CHARS
    with _LOCK:
        _TEXTS.clear()
        _CHARS = 0


def title_spans(reads: TextReads, hits: list[Hit]) -> dict[str, EvidenceRef]:
    """For each hit whose page title stands in the text of its first quote's source (the
    source's own heading, "# State of the Union, 1823: James Monroe"), that title as evidence:
    the source's own words at the offsets the host found, never the page row's string. A title
    taken from a file name, not in the source's text, or where the sanitizer flagged the text
    (hidden text, planted instructions: W12), has none."""
    firsts = {h.claim_id: h.evidence[0] for h in hits if h.evidence and h.page_title.strip()}
    texts = reads.source_texts(list(dict.fromkeys(e.source_id for e in firsts.values())))
    out: dict[str, EvidenceRef] = {}
    for hit in hits:
        ref = firsts.get(hit.claim_id)
        text = texts.get(ref.source_id) if ref is not None else None
        if ref is None or text is None:
            continue
        title = hit.page_title.strip()
        at = text.find(title)
        if at < 0 or reads.flagged(ref.source_id, at, at + len(title)):
            continue
        line = text.count("\n", 0, at) + 1
        out[hit.claim_id] = EvidenceRef(
            ref.source_id,
            ref.source_name,
            text[at : at + len(title)],
            f"line {line}",
            at,
            at + len(title),
        )
    return out


def flagged(vault: Vault, source_id: str, start: int, end: int) -> bool:
    """A sanitizer flag of ``source_id`` overlaps ``[start, end)``."""
    row = vault.db.execute(
        'SELECT 1 FROM source_flags WHERE source_id = ? AND start < ? AND "end" > ? LIMIT 1',
        (source_id, end, start),
    ).fetchone()
    return row is not None
