"""Private stays private (SPEC W10: a vault's private parts are its owner's alone).

A vault is its owner's alone by default: ``affidavit init`` makes its folder ``0700`` whatever the
umask. ``affidavit init --shared-group GROUP`` (the setting ``privacy.shared_group``) shares it
with one group instead: the folder, ``wiki/`` and ``sources/`` become ``2750`` owned by that
group, so its members read the pages and the sources they could read anyway. Either way:

- ``.affidavit/`` (database, journal, caches) and ``.git/`` (the history: every source's bytes)
  are the owner's alone (``0700``), and git writes its objects ``0400`` (libgit2's loose-object
  mode and ``core.sharedRepository = 0600`` for the git command);
- a stored source and its extracted text keep no more permission than the original file had:
  ``0400``, or ``0440`` in a shared vault when the original was readable beyond its owner (a
  fetched URL counts as such); the same bytes added again from a more private file make the
  stored copies private;
- ``affidavit doctor`` reports what another user could read (:func:`exposures`), with the fix.
"""

from __future__ import annotations

import grp
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

PRIVATE_ROOT = 0o700
SHARED_DIR = 0o2750
OWNER_ONLY = (".affidavit", ".git")
"""The parts of a vault no one but its owner reads, whatever the vault shares."""
SOURCE_PRIVATE = 0o400
SOURCE_SHARED = 0o440
GIT_FILE_MODE = 0o400
GIT_DIR_MODE = 0o700
GIT_SHARED_REPOSITORY = "0600"
EXAMPLES = 3


def group_id(name: str) -> int:
    """The id of group ``name`` (a ConfigError naming the fix when there is none)."""
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        raise ConfigError(
            f"there is no group {name!r} on this machine (privacy.shared_group). Create it "
            "(`groupadd`), or give one of yours (`id -Gn` lists them)."
        ) from None


def shared_gid(configured: str) -> int | None:
    """The group a vault is shared with (``privacy.shared_group``), or None for a private one."""
    return group_id(configured) if configured else None


def source_mode(shared: bool, original: int | None) -> int:
    """The mode of a stored source and its text: never more than the original's (``original``:
    its mode, None for bytes with no file, e.g. a fetched URL)."""
    if not shared:
        return SOURCE_PRIVATE
    beyond_owner = original is None or bool(original & (stat.S_IRGRP | stat.S_IROTH))
    return SOURCE_SHARED if beyond_owner else SOURCE_PRIVATE


def tighten(path: Path, mode: int) -> None:
    """Make a stored file no more readable than ``mode`` (a copy already there may be more)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    current = stat.S_IMODE(info.st_mode)
    if stat.S_ISREG(info.st_mode) and current & ~mode:
        os.chmod(path, (current & mode) | stat.S_IRUSR)


def make_private(root: Path) -> None:
    """The vault's folder, and its owner-only parts, the owner's alone."""
    os.chmod(root, PRIVATE_ROOT)
    for part in OWNER_ONLY:
        if (root / part).is_dir() and not (root / part).is_symlink():
            os.chmod(root / part, 0o700)


def share_with(root: Path, gid: int, folders: tuple[str, ...] = ("wiki", "sources")) -> None:
    """Share the vault's folder, ``wiki/`` and ``sources/`` with group ``gid`` (read only); its
    owner-only parts stay the owner's."""
    for path in (root, *(root / f for f in folders)):
        try:
            os.chown(path, -1, gid, follow_symlinks=False)
        except PermissionError:
            raise ConfigError(
                f"you can't give {path} to group {gid}: you are not a member of it. Give a group "
                "you belong to (`id -Gn` lists them)."
            ) from None
        os.chmod(path, SHARED_DIR)
    for part in OWNER_ONLY:
        if (root / part).is_dir() and not (root / part).is_symlink():
            os.chmod(root / part, 0o700)


@dataclass(frozen=True)
class Exposure:
    """Files of a vault some other users could read: who, how many, examples, and the fix."""

    who: str
    """Who could read them, in words (other users; a group; the vault's shared group)."""
    gate: str
    """The vault-relative folder that lets them in ('' for the vault's folder itself)."""
    mode: int
    count: int
    examples: tuple[str, ...]
    fix: str


_OTHERS, _GROUP, _SHARED = "other users", "a group", "the vault's shared group"


def _passes(info: os.stat_result, allowed_gid: int | None) -> set[str]:
    """Who besides the owner may enter (a folder) or read (a file) this entry, by its mode."""
    bits = stat.S_IMODE(info.st_mode)
    folder = stat.S_ISDIR(info.st_mode)
    out = {_OTHERS} if bits & (stat.S_IXOTH if folder else stat.S_IROTH) else set()
    if bits & (stat.S_IXGRP if folder else stat.S_IRGRP):
        out.add(_SHARED if info.st_gid == allowed_gid else _GROUP)
    return out


def exposures(root: Path, allowed_gid: int | None) -> list[Exposure]:
    """Who can reach and read which files of the vault at ``root``, through folders that let
    them in and files whose mode lets them read: other users, a group (the files' own, when the
    vault is not shared with it) and — inside ``.affidavit/`` and ``.git/`` only — the group the
    vault is shared with (``allowed_gid``). One :class:`Exposure` per folder that opens the way,
    naming everyone it lets in. Symlinks are not followed."""
    found: dict[str, dict[str, set[str] | list[str] | int]] = {}

    def note(gate: str, who: set[str], relpath: str) -> None:
        entry = found.setdefault(gate, {"who": set(), "count": 0, "examples": []})
        who_seen, examples = entry["who"], entry["examples"]
        assert isinstance(who_seen, set) and isinstance(examples, list)
        who_seen |= who
        entry["count"] = int(str(entry["count"])) + 1
        if len(examples) < EXAMPLES:
            examples.append(relpath)

    def walk(path: Path, relpath: str, reach: dict[str, str]) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(info.st_mode):
            return
        passes = _passes(info, allowed_gid)
        if stat.S_ISDIR(info.st_mode):
            reach = {who: gate for who, gate in reach.items() if who in passes}
            if not reach:
                return
            try:
                names = sorted(os.listdir(path))
            except OSError:
                return
            for name in names:
                child = f"{relpath}/{name}" if relpath else name
                # the vault's folder lets everyone in it lets in; for its own group, what
                # matters is the private part (.git/, .affidavit/) that lets it in too
                here = {w: (child if w == _SHARED and not relpath else g) for w, g in reach.items()}
                walk(path / name, child, here)
            return
        private = relpath.split("/", 1)[0] in OWNER_ONLY
        who = {w for w in passes if w in reach and (w != _SHARED or private)}
        for gate in {reach[w] for w in who}:
            note(gate, {w for w in who if reach[w] == gate}, relpath)

    walk(root, "", {_OTHERS: "", _GROUP: "", _SHARED: ""})
    out = []
    for gate, entry in sorted(found.items()):
        where = root / gate if gate else root
        who = entry["who"]
        examples = entry["examples"]
        assert isinstance(who, set) and isinstance(examples, list)
        drop = ("g" if who & {_GROUP, _SHARED} else "") + ("o" if _OTHERS in who else "")
        private_root = not gate and allowed_gid is None
        out.append(
            Exposure(
                who=" and ".join(sorted(who)),
                gate=gate,
                mode=stat.S_IMODE(os.lstat(where).st_mode),
                count=int(str(entry["count"])),
                examples=tuple(str(e) for e in examples),
                fix=f"chmod 700 {root}" if private_root else f"chmod {drop}-rwx {where}",
            )
        )
    return out


__all__ = [
    "EXAMPLES",
    "GIT_DIR_MODE",
    "GIT_FILE_MODE",
    "GIT_SHARED_REPOSITORY",
    "OWNER_ONLY",
    "Exposure",
    "exposures",
    "group_id",
    "make_private",
    "share_with",
    "shared_gid",
    "source_mode",
    "tighten",
]
