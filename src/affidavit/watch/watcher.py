"""``affidavit watch``: follow folders as they change and ingest what changed.

On start every source file of each folder (:mod:`.ignore`) is hashed and compared with what the
watch saw last (:mod:`.state`): what appeared or changed while it was down is ingested, what
vanished is reported. Then ``watchfiles`` (inotify underneath, in Rust) reports changes; a
burst of them is grouped (a change is handled once no other came for ``step_ms``, at most
``debounce_ms`` after the first) and each group is handled as one pass: changed files hashed
(a save that leaves the bytes as they were is no change), ingested through
:func:`.changes.ingest_changed` (the policy's path: nothing a person should see is applied),
deleted files reported through :func:`.changes.origin_removed` (a file whose bytes reappear
under another path in the same pass was moved, not deleted; one an ignore file now excludes is
dropped from the record, not deleted). A change to an ignore file reloads the rules and looks at
the whole folder again; a folder made or moved in is looked at whole. The record is saved after each pass, so
a kill at any point costs at most a re-ingest of that pass's files (a no-op for bytes already
stored and chunks already proposed).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..clock import iso
from ..errors import AffidavitError
from ..ingest.pipeline import IngestReport, Progress
from ..providers.base import Provider
from ..vault import Vault
from .changes import ingest_changed, origin_moved, origin_removed, origin_renamed
from .ignore import IgnoreRules, is_ignore_file
from .state import Manifest, Seen, fingerprint

Emit = Callable[[dict[str, Any]], None]
"""Called with each event (JSON data with an ``event`` name and an ``at`` time)."""

DEBOUNCE_MS = 1600
STEP_MS = 50
IDLE_MS = 1000
"""How often the watch wakes while nothing changes (to notice a stop)."""


class WatchError(AffidavitError):
    """A folder can't be watched (missing, not a folder, inside the vault's own files)."""


@dataclass
class Folder:
    root: Path
    rules: IgnoreRules
    manifest: Manifest


@dataclass
class Watcher:
    """Watches ``folders`` of ``vault``, ingesting with ``provider``."""

    vault: Vault
    folders: list[Path]
    provider: Provider
    emit: Emit
    trust: str | None = None
    actor: str = "watch"
    progress: Progress | None = None
    debounce_ms: int = DEBOUNCE_MS
    step_ms: int = STEP_MS
    confined: bool = False
    """The daemon's watches: each folder is taken as given (already resolved; a symbolic link
    in its path is refused, never followed), and a file whose real path leads out of its folder
    (a symbolic link to elsewhere) is never read: it is reported ``refused``."""
    watched: list[Folder] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        own = (self.vault.sources_dir.resolve(), self.vault.wiki_dir.resolve())
        state = self.vault.state_dir.resolve()
        for given in self.folders:
            root = Path(given).expanduser().resolve()
            if self.confined and root != Path(given):
                raise WatchError(
                    f"{given} is reached through a symbolic link (to {root}); a confined "
                    "watch never follows one. Watch the folder's real path."
                )
            if not root.is_dir():
                raise WatchError(f"{given} is not a folder. Give a folder that exists.")
            if any(root == d or d in root.parents for d in (*own, state)):
                raise WatchError(
                    f"{given} is inside the vault's own files; watch the folders you keep your "
                    "sources in."
                )
            rules = IgnoreRules.load(root, frozenset(own))
            self.watched.append(Folder(root, rules, Manifest(self.vault.state_dir, root)))

    # -- events -------------------------------------------------------------------------------
    def _event(self, name: str, **data: Any) -> None:
        self.emit({"event": name, "at": iso(self.vault.clock()), **data})

    # -- a pass over what changed ------------------------------------------------------------
    def catch_up(self) -> None:
        """Hash every source file of every folder and handle what differs from the record
        (on start, and after an ignore file or a folder changed)."""
        for folder in self.watched:
            self._rescan(folder)

    def _rescan(self, folder: Folder) -> None:
        current: dict[Path, Seen] = {}
        for path in folder.rules.files():
            if self._escapes(folder, path):
                continue
            seen = fingerprint(path)
            if seen is not None:
                current[path] = seen
        changed = {p: s for p, s in current.items() if _differs(folder.manifest.get(p), s)}
        for path, seen in current.items():  # same bytes, new time: remembered, not ingested
            if path not in changed:
                folder.manifest.set(path, seen)
        deleted: dict[Path, Seen] = {}
        for path in [p for p in folder.manifest.paths() if p not in current]:
            deleted.update(folder.manifest.drop(path))
        self._handle(folder, changed, deleted, scanned=len(current))

    def handle(self, paths: Iterable[Path]) -> None:
        """Handle a group of paths the watcher reported changed, added or deleted."""
        by_folder: dict[int, set[Path]] = {}
        for path in paths:
            found = self._folder_of(path)
            if found is not None:
                by_folder.setdefault(found, set()).add(path)
        for index, group in by_folder.items():
            folder = self.watched[index]
            if any(is_ignore_file(p) for p in group):  # the rules changed: look at it all
                folder.rules = IgnoreRules.load(folder.root, folder.rules.skip)
                self._rescan(folder)
                continue
            changed: dict[Path, Seen] = {}
            deleted: dict[Path, Seen] = {}
            for path in sorted(group):
                if path.is_dir():  # a folder made or moved in: every file it holds
                    files = list(folder.rules.files(path))
                else:
                    files = [path] if path.is_file() and not folder.rules.ignored(path) else []
                for file in files:
                    if self._escapes(folder, file):
                        continue
                    seen = fingerprint(file)
                    if seen is not None and _differs(folder.manifest.get(file), seen):
                        changed[file] = seen
                    elif seen is not None:  # saved with the same bytes: nothing to ingest
                        folder.manifest.set(file, seen)
                if not path.exists():
                    deleted.update(folder.manifest.drop(path))  # a folder: every file it held
            self._handle(folder, changed, deleted)

    def _escapes(self, folder: Folder, path: Path) -> bool:
        """With ``confined``: whether ``path`` really is somewhere outside ``folder`` (a
        symbolic link, or a link in a folder on the way); reported, never read."""
        if not self.confined:
            return False
        real = Path(os.path.realpath(path))
        if real == folder.root or folder.root in real.parents:
            return False
        self._event(
            "refused",
            path=str(path),
            message=f"{path} leads to {real}, outside the watched folder {folder.root}: "
            "a symbolic link out of a watched folder is never followed.",
        )
        return True

    def _folder_of(self, path: Path) -> int | None:
        """The deepest watched folder holding ``path`` (folders may nest)."""
        holding = [
            (len(f.root.parts), i)
            for i, f in enumerate(self.watched)
            if f.root == path or f.root in path.parents
        ]
        return max(holding)[1] if holding else None

    def _handle(
        self,
        folder: Folder,
        changed: dict[Path, Seen],
        deleted: dict[Path, Seen],
        scanned: int | None = None,
    ) -> None:
        """Ingest ``changed``; report what left the record (``deleted``, already dropped): a
        file gone whose bytes reappeared under another path in the same pass was moved, one
        still on disk is now ignored, the rest were deleted. Then save the record. A file
        whose ingest could not run stays unrecorded: it is tried again on its next change or
        the next start. A file gone whose text is mostly that of a file new to the record was
        moved and edited (:func:`.changes.origin_renamed`): paired before the ingest, so the
        new bytes are its next version. ``scanned``: the files of a whole look, reported in a
        ``scan`` event before anything is ingested."""
        arrived = {seen.sha256: path for path, seen in changed.items()}
        vanished = [
            path
            for path, seen in deleted.items()
            if not path.exists()
            and seen.sha256 not in arrived
            and _kept(folder, seen.sha256) is None
        ]
        appeared = [path for path in changed if folder.manifest.get(path) is None]
        renamed = dict(origin_renamed(self.vault, vanished, appeared, actor=self.actor))
        if scanned is not None:  # a whole look (``scanned`` files): what it found, moves apart
            deleted_count = sum(1 for path in vanished if path not in renamed)
            self._event(
                "scan",
                folder=str(folder.root),
                files=scanned,
                changed=len(changed),
                deleted=deleted_count,
            )
        if changed:
            try:
                with self._lint_counted_only():
                    report = ingest_changed(
                        self.vault,
                        self.provider,
                        sorted(changed),
                        trust=self.trust,
                        actor=self.actor,
                        progress=self.progress,
                    )
            except AffidavitError as exc:
                self._event("error", paths=[str(p) for p in sorted(changed)], message=str(exc))
            else:
                self._ingested(report)
                for path, seen in changed.items():
                    folder.manifest.set(path, seen)
        for path, seen in deleted.items():
            if path.exists():
                self._event("ignored", path=str(path))
            elif path in renamed:
                self._event("moved", path=str(renamed[path]), source=str(path), edited=True)
            elif (to := arrived.get(seen.sha256) or _kept(folder, seen.sha256)) is not None:
                # its bytes are at another path of the folder (arrived in this pass, or copied
                # there before the original went): moved, and its versions follow it
                origin_moved(self.vault, path, to, actor=self.actor)
                self._event("moved", path=str(to), source=str(path))
            else:
                self._event("deleted", path=str(path), **_removed(self.vault, path, self.actor))
        folder.manifest.save()

    @contextmanager
    def _lint_counted_only(self) -> Iterator[None]:
        """During a pass the automatic lint (``lint.every_ingests``) only counts the sources
        ingested; :meth:`settle` runs it once the watch is quiet, so a save is never kept
        waiting behind a whole-wiki lint that the save before it made due."""
        config = self.vault.config
        self.vault.config = replace(config, values={**config.values, "lint.every_ingests": 0})
        try:
            yield
        finally:
            self.vault.config = config

    def settle(self) -> None:
        """Run the automatic lint if the ingests counted since the last one make it due (when
        the watch is quiet: no change for a second, or at the end of a look)."""
        from ..lint.runner import INGEST_COUNTER, run_lint  # its cost only when due

        every = int(self.vault.config.get("lint.every_ingests"))
        row = self.vault.db.execute(
            "SELECT value FROM counters WHERE name = ?", (INGEST_COUNTER,)
        ).fetchone()
        if every <= 0 or row is None or int(row[0]) < every:
            return
        started = time.monotonic()
        try:
            report = run_lint(self.vault, None, trigger="auto", listing=False)
        except AffidavitError as exc:
            self._event("error", paths=[], message=f"automatic lint: {exc}")
            return
        self._event(
            "lint",
            seconds=round(time.monotonic() - started, 3),
            run=report.run,
            open=report.open,
            new=len(report.new),
            counts=report.counts(),
        )

    def _ingested(self, report: IngestReport) -> None:
        for source in report.sources:
            statuses = [c.status for c in source.chunks]
            self._event(
                "ingested" if source.status != "failed" else "failed",
                path=source.target,
                status=source.status,
                source_id=source.source_id,
                chunks={s: statuses.count(s) for s in sorted(set(statuses))},
                plans=[c.plan_id for c in source.chunks if c.plan_id],
                message=source.message,
                **({"lineage": lineage} if (lineage := getattr(source, "lineage", None)) else {}),
            )

    # -- following --------------------------------------------------------------------------
    def run(self, stop: threading.Event | None = None) -> None:
        """Catch up, then follow the folders until ``stop`` is set (or Ctrl-C)."""
        import watchfiles  # Rust, loaded only when a watch runs

        changes = watchfiles.watch(
            *[f.root for f in self.watched],
            watch_filter=self._wanted,
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=stop,
            raise_interrupt=False,
            rust_timeout=IDLE_MS,
            yield_on_timeout=True,
        )
        # The first (empty) yield comes once inotify watches the folders: only then is the
        # record caught up, so a change made during the catch-up is still reported after it
        # (and found to be no change if the catch-up already took it in).
        started = False
        for group in changes:
            if not started:
                started = True
                self.catch_up()
                self._event("ready", folders=[str(f.root) for f in self.watched])
            if group:
                self.handle(Path(path) for _, path in group)
            else:  # a second without changes: the housekeeping that was waiting
                self.settle()
        self._event("stopped")

    def _wanted(self, _change: Any, path: str) -> bool:
        """Drop events of hidden files and folders (.git, editors' swap files) and of the
        vault's own files early; ignore files are kept (they change the rules)."""
        found = Path(path)
        index = self._folder_of(found)
        if index is None:
            return False
        folder = self.watched[index]
        parts = found.relative_to(folder.root).parts
        if any(part.startswith(".") for part in parts[:-1]):
            return False
        if parts and parts[-1].startswith(".") and not is_ignore_file(found):
            return False
        return not any(d == found or d in found.parents for d in folder.rules.skip)


def _kept(folder: Folder, sha256: str) -> Path | None:
    """A file of the folder's record with these bytes that is still there, if any."""
    for path in folder.manifest.paths():
        seen = folder.manifest.get(path)
        if seen is not None and seen.sha256 == sha256 and path.is_file():
            return path
    return None


def _differs(before: Seen | None, now: Seen) -> bool:
    return before is None or before.sha256 != now.sha256


def _removed(vault: Vault, path: Path, actor: str) -> dict[str, Any]:
    try:
        return origin_removed(vault, path, actor=actor)
    except AffidavitError as exc:
        return {"origin": str(path), "error": str(exc)}


__all__ = ["DEBOUNCE_MS", "STEP_MS", "Emit", "Folder", "WatchError", "Watcher"]
