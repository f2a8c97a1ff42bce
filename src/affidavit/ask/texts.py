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

from ..errors import AffidavitError
from ..store.paths import read_inside
from ..vault import Vault

MAX_CHARS = 64_000_000

_TEXTS: OrderedDict[str, str] = OrderedDict()
_CHARS = 0
_LOCK = threading.Lock()


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
