"""What a watch does with a change: the one place the lineage of a source plugs in.

``ingest_changed`` takes the files that appeared or changed; today each is ingested as a source
(a changed file's new bytes are a new source, its chunks proposed through the gate), exactly as
``affidavit ingest FILE`` without ``--yes`` does: a plan is applied only when the policy
(``policy.auto_apply``) applies it at the door, everything else waits in the inbox. When
sources know their versions (issue 27 item 1), this is where a changed origin becomes a new
version of its source instead. ``origin_removed`` takes a file that is gone: it names the
sources that file was and the active claims resting on them, and hands them to the lineage
hook when one is installed; nothing is retracted here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..ingest.pipeline import Ingestor, IngestReport, Progress
from ..providers.base import Provider
from ..sources.store import SourceStore
from ..vault import Vault

LINEAGE_HOOK = ("affidavit.lineage", "origin_deleted")
"""``module, function`` called as ``function(vault, origin, actor=...)`` for a deleted file when
that module is installed; its return value (JSON data) is reported with the deletion."""


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
    store = SourceStore(vault)
    if len(paths) > 1:  # new sources stored together: one fsync pass, one commit per group
        store.add_files(paths, trust)
    return Ingestor(vault, provider, store=store, progress=progress, actor=actor).run(
        [str(p) for p in paths], trust
    )


def _hook() -> Callable[..., Any] | None:
    module, name = LINEAGE_HOOK
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    hook = getattr(found, name, None)
    return hook if callable(hook) else None


def origin_removed(vault: Vault, path: Path, *, actor: str = "watch") -> dict[str, Any]:
    """Report a deleted file: the sources it was (by origin) and the active claims citing them,
    and what the lineage hook did with it, if one is installed."""
    origin = str(path)
    rows = vault.db.execute(
        "SELECT id FROM sources WHERE origin = ? ORDER BY added_at, id", (origin,)
    ).fetchall()
    ids = [str(r[0]) for r in rows]
    claims = 0
    if ids:
        marks = ",".join("?" * len(ids))
        claims = int(
            vault.db.execute(
                "SELECT count(DISTINCT c.id) FROM claims c JOIN evidence e ON e.claim_id = c.id "
                f"WHERE c.status = 'active' AND e.source_id IN ({marks})",
                ids,
            ).fetchone()[0]
        )
    found: dict[str, Any] = {"origin": origin, "sources": ids, "active_claims": claims}
    hook = _hook()
    if hook is not None and ids:
        found["lineage"] = hook(vault, origin, actor=actor)
    return found


__all__ = ["LINEAGE_HOOK", "ingest_changed", "origin_removed"]
