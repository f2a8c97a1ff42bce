"""A file moved *and* edited while nobody watched (issue 27): the same document, by its text.

A move alone is found by the bytes (:func:`affidavit.sources.lineage.moved_here`): the same
bytes at another path. A file moved and then edited before the watch saw either has other bytes
at its new path; by bytes it is a deletion and a new document. On a watch's restart (and in any
pass of the watch or ``ingest DIR`` where a known file vanished and an unknown one appeared),
:func:`follow_renamed` compares the text of each vanished origin's current version with the
text of each file that appeared — word shingles (:data:`SHINGLE` words in a row) in common,
Jaccard — and pairs a vanished file with an appeared one when their similarity is at least
:data:`RENAMED` and each is the other's **only** candidate at that level: the versions follow
the file (:func:`~affidavit.sources.lineage.follow_move`, audit ``source_moved``), so the new
bytes are ingested as its next version (claims carried, what changed proposed). Anything else —
an unrelated file, a vanished file two appeared files both resemble, or one file two vanished
files resemble — is no guess: deletion proposals and new documents, as without this.

Only the files the caller looked at are candidates: the watch's are its folder's files that its
ignore rules keep (``.gitignore``, ``.affidavitignore``), so a file moved under an ignored path
pairs with nothing. A candidate whose bytes are already stored, or whose path already has
versions of its own, is not a rename (a copy, or another document). Nothing here writes the
wiki: the move is a re-keying of origins under the vault's write lock; the rest goes through
the one door as any new version does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..clock import iso
from ..errors import AffidavitError
from ..hashing import sha256_hex
from ..sources.extract import MARKDOWN, PLAIN, extract, file_media_type
from ..sources.lineage import current_version, follow_move, origin_key
from ..sources.store import SourceStore
from ..vault import Vault

__all__ = ["RENAMED", "SHINGLE", "follow_renamed", "pair_renamed", "shingles", "similarity"]

SHINGLE = 4
"""Words in a row per shingle."""
RENAMED = 0.5
"""Shingle similarity (Jaccard) from which a vanished file and an appeared one are the same
document moved and edited. Editing 10 % of a document's sentences leaves about 0.8; 30 %
about 0.5; two different State of the Union addresses share under 0.05. Set before any
measurement."""
MAX_CANDIDATE_BYTES = 20_000_000
"""An appeared file larger than this is not read for pairing (a new document, as before)."""

_WORD = re.compile(r"\w+")


def shingles(text: str) -> set[int]:
    """The hashed shingles of ``text`` (:data:`SHINGLE` lower-cased words in a row; its words
    alone when it has fewer)."""
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) < SHINGLE:
        return {hash(w) for w in words}
    return {hash(tuple(words[i : i + SHINGLE])) for i in range(len(words) - SHINGLE + 1)}


def similarity(a: set[int], b: set[int]) -> float:
    """Jaccard similarity of two shingle sets (0 when both are empty)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    common = len(small & large)
    return common / (len(a) + len(b) - common) if large else 0.0


def _may_reach(a: set[int], b: set[int]) -> bool:
    """Whether sets of these sizes can be :data:`RENAMED` similar (Jaccard is at most the
    smaller size over the larger)."""
    return min(len(a), len(b)) >= RENAMED * max(len(a), len(b))


def pair_renamed(
    vault: Vault, vanished: Sequence[Path], appeared: Sequence[Path]
) -> list[tuple[Path, Path]]:
    """``(vanished, appeared)`` pairs that are one document moved and edited (see the module
    doc); every other path is left out."""
    store = SourceStore(vault)
    old: dict[Path, set[int]] = {}
    for path in vanished:
        latest = current_version(vault.db, origin_key(path))
        if latest is None or Path(origin_key(path)).exists():
            continue
        record = store.get(latest[0])
        if record.status == "active":
            old[path] = shingles(store.text(record.id))
    if not old:
        return []
    new: dict[Path, set[int]] = {}
    for path in appeared:
        text = _new_text(vault, store, path)
        if text is not None:
            new[path] = shingles(text)
    candidates: dict[Path, list[Path]] = {}
    claimed: dict[Path, list[Path]] = {}
    for gone, before in old.items():
        for found, after in new.items():
            if _may_reach(before, after) and similarity(before, after) >= RENAMED:
                candidates.setdefault(gone, []).append(found)
                claimed.setdefault(found, []).append(gone)
    return sorted(
        (gone, found[0])
        for gone, found in candidates.items()
        if len(found) == 1 and len(claimed[found[0]]) == 1
    )


def _new_text(vault: Vault, store: SourceStore, path: Path) -> str | None:
    """The text of an appeared file that could be a renamed one: an unknown path holding bytes
    not stored yet (None otherwise, or when it can't be read as a source)."""
    if current_version(vault.db, origin_key(path)) is not None:
        return None  # a path with versions of its own: another document
    try:
        if path.stat().st_size > MAX_CANDIDATE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if store.resolve(sha256_hex(data)) is not None:  # stored bytes: a copy or a plain move
        return None
    media_type = file_media_type(path.name, path, data)
    if media_type in (MARKDOWN, PLAIN):  # its words are its text: no extraction to compare
        return data.decode("utf-8", errors="replace")
    try:
        return extract(data, media_type, render=False).text
    except AffidavitError:
        return None


def follow_renamed(
    vault: Vault, vanished: Sequence[Path], appeared: Sequence[Path], actor: str
) -> list[tuple[Path, Path]]:
    """Pair vanished and appeared files (:func:`pair_renamed`) and make each pair a move: the
    vanished origin's versions follow the file, whose new bytes then ingest as its next
    version. Returns the pairs moved."""
    if not vanished or not appeared:
        return []
    moved = []
    for gone, found in pair_renamed(vault, vanished, appeared):
        with vault.write_lock():
            if follow_move(vault.db, gone, found, iso(vault.clock()), actor):
                moved.append((gone, found))
    return moved
