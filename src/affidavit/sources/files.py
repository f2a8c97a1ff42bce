"""The stored files of sources (``sources/<id>.<ext>`` and ``sources/<id>.extracted.txt``): their
SHA-256 without re-reading an unchanged file, their status stamps, and read-only writes with the
mode :func:`affidavit.privacy.source_mode` gives them. Every read goes beneath the vault's pinned
root when the vault has one (:mod:`affidavit.store.anchor`)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from collections import OrderedDict
from pathlib import Path, PurePosixPath

from ..errors import AffidavitError
from ..hashing import sha256_file
from ..store.anchor import Anchor
from ..store.atomic import atomic_write, fsync_dir, temp_path, write_all_synced
from ..store.paths import open_inside

_DIGESTS: OrderedDict[tuple[str, str], tuple[tuple[str, ...], int, tuple[int, ...], str]] = (
    OrderedDict()
)
"""(vault root, relative path) -> (its parts, the vault's owner, the file's identity, SHA-256)
of the files :func:`file_sha256` hashed once they had not changed for 2 s."""
_DIGESTS_LOCK = threading.Lock()
_SETTLED_NS = 2_000_000_000


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _root_of(base: Anchor | Path) -> Path:
    return base.path if isinstance(base, Anchor) else base


def _owner_of(base: Anchor | Path) -> int:
    return base.owner if isinstance(base, Anchor) else os.stat(base).st_uid


def _lstat(base: Anchor | Path, relpath: str) -> os.stat_result:
    """A vault file's status: beneath the pinned root (no symlink followed on the way), or by
    path with every folder on the way checked to be a real folder."""
    if isinstance(base, Anchor):
        return base.stat(relpath)
    current = str(base)
    parts = PurePosixPath(relpath).parts
    for part in parts[:-1]:
        current = os.path.join(current, part)
        if not stat.S_ISDIR(os.lstat(current).st_mode):
            raise NotADirectoryError(current)
    return os.lstat(os.path.join(current, parts[-1]))


def _as_hashed(base: Anchor | Path, relpath: str) -> str | None:
    """The SHA-256 :func:`file_sha256` found for this file, if it is still the file it hashed:
    the same vault owner, every folder on the way still a real folder (not a symlink), and the
    file the same inode with the same size, mtime and ctime. A ``stat`` or three instead of
    opening the file folder by folder; None (then it is opened and checked in full) otherwise."""
    with _DIGESTS_LOCK:
        known = _DIGESTS.get((str(_root_of(base)), relpath))
    if known is None:
        return None
    _parts, owner, identity, digest = known
    try:
        if _owner_of(base) != owner:
            return None
        info = _lstat(base, relpath)
    except (OSError, AffidavitError):
        return None
    if not stat.S_ISREG(info.st_mode) or _identity(info) != identity:
        return None
    return digest


def file_sha256(root: Anchor | Path, relpath: str) -> str:
    """SHA-256 of a vault file (opened by :func:`~affidavit.store.paths.open_inside`: no symlink,
    FIFO or other user's file), remembered per file once it has not changed for 2 s: every write
    or chmod moves the ctime, which no caller can set back, so an unchanged status (same inode,
    size, mtime and ctime, reached through the same real folders) means unchanged bytes, and the
    gate does not open and hash a source per plan (:func:`_as_hashed`). A file changed less than
    2 s before it is read may change again within the same timestamp tick (1 ns to 2 s, by file
    system) without a new status, so it is hashed every time until then."""
    known = _as_hashed(root, relpath)
    if known is not None:
        return known
    owner = _owner_of(root)
    with open_inside(root, relpath, under="sources") as handle:
        info = os.fstat(handle.fileno())
        started = time.time_ns()
        digest = hashlib.sha256()
        while block := handle.read(1 << 20):
            digest.update(block)
    value = digest.hexdigest()
    if started - info.st_ctime_ns > _SETTLED_NS and _owner_of(root) == owner:
        entry = (PurePosixPath(relpath).parts, owner, _identity(info), value)
        key = (str(_root_of(root)), relpath)
        with _DIGESTS_LOCK:
            _DIGESTS[key] = entry
            _DIGESTS.move_to_end(key)
            while len(_DIGESTS) > 4096:
                _DIGESTS.popitem(last=False)
    return value


Stamp = tuple[str, tuple[int, int, int, int]]


def file_stamp(base: Anchor | Path, relpath: str) -> Stamp | None:
    try:
        info = _lstat(base, relpath)
    except (OSError, AffidavitError):
        return None
    return relpath, (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def keep_readonly(path: Path, mode: int) -> None:
    """An intact stored file kept: read-only, and no more readable than ``mode``."""
    current = stat.S_IMODE(os.lstat(path).st_mode)
    os.chmod(path, (current & mode) | stat.S_IRUSR)


def write_readonly_all(files: list[tuple[Path, bytes, str, int]], directory: Path) -> None:
    """Write read-only files (path, bytes, SHA-256, mode) atomically in one pass: temp files
    written and fsynced in parallel, renamed, one fsync of ``directory``. An intact file already
    there (an interrupted add's) is kept, no more readable than its mode."""
    todo = []
    for path, data, digest, mode in files:
        if path.is_file() and sha256_file(str(path)) == digest:
            keep_readonly(path, mode)
        else:
            todo.append((path, temp_path(path), data, mode))
    if not todo:
        return
    try:
        write_all_synced([(temp, data, mode) for _, temp, data, mode in todo])
        for path, temp, _, mode in todo:
            os.replace(temp, path)
            os.chmod(path, mode)
    finally:
        for _, temp, _, _ in todo:
            temp.unlink(missing_ok=True)
    fsync_dir(directory)


def write_readonly(path: Path, data: bytes, mode: int = 0o400) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`~affidavit.store.atomic.atomic_write`) and
    make it read-only with ``mode`` (a source's: :func:`affidavit.privacy.source_mode`)."""
    atomic_write(path, data, mode=mode)
    os.chmod(path, mode)


__all__ = [
    "Stamp",
    "file_sha256",
    "file_stamp",
    "keep_readonly",
    "write_readonly",
    "write_readonly_all",
]
