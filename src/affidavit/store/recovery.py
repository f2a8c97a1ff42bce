"""Recovery of an interrupted apply (SPEC W6), run by :func:`affidavit.vault.open_vault`.

The journal names the batch (its plans), its commit message and every file with its temp file.
The database decides the direction: if the audit log has the batch's "applied" entries, the
transaction committed, so the files
are re-rendered from the database (rendering is deterministic) and the git commit is made unless
HEAD already carries the batch's trailer — roll forward. Otherwise the transaction never committed: the temp files
are deleted and nothing else changed — roll back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .atomic import atomic_write, fsync_dir, stray_temps
from .gitrepo import BATCH_TRAILER
from .render import render_path

if TYPE_CHECKING:
    from ..vault import Vault


def pending_journals(vault: Vault) -> list[str]:
    return sorted(p.name for p in vault.journal_dir.glob("*.json"))


def _committed(vault: Vault, journal: dict[str, Any]) -> bool:
    """Whether the journal's transaction committed: its batch has "applied" audit entries (a
    journal from before batches: its plan is recorded as applied)."""
    batch = journal.get("batch")
    if batch is None:
        row = vault.db.execute(
            "SELECT status FROM plans WHERE id = ?", (journal["plan_id"],)
        ).fetchone()
        return row is not None and row["status"] == "applied"
    row = vault.db.execute(
        "SELECT 1 FROM audit WHERE action = 'applied' AND json_extract(detail, '$.batch') = ?",
        (batch,),
    ).fetchone()
    return row is not None


def _in_head(vault: Vault, journal: dict[str, Any]) -> bool:
    batch = journal.get("batch")
    if batch is None:
        return vault.git.head_plan() == str(journal["plan_id"])
    return str(batch) in vault.git.head_trailers(BATCH_TRAILER)


def recover(vault: Vault) -> list[str]:
    """Finish or undo every interrupted apply; returns one line per recovered plan."""
    if (
        not pending_journals(vault)
        and not stray_temps(vault.wiki_dir)
        and not stray_temps(vault.sources_dir)
    ):
        return []
    report: list[str] = []
    with vault.write_lock():
        for name in pending_journals(vault):
            path = vault.journal_dir / name
            journal = json.loads(path.read_text(encoding="utf-8"))
            plans = journal.get("plans") or [journal["plan_id"]]
            label = ", ".join(str(p)[:12] for p in plans)
            if _committed(vault, journal):
                for item in journal["files"]:
                    text = render_path(vault.db, item["path"])
                    target = vault.root / item["path"]
                    if text is None:
                        target.unlink(missing_ok=True)
                    else:
                        atomic_write(target, text.encode())
                    (vault.root / item["temp"]).unlink(missing_ok=True)
                vault.git.clear_stale_lock()
                if not _in_head(vault, journal):
                    vault.git.commit(
                        journal["message"], [item["path"] for item in journal["files"]]
                    )
                report.append(f"rolled forward plan {label}")
            else:
                for item in journal["files"]:
                    (vault.root / item["temp"]).unlink(missing_ok=True)
                report.append(f"rolled back plan {label}")
            path.unlink()
            fsync_dir(vault.journal_dir)
        for directory in (vault.wiki_dir, vault.sources_dir):
            for temp in stray_temps(directory):
                temp.unlink()
        vault.git.clear_stale_lock()
    return report
