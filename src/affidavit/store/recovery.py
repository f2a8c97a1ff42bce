"""Recovery of an interrupted apply (SPEC W6), run by :func:`affidavit.vault.open_vault`.

The journal names the batch (its plans), its commit message and every file with its temp file.
The database decides the direction: if the audit log has the batch's "applied" entries, the
transaction committed, so the files
are re-rendered from the database (rendering is deterministic) and the git commit is made unless
HEAD already carries the batch's trailer — roll forward. Otherwise the transaction never committed: the temp files
are deleted and nothing else changed — roll back.

A journal is untrusted input (W10): its plan id, paths and temp names are validated against the
shapes the door writes (:mod:`.paths`) before anything is touched. A journal that fails is
refused whole: nothing it names is written or deleted, it stays where it is, and
:func:`journal_problem` tells ``affidavit doctor`` why.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import IntegrityError, VaultError
from .atomic import atomic_write, fsync_dir, stray_temps
from .gitrepo import BATCH_TRAILER
from .paths import check_plan_id, check_temp_relpath, check_wiki_relpath, inside, real_dir
from .render import render_path

if TYPE_CHECKING:
    from ..vault import Vault


@dataclass(frozen=True)
class Journal:
    """A validated apply journal: every path is ``wiki/<name>.md`` and its own temp file."""

    batch: str | None
    """The batch id (``b-`` + 16 hex); None for a journal written before batches."""
    plans: tuple[str, ...]
    message: str
    files: tuple[tuple[str, str], ...]
    """(path, temp), both relative to the vault."""


_BATCH = re.compile(r"b-[0-9a-f]{16}")


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
    batch = data.get("batch")
    if batch is None:  # a journal from before batches names its one plan
        plan_id = check_plan_id(data.get("plan_id"))
        if name != f"{plan_id}.json":
            raise IntegrityError(f"journal {name} names another plan ({plan_id[:12]})")
        plans: tuple[str, ...] = (plan_id,)
    else:
        if not isinstance(batch, str) or not _BATCH.fullmatch(batch):
            raise IntegrityError(f"journal {name} has a malformed batch id")
        if name != f"{batch}.json":
            raise IntegrityError(f"journal {name} names another batch ({batch})")
        listed = data.get("plans")
        if not isinstance(listed, list) or not listed:
            raise IntegrityError(f"journal {name} names no plans")
        plans = tuple(check_plan_id(p) for p in listed)
    message = data.get("message")
    if not isinstance(message, str):
        raise IntegrityError(f"journal {name} has no commit message")
    files = []
    for item in data["files"]:
        if not isinstance(item, dict):
            raise IntegrityError(f"journal {name} has a malformed file entry")
        path = check_wiki_relpath(item.get("path"))
        files.append((path, check_temp_relpath(item.get("temp"), path)))
    return Journal(batch, plans, message, tuple(files))


def journal_problem(vault: Vault, name: str) -> str | None:
    """Why recovery refuses journal ``name`` (None when it is a valid journal)."""
    try:
        read_journal(vault, name)
    except IntegrityError as exc:
        return str(exc)
    return None


def _stray_temps(vault: Vault) -> list[str]:
    out = []
    # The journal's own temp file too: it is written in the files' fsync pass, so a kill
    # before its rename leaves it (never read: only ``*.json`` journals are).
    for sub in ("wiki", "sources", ".affidavit/journal"):
        if real_dir(vault.root / sub):  # a symlinked folder is never searched or cleaned
            out += [f"{sub}/{p.name}" for p in stray_temps(vault.root / sub)]
    return out


def _committed(vault: Vault, journal: Journal) -> bool:
    """Whether the journal's transaction committed: its batch has "applied" audit entries (a
    journal from before batches: its plan is recorded as applied)."""
    if journal.batch is None:
        row = vault.db.execute(
            "SELECT status FROM plans WHERE id = ?", (journal.plans[0],)
        ).fetchone()
        return row is not None and row["status"] == "applied"
    row = vault.db.execute(
        "SELECT 1 FROM audit WHERE action = 'applied' AND json_extract(detail, '$.batch') = ?",
        (journal.batch,),
    ).fetchone()
    return row is not None


def _in_head(vault: Vault, journal: Journal) -> bool:
    if journal.batch is None:
        return vault.git.head_plan() == journal.plans[0]
    return journal.batch in vault.git.head_trailers(BATCH_TRAILER)


def recover(vault: Vault) -> list[str]:
    """Finish or undo every interrupted apply; returns one line per journal (recovered or
    refused)."""
    if not pending_journals(vault) and not _stray_temps(vault):
        if vault.git.locks():
            # a git lock with no journal: a killed command's commit of a source. Stale if no
            # other Affidavit process holds the writer lock (all our commits hold it); if one
            # does, it may be committing now, and this is left alone.
            with contextlib.suppress(VaultError), vault.write_lock(timeout=0):
                vault.git.clear_stale_lock()
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
    label = ", ".join(p[:12] for p in journal.plans)
    if _committed(vault, journal):
        for path, temp in journal.files:
            text = render_path(vault.db, path)
            target = inside(vault.root, path, final_symlink_ok=True)
            if text is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write(target, text.encode())
            inside(vault.root, temp, final_symlink_ok=True).unlink(missing_ok=True)
        vault.git.clear_stale_lock()
        if not _in_head(vault, journal):
            vault.git.commit(journal.message, [path for path, _ in journal.files])
        return f"rolled forward plan {label}"
    for _, temp in journal.files:
        inside(vault.root, temp, final_symlink_ok=True).unlink(missing_ok=True)
    return f"rolled back plan {label}"
