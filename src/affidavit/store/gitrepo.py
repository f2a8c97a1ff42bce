"""The vault's git repository, driven in-process through libgit2 (pygit2).

Every commit is authored and committed as the configured name (default "affidavit"); commits for
applied plans carry an ``Affidavit-Plan: <id>`` trailer so recovery can tell whether a plan's commit
already exists. libgit2 runs no hooks, no ``core.fsmonitor`` and no filter commands from the
repository's config, so a commit never runs a program the repository names. The history is the
owner's alone (:mod:`affidavit.privacy`): ``.git/`` is ``0700``, libgit2 writes loose objects
``0400`` in ``0700`` folders whatever the umask, and ``core.sharedRepository = 0600`` tells the git
command (a ``git gc`` the owner runs) the same.

:meth:`GitRepo.commit` has the semantics of ``git commit --only PATHS``: the new tree is HEAD's
tree with exactly those paths taken from the working tree; whatever else is modified, new or even
staged stays out of the commit (and stays staged). :meth:`GitRepo.run` keeps the ``git`` command
for what only it offers (the doctor's formatted log, tests).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pygit2

from ..errors import VaultError
from ..privacy import GIT_DIR_MODE, GIT_FILE_MODE, GIT_SHARED_REPOSITORY

PLAN_TRAILER = "Affidavit-Plan"
BATCH_TRAILER = "Affidavit-Batch"
_LOCKS = ("index.lock", "HEAD.lock", "refs/heads/main.lock")
"""Lock files a process killed mid-commit can leave (cleared under the vault's lock)."""


class GitRepo:
    """The repository at ``root``: in-process for every operation the door and doctor need."""

    def __init__(self, root: Path, author_name: str, author_email: str) -> None:
        self.root = root
        self.author = (author_name, author_email)
        self.env = {
            **os.environ,
            "GIT_AUTHOR_NAME": author_name,
            "GIT_AUTHOR_EMAIL": author_email,
            "GIT_COMMITTER_NAME": author_name,
            "GIT_COMMITTER_EMAIL": author_email,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
        }
        self._repo: pygit2.Repository | None = None
        self._folders: tuple[pygit2.Oid, dict[str, pygit2.Tree | None]] | None = None

    # -- the repository -------------------------------------------------------------------------
    def repository(self) -> pygit2.Repository:
        """The open repository (opened once; libgit2 re-reads refs and the index as needed)."""
        if self._repo is None:
            try:
                repo = pygit2.Repository(str(self.root))
            except pygit2.GitError as exc:
                raise VaultError(
                    f"{self.root} has no usable git repository ({exc}). Run `affidavit doctor`."
                ) from None
            objects = os.path.join(repo.path, "objects")
            odb = pygit2.Odb()  # libgit2's own backends, with the modes its default leaves at 0444
            odb.add_backend(pygit2.OdbBackendPack(objects), 2)
            odb.add_backend(
                pygit2.OdbBackendLoose(objects, -1, False, GIT_DIR_MODE, GIT_FILE_MODE), 1
            )
            repo.set_odb(odb)
            self._repo = repo
        return self._repo

    def run(self, *args: str, check: bool = True) -> str:
        """Run the ``git`` command (for what libgit2 doesn't offer: formatted logs)."""
        if shutil.which("git") is None:
            raise VaultError(
                "git is not installed. Install it (e.g. `apt-get install git`) and retry."
            )
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise VaultError(
                f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc.stdout

    def exists(self) -> bool:
        return (self.root / ".git").exists()

    def init(self) -> None:
        if not self.exists():
            pygit2.init_repository(str(self.root), initial_head="main")
        config = self.repository().config
        config["user.name"], config["user.email"] = self.author
        config["core.autocrlf"] = "false"
        self.secure()

    def secure(self) -> None:
        """The history the owner's alone: ``.git/`` 0700 and the git command told to write
        0600/0400 (``core.sharedRepository``); a repository made before this is made so."""
        folder = self.root / ".git"
        if folder.is_dir() and not folder.is_symlink():
            if stat.S_IMODE(folder.lstat().st_mode) & 0o077:
                os.chmod(folder, 0o700)
            config = self.repository().config
            key = "core.sharedRepository"
            if key not in config or config[key] != GIT_SHARED_REPOSITORY:
                config[key] = GIT_SHARED_REPOSITORY

    def locks(self) -> list[Path]:
        """The git lock files present (a commit in progress, or one killed mid-way)."""
        return [lock for name in _LOCKS if (lock := self.root / ".git" / name).exists()]

    def clear_stale_lock(self) -> None:
        """Remove lock files left by a git process killed mid-commit (we hold the vault lock)."""
        for lock in self.locks():
            lock.unlink(missing_ok=True)

    # -- reading --------------------------------------------------------------------------------
    def _head_commit(self) -> pygit2.Commit | None:
        repo = self.repository()
        if repo.head_is_unborn:
            return None
        commit = repo.head.peel(pygit2.Commit)
        assert isinstance(commit, pygit2.Commit)
        return commit

    def head(self) -> str | None:
        commit = self._head_commit()
        return None if commit is None else str(commit.id)

    def head_trailers(self, name: str) -> list[str]:
        """The values of HEAD's ``name:`` trailers (none when there is no HEAD)."""
        commit = self._head_commit()
        if commit is None:
            return []
        return [
            line.split(":", 1)[1].strip()
            for line in commit.message.splitlines()
            if line.startswith(name + ":")
        ]

    def head_plan(self) -> str | None:
        """The plan id in HEAD's (first) ``Affidavit-Plan`` trailer, if HEAD is a plan commit."""
        plans = self.head_trailers(PLAN_TRAILER)
        return plans[0] if plans else None

    def tree_of_head(self) -> str | None:
        commit = self._head_commit()
        return None if commit is None else str(commit.tree_id)

    def log_subjects(self) -> list[str]:
        commit = self._head_commit()
        if commit is None:
            return []
        walker = self.repository().walk(commit.id, pygit2.enums.SortMode.TOPOLOGICAL)
        return [c.message.split("\n", 1)[0] for c in walker]

    def _head_blob(self, relpath: str) -> str | None:
        commit = self._head_commit()
        if commit is None:
            return None
        try:
            entry = commit.tree[relpath]
        except KeyError:
            return None
        return str(entry.id)

    def in_head(self, relpath: str) -> bool:
        """Whether HEAD's tree holds the file ``relpath`` (committed, whatever is on disk now)."""
        return self._head_blob(relpath) is not None

    def _head_blobs(self, paths: list[str]) -> dict[str, str | None]:
        """:meth:`_head_blob` of each of ``paths``, with HEAD resolved once and each folder's
        tree read once per HEAD commit (a lookup by full path reads every tree on the way
        again: ``wiki/``'s holds an entry per page, and the door asks after every plan). A
        commit's trees never change: they are kept until HEAD is another commit."""
        commit = self._head_commit()
        if commit is None:
            return dict.fromkeys(paths)
        root = commit.tree
        kept = self._folders
        if kept is None or kept[0] != commit.id:
            kept = self._folders = (commit.id, {})
        folders = kept[1]
        out: dict[str, str | None] = {}
        for relpath in paths:
            folder, _, name = relpath.rpartition("/")
            if not folder or not name:
                out[relpath] = self._head_blob(relpath)  # top level or odd: as before
                continue
            if folder not in folders:
                try:
                    tree = root[folder]
                except KeyError:
                    tree = None
                folders[folder] = tree if isinstance(tree, pygit2.Tree) else None
            tree = folders[folder]
            entry = tree[name] if tree is not None and name in tree else None
            out[relpath] = None if entry is None else str(entry.id)
        return out

    def changed(self, paths: list[str]) -> list[str]:
        """Which of the files ``paths`` differ from HEAD on disk (modified, deleted, untracked
        or not a regular file any more): the bytes on disk hashed against HEAD's blob."""
        out = []
        blobs = self._head_blobs(paths)
        for relpath in paths:
            want = blobs[relpath]
            try:
                info = os.lstat(self.root / relpath)
            except FileNotFoundError:
                if want is not None:
                    out.append(relpath)
                continue
            regular = stat.S_ISREG(info.st_mode) and want is not None
            if not regular or str(pygit2.hashfile(str(self.root / relpath))) != want:
                out.append(relpath)
        return sorted(out)

    def _status(self, paths: list[str]) -> dict[str, int]:
        """``git status`` (staged, unstaged, untracked; not ignored) of the files under
        ``paths`` ("." for all)."""
        prefixes = [p.rstrip("/") for p in paths]

        def under(name: str) -> bool:
            return any(p in (".", "") or name == p or name.startswith(p + "/") for p in prefixes)

        status = self.repository().status(untracked_files="all")
        return {
            name: flags
            for name, flags in status.items()
            if under(name)
            and flags != pygit2.enums.FileStatus.CURRENT
            and not flags & pygit2.enums.FileStatus.IGNORED
        }

    def untracked(self, path: str) -> list[str]:
        """Files under ``path`` git doesn't track (and doesn't ignore)."""
        return sorted(
            name
            for name, flags in self._status([path]).items()
            if flags & pygit2.enums.FileStatus.WT_NEW
        )

    def is_clean(self, paths: list[str]) -> bool:
        return not self._status(paths)

    # -- committing -----------------------------------------------------------------------------
    def commit(self, message: str, paths: list[str]) -> str:
        """Commit exactly ``paths`` (files written or deleted, or a directory the caller owns
        whole) as they are on disk; returns the new HEAD. The tree is HEAD's with only those
        paths changed, so anything else changed or staged in the work tree (a hand edit, a new
        file) stays out of the commit; the index is updated for those paths alone."""
        locked = self.locks()
        if locked:  # every Affidavit commit holds the vault's writer lock: this one is not ours
            raise VaultError(
                f"{locked[0]} exists: a git command is running in {self.root}, or one was killed "
                "mid-commit. If none is running, remove that file and retry (opening the vault "
                "with no other Affidavit process running removes it too)."
            )
        repo = self.repository()
        index = repo.index
        index.read(True)
        head = self._head_commit()
        if head is not None and not any(
            os.path.isdir(self.root / p) and not os.path.islink(self.root / p) for p in paths
        ):
            tree_id = self._tree_with(repo, index, head.tree, paths)
        else:
            tree_id = self._tree_from_index(repo, index, head, paths)
        signature = pygit2.Signature(*self.author)
        parents = [] if head is None else [head.id]
        oid = repo.create_commit("HEAD", signature, signature, message, tree_id, parents)
        return str(oid)

    def _tree_with(
        self, repo: pygit2.Repository, index: pygit2.Index, base: pygit2.Tree, paths: list[str]
    ) -> pygit2.Oid:
        """HEAD's tree with only the files of ``paths`` changed (staged in ``index`` too), built
        by rewriting just the trees on their way: what a commit writes and hashes follows the
        paths it commits, not the repository's size (an in-memory index of the whole tree did)."""
        changes: dict[str, tuple[pygit2.Oid, int] | None] = {}
        for relpath in paths:
            if os.path.lexists(self.root / relpath):
                index.add(relpath)
                entry = index[relpath]
                changes[relpath] = (entry.id, entry.mode)
            else:  # deleted since HEAD: stage the deletion
                if relpath in index:
                    index.remove(relpath)
                changes[relpath] = None
        index.write()
        built = _rebuild(repo, base, changes)
        return built if built is not None else repo.TreeBuilder().write()

    def _tree_from_index(
        self,
        repo: pygit2.Repository,
        index: pygit2.Index,
        head: pygit2.Commit | None,
        paths: list[str],
    ) -> pygit2.Oid:
        """The tree for a first commit, or one that stages a whole directory."""
        tree = pygit2.Index()
        if head is not None:
            tree.read_tree(head.tree)
        for relpath in paths:
            full = self.root / relpath
            if os.path.isdir(full) and not os.path.islink(full):
                self._stage_dir(index, tree, relpath.rstrip("/"))
            elif os.path.lexists(full):
                index.add(relpath)
                tree.add(index[relpath])
            else:  # deleted since HEAD: stage the deletion
                for staged in (index, tree):
                    if relpath in staged:
                        staged.remove(relpath)
        index.write()
        return tree.write_tree(repo)

    def _stage_dir(self, index: pygit2.Index, tree: pygit2.Index, directory: str) -> None:
        """``git add --all -- directory`` into ``index``, and the result into ``tree``."""
        index.add_all([directory + "/*"])  # new and modified files; the stat cache spares the rest
        prefix = directory + "/"
        for entry in [e for e in index if e.path.startswith(prefix)]:
            if not os.path.lexists(self.root / entry.path):
                index.remove(entry.path)
        for entry in [e for e in tree if e.path.startswith(prefix)]:
            tree.remove(entry.path)
        for entry in index:
            if entry.path.startswith(prefix):
                tree.add(entry)


def _rebuild(
    repo: pygit2.Repository,
    tree: pygit2.Tree | None,
    changes: dict[str, tuple[pygit2.Oid, int] | None],
) -> pygit2.Oid | None:
    """``tree`` with ``changes`` (path below it -> (blob id, mode), or None to remove), written;
    None when nothing is left in it (git has no empty directories)."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    below: dict[str, dict[str, tuple[pygit2.Oid, int] | None]] = {}
    for path, entry in changes.items():
        name, slash, rest = path.partition("/")
        if slash:
            below.setdefault(name, {})[rest] = entry
        elif entry is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, entry[0], entry[1])
    for name, inner in below.items():
        existing = tree[name] if tree is not None and name in tree else None
        subtree = existing if isinstance(existing, pygit2.Tree) else None
        if existing is not None and subtree is None:
            builder.remove(name)  # a file where a directory now is
        built = _rebuild(repo, subtree, inner)
        if built is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, built, pygit2.enums.FileMode.TREE)
    if len(builder) == 0:
        return None
    return builder.write()
