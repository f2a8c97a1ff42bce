"""Recovery of an interrupted apply (SPEC W6), run by :func:`affidavit.vault.open_vault`.

The journal names the plan, its commit message and every file with its temp file. The database
decides the direction: if the plan is recorded as applied, the transaction committed, so the files
are re-rendered from the database (rendering is deterministic) and the git commit is made unless
HEAD already carries it — roll forward. Otherwise the transaction never committed: the temp files
are deleted and nothing else changed — roll back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .atomic import atomic_write, fsync_dir, stray_temps
from .render import render_path

if TYPE_CHECKING:
    from ..vault import Vault


def pending_journals(vault: Vault) -> list[str]:
    return sorted(p.name for p in vault.journal_dir.glob("*.json"))


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
            plan_id = journal["plan_id"]
            row = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
            if row is not None and row["status"] == "applied":
                for item in journal["files"]:
                    text = render_path(vault.db, item["path"])
                    target = vault.root / item["path"]
                    if text is None:
                        target.unlink(missing_ok=True)
                    else:
                        atomic_write(target, text.encode())
                    (vault.root / item["temp"]).unlink(missing_ok=True)
                vault.git.clear_stale_lock()
                if vault.git.head_plan() != plan_id:
                    vault.git.commit(journal["message"], ["wiki"])
                report.append(f"rolled forward plan {plan_id[:12]}")
            else:
                for item in journal["files"]:
                    (vault.root / item["temp"]).unlink(missing_ok=True)
                report.append(f"rolled back plan {plan_id[:12]}")
            path.unlink()
            fsync_dir(vault.journal_dir)
        for directory in (vault.wiki_dir, vault.sources_dir):
            for temp in stray_temps(directory):
                temp.unlink()
        vault.git.clear_stale_lock()
    return report
