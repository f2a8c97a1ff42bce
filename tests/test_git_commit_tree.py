"""A commit rewrites only the trees on the way to the paths it commits (issue 25: git staging
costs what the plan wrote), and its tree is the one staging those paths in git's own index
gives: on random histories of writes, deletions, nested folders, a file replaced by a folder
and back, compared with ``git add``/``git rm`` + ``git write-tree`` in a clone."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pygit2

from affidavit.store.gitrepo import GitRepo


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_commit_trees_are_what_git_stages(tmp_path: Path) -> None:
    rnd = random.Random(5)
    git = GitRepo(tmp_path / "r", "t", "t@example.invalid")
    (tmp_path / "r").mkdir()
    git.init()
    root = git.root
    names = [f"wiki/p{n}.md" for n in range(12)] + ["top.md", "deep/er/c.md", "deep/d.md"]
    for relpath in names[:6]:
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(relpath)
    git.commit("first", names[:6])
    for step in range(25):
        paths = rnd.sample(names, rnd.randint(1, 4))
        for relpath in paths:
            path = root / relpath
            if path.exists() and rnd.random() < 0.3:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{relpath} {step} {rnd.random()}")
        (root / "wiki" / "hand-edit.md").write_text(f"never committed {step}")
        before = git.repository().head.peel(pygit2.Commit).tree
        head = git.commit(f"step {step}", paths)
        commit = git.repository()[head]
        assert isinstance(commit, pygit2.Commit)
        # git's own staging of the same paths, from the parent's tree
        _git(root, "read-tree", str(before.id), "--index-output=.git/check-index")
        env_index = {"GIT_INDEX_FILE": str(root / ".git" / "check-index")}
        for relpath in paths:
            subprocess.run(
                ["git", "add", "-A", "--", relpath],
                cwd=root,
                check=True,
                capture_output=True,
                env={**_env(), **env_index},
            )
        expected = subprocess.run(
            ["git", "write-tree"],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
            env={**_env(), **env_index},
        ).stdout.strip()
        assert str(commit.tree.id) == expected, (step, paths)
        assert "wiki/hand-edit.md" not in _git(root, "ls-tree", "-r", "--name-only", head)
        assert _git(root, "diff", "--cached", "--name-only") == ""  # the index is HEAD's


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
