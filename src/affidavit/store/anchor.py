"""A vault's root, pinned (SPEC W10): vault files are opened beneath a checked directory
descriptor, never through a path the kernel resolves again.

A process that serves a vault (above all a root daemon serving other users' vaults) opens the
vault's root once, checks it (a real directory, not a symlink, its owner recorded) and keeps the
descriptor: an :class:`Anchor`. Every vault file is then opened *beneath* it with
:func:`open_beneath` — ``openat2(2)`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
RESOLVE_NO_MAGICLINKS`` where the kernel has it (Linux 5.6+), else a walk that opens each folder
from the one before it with ``O_NOFOLLOW | O_DIRECTORY`` — so a root renamed and replaced by a
symlink to another user's vault, or a symlink in the middle of a path, leads nowhere: the
descriptor still names the directory that was checked.

SQLite opens its files by name (and resolves symlinks in that name itself), so the database is
checked around every connection instead (:meth:`Anchor.check` and :meth:`Anchor.database`: the
root's path still names the pinned directory, the database file is the inode recorded when the
vault was first opened, owned by the vault's owner), and a process running as root opens it with
the owner's file-system identity (:func:`acting_as`): whatever a race makes the name resolve to,
the kernel lets it open only what the owner could.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import IntegrityError, VaultError

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
_SYS_OPENAT2 = 437  # the same number on every architecture (a syscall added after the unification)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIBC: ctypes.CDLL | None = None
_HAVE_OPENAT2: bool | None = None  # None until the first call says whether the kernel has it


class Identity(NamedTuple):
    """Which file: its device and inode, and who owns it."""

    dev: int
    ino: int
    uid: int


def identity(info: os.stat_result) -> Identity:
    return Identity(info.st_dev, info.st_ino, info.st_uid)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL:
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.syscall.restype = ctypes.c_long
        _LIBC.setfsuid.argtypes = [ctypes.c_uint]
        _LIBC.setfsgid.argtypes = [ctypes.c_uint]
    return _LIBC


def _parts(relpath: str) -> tuple[str, ...]:
    if not isinstance(relpath, str) or "\x00" in relpath or "\\" in relpath:
        raise IntegrityError(f"{relpath!r} is not a path inside the vault.")
    pure = PurePosixPath(relpath)
    if not pure.parts or pure.is_absolute() or any(p in ("", ".", "..") for p in pure.parts):
        raise IntegrityError(f"{relpath!r} is not a path inside the vault.")
    return pure.parts


def _openat2(dirfd: int, relpath: str, flags: int, mode: int) -> int | None:
    """``openat2`` beneath ``dirfd`` with no symlink followed; None when the kernel lacks it."""
    global _HAVE_OPENAT2
    libc = _libc()
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = libc.syscall(
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(relpath)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd >= 0:
        _HAVE_OPENAT2 = True
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM) and not _HAVE_OPENAT2:  # no syscall, or a filter
        _HAVE_OPENAT2 = False
        return None
    raise OSError(code, os.strerror(code), relpath)


def _walk(dirfd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    """The same without ``openat2``: each folder opened from the one before, ``O_NOFOLLOW``."""
    folder = os.dup(dirfd)
    try:
        for part in parts[:-1]:
            step = os.open(part, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = step
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    finally:
        os.close(folder)


def open_beneath(
    dirfd: int, relpath: str, flags: int, mode: int = 0o600, *, use_openat2: bool = True
) -> int:
    """A descriptor of ``relpath`` beneath the directory ``dirfd``, reached without following a
    symlink (the last component included: ``O_NOFOLLOW``) and without leaving ``dirfd``.

    A symlink anywhere on the way is :class:`IntegrityError`, and so is a path with ``..`` or an
    absolute one; a missing file is :class:`FileNotFoundError`."""
    parts = _parts(relpath)
    flags |= os.O_NOFOLLOW
    try:
        fd = None
        if use_openat2 and _HAVE_OPENAT2 is not False:
            fd = _openat2(dirfd, "/".join(parts), flags, mode)
        return fd if fd is not None else _walk(dirfd, parts, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV) or (
            exc.errno == errno.ENOTDIR and len(parts) > 1
        ):
            raise IntegrityError(
                f"{relpath!r} leads through a symlink (or out of the vault); Affidavit never "
                "follows one inside a vault. Replace it with a real file or folder."
            ) from None
        raise


@dataclass
class Anchor:
    """A vault's root directory, opened once and checked: see the module docstring."""

    path: Path
    fd: int
    root: Identity
    database_id: Identity | None = None
    """The database file's identity, recorded the first time a connection was checked."""
    _closed: bool = field(default=False, repr=False)

    @classmethod
    def pin(cls, path: Path) -> Anchor:
        """Open ``path`` (resolved: an administrator's symlink to the vault is followed once,
        here) as a directory, from ``/`` down without following any symlink after that."""
        resolved = Path(os.path.realpath(path))
        top = os.open("/", _DIR_FLAGS)
        try:
            if resolved == Path("/"):
                fd = os.dup(top)
            else:
                fd = open_beneath(top, str(resolved)[1:], os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            raise VaultError(f"{path} does not exist.") from None
        except NotADirectoryError:
            raise VaultError(f"{path} is not a directory.") from None
        except IntegrityError:
            raise VaultError(
                f"{path} changed while it was opened (a symlink appeared on its way); refusing it."
            ) from None
        finally:
            os.close(top)
        return cls(resolved, fd, identity(os.fstat(fd)))

    @property
    def owner(self) -> int:
        return self.root.uid

    def check(self) -> None:
        """Refuse (:class:`VaultError`) when the root's path no longer names the pinned directory
        (renamed, replaced by a symlink or another directory) or the directory changed owner."""
        now = identity(os.fstat(self.fd))
        try:
            seen = os.lstat(self.path)
        except OSError:
            seen = None
        if now != self.root or seen is None or identity(seen) != self.root:
            what = (
                "is gone"
                if seen is None
                else "is now a symlink"
                if stat.S_ISLNK(seen.st_mode)
                else "names another directory"
                if identity(seen)[:2] != self.root[:2]
                else "changed owner"
            )
            raise VaultError(
                f"the vault at {self.path} {what} since this process opened it: it is not "
                "served any more. If the move was the owner's own, restart the daemon."
            )

    def open(self, relpath: str, flags: int, mode: int = 0o600) -> int:
        """A descriptor of a vault file (:func:`open_beneath` the pinned root)."""
        return open_beneath(self.fd, relpath, flags, mode)

    def stat(self, relpath: str) -> os.stat_result:
        """The status of a vault file reached beneath the root (a final symlink is reported as
        one, never followed)."""
        fd = open_beneath(self.fd, relpath, os.O_PATH)
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def database(self, relpath: str) -> Identity:
        """The identity of the database file ``relpath``, checked: a regular file (not a link)
        owned by the vault's owner and, once recorded, the same inode every time."""
        try:
            info = self.stat(relpath)
        except (IntegrityError, OSError) as exc:
            raise VaultError(
                f"{self.path / relpath} can't be opened beneath the vault's root ({exc}); "
                "refusing it."
            ) from None
        found = identity(info)
        if not stat.S_ISREG(info.st_mode) or found.uid != self.owner:
            raise VaultError(
                f"{self.path / relpath} is not a file of the vault's owner's own (a link, another "
                "user's file or not a regular file); refusing it."
            )
        if self.database_id is None:
            self.database_id = found
        elif found != self.database_id:
            raise VaultError(
                f"{self.path / relpath} is not the database this process opened (another file "
                "was put in its place); refusing it. If the owner restored it, restart the daemon."
            )
        return found

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.fd)


class _Depth(threading.local):
    depth = 0


_FS_LOCK = _Depth()


@contextmanager
def acting_as(uid: int, gid: int) -> Iterator[None]:
    """Run the block with this thread's file-system identity set to ``uid``/``gid`` (Linux
    ``setfsuid``, per thread; root's capabilities over files are dropped meanwhile) when this
    process runs as root for another user's vault; a no-op otherwise. Nested calls keep the
    outer identity."""
    if os.geteuid() != 0 or uid == 0 or _FS_LOCK.depth:
        yield
        return
    libc = _libc()
    old_gid = libc.setfsgid(gid)
    old_uid = libc.setfsuid(uid)
    _FS_LOCK.depth = 1
    try:
        if libc.setfsuid(0xFFFFFFFF) != uid:  # -1 asks; the kernel refused: do nothing as root
            raise VaultError(f"could not take the file-system identity of UID {uid}.")
        yield
    finally:
        _FS_LOCK.depth = 0
        libc.setfsuid(old_uid)
        libc.setfsgid(old_gid)


__all__ = ["Anchor", "Identity", "acting_as", "identity", "open_beneath"]
