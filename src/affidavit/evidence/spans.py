"""``evidence_span``: a quote is the source's own words at its offsets, computed, not stored.

Since migration ``m021_lean_evidence`` the database keeps each piece of evidence as offsets into
its source's stored text (``evidence_rows``); the ``evidence`` view computes its ``quote`` column
with the SQL function ``evidence_span(text_file, text_sha256, start, end, crc)``, which this module
registers on every connection the code opens (:func:`affidavit.db.connect`,
:func:`affidavit.vault.connect_pinned`, :func:`affidavit.vault.connect_read_only`).

The function returns ``text[start:end]`` of the source's text whose SHA-256 is the recorded
``text_sha256`` (W3: the words the gate verified, never a proposer's string), and NULL when that
text can't be had — its file missing, altered, or the offsets outside it — or the span's CRC-32
is not the one recorded when it was written (offsets edited in ``evidence_rows``): the view shows
:data:`UNREADABLE`, which no surface can take for a source's words and no quote check verifies
(``affidavit doctor`` reports such evidence as unreadable, saying why). Texts are read once (through
:func:`~affidavit.store.paths.read_inside`: no symlink, inside ``sources/``), hashed, and kept in
a cache bounded by characters (:data:`CACHE_CHARS`), not by entries: one large source must not
pin gigabytes, many small ones must not be re-read for every row.

A bare ``sqlite3`` connection (the ``sqlite3`` shell, a script) lacks the function: reading
``evidence.quote`` there fails with ``no such function: evidence_span`` — :data:`MISSING`
says what to do instead.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AffidavitError
from ..store.paths import read_inside
from .verify import cached_text

if TYPE_CHECKING:
    from ..store.anchor import Anchor

FUNCTION = "evidence_span"
UNREADABLE = "[evidence can't be shown: its source or offsets changed; run affidavit doctor]"
"""What the ``evidence`` view shows as the quote when ``evidence_span`` has no text (the same
literal is in the view's definition, migration ``m021_lean_evidence``)."""
CACHE_CHARS = 64 * 1024 * 1024
"""Characters of source text the cache keeps at most (all connections of the process)."""
MISSING = (
    "this connection lacks the SQL function evidence_span, which computes evidence.quote from "
    "the source's text (quotes are not stored since migration m021_lean_evidence): open the "
    "vault with affidavit (affidavit.db.connect / affidavit.vault.open_vault), or read offsets "
    "from evidence_rows and source_keys, and the text from sources/<id>.extracted.txt"
)

_LOCK = threading.Lock()
_TEXTS: OrderedDict[str, str] = OrderedDict()
_held = 0


def _remember(key: str, text: str) -> None:
    global _held
    if len(text) > CACHE_CHARS:
        return
    with _LOCK:
        if key in _TEXTS:
            _TEXTS.move_to_end(key)
            return
        _TEXTS[key] = text
        _held += len(text)
        while _held > CACHE_CHARS and _TEXTS:
            _, dropped = _TEXTS.popitem(last=False)
            _held -= len(dropped)


def cached_chars() -> int:
    """How many characters of source text the cache holds now."""
    return _held


def clear_cache() -> None:
    """Forget every cached text (tests; a process that wants its memory back)."""
    global _held
    with _LOCK:
        _TEXTS.clear()
        _held = 0


def verified_text(base: Path | Anchor, text_file: str, text_sha256: str) -> str | None:
    """The source text whose SHA-256 is ``text_sha256``, read from ``text_file`` (relative to the
    vault, under ``sources/``) unless cached; None when the file is missing, unreadable or
    holds other bytes."""
    with _LOCK:
        known = _TEXTS.get(text_sha256)
        if known is not None:
            _TEXTS.move_to_end(text_sha256)
            return known
    shared = cached_text(text_sha256)  # the verifier's copy: its digest was checked
    if shared is not None:
        _remember(text_sha256, shared)
        return shared
    try:
        data = read_inside(base, text_file, under="sources")
    except (OSError, AffidavitError):  # missing, a link, outside sources/: not the text
        return None
    if hashlib.sha256(data).hexdigest() != text_sha256:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    _remember(text_sha256, text)
    return text


NOT_CACHED = object()
"""What :func:`cached_span` returns when the text is not in the cache (ask SQLite instead)."""


def cached_span(text_sha256: str, start: int, end: int, crc: int | None) -> object:
    """``evidence_span`` of a text already in the cache, without a call from SQLite: the span
    (the same string the SQL function gives), None where it gives NULL (offsets outside the
    text, a CRC that differs), or :data:`NOT_CACHED` when the text is not cached (the caller
    asks the connection's ``evidence_span``, which reads and verifies the file). A cached text
    is the one whose SHA-256 is ``text_sha256``, so its spans are the function's answer."""
    with _LOCK:
        text = _TEXTS.get(text_sha256)
        if text is None:
            return NOT_CACHED
        _TEXTS.move_to_end(text_sha256)
    if not 0 <= start <= end <= len(text):
        return None
    span = text[start:end]
    if crc is not None and crc != checksum(span):
        return None
    return span


def register(db: sqlite3.Connection, base: Path | Anchor | None) -> None:
    """Give ``db`` the functions ``evidence_span`` (reading the texts of the vault at ``base``;
    None: no text) and ``evidence_crc``."""

    def evidence_span(
        text_file: object, text_sha256: object, start: object, end: object, crc: object
    ) -> str | None:
        if not (
            isinstance(text_file, str)
            and isinstance(text_sha256, str)
            and isinstance(start, int)
            and isinstance(end, int)
        ):
            return None
        text = None if base is None else verified_text(base, text_file, text_sha256)
        if text is None or not 0 <= start <= end <= len(text):
            return None
        span = text[start:end]
        if crc is not None and crc != checksum(span):
            return None  # offsets edited since the span was written
        return span

    db.create_function(FUNCTION, 5, evidence_span)
    db.create_function("evidence_crc", 1, _crc, deterministic=True)


def checksum(span: str) -> int:
    """The CRC-32 of a span's UTF-8, as ``evidence_rows.crc`` records it."""
    return zlib.crc32(span.encode("utf-8", "surrogatepass"))


def _crc(text: object) -> int | None:
    return checksum(text) if isinstance(text, str) else None


def ensure_functions(db: sqlite3.Connection) -> None:
    """Give ``db`` the functions if it lacks them, reading no text (every span NULL): an
    in-memory database migrated by tests, a tool that only writes other tables."""
    try:
        db.execute("SELECT evidence_crc('')").fetchone()
    except sqlite3.OperationalError:
        register(db, None)


def lacks_function(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying the connection has no ``evidence_span``."""
    return isinstance(exc, sqlite3.OperationalError) and f"no such function: {FUNCTION}" in str(exc)


__all__ = [
    "CACHE_CHARS",
    "FUNCTION",
    "MISSING",
    "NOT_CACHED",
    "UNREADABLE",
    "cached_chars",
    "cached_span",
    "checksum",
    "clear_cache",
    "ensure_functions",
    "lacks_function",
    "register",
    "verified_text",
]
