"""``affidavit mirror``: render each batch above the mirror's last ``Affidavit-Batch`` trailer
and commit it, one commit per batch (:func:`mirror`); prove mirror = database (:func:`check`).

A batch is mirrored in three steps: (1) its files are rendered from the database's rows as of
that batch (:class:`.shadow.Shadow`) and written to the folder, each atomically (unique temp
file, fsync, rename); (2) one commit is made whose tree is HEAD's with exactly those files as
rendered, carrying the batch's trailers (:mod:`.history`), dated at the batch's time and
authored ``affidavit`` — so a rebuild on any machine makes the same commits, ids and all; (3)
the index is updated for those files. A run killed anywhere is recovered by the next: a file on
disk that already holds what the batch renders is the interrupted run's, left as it is; an
index that differs from HEAD's tree is reset to it at the start; stray temp files are removed.

A file a person changed by hand (its bytes on disk are neither HEAD's nor the batch's) is never
overwritten: the commit records the database's version, the edit stays in the folder (``git
diff`` shows it against the mirror), and the run reports it. Every path is rebuilt from checked
parts and stays inside the folder (:func:`affidavit.store.paths.inside`: no symlink on the way).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ..errors import ConflictError, IntegrityError
from ..storage.base import BatchRecord
from ..storage.postgres import PostgresStorage
from ..store.atomic import fsync_dir, replace_all, stray_temps, write_temp
from ..store.gitrepo import GitRepo, _rebuild
from ..store.paths import inside
from .database import Rows, VaultReader
from .history import AUTHOR, batch_time, message, trailers, verify
from .shadow import Shadow

Step = Callable[[str], None]
"""Called at ``"written"`` (files written, not committed) and ``"committed"`` (commit made,
index not updated) of every batch: where tests stop a run as a crash would."""

TOPS = ("wiki", "sources")
"""The folders the mirror writes (and checks)."""
_STATUS = pygit2.enums.FileStatus


@dataclass
class HandEdit:
    path: str
    kind: str  # modified | deleted | new | staged

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind}


@dataclass
class MirrorReport:
    folder: str
    vault: str
    before: int  # the mirror's last batch when the run began
    after: int  # ... and when it ended (the database's last)
    commits: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # hand-edited files a batch changed: kept
    hand_edits: list[HandEdit] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder, "vault": self.vault, "before": self.before,
            "after": self.after, "commits": self.commits, "kept": self.kept,
            "hand_edits": [h.to_json() for h in self.hand_edits],
        }  # fmt: skip


@dataclass
class CheckReport:
    folder: str
    vault: str
    mirror_batch: int
    database_batch: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder, "vault": self.vault, "ok": self.ok,
            "mirror_batch": self.mirror_batch, "database_batch": self.database_batch,
            "problems": self.problems,
        }  # fmt: skip


def _repository(folder: Path, *, create: bool) -> pygit2.Repository:
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise ConflictError(f"{folder} is not a folder; give the mirror's folder (or a new one).")
    if not folder.exists():
        if not create:
            raise ConflictError(f"{folder} does not exist; run `affidavit mirror` to make it.")
        folder.mkdir(parents=True)
    git = GitRepo(folder, *AUTHOR)
    if not git.exists():
        if not create or any(folder.iterdir()):
            raise ConflictError(
                f"{folder} is not a mirror (no git repository in it)"
                + (" and not empty" if create else "")
                + "; give an empty folder or one `affidavit mirror` made."
            )
        git.init()
    return git.repository()


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One mirror run per folder at a time (an flock in ``.git``, released when the process
    ends however it ends)."""
    fd = os.open(
        folder / ".git" / "affidavit-mirror.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600
    )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConflictError(
                f"another `affidavit mirror` is writing {folder}; wait for it to end."
            ) from None
        yield
    finally:
        os.close(fd)


def _split(rows: Rows) -> dict[int, Rows]:
    """Rows of several batches, by batch; each batch with the sources it cites."""
    sources = {r[0]: r for r in rows.sources}
    out: dict[int, Rows] = {}

    def of(seq: int) -> Rows:
        found = out.get(seq)
        if found is None:
            found = out[seq] = Rows([], [], [], [])
        return found

    for r in rows.pages:
        of(r[0]).pages.append(r)
    for r in rows.claims:
        of(r[0]).claims.append(r)
    for r in rows.links:
        of(r[0]).links.append(r)
    for r in rows.retractions:
        of(r[0]).retractions.append(r)
    for r in rows.evidence:
        batch = of(r[0])
        batch.evidence.append(r)
        if r[3] in sources and sources[r[3]] not in batch.sources:
            batch.sources.append(sources[r[3]])
    for r in rows.carries:
        batch = of(r[0])
        batch.carries.append(r)
        if r[4] in sources and sources[r[4]] not in batch.sources:
            batch.sources.append(sources[r[4]])
    return out


def _audit(records: list[BatchRecord]) -> list[tuple[int, str, str, str | None, str, str]]:
    return [
        (e.seq, e.at, e.action, e.plan_id, e.actor, e.detail) for r in records for e in r.entries
    ]


def _ops(record: BatchRecord) -> list[tuple[str, str]]:
    """Each operation's kind and title, from the batch's audit entries."""
    return [
        (str(op.get("kind", "")), str(op.get("title", "")))
        for e in record.entries
        for op in json.loads(e.detail).get("ops", [])
    ]


def _head(repo: pygit2.Repository) -> pygit2.Commit | None:
    return None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)


def _blob(tree: pygit2.Tree | None, relpath: str) -> pygit2.Oid | None:
    if tree is None:
        return None
    try:
        entry = tree[relpath]
    except KeyError:
        return None
    return entry.id if entry.type == pygit2.enums.ObjectType.BLOB else None


def _on_disk(path: Path) -> pygit2.Oid | bool | None:
    """The blob id of the regular file at ``path``; None when there is none; False when
    something else is there (a folder, a symlink)."""
    try:
        if not path.is_file() or path.is_symlink():
            return False if os.path.lexists(path) else None
    except OSError:
        return False
    return pygit2.hashfile(str(path))


def _recover(repo: pygit2.Repository, folder: Path) -> None:
    """What a run killed mid-way leaves: temp files (removed) and an index that may lag HEAD
    (reset to HEAD's tree; the files on disk are left as they are)."""
    for top in TOPS:
        if (folder / top).is_dir() and not (folder / top).is_symlink():
            for temp in stray_temps(folder / top):
                temp.unlink()
    head = _head(repo)
    index = repo.index
    index.read(True)
    if head is None:
        if len(index):
            index.clear()
            index.write()
    elif index.write_tree(repo) != head.tree_id:  # else keep its stat cache: status stays fast
        index.read_tree(head.tree)
        index.write()


def _commit_batch(
    repo: pygit2.Repository,
    folder: Path,
    files: dict[str, bytes],
    text: str,
    when: int,
    step: Step,
) -> tuple[str, list[str]]:
    """Write the batch's changed files (not over a hand edit) and commit them as rendered;
    returns the commit and the hand-edited files kept."""
    head = _head(repo)
    base = head.tree if head is not None else None
    changes: dict[str, tuple[pygit2.Oid, int]] = {}
    writes: list[tuple[Path, bytes]] = []
    ours: list[str] = []
    kept: list[str] = []
    for relpath, data in sorted(files.items()):
        path = inside(folder, relpath, under=relpath.split("/", 1)[0])
        want = pygit2.hash(data)
        old = _blob(base, relpath)
        if old == want:
            continue
        changes[relpath] = (repo.create_blob(data), pygit2.enums.FileMode.BLOB)
        disk = _on_disk(path)
        if disk == want:  # an interrupted run wrote it already
            ours.append(relpath)
        elif disk == old:  # as the mirror left it (or absent, as it was)
            writes.append((path, data))
            ours.append(relpath)
        else:
            kept.append(relpath)
    for path, _ in writes:
        path.parent.mkdir(parents=True, exist_ok=True)
    replace_all([(write_temp(path, data), path) for path, data in writes])
    for parent in sorted({path.parent for path, _ in writes}):
        fsync_dir(parent)
    step("written")
    if changes:
        tree = _rebuild(repo, base, dict(changes)) or repo.TreeBuilder().write()
    else:
        tree = base.id if base is not None else repo.TreeBuilder().write()
    signature = pygit2.Signature(*AUTHOR, time=when, offset=0)
    parents = [] if head is None else [head.id]
    commit = repo.create_commit("HEAD", signature, signature, text, tree, parents)
    step("committed")
    index = repo.index
    index.read(True)
    for relpath in ours:
        index.add(relpath)
    for relpath in kept:
        index.add(pygit2.IndexEntry(relpath, changes[relpath][0], pygit2.enums.FileMode.BLOB))
    index.write()
    return str(commit), kept


def _ours(path: str) -> bool:
    """Whether ``path`` is the mirror's to write: under wiki/ or sources/, and not in a hidden
    folder or file (``.obsidian/``, ``.trash/`` and the like are the editor's, as the doctor
    has it); anything else in the folder (a README, notes of your own) is yours."""
    parts = path.split("/")
    return parts[0] in TOPS and not any(part.startswith(".") for part in parts)


def hand_edits(repo: pygit2.Repository) -> list[HandEdit]:
    """Every change under wiki/ and sources/ the mirror did not make: files modified, deleted or
    added by hand, or staged."""
    out = []
    for path, flags in sorted(repo.status(untracked_files="all").items()):
        if flags == _STATUS.CURRENT or flags & _STATUS.IGNORED or not _ours(path):
            continue
        if flags & _STATUS.WT_NEW:
            kind = "new"
        elif flags & _STATUS.WT_DELETED:
            kind = "deleted"
        elif flags & _STATUS.WT_MODIFIED or flags & _STATUS.WT_TYPECHANGE:
            kind = "modified"
        else:
            kind = "staged"
        out.append(HandEdit(path, kind))
    return out


def mirror(
    storage: PostgresStorage, vault: str, folder: Path, *, step: Step | None = None
) -> MirrorReport:
    """Bring ``folder`` (made if missing) up to the vault's last batch: one commit per batch."""
    reader = VaultReader(storage, vault)
    repo = _repository(folder, create=True)
    with _locked(folder):
        batches = reader.batches()
        found = trailers(repo)
        if not found and not repo.head_is_unborn:
            raise ConflictError(
                f"{folder} is a git repository with commits but no Affidavit-Batch trailer: not a "
                "mirror. Give an empty folder (or one `affidavit mirror` made)."
            )
        last = verify(found, batches, vault, str(folder))
        _recover(repo, folder)
        report = MirrorReport(str(folder), vault, last, len(batches))
        if last < len(batches):
            shadow = Shadow()
            if last:
                shadow.add(reader.rows(batches, 0, last), batches[:last])
                shadow.add_audit(_audit(batches[:last]))
            by_batch = _split(reader.rows(batches, last, len(batches)))
            for record in batches[last:]:
                touched, new = shadow.add(by_batch.get(record.seq, Rows([], [], [], [])), [record])
                shadow.add_audit(_audit([record]))
                files = shadow.files(touched)
                for source_id, relpath in new.items():
                    files[relpath] = reader.source_data(source_id)
                text = message(record, vault, _ops(record))
                when = int(batch_time(record).timestamp())
                commit, kept = _commit_batch(repo, folder, files, text, when, step or _noop)
                report.commits.append(commit)
                report.kept += [k for k in kept if k not in report.kept]
        report.hand_edits = hand_edits(repo)
    return report


def _noop(_: str) -> None:
    return None


def expected(reader: VaultReader, batches: list[BatchRecord], upto: int) -> dict[str, bytes]:
    """Every file of the mirror at batch ``upto``, rendered in one go from the database (at the
    database's last batch: its rows as they are now, ``updated_at`` and all). Before the first
    batch, nothing: a mirror starts with its first batch's commit."""
    if upto == 0:
        return {}
    shadow = Shadow()
    shadow.add(reader.rows(batches, 0, upto), batches[:upto], exact=upto == len(batches))
    shadow.add_audit(_audit(batches[:upto]))
    files = shadow.files()
    for source_id, relpath in shadow.source_paths().items():
        files[relpath] = reader.source_data(source_id)
    return files


def _tree_files(
    repo: pygit2.Repository, tree: pygit2.Tree | None, prefix: str = ""
) -> dict[str, str]:
    out: dict[str, str] = {}
    if tree is None:
        return out
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            out.update(_tree_files(repo, entry, path + "/"))
        else:
            out[path] = str(entry.id)
    return out


def check(storage: PostgresStorage, vault: str, folder: Path) -> CheckReport:
    """Whether ``folder`` is the vault's mirror: its trailers the database's batches, its last
    commit's files exactly what the database renders (every page, the generated files, every
    cited source's bytes, nothing else under wiki/ and sources/), and no hand edit on disk."""
    reader = VaultReader(storage, vault)
    batches = reader.batches()
    report = CheckReport(str(folder), vault, 0, len(batches))
    try:
        repo = _repository(folder, create=False)
        report.mirror_batch = verify(trailers(repo), batches, vault, str(folder))
    except (ConflictError, IntegrityError) as exc:
        report.problems.append(str(exc))
        return report
    if report.mirror_batch < len(batches):
        report.problems.append(
            f"the mirror is at batch {report.mirror_batch}, the database at {len(batches)}: "
            f"run `affidavit mirror --database URL --vault {vault} {folder}` to catch up."
        )
    want = {
        p: str(pygit2.hash(d)) for p, d in expected(reader, batches, report.mirror_batch).items()
    }
    head = _head(repo)
    have = {
        p: oid
        for p, oid in _tree_files(repo, head.tree if head is not None else None).items()
        if p.split("/", 1)[0] in TOPS
    }
    for path in sorted(set(want) | set(have)):
        if path not in have:
            report.problems.append(f"{path}: in the database, missing from the mirror's commit")
        elif path not in want:
            report.problems.append(f"{path}: in the mirror's commit, not from the database")
        elif have[path] != want[path]:
            report.problems.append(f"{path}: the mirror's commit differs from the database")
    for edit in hand_edits(repo):
        report.problems.append(
            f"{edit.path}: {edit.kind} by hand (kept; `git -C {folder} diff` shows it; "
            "the database is unchanged)"
        )
    return report
