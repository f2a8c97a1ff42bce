"""Recovery of an interrupted apply (SPEC W6), run by :func:`affidavit.vault.open_vault`.

The journal names the plan, its commit message and every file with its temp file. The database
decides the direction: if the plan is recorded as applied, the transaction committed, so the files
are re-rendered from the database (rendering is deterministic) and the git commit is made unless
HEAD already carries it — roll forward. Otherwise the transaction never committed: the temp files
are deleted and nothing else changed — roll back.

A journal is untrusted input (W10): its plan id, paths and temp names are validated against the
shapes the door writes (:mod:`.paths`) before anything is touched. A journal that fails is
refused whole: nothing it names is written or deleted, it stays where it is, and
:func:`journal_problem` tells ``affidavit doctor`` why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import IntegrityError
from .atomic import atomic_write, fsync_dir, stray_temps
from .paths import check_plan_id, check_temp_relpath, check_wiki_relpath, inside, real_dir
from .render import render_path

if TYPE_CHECKING:
    from ..vault import Vault


@dataclass(frozen=True)
class Journal:
    """A validated apply journal: every path is ``wiki/<name>.md`` and its own temp file."""

    plan_id: str
    message: str
    files: tuple[tuple[str, str], ...]
    """(path, temp), both relative to the vault."""


def pending_journals(vault: Vault) -> list[str]:
    if not real_dir(vault.journal_dir):
        return []
    return sorted(p.name for p in vault.journal_dir.glob("*.json"))


def read_journal(vault: Vault, name: str) -> Journal:
    """Read and validate one journal; :class:`IntegrityError` says what is wrong with it."""
    try:
        data = json.loads(inside(vault.root, f".affidavit/journal/{name}").read_bytes())
    except (OSError, ValueError) as exc:
        raise IntegrityError(f"journal {name} can't be read: {type(exc).__name__}") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise IntegrityError(f"journal {name} is not an apply journal")
    plan_id = check_plan_id(data.get("plan_id"))
    if name != f"{plan_id}.json":
        raise IntegrityError(f"journal {name} names another plan ({plan_id[:12]})")
    message = data.get("message")
    if not isinstance(message, str):
        raise IntegrityError(f"journal {name} has no commit message")
    files = []
    for item in data["files"]:
        if not isinstance(item, dict):
            raise IntegrityError(f"journal {name} has a malformed file entry")
        path = check_wiki_relpath(item.get("path"))
        files.append((path, check_temp_relpath(item.get("temp"), path)))
    return Journal(plan_id, message, tuple(files))


def journal_problem(vault: Vault, name: str) -> str | None:
    """Why recovery refuses journal ``name`` (None when it is a valid journal)."""
    try:
        read_journal(vault, name)
    except IntegrityError as exc:
        return str(exc)
    return None


def _stray_temps(vault: Vault) -> list[str]:
    out = []
    for sub in ("wiki", "sources"):
        if real_dir(vault.root / sub):  # a symlinked folder is never searched or cleaned
            out += [f"{sub}/{p.name}" for p in stray_temps(vault.root / sub)]
    return out


def recover(vault: Vault) -> list[str]:
    """Finish or undo every interrupted apply; returns one line per journal (recovered or
    refused)."""
    if not pending_journals(vault) and not _stray_temps(vault):
        return []
    report: list[str] = []
    with vault.write_lock():
        for name in pending_journals(vault):
            try:
                journal = read_journal(vault, name)
                for path, temp in journal.files:  # every path checked before any is touched
                    inside(vault.root, path, final_symlink_ok=True)
                    inside(vault.root, temp, final_symlink_ok=True)
            except IntegrityError as exc:
                report.append(f"refused journal {name}: {exc}")
                continue
            report.append(_recover_one(vault, journal))
            inside(vault.root, f".affidavit/journal/{name}").unlink()
            fsync_dir(vault.journal_dir)
        for relpath in _stray_temps(vault):
            inside(vault.root, relpath, final_symlink_ok=True).unlink()
        vault.git.clear_stale_lock()
    return report


def _recover_one(vault: Vault, journal: Journal) -> str:
    plan_id = journal.plan_id
    row = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
    if row is not None and row["status"] == "applied":
        for path, temp in journal.files:
            text = render_path(vault.db, path)
            target = inside(vault.root, path, final_symlink_ok=True)
            if text is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write(target, text.encode())
            inside(vault.root, temp, final_symlink_ok=True).unlink(missing_ok=True)
        vault.git.clear_stale_lock()
        if vault.git.head_plan() != plan_id:
            vault.git.commit(journal.message, ["wiki"])
        return f"rolled forward plan {plan_id[:12]}"
    for _, temp in journal.files:
        inside(vault.root, temp, final_symlink_ok=True).unlink(missing_ok=True)
    return f"rolled back plan {plan_id[:12]}"
