"""The daemon's side of a continuous watch: follow a vault's registered folders and queue a
``watch`` job for each burst of changes.

One :class:`Feeder` per served vault runs in a thread of the daemon (beside the vault's job
worker). It reads the vault's ``watches`` (:mod:`.registered`) and follows their folders with
``watchfiles``; a burst of changes is grouped as the foreground watch groups it (handled once no
other came for ``step_ms``, at most ``debounce_ms`` after the first) and queued as one ``watch``
job naming the watch and the changed paths. The job — the durable queue's, run once by the
vault's worker like any other — does what ``affidavit watch`` does with a change
(:class:`~affidavit.watch.watcher.Watcher`): the record, ignore files, moves, deletions, the
policy's path. The feeder itself never reads a file's bytes.

When it starts following a watch (the daemon started, or the watch was added) it first lets
inotify listen, then queues a job looking at the whole folder: what changed while nothing
followed it is found by hashing, and a change made during that look is queued after it. Each
second, and before each job it queues, it checks every folder again
(:func:`.registered.refusal`): a folder swapped for a symbolic link is refused at once, and the
registered set is re-read, so a watch added or removed by another process is followed or
dropped within a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AffidavitError
from ..jobs.payloads import WatchPayload
from ..jobs.queue import JobQueue
from ..vault import Vault, open_vault
from .ignore import IgnoreRules, is_ignore_file
from .registered import WatchInfo, actor_of, list_watches, queued, refusal, refuse
from .watcher import DEBOUNCE_MS, IDLE_MS, STEP_MS

Log = Callable[..., None]
"""``log(event_name, **fields)``: the daemon's structured log."""

MAX_PATHS = 10_000
"""A burst touching more paths is queued as a look at the whole folder."""


def _no_log(_name: str, **_fields: Any) -> None:
    return None


class Feeder:
    """Follows the registered watches of the vault at ``root`` until ``stop`` is set."""

    def __init__(
        self,
        root: Path,
        stop: threading.Event,
        log: Log = _no_log,
        *,
        queued: Callable[[], None] | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        poll_seconds: float = IDLE_MS / 1000,
    ) -> None:
        self.root = root
        self.stop = stop
        self.log = log
        self.queued = queued
        """Called after each job queued (the daemon wakes the vault's worker with it)."""
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.poll_seconds = poll_seconds
        self.following: set[str] = set()
        """Watches caught up since this feeder started following them."""
        self.rules: dict[str, IgnoreRules] = {}

    def run(self) -> None:
        vault = open_vault(self.root)
        try:
            while not self.stop.is_set():
                active = self._active(vault)
                if not active:
                    self.stop.wait(self.poll_seconds)
                    continue
                try:
                    self._follow(vault, active)
                except Exception as exc:  # a folder gone mid-start, a database busy: said,
                    # and the watches followed again a second later (never a dead thread)
                    self.log("watch_error", vault=str(self.root), message=repr(exc))
                    self.stop.wait(self.poll_seconds)
        finally:
            vault.close()

    # -- which watches ----------------------------------------------------------------------
    def _active(self, vault: Vault) -> list[WatchInfo]:
        """The watches to follow now: registered, not refused, and passing the checks (one
        that fails them is refused here, with the reason)."""
        active = []
        for watch in list_watches(vault):
            if watch.status != "watching":
                continue
            why = refusal(watch.folder, vault)
            if why is not None:
                self._refuse(vault, watch, why)
                continue
            active.append(watch)
        ids = {w.id for w in active}
        self.following &= ids  # a watch removed or refused is caught up again when it is back
        for gone in set(self.rules) - {w.folder for w in active}:
            del self.rules[gone]
        return active

    def _refuse(self, vault: Vault, watch: WatchInfo, why: str) -> None:
        refuse(vault, watch.id, why)
        self.following.discard(watch.id)
        self.log("watch_refused", vault=str(self.root), watch=watch.id, message=why)

    def _same(self, vault: Vault, active: list[WatchInfo]) -> bool:
        """Whether the set of watches to follow is still ``active`` (each folder checked again)."""
        now = self._active(vault)
        return [(w.id, w.folder, w.trust, w.model) for w in now] == [
            (w.id, w.folder, w.trust, w.model) for w in active
        ]

    # -- following --------------------------------------------------------------------------
    def _follow(self, vault: Vault, active: list[WatchInfo]) -> None:
        """Follow ``active`` until a change to the registered set (then the caller starts
        again with the new set) or until ``stop``."""
        import watchfiles  # Rust, loaded only when a vault has watches

        by_folder = {Path(w.folder): w for w in active}
        for watch in active:
            if watch.folder not in self.rules:
                self.rules[watch.folder] = IgnoreRules.load(Path(watch.folder), _own(vault))
        changes = watchfiles.watch(
            *by_folder,
            watch_filter=lambda _change, path: self._wanted(by_folder, Path(path)),
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=self.stop,
            raise_interrupt=False,
            rust_timeout=int(self.poll_seconds * 1000),
            yield_on_timeout=True,
        )
        for group in changes:  # the first (empty) yield: inotify is listening
            for watch in active:
                if watch.id not in self.following:  # whatever changed while nobody looked
                    self._queue(vault, watch, None)
                    self.following.add(watch.id)
            if group:
                self._queue_group(vault, by_folder, {Path(path) for _, path in group})
            if not self._same(vault, active):
                return

    def _queue_group(
        self, vault: Vault, by_folder: dict[Path, WatchInfo], paths: set[Path]
    ) -> None:
        grouped: dict[Path, list[Path]] = {}
        for path in paths:
            folder = _folder_of(by_folder, path)
            if folder is not None:
                grouped.setdefault(folder, []).append(path)
        for folder, changed in grouped.items():
            watch = by_folder[folder]
            why = refusal(watch.folder, vault)  # resolved again on every change
            if why is not None:
                self._refuse(vault, watch, why)
                continue
            if any(is_ignore_file(p) for p in changed):  # the job looks at it all again
                self.rules[watch.folder] = IgnoreRules.load(folder, _own(vault))
            self._queue(vault, watch, None if len(changed) > MAX_PATHS else sorted(changed))

    def _queue(self, vault: Vault, watch: WatchInfo, paths: list[Path] | None) -> None:
        payload = WatchPayload(
            folders=[watch.folder],
            trust=watch.trust,
            model=watch.model,
            watch=watch.id,
            paths=None if paths is None else [str(p) for p in paths],
        )
        try:
            job = JobQueue(vault).submit(payload, actor_of(watch.id))
            if self.queued is not None:
                self.queued()
            queued(vault, watch.id, job.id)
        except AffidavitError as exc:  # e.g. the database busy past its timeout: said, not fatal
            self.log("watch_error", vault=str(self.root), watch=watch.id, message=str(exc))
            return
        self.log(
            "watch_queued",
            vault=str(self.root),
            watch=watch.id,
            job=job.id,
            paths=len(paths) if paths is not None else "all",
        )

    def _wanted(self, by_folder: dict[Path, WatchInfo], path: Path) -> bool:
        """Drop events no job would act on: hidden files and folders (.git, editors' swap
        files; ignore files are kept: they change the rules), the vault's own files, and files
        the folder's ignore files exclude (a deletion, or a folder, always passes: the record
        knows what it held)."""
        folder = _folder_of(by_folder, path)
        if folder is None or path == folder:
            return False
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") for part in parts[:-1]):
            return False
        if parts[-1].startswith(".") and not is_ignore_file(path):
            return False
        rules = self.rules.get(str(folder))
        if rules is None or is_ignore_file(path):
            return True
        if rules.ignored_folder(path.parent):
            return False
        return not (path.is_file() and rules.ignored(path))


def _own(vault: Vault) -> frozenset[Path]:
    return frozenset((vault.sources_dir.resolve(), vault.wiki_dir.resolve()))


def _folder_of(by_folder: dict[Path, WatchInfo], path: Path) -> Path | None:
    """The deepest watched folder holding ``path`` (folders may nest)."""
    holding = [f for f in by_folder if f == path or f in path.parents]
    return max(holding, key=lambda f: len(f.parts)) if holding else None


__all__ = ["MAX_PATHS", "Feeder"]
