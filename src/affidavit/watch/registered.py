"""The folders a daemon follows for a vault: registered in the vault's database (``watches``,
migration m024), so they resume whenever a daemon serving the vault starts.

``affidavit watch add DIR`` (or ``POST /v1/vaults/{vault}/watches``) registers a folder,
resolved once: the path stored is the folder's real path. From then on the folder is checked
again on every change and before every job (:func:`refusal`): if any part of its path has become
a symbolic link (a folder swapped for a link to somewhere else), or it is gone, the watch is
*refused* — no job is queued for it, and the job already queued reads nothing — until it is
added again. Files inside it that are symbolic links leading out of it are never read
(:class:`~affidavit.watch.watcher.Watcher` with ``confined``).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..clock import iso
from ..db import transaction
from ..errors import NotFoundError
from ..jobs.payloads import ModelName, TrustTier
from ..vault import Vault
from .watcher import WatchError

WatchStatus = Literal["watching", "refused"]


class WatchCreate(BaseModel):
    """A folder for the daemon to follow (the request body of ``POST …/watches``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    folder: Annotated[str, Field(min_length=2, max_length=4096)] = Field(
        description="The folder's absolute path; stored resolved (its real path)."
    )
    trust: TrustTier | None = Field(
        default=None, description="Trust tier of the sources found (default: the config's rules)."
    )
    model: ModelName | None = Field(
        default=None, description="Provider instead of model.provider from affidavit.toml."
    )


class WatchInfo(BaseModel):
    """A folder the daemon follows, as ``affidavit watch list --json`` shows it."""

    id: str
    folder: str
    trust: TrustTier | None
    model: ModelName | None
    status: WatchStatus = Field(
        description="watching, or refused (error says why; `affidavit watch add` it again)."
    )
    error: str
    created_at: str
    created_by: str
    last_job: str | None = Field(description="The newest job this watch queued.")
    last_queued_at: str | None


def actor_of(watch_id: str) -> str:
    """The ``requested_by`` of the jobs a watch queues (``affidavit jobs`` shows it)."""
    return f"watch:{watch_id}"


def refusal(folder: str, vault: Vault | None = None) -> str | None:
    """Why the daemon must not read ``folder`` now (None: it may). ``folder`` is the path stored
    when the watch was added, already resolved; it is resolved again here, so a folder (or any
    folder above it) replaced by a symbolic link since is refused, wherever the link leads."""
    if not folder.startswith("/") or "\x00" in folder:
        return f"{folder!r} is not an absolute path."
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"{folder} can't be read ({exc.strerror}); add it again once it is back."
    if stat.S_ISLNK(info.st_mode) or os.path.realpath(folder) != os.path.normpath(folder):
        return (
            f"{folder} is now reached through a symbolic link (to "
            f"{os.path.realpath(folder)}); a watched folder is never followed elsewhere. "
            "Put the folder back, or add the folder you mean with `affidavit watch add`."
        )
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is no longer a folder; add it again once it is back."
    if vault is not None:
        root = Path(folder)
        own = (vault.sources_dir, vault.wiki_dir, vault.state_dir)
        for inner in (d.resolve() for d in own):
            if root == inner or inner in root.parents:
                return (
                    f"{folder} is inside the vault's own files; watch the folders you keep your "
                    "sources in."
                )
    return None


def _row(row: sqlite3.Row | tuple[object, ...]) -> WatchInfo:
    keys = (
        "id",
        "folder",
        "trust",
        "model",
        "status",
        "error",
        "created_at",
        "created_by",
        "last_job",
        "last_queued_at",
    )
    return WatchInfo.model_validate(dict(zip(keys, tuple(row), strict=True)))


COLUMNS = (
    "id, folder, trust, model, status, error, created_at, created_by, last_job, last_queued_at"
)


def add_watch(vault: Vault, request: WatchCreate, actor: str) -> WatchInfo:
    """Register ``request.folder`` (resolved now) for the daemon to follow. Adding a folder
    already registered updates its trust and model and, if it was refused, follows it again
    once it passes the checks: adding is how a refused watch is restored."""
    given = Path(request.folder).expanduser()
    if not given.is_absolute():
        raise WatchError(
            f"{request.folder!r} is a relative path; the daemon runs elsewhere, so give the "
            "folder's absolute path (the CLI resolves it for you)."
        )
    folder = str(given.resolve())
    if not Path(folder).is_dir():
        raise WatchError(f"{request.folder} is not a folder. Give a folder that exists.")
    why = refusal(folder, vault)
    if why is not None:
        raise WatchError(why)
    if not os.access(folder, os.R_OK | os.X_OK):
        raise WatchError(
            f"{folder} can't be read by the daemon's user (UID {os.geteuid()}); fix its "
            "permissions, or watch it with `affidavit watch DIR` as a user who can."
        )
    at = iso(vault.clock())
    with transaction(vault.db):
        vault.db.execute(
            "INSERT INTO watches (id, folder, trust, model, created_at, created_by) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (folder) DO UPDATE SET trust = excluded.trust, "
            "model = excluded.model, status = 'watching', error = ''",
            ("watch-" + secrets.token_hex(4), folder, request.trust, request.model, at, actor),
        )
    return get_watch(vault, folder)


def list_watches(vault: Vault) -> list[WatchInfo]:
    rows = vault.db.execute(f"SELECT {COLUMNS} FROM watches ORDER BY created_at, id").fetchall()
    return [_row(r) for r in rows]


def get_watch(vault: Vault, ref: str) -> WatchInfo:
    """The watch with id ``ref``, or of folder ``ref`` (as given, or resolved)."""
    row = vault.db.execute(
        f"SELECT {COLUMNS} FROM watches WHERE id = ? OR folder = ?", (ref, ref)
    ).fetchone()
    if row is None and ref.startswith(("/", "~")):
        resolved = str(Path(ref).expanduser().resolve())
        row = vault.db.execute(
            f"SELECT {COLUMNS} FROM watches WHERE folder = ?", (resolved,)
        ).fetchone()
    if row is None:
        raise NotFoundError(
            f"no watch {ref!r} in this vault; `affidavit watch list` shows the watches."
        )
    return _row(row)


def remove_watch(vault: Vault, ref: str) -> WatchInfo:
    """Stop following a folder: no job is queued for it from now on, and a job of it still
    queued reads nothing. What it ingested stays; its record of the folder is kept, so adding
    it again later looks only at what changed meanwhile."""
    found = get_watch(vault, ref)
    with transaction(vault.db):
        vault.db.execute("DELETE FROM watches WHERE id = ?", (found.id,))
    return found


def refuse(vault: Vault, watch_id: str, why: str) -> None:
    with transaction(vault.db):
        vault.db.execute(
            "UPDATE watches SET status = 'refused', error = ? WHERE id = ?", (why, watch_id)
        )


def queued(vault: Vault, watch_id: str, job_id: str) -> None:
    with transaction(vault.db):
        vault.db.execute(
            "UPDATE watches SET last_job = ?, last_queued_at = ? WHERE id = ?",
            (job_id, iso(vault.clock()), watch_id),
        )


__all__ = [
    "WatchCreate",
    "WatchInfo",
    "actor_of",
    "add_watch",
    "get_watch",
    "list_watches",
    "queued",
    "refusal",
    "refuse",
    "remove_watch",
]
