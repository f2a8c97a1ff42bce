"""The files an agent may add: under ``mcp.source_dirs``, read with no more authority than the
vault's owner has, through one descriptor the checks were made on.

An agent names a path; the vault's owner named the directories (``mcp.source_dirs``). The path
must resolve (symlinks followed) inside one of them, with no hidden component on the way below it
(``.git``, ``.ssh``, ``.env``, a vault's ``.affidavit``), and not into this vault's own files. It is
then opened once, without following a final symlink and without blocking (a FIFO never hangs the
server), and everything else is judged on that descriptor: where it really is (a directory on the
way swapped for a symlink after the check is caught), that it is a regular file (no device, FIFO
or socket) with one name (a hard link may be the second name of a vault's database or a key) and
that it fits ``sources.max_url_bytes`` (the limit of any body an agent makes the
vault store). The bytes read from that descriptor are the source. A server that is not the
vault's owner (the daemon as root) only reads that vault, so it never reads a file for it at all
(W10): :func:`affidavit.mcp.server` refuses before this runs.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcp.server.fastmcp.exceptions import ToolError

from ..vault import Vault

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def _under(path: Path, dirs: list[str]) -> Path | None:
    """The directory of ``dirs`` that holds ``path`` (resolved), or None."""
    for root in dirs:
        base = Path(root).resolve()
        if base in path.parents:
            return base
    return None


def _judge(real: Path, location: str, dirs: list[str], vault: Vault | None) -> None:
    """Refuse ``real`` (a resolved path) unless an agent may store it."""
    base = _under(real, dirs)
    if base is None:
        raise ToolError(f"{location!r} is not a file under mcp.source_dirs ({', '.join(dirs)}).")
    hidden = [part for part in real.relative_to(base).parts if part.startswith(".")]
    if hidden:
        raise ToolError(
            f"{location!r} is inside the hidden {hidden[0]!r}: hidden files and folders are never "
            "added by an agent; give a visible file under mcp.source_dirs."
        )
    if vault is None:  # a database's vault: no files of its own on this host
        return
    vault_root = vault.root.resolve()
    private = {vault_root / "affidavit.toml", vault_root / "sources", vault_root / "wiki"}
    if real in private or any(p in real.parents for p in private):
        raise ToolError(
            f"{location!r} is one of this vault's own files (its config, stored sources or "
            "rendered pages): never evidence. Give a document from outside the vault."
        )


def read_allowed(
    location: str, dirs: list[str], vault: Vault | None, limit: int = 0
) -> tuple[bytes, Path, int]:
    """The bytes of the file ``location`` names, where it really is and its mode, or a
    ToolError naming the fix. ``dirs`` is ``mcp.source_dirs``; see the module docstring for every rule.
    ``vault`` None: a PostgreSQL database's vault, ``limit`` its ``sources.max_url_bytes``."""
    path = Path(location)
    if "\x00" in location or not path.is_absolute():
        raise ToolError("give an absolute path under one of mcp.source_dirs.")
    _judge(path.resolve(), location, dirs, vault)
    try:
        fd = os.open(path.resolve(), _FLAGS)
    except OSError as exc:
        raise ToolError(
            f"{location!r} can't be opened ({exc.strerror}); give a regular file under "
            f"mcp.source_dirs ({', '.join(dirs)})."
        ) from exc
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}")) if Path("/proc/self/fd").is_dir() else None
        if real is not None:
            _judge(real, location, dirs, vault)  # a directory swapped for a symlink meanwhile
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{location!r} is not a regular file (a directory, device or pipe).")
        if info.st_nlink > 1:  # a second name of some other file: no path says which
            raise ToolError(
                f"{location!r} is a hard link ({info.st_nlink} names), possibly to a file outside "
                "mcp.source_dirs; copy the document there instead."
            )
        limit = vault.config.max_url_bytes if vault is not None else limit
        if info.st_size > limit:
            raise ToolError(
                f"{location!r} is {info.st_size:,} bytes, over the {limit:,} an agent may add "
                "(sources.max_url_bytes); the vault's owner can add it with `affidavit sources "
                "add`."
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ToolError(f"{location!r} grew past sources.max_url_bytes while it was read.")
        return b"".join(chunks), real or path.resolve(), info.st_mode
    finally:
        os.close(fd)


__all__ = ["read_allowed"]
