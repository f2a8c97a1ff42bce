"""The path rules (SPEC W10): every file Affidavit touches in a vault is named here, once.

Everything read from a vault — journal entries, database rows, config — is untrusted input, so no
path is ever joined from such a value directly. Paths are rebuilt from validated parts (a slug
matching :data:`SLUG`, one of the generated names, a temp name of the shape :func:`temp_name`
makes), and :func:`inside` checks that the result stays inside the vault with no symlinked
component on the way: a symlinked ``wiki/``, ``.affidavit/`` or page can't send a write (or a
read) anywhere else. Every writer (the door, recovery, rendering, the doctor, the source store)
builds its paths with these functions.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..errors import IntegrityError
from .anchor import Anchor, acting_as, open_beneath
from .atomic import TEMP_SUFFIX

SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
"""A page slug: what a plan may name and the only page name a path is built from."""
GENERATED_PAGES = ("index", "log", "context")
"""Wiki files with no page row: ``wiki/index.md``, ``wiki/log.md``, ``wiki/context.md``."""
_TEMP = re.compile(
    r"\.(?P<name>[a-z0-9][a-z0-9-]{0,63}\.md)\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX)
)
_HEX64 = re.compile(r"[0-9a-f]{64}")
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_RESTORE = (
    "The database or journal was altered: run `affidavit doctor` and restore it from a backup."
)


def is_slug(value: object) -> bool:
    return isinstance(value, str) and SLUG.fullmatch(value) is not None


def check_slug(value: object) -> str:
    """``value`` if it is a valid page slug; :class:`IntegrityError` otherwise (a slug read back
    from the database that fails this was not written by Affidavit)."""
    if not is_slug(value):
        raise IntegrityError(f"{value!r} is not a valid page slug. {_RESTORE}")
    assert isinstance(value, str)
    return value


def check_plan_id(value: object) -> str:
    if not isinstance(value, str) or _HEX64.fullmatch(value) is None:
        raise IntegrityError(f"{value!r} is not a plan id. {_RESTORE}")
    return value


def page_relpath(slug: object) -> str:
    """``wiki/<slug>.md`` for a validated slug."""
    return f"wiki/{check_slug(slug)}.md"


def wiki_name(relpath: object) -> str | None:
    """The page name of ``wiki/<name>.md`` (a slug or a generated page), or None for any other
    path: nothing outside that shape is a wiki file."""
    if not isinstance(relpath, str) or not relpath.startswith("wiki/"):
        return None
    if not relpath.endswith(".md"):
        return None
    name = relpath[len("wiki/") : -len(".md")]
    return name if name in GENERATED_PAGES or is_slug(name) else None


def check_wiki_relpath(relpath: object) -> str:
    if wiki_name(relpath) is None:
        raise IntegrityError(f"{relpath!r} is not a wiki file (wiki/<slug>.md). {_RESTORE}")
    assert isinstance(relpath, str)
    return relpath


def check_temp_relpath(temp: object, relpath: str) -> str:
    """The temp file of ``relpath``: ``wiki/.<name>.md.<12 hex>.affidavit-tmp``, beside it."""
    name = relpath.rsplit("/", 1)[-1]
    if not isinstance(temp, str) or not temp.startswith("wiki/"):
        raise IntegrityError(f"{temp!r} is not the temp file of {relpath}. {_RESTORE}")
    match = _TEMP.fullmatch(temp[len("wiki/") :])
    if match is None or match["name"] != name:
        raise IntegrityError(f"{temp!r} is not the temp file of {relpath}. {_RESTORE}")
    return temp


def _parts(relpath: str) -> tuple[str, ...]:
    if "\x00" in relpath or "\\" in relpath:
        raise IntegrityError(f"{relpath!r} is not a path inside the vault. {_RESTORE}")
    pure = PurePosixPath(relpath)
    parts = pure.parts
    if not parts or pure.is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise IntegrityError(f"{relpath!r} is not a path inside the vault. {_RESTORE}")
    return parts


def inside(
    root: Path, relpath: str, *, under: str | None = None, final_symlink_ok: bool = False
) -> Path:
    """``root / relpath`` after checking that it stays inside the vault (and inside its folder
    ``under`` when given): relative, no ``..``, and no symlink among its existing components
    (the last one may be a symlink only with ``final_symlink_ok``, for unlinking it). Raises
    :class:`IntegrityError` otherwise."""
    if not isinstance(relpath, str):
        raise IntegrityError(f"{relpath!r} is not a path inside the vault. {_RESTORE}")
    parts = _parts(relpath)
    if under is not None and (len(parts) < 2 or parts[0] != under):
        raise IntegrityError(f"{relpath!r} is not a file under {under}/. {_RESTORE}")
    real_root = os.path.realpath(root)
    current = Path(root)
    for n, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            break  # nothing further exists: nothing further can be a symlink
        last = n == len(parts) - 1
        if stat.S_ISLNK(info.st_mode) and not (last and final_symlink_ok):
            raise IntegrityError(
                f"{current} is a symlink; Affidavit never follows symlinks inside a vault. "
                "Replace it with a real file or folder (`affidavit doctor` lists them)."
            )
        if not last and not stat.S_ISDIR(info.st_mode):
            raise IntegrityError(f"{current} is not a folder. {_RESTORE}")
    parent = os.path.realpath(Path(root, *parts[:-1]))
    if parent != real_root and not parent.startswith(real_root + os.sep):
        raise IntegrityError(f"{relpath!r} leads outside the vault. {_RESTORE}")
    return Path(root, *parts)


def real_dir(path: Path) -> bool:
    """True when ``path`` is a directory and not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def open_inside(root: Path | Anchor, relpath: str, *, under: str | None = None) -> BinaryIO:
    """A vault file opened for reading without following a symlink anywhere on the way, race
    free: beneath the vault's pinned root (an :class:`~affidavit.store.anchor.Anchor`; a path
    is opened as a directory first) with :func:`~affidavit.store.anchor.open_beneath`, so a
    folder swapped for a symlink after a check, or a root renamed and replaced meanwhile, leads
    nowhere. A FIFO or device is refused without waiting on it, and a process that does not own
    the vault reads only files of its owner's (a hard link to someone else's file is not theirs
    to have read for them), opening them with the owner's file-system identity."""
    parts = _parts(relpath)
    if under is not None and (len(parts) < 2 or parts[0] != under):
        raise IntegrityError(f"{relpath!r} is not a file under {under}/. {_RESTORE}")
    if isinstance(root, Anchor):
        folder, shown, owner = root.fd, root.path / relpath, root.owner
    else:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        shown, owner = Path(root) / relpath, os.fstat(folder).st_uid
    try:
        with acting_as(owner, os.fstat(folder).st_gid):
            fd = open_beneath(folder, relpath, _FILE_FLAGS)
    except IntegrityError:
        raise IntegrityError(f"{relpath!r} leads through a symlink. {_RESTORE}") from None
    except PermissionError:
        if os.geteuid() == owner:
            raise
        raise IntegrityError(  # what its owner can't read is not read for them
            f"{shown} can't be read by the vault's owner (UID {owner}): it is not read for "
            f"that vault. {_RESTORE}"
        ) from None
    finally:
        if not isinstance(root, Anchor):
            os.close(folder)
    handle = os.fdopen(fd, "rb")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        handle.close()
        raise IntegrityError(f"{shown} is not a regular file. {_RESTORE}")
    if info.st_uid != owner and os.geteuid() != owner:
        handle.close()
        raise IntegrityError(
            f"{shown} belongs to UID {info.st_uid}, not to the vault's owner (UID "
            f"{owner}): it is not read for that vault. {_RESTORE}"
        )
    os.set_blocking(fd, True)
    return handle


def read_inside(root: Path | Anchor, relpath: str, *, under: str | None = None) -> bytes:
    """The bytes of a vault file, opened without following a symlink anywhere on the way
    (:func:`open_inside`)."""
    with open_inside(root, relpath, under=under) as handle:
        return handle.read()


__all__ = [
    "GENERATED_PAGES",
    "SLUG",
    "TEMP_SUFFIX",
    "check_plan_id",
    "check_slug",
    "check_temp_relpath",
    "check_wiki_relpath",
    "inside",
    "is_slug",
    "open_inside",
    "page_relpath",
    "read_inside",
    "real_dir",
    "wiki_name",
]
