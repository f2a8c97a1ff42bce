"""The one door (SPEC W4, W6): :class:`Batch` is the only code that writes the wiki.

An apply is all or nothing across database, markdown and git. Plans approved together are one
batch (:func:`apply_batch`; :func:`apply` is a batch of one; an ingest keeps a batch open while
it proposes and applies chunk after chunk), applied in dependency order as one unit:

1. under the vault's writer lock, one SQLite transaction is opened; in it the gate re-admits each
   plan's selected operations against the wiki as the earlier plans of the batch left it (not
   again for a plan whose admission just ran inside this batch, with nothing written since);
2. that transaction writes pages, claims, links, context, each plan's status and audit entry
   (each plan in a savepoint: one that fails is undone alone, or its whole group with it);
3. the affected files are rendered once from inside the transaction (``log.md`` appended to, not
   rebuilt) and written to unique temp files, all fsynced in one parallel pass;
4. a journal naming every plan, file and temp file is written and fsynced;
5. the transaction commits (the commit point);
6. temp files are renamed over the old ones and the directory fsynced;
7. one git commit of exactly the files written records the batch, with an ``Affidavit-Plan``
   trailer per plan and an ``Affidavit-Batch`` trailer;
8. the journal is removed.

A crash before 5 rolls back (the temp files are deleted); a crash after 5 rolls forward (files are
re-rendered from the database, which is deterministic, and the commit is made if HEAD lacks it).
See :mod:`affidavit.store.recovery`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..clock import iso
from ..db import transaction
from ..errors import AffidavitError, ConflictError
from ..evidence import Verifier
from ..gate.admission import Admission
from ..hashing import canonical_json
from ..plan import snapshots
from ..plan.schema import UpdateContext
from ..retrieval.tantivy_index import refresh_search_index, trim_change_log
from ..sources.store import SourceStore
from ..vault import Vault
from . import catalog
from .atomic import atomic_write, fsync_dir, replace_all, temp_path
from .atomic import write_all_synced as _write_all
from .batch import Prepared, dependency_order, numbers, prepare
from .batch import load_plan as load_plan  # re-exported: where callers have found it
from .door_log import LOG_TEXT, last_applied, log_on_disk, remember_log
from .door_plan import ApplyResult, Approval, batch_message, name_batch, readmit, record
from .parts import choose
from .paths import inside, page_relpath
from .render import (
    LOG_HEAD,
    context_head,
    expected_files,
    log_entries,
    render_context,
    render_path,
)
from .writer import Writer
from .writer import claim_id as claim_id  # re-exported: replay derives ids the same way

__all__ = [  # the door's names; Approval and ApplyResult live in .door_plan, found here too
    "APPLY_STEPS",
    "ApplyResult",
    "Approval",
    "Batch",
    "Step",
    "apply",
    "apply_batch",
    "claim_id",
    "gate_services",
    "load_plan",
    "open_batch",
    "render_all_files",
]

Step = Callable[[str], None]
APPLY_STEPS = (
    "admitted",
    "db_written",
    "temp_files",
    "journal",
    "db_commit",
    "renamed",
    "git_commit",
    "done",
)
"""The points of an apply, in order; tests kill the process at each one in turn."""


_SERVICES = "_affidavit_gate_services"


def gate_services(vault: Vault) -> tuple[SourceStore, Verifier]:
    """The source store and quote verifier the gate reads through. The store is kept per vault
    and thread, so the proposals and applies of an ingest read each source's text, flags and id
    once; a text whose file changed since is dropped first, so the gate reads what is on disk
    (a tampered source fails verification as it would with a new store)."""
    stores: dict[int, SourceStore] = vars(vault).setdefault(_SERVICES, {})
    store = stores.get(threading.get_ident())
    if store is None:
        store = stores[threading.get_ident()] = SourceStore(vault)
    store.forget_changed()  # a text changed on disk is read again, as by a new store
    return store, Verifier(store)


def _noop(_: str) -> None:
    return None


def apply(
    vault: Vault,
    plan_id: str,
    selected_ops: list[int] | None,
    approval: Approval,
    *,
    step: Step | None = None,
) -> ApplyResult:
    """Apply the ``selected_ops`` (0-based; default: every admitted one not applied yet) of a
    recorded plan: a batch of one (:func:`apply_batch`), or one more plan of the batch open on
    this vault.

    This is the only function that writes pages, claims, links, context and wiki files.
    Applying a plan that is already applied is a no-op.
    """
    return apply_batch(vault, [(plan_id, selected_ops)], approval, step=step)[0]


def apply_batch(
    vault: Vault,
    items: Sequence[tuple[str, list[int] | None]],
    approval: Approval,
    *,
    step: Step | None = None,
) -> list[ApplyResult]:
    """Apply several recorded plans as one unit (SPEC W6): one journal, one transaction, one
    commit naming every plan. Plans are applied in dependency order (one that extends a page
    another creates goes after it); if any of them no longer passes, nothing is applied.
    Returns one result per item, in the order given. Inside an open :class:`Batch` the plans
    join it (all or nothing among themselves) and are committed with it."""
    current = open_batch(vault)
    if current is not None:
        return current.apply_many(items, approval)
    with vault.write_lock():
        results, prepared = _prepare_all(vault, items, approval)
        if prepared:
            ordered = dependency_order(vault, prepared)
            with Batch(vault, step=step) as batch:
                for result in batch.apply_prepared(ordered, approval):
                    results[result.plan_id] = result
        return [results[plan_id] for plan_id, _ in items]


def _prepare_all(
    vault: Vault,
    items: Sequence[tuple[str, list[int] | None]],
    approval: Approval,
    fresh: Callable[[str], Admission | None] = lambda _: None,
) -> tuple[dict[str, ApplyResult], list[Prepared]]:
    results: dict[str, ApplyResult] = {}
    batch: list[Prepared] = []
    for plan_id, ops in items:
        if plan_id in results or any(p.plan_id == plan_id for p in batch):
            continue
        prepared = prepare(vault, plan_id, ops, fresh(plan_id), sure_only=approval.sure_only)
        if prepared is None:
            results[plan_id] = ApplyResult(
                plan_id, False, f"plan {plan_id[:12]} is already applied; nothing to do"
            )
        elif approval.kind == "policy" and prepared.agent:  # W13, at the one door as well
            results[plan_id] = ApplyResult(
                plan_id,
                False,
                f"plan {plan_id[:12]} is an agent's: the policy never applies it; a person "
                f"approves it in the inbox (`affidavit inbox show {plan_id[:12]}`)",
            )
        elif approval.sure_only and not set(prepared.selection) & set(prepared.stored.sure_ops):
            results[plan_id] = ApplyResult(
                plan_id,
                False,
                f"plan {plan_id[:12]}: nothing of it goes in without a person; it waits in the "
                f"inbox (`affidavit inbox show {plan_id[:12]}`)",
            )
        else:
            batch.append(prepared)
    return results, batch


_OPEN: dict[int, Batch] = {}
"""The batch open on each database connection (by ``id``)."""


def open_batch(vault: Vault) -> Batch | None:
    """The batch open on this vault's connection, if any: applies join it, and a proposal
    admitted inside it is not admitted again (:meth:`Batch.admitted`)."""
    return _OPEN.get(id(vault.db))


@dataclass
class _Applied:
    item: Prepared
    admission: Admission
    writer: Writer
    summary: list[dict[str, object]]
    approval: Approval
    result: ApplyResult


class Batch:
    """One unit of the door: an open transaction under the writer lock that plans are applied
    into one after another, then committed with one render, one fsync pass, one journal and one
    git commit (:meth:`close`). ``with Batch(vault) as batch:`` commits on success and rolls
    everything back on an error."""

    def __init__(self, vault: Vault, *, step: Step | None = None) -> None:
        self.vault = vault
        self.step = step or _noop
        self.store, self.verifier = gate_services(vault)
        self.batch_id = ""
        self.applied: list[_Applied] = []
        self.opened_at = time.monotonic()
        self._fresh: dict[str, tuple[Admission, int]] = {}
        self._checked: set[str] = set()
        self._adopted: set[str] = set()
        self._audit_base = 0
        self._since = 0  # the last claim's rowid when the batch opened
        self._lock = ExitStack()

    # -- opening and closing --------------------------------------------------------------------
    def open(self) -> Batch:
        if open_batch(self.vault) is not None:
            raise ConflictError("a batch is already open on this vault; apply into it instead.")
        self._lock.enter_context(self.vault.write_lock())
        try:
            _door_connection(self.vault.db)
            self.vault.db.execute("BEGIN IMMEDIATE")
            self._defer_claim_indexing()
        except BaseException:
            if self.vault.db.in_transaction:
                self.vault.db.execute("ROLLBACK")
            self._lock.close()
            raise
        _OPEN[id(self.vault.db)] = self
        self.opened_at = time.monotonic()
        return self

    def close(self, commit: bool = True) -> None:
        """Commit the batch (or roll it back with ``commit=False``) and release the lock."""
        try:
            if commit:
                self._commit()
            else:
                self.vault.db.execute("ROLLBACK")
        finally:
            _OPEN.pop(id(self.vault.db), None)
            self._lock.close()

    def __enter__(self) -> Batch:
        return self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(commit=kind is None)

    @property
    def age(self) -> float:
        return time.monotonic() - self.opened_at

    # -- applying -------------------------------------------------------------------------------
    def admitted(self, plan_id: str, admission: Admission) -> None:
        """The gate just admitted (and the inbox recorded) ``plan_id`` inside this batch: if
        nothing is written before it is applied, that verdict stands and is not recomputed."""
        self._fresh[plan_id] = (admission, self.vault.db.total_changes)

    def _fresh_verdicts(self, plan_id: str) -> Admission | None:
        """The verdicts the gate gave ``plan_id`` inside this batch, if nothing was written
        since (what the inbox recorded as its admission column)."""
        fresh = self._fresh.get(plan_id)
        if fresh is None or fresh[1] != self.vault.db.total_changes:
            return None
        return fresh[0]

    def apply_many(
        self, items: Sequence[tuple[str, list[int] | None]], approval: Approval
    ) -> list[ApplyResult]:
        """:func:`apply_batch` into this batch: the plans all join it, or none does."""
        results, prepared = _prepare_all(self.vault, items, approval, self._fresh_verdicts)
        if prepared:
            ordered = dependency_order(self.vault, prepared)
            for result in self.apply_prepared(ordered, approval):
                results[result.plan_id] = result
        return [results[plan_id] for plan_id, _ in items]

    def apply_prepared(self, ordered: list[Prepared], approval: Approval) -> list[ApplyResult]:
        db = self.vault.db
        if not self.batch_id:
            self.batch_id = name_batch(db, ordered)
            self._audit_base = int(
                db.execute("SELECT coalesce(max(seq), 0) FROM audit").fetchone()[0]
            )
        with transaction(db):  # a savepoint: this group joins the batch whole or not at all
            group = [self._apply_one(item, approval) for item in ordered]
            self._refuse_hand_edits(group)
        self.applied += group
        return [a.result for a in group]

    def _admission(self, item: Prepared) -> Admission:
        fresh = self._fresh.pop(item.plan_id, None)
        if fresh is not None:
            admission, changes = fresh
            if (
                changes == self.vault.db.total_changes
                and not item.done
                and item.selection == admission.admitted_ops
            ):
                return admission
        return readmit(self.vault, self.store, self.verifier, item)

    def _apply_one(self, item: Prepared, approval: Approval) -> _Applied:
        db = self.vault.db
        admission = self._admission(item)
        if not self.applied:
            self.step("admitted")
        writer = Writer(self.vault, self.store, item.plan_id, iso(self.vault.clock()))
        ops = item.plan.operations
        if any(isinstance(ops[i], UpdateContext) for i in admission.admitted_ops):
            # context.md before the plan: a delta of the snapshot before (plan/snapshots.py)
            snapshots.save(db, item.plan_id, writer.now, render_context(db))
        parts = choose(item, admission)
        summary = writer.write(item.plan, admission, parts)
        if writer.context_changed:  # only new context entries can push it past its cap
            writer.spill_context(self.vault.config.context_max_lines)
        remaining, held = record(
            self.vault, item, admission, parts, writer, summary, approval, self.batch_id
        )
        waiting = sum(len(h.claims) + len(h.texts) for h in held.values())
        result = ApplyResult(
            item.plan_id,
            True,
            f"applied plan {item.plan_id[:12]}: {len(parts.ops)} operation(s), "
            f"{len(writer.claim_ids)} claim(s)"
            + (f"; {waiting} text(s) wait for a person" if waiting else "")
            + (f", {len(writer.superseded)} superseded" if writer.superseded else "")
            + (f", {len(writer.retracted)} retracted" if writer.retracted else "")
            + (
                f"; operation(s) {numbers(remaining)} still pending "
                f"(`affidavit approve {item.plan_id[:12]} --ops {numbers(remaining)}`)"
                if remaining
                else ""
            ),
            ops=list(parts.ops),
            claims=writer.claim_ids,
            admission=admission,
            superseded=writer.superseded,
            retracted=writer.retracted,
            pending_ops=remaining,
        )
        return _Applied(item, admission, writer, summary, approval, result)

    def _refuse_hand_edits(self, group: list[_Applied]) -> None:
        """Never overwrite a hand edit silently: a page or context.md that differs from its
        committed render blocks the group, unless a plan of the batch is the doctor's proposal
        for that file. Each file is checked once per batch (the door wrote it since)."""
        for applied in group:
            origin = self.vault.db.execute(
                "SELECT origin FROM plans WHERE id = ?", (applied.item.plan_id,)
            ).fetchone()
            if origin and origin[0].startswith("doctor:"):
                self._adopted.add(origin[0].removeprefix("doctor:"))
        new = [p for p in _paths([a.writer for a in group]) if p not in self._checked]
        self._refuse_edited(new)
        self._checked.update(new)

    def _refuse_edited(self, paths: list[str]) -> None:
        edited = [
            p
            for p in self.vault.git.changed([p for p in paths if p not in GENERATED_ONLY])
            if p not in self._adopted
        ]
        if edited:
            raise ConflictError(
                f"{', '.join(edited)} was edited by hand and this plan would overwrite it. Turn "
                "the edit into a plan with `affidavit doctor --propose`, or drop it with "
                f"`git checkout -- {' '.join(edited)}` (in the vault), then approve again."
            )

    # -- indexing the batch's claims ------------------------------------------------------------
    def _defer_claim_indexing(self) -> None:
        """While the batch is open, a new claim is added to ``claims_fts`` and logged in
        ``search_changes`` not by the row triggers but once for the whole batch, by
        :meth:`_index_claims` before the ``COMMIT`` (``door_deferred``, migration
        ``m012_door_bulk_claims``). An FTS5 table flushes its pending terms to a new segment at
        every statement savepoint, which an insert with triggers opens: a statement per claim
        cost 30-70 us, and one per plan still made a segment (and its merges) per plan, three
        times the cost of one per batch. Nothing reads ``claims_fts`` inside a batch, nothing
        changes a claim's text or deletes a claim, and the search index reads the log after
        the ``COMMIT``: what the batch commits is what the row triggers would have left."""
        db = self.vault.db
        self._since = int(db.execute("SELECT coalesce(max(rowid), 0) FROM claims").fetchone()[0])
        db.execute("INSERT INTO door_deferred (since) VALUES (?)", (self._since,))

    def _index_claims(self) -> None:
        """The batch's claims (every claim after its first rowid) into ``claims_fts`` and the
        search change log, in rowid order, one statement each; the triggers take over again."""
        db = self.vault.db
        db.execute("DELETE FROM door_deferred")
        db.execute(
            "INSERT INTO claims_fts (rowid, text) SELECT rowid, text FROM claims "
            "WHERE rowid > ? ORDER BY rowid",
            (self._since,),
        )
        db.execute(
            "INSERT INTO search_changes (kind, key) SELECT 'claim', id FROM claims "
            "WHERE rowid > ? ORDER BY rowid",
            (self._since,),
        )
        trim_change_log(db)  # bounded by the changes an index can still read, not the history

    # -- committing -----------------------------------------------------------------------------
    def _render(self, paths: list[str]) -> dict[str, str]:
        db = self.vault.db
        rendered = {}
        for relpath in paths:
            if relpath == "wiki/log.md":
                rendered[relpath] = self._render_log()
            else:
                text = render_path(db, relpath)
                assert text is not None
                rendered[relpath] = text
                if relpath == "wiki/index.md":
                    catalog.remember_index(db, text)
        return rendered

    def _context_head(self, paths: list[str], rendered: dict[str, str]) -> None:
        """context.md's head counts pages and names the main topics (:mod:`.overview`), so a
        batch that adds no context entry may still change it: then it is written too, unless
        it was edited by hand (the doctor turns that edit into a proposal; the door never
        overwrites it for a head of counts and links)."""
        relpath = "wiki/context.md"
        if relpath in paths:
            return
        lines = catalog.head(self.vault.db, context_head)  # as stored while pages and links stay
        head = "\n".join(["", *lines]).rstrip("\n") + "\n"  # as rendered
        path = inside(self.vault.root, relpath)  # no symlinked wiki/ or context.md
        try:
            if head in path.read_text(encoding="utf-8"):
                return  # the entries change only with a context write (in ``paths`` then)
        except (OSError, UnicodeDecodeError):
            pass
        if self.vault.git.changed([relpath]):
            return
        paths.append(relpath)
        rendered[relpath] = render_context(self.vault.db)

    def _drop_unchanged_index(self, paths: list[str]) -> None:
        """``index.md`` left out before it is rendered: when no page's name, title, summary or
        category and no link changed since the door last rendered it (:mod:`.catalog`), its
        rendering is the text whose hash the door kept; the file on disk has those bytes and
        is HEAD's, so there is nothing to write or commit."""
        relpath = "wiki/index.md"
        if relpath not in paths:
            return
        try:
            same = catalog.index_unchanged(
                self.vault.db, inside(self.vault.root, relpath).read_bytes()
            )
        except (OSError, AffidavitError):
            return
        if same and not self.vault.git.changed([relpath]):
            paths.remove(relpath)

    def _drop_unchanged(self, paths: list[str], rendered: dict[str, str]) -> None:
        """``index.md`` changes only with its pages (titles, summaries, categories, new pages):
        when it renders to the bytes on disk, which are HEAD's, it is neither written nor
        committed again, so a batch that only adds claims costs nothing for a catalog that
        grows with the wiki. A hand-edited or missing index is written as before."""
        relpath = "wiki/index.md"
        if relpath not in paths:
            return
        try:
            same = inside(self.vault.root, relpath).read_bytes() == rendered[relpath].encode()
        except (OSError, AffidavitError):
            return
        if same and not self.vault.git.changed([relpath]):
            paths.remove(relpath)
            del rendered[relpath]

    def _render_log(self) -> str:
        """``wiki/log.md``: this batch's entries appended to the text rendered last time, when
        that text covers exactly the entries before the batch; rendered whole otherwise."""
        db = self.vault.db
        cached = LOG_TEXT.get(str(self.vault.root)) or log_on_disk(self.vault)
        if cached is not None and cached[0] == last_applied(db, self._audit_base):
            return cached[1] + log_entries(db, self._audit_base)
        return LOG_HEAD + log_entries(db)

    def _commit(self) -> None:
        db = self.vault.db
        if not self.applied:  # proposals and records only: nothing for the wiki or git
            self._index_claims()
            db.execute("COMMIT")
            return
        journal_path = self.vault.journal_dir / f"{self.batch_id}.json"
        temps: list[tuple[Path, Path]] = []
        journal_temp: Path | None = None
        try:
            self._index_claims()
            self.step("db_written")
            paths = _paths([a.writer for a in self.applied])
            if len(self.applied) > 1:  # a file edited by hand since its plan joined the batch
                self._refuse_edited(paths)
            self._drop_unchanged_index(paths)
            rendered = self._render(paths)
            self._drop_unchanged(paths, rendered)
            self._context_head(paths, rendered)
            message = batch_message(
                [(a.item.plan_id, a.summary, a.approval) for a in self.applied], self.batch_id
            )
            for relpath in paths:
                final = inside(self.vault.root, relpath)  # no symlinked wiki/ or page
                temps.append((final, temp_path(final)))
            journal = {
                "batch": self.batch_id,
                "plans": [a.item.plan_id for a in self.applied],
                "message": message,
                "files": [
                    {
                        "path": str(final.relative_to(self.vault.root)),
                        "temp": str(temp.relative_to(self.vault.root)),
                    }
                    for final, temp in temps
                ],
            }
            journal_temp = temp_path(journal_path)
            writes = [
                (temp, rendered[p].encode(), 0o644)
                for (_, temp), p in zip(temps, paths, strict=True)
            ]
            # One fsync pass for the files and the journal's temp file: the journal names
            # the temp files but needs nothing of theirs on disk, and both are durable before
            # the journal is renamed into place (its directory fsynced) and the COMMIT.
            _write_all([*writes, (journal_temp, canonical_json(journal).encode(), 0o600)])
            self.step("temp_files")
            os.replace(journal_temp, journal_path)
            fsync_dir(self.vault.journal_dir)
            self.step("journal")
        except BaseException:
            db.execute("ROLLBACK")
            for _, temp in temps:
                temp.unlink(missing_ok=True)
            if journal_temp is not None:
                journal_temp.unlink(missing_ok=True)
            journal_path.unlink(missing_ok=True)
            raise
        db.execute("COMMIT")
        self.step("db_commit")
        LOG_TEXT[str(self.vault.root)] = (last_applied(db), rendered["wiki/log.md"])
        remember_log(self.vault, LOG_TEXT[str(self.vault.root)])
        replace_all([(temp, final) for final, temp in temps])
        # The renames are made durable while git commits (which reads the files, not their
        # durability); both are done before the journal goes.
        with ThreadPoolExecutor(1) as pool:
            renamed = pool.submit(fsync_dir, self.vault.wiki_dir)
            self.step("renamed")
            commit = self.vault.git.commit(message, paths)
            renamed.result()
        self.step("git_commit")
        # Not fsynced: a journal that comes back after a power loss is rolled forward again,
        # which re-renders the same files from the database and finds the commit in HEAD; the
        # next batch's journal fsyncs this directory, so only the last batch's can come back.
        journal_path.unlink()
        self.step("done")
        refresh_search_index(db)  # derived, self-healing: a crash before this is caught up later
        for applied in self.applied:
            applied.result.commit = commit


DOOR_CACHE_KIB = 65_536


def _door_connection(db: sqlite3.Connection) -> None:
    """Settings of a connection the door writes through (outside a transaction). A batch
    writes thousands of claims into one transaction, so with SQLite's defaults (a 2 MiB page
    cache, statement journals in temp files) the pages it dirtied spilled into the WAL
    before the commit and every insert with triggers wrote its statement journal to a file: a
    page cache of up to ``DOOR_CACHE_KIB`` (filled only as pages are read) and temp storage in
    memory keep both in memory. Neither changes what is written."""
    size = int(db.execute("PRAGMA cache_size").fetchone()[0])  # KiB if < 0, else pages
    if (size < 0 and -size < DOOR_CACHE_KIB) or 0 <= size < DOOR_CACHE_KIB // 4:
        db.execute(f"PRAGMA cache_size = -{DOOR_CACHE_KIB}")
    db.execute("PRAGMA temp_store = MEMORY")


def _paths(writers: list[Writer]) -> list[str]:
    """The files a batch's writers touched: index and log always, context and pages as written."""
    paths = ["wiki/index.md", "wiki/log.md"]
    if any(w.context_changed for w in writers):
        paths.append("wiki/context.md")
    return paths + [page_relpath(slug) for slug in sorted({s for w in writers for s in w.touched})]


GENERATED_ONLY = ("wiki/index.md", "wiki/log.md")
"""Files with no content of their own: regenerated whatever is on disk."""


def render_all_files(vault: Vault) -> list[str]:
    """Write every wiki file as the database renders it (used by init and repair); returns the
    paths that changed."""
    changed = []
    for relpath, text in expected_files(vault.db).items():
        path = inside(vault.root, relpath)
        data = text.encode()
        if not path.exists() or path.read_bytes() != data:
            atomic_write(path, data)
            changed.append(relpath)
    return changed
