"""The sources of an ingest's targets added: a file, a folder's files, a URL.

The part of :class:`.pipeline.Ingestor` that turns a target into sources to read: a folder's
files are stored together (and the files gone from it proposed as deleted), each source's
failure kept as its outcome so the run goes on past a bad one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import AffidavitError
from ..sources.store import AddResult, SourceRecord, SourceStore
from ..vault import Vault
from .lineage import follow_moves, propose_vanished, vanished_under
from .renames import follow_renamed
from .report import IngestReport, SourceOutcome


def _is_url(target: str) -> bool:
    return target.startswith(("http://", "https://")) or "://" in target


class SourceAdding:
    """The methods of :class:`.pipeline.Ingestor` that add its targets' sources; the
    attributes they read are set by its constructor."""

    vault: Vault
    store: SourceStore
    actor: str
    report: IngestReport
    adding_progress: Callable[[str, int, int], None] | None

    def _expand(
        self, target: str, trust: str | None
    ) -> list[tuple[str, Callable[[], SourceRecord]]]:
        if _is_url(target):
            return [(target, lambda: self.store.add_url(target, trust).record)]
        path = Path(target).expanduser()
        if path.is_dir():
            try:
                files = self.store.discover(path)
            except AffidavitError as exc:
                return [(target, _raiser(exc))]
            # a file moved and edited inside the folder: the same document, by its text
            gone = [Path(r.origin_key) for r in vanished_under(self.vault, path)]
            follow_renamed(self.vault, gone, files, self.actor)
            # stored together: one fsync pass, one transaction and one git commit per group
            outcomes = self.store.add_files(files, trust, self._adding(path))
            # a file moved inside the folder is the same document, not a deletion
            follow_moves(
                self.vault,
                [
                    (f, o.record)
                    for f, o in zip(files, outcomes, strict=True)
                    if isinstance(o, AddResult) and not o.added
                ],
                self.actor,
            )
            proposed = propose_vanished(self.vault, path, self.actor)
            self.report.deleted += [p.plan_id for p in proposed]
            return [(str(f), _settled(o)) for f, o in zip(files, outcomes, strict=True)]
        return [(target, self._adder(path, trust))]

    def _adder(self, path: Path, trust: str | None) -> Callable[[], SourceRecord]:
        def add() -> SourceRecord:
            result = self.store.add_file(path, trust)
            if not result.added:  # bytes stored before: from a file since moved here?
                follow_moves(self.vault, [(path, result.record)], self.actor)
            return result.record

        return add

    def _adding(self, folder: Path) -> Callable[[int, int], None] | None:
        """``progress`` of the files of ``folder`` being read, labelled as such."""
        progress = self.adding_progress
        if progress is None:
            return None
        label = f"adding sources from {folder.name or folder}"
        return lambda done, total: progress(label, done, total)

    def _add_one(
        self, target: str, add: Callable[[], SourceRecord]
    ) -> tuple[SourceOutcome, SourceRecord | None]:
        try:
            record = add()
        except AffidavitError as exc:
            return SourceOutcome(target=target, status="failed", message=str(exc)), None
        outcome = SourceOutcome(
            target=target,
            status="ingested",
            source_id=record.id,
            name=record.name,
            trust=record.trust,
        )
        return outcome, record


def _settled(outcome: AddResult | AffidavitError) -> Callable[[], SourceRecord]:
    if isinstance(outcome, AffidavitError):
        return _raiser(outcome)
    return lambda: outcome.record


def _raiser(exc: AffidavitError) -> Callable[[], SourceRecord]:
    def fail() -> SourceRecord:
        raise exc

    return fail
