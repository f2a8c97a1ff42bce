"""What a watch does with a change: the one place the lineage of a source plugs in.

``ingest_changed`` takes the files that appeared or changed, ``origin_removed`` a file that is
gone. With source lineage installed (``affidavit.ingest.lineage``, issue 27 item 1: branch
``lineage``) both go to it: a changed file becomes the next version of its source (claims whose
quotes are still there carried over, supersede and retract proposals for the rest, waiting for a
person), a deleted file gets a ``retract_source`` proposal that waits for a person. Without it, a
changed file's new bytes are ingested as a new source, exactly as ``affidavit ingest FILE``
without ``--yes`` does, and a deleted file is only reported. Either way a plan is applied only
when the policy (``policy.auto_apply``) applies it at the door; everything else waits in the
inbox.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from ..ingest.pipeline import Ingestor, IngestReport, Progress
from ..providers.base import Provider
from ..sources.lineage import origin_key
from ..sources.store import SourceStore
from ..vault import Vault

LINEAGE = "affidavit.ingest.lineage"
"""The lineage module: ``ingest_changed(vault, paths, provider=, trust=, actor=)`` and
``propose_deleted(vault, paths, actor=)``, used when it is installed."""


def _lineage(name: str) -> Any | None:
    """``name`` of the lineage module when it is installed and has it."""
    try:
        module: ModuleType = importlib.import_module(LINEAGE)
    except ImportError:
        return None
    found = getattr(module, name, None)
    return found if callable(found) else None


def ingest_changed(
    vault: Vault,
    provider: Provider,
    paths: list[Path],
    *,
    trust: str | None = None,
    actor: str = "watch",
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest ``paths`` (files that appeared or changed) through the policy's path."""
    versions = _lineage("ingest_changed")
    if versions is not None:
        report: IngestReport = versions(vault, paths, provider=provider, trust=trust, actor=actor)
        return report
    store = SourceStore(vault)
    if len(paths) > 1:  # new sources stored together: one fsync pass, one commit per group
        store.add_files(paths, trust)
    return Ingestor(vault, provider, store=store, progress=progress, actor=actor).run(
        [str(p) for p in paths], trust
    )


def origin_moved(vault: Vault, old: Path, new: Path, *, actor: str = "watch") -> list[str]:
    """A file's bytes left ``old`` and are at ``new``: with lineage installed, the versions of
    origin ``old`` follow the file (the source ids moved; [] when nothing moved)."""
    follow = _lineage("origin_moved")
    if follow is None:
        return []
    moved: list[str] = follow(vault, old, new, actor=actor)
    return moved


def origin_renamed(
    vault: Vault, vanished: list[Path], appeared: list[Path], *, actor: str = "watch"
) -> list[tuple[Path, Path]]:
    """Files that vanished paired with files that appeared when their texts say they are one
    document moved and edited (:mod:`affidavit.ingest.renames`): with lineage installed, each
    pair's versions follow the file, so its new bytes ingest as its next version. The pairs
    moved ([] without lineage)."""
    follow = _lineage("follow_renamed")
    if follow is None or not vanished or not appeared:
        return []
    moved: list[tuple[Path, Path]] = follow(vault, vanished, appeared, actor)
    return moved


def origin_removed(vault: Vault, path: Path, *, actor: str = "watch") -> dict[str, Any]:
    """Report a deleted file: the sources it was (by origin) and the active claims citing them,
    and, with lineage installed, the retraction it proposed (waiting for a person)."""
    origin = str(path)
    rows = vault.db.execute(  # by origin key: the versions of a file moved here count too
        "SELECT id FROM sources WHERE origin_key = ? ORDER BY version, id", (origin_key(path),)
    ).fetchall()
    ids = [str(r[0]) for r in rows]
    claims = 0
    if ids:
        marks = ",".join("?" * len(ids))
        claims = int(
            vault.db.execute(
                "SELECT count(DISTINCT c.id) FROM claims c JOIN evidence e ON e.claim_id = c.id "
                f"WHERE c.status = 'active' AND e.source_key IN "
                f"(SELECT key FROM source_keys WHERE source_id IN ({marks}))",
                ids,
            ).fetchone()[0]
        )
    found: dict[str, Any] = {"origin": origin, "sources": ids, "active_claims": claims}
    propose = _lineage("propose_deleted")
    if propose is not None and ids:
        proposals = propose(vault, [path], actor=actor)
        found["lineage"] = {"plans": [str(getattr(p, "plan_id", p)) for p in proposals or []]}
    return found


__all__ = ["LINEAGE", "ingest_changed", "origin_moved", "origin_removed", "origin_renamed"]
