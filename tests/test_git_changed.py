"""The hand-edit check's HEAD lookups (one HEAD, each folder's tree read once) give what a
lookup by full path gave, and ``changed`` still finds every kind of difference from HEAD."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from affidavit.store.gitrepo import GitRepo


def _repo(tmp_path: Path) -> GitRepo:
    git = GitRepo(tmp_path / "r", "t", "t@example.invalid")
    (tmp_path / "r").mkdir()
    git.init()
    return git


def test_head_blobs_are_the_lookups_by_full_path(tmp_path: Path) -> None:
    git = _repo(tmp_path)
    root = git.root
    paths = ["wiki/a.md", "wiki/b.md", "top.md", "deep/er/c.md", "wiki", "blob/x.md"]
    assert git._head_blobs(paths) == dict.fromkeys(paths)  # no HEAD yet
    for relpath, text in [
        ("wiki/a.md", "a"),
        ("wiki/b.md", "b"),
        ("top.md", "t"),
        ("deep/er/c.md", "c"),
        ("blob", "a file where a folder is asked for"),
    ]:
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text)
    git.commit("one", ["wiki/a.md", "wiki/b.md", "top.md", "deep/er/c.md", "blob"])
    asked = [
        *paths,
        "wiki/missing.md",
        "nowhere/x.md",
        "deep/er",
        "deep/er/missing.md",
        "blob/x.md",
        "wiki/a.md",
    ]
    assert git._head_blobs(asked) == {p: git._head_blob(p) for p in asked}
    assert git._head_blobs(["wiki/a.md"])["wiki/a.md"] is not None


def test_changed_finds_edits_deletions_new_files_and_symlinks(tmp_path: Path) -> None:
    git = _repo(tmp_path)
    root = git.root
    (root / "wiki").mkdir()
    names = ["same", "edited", "deleted", "linked"]
    for name in names:
        (root / "wiki" / f"{name}.md").write_text(f"# {name}\n")
    git.commit("one", [f"wiki/{n}.md" for n in names])
    (root / "wiki" / "edited.md").write_text("# edited by hand\n")
    (root / "wiki" / "deleted.md").unlink()
    (root / "wiki" / "new.md").write_text("# new\n")
    (root / "wiki" / "linked.md").unlink()
    os.symlink(root / "wiki" / "same.md", root / "wiki" / "linked.md")
    asked = [f"wiki/{n}.md" for n in [*names, "new", "never"]]
    assert git.changed(asked) == [
        "wiki/deleted.md",
        "wiki/edited.md",
        "wiki/linked.md",
        "wiki/new.md",
    ]


def test_head_blobs_follow_head_whoever_moves_it(tmp_path: Path) -> None:
    """The folders' trees are kept per HEAD commit: after each commit (ours, or a person's
    ``git commit`` in the vault) and each random edit, the lookups and ``changed`` answer as
    a repository object that keeps nothing does."""
    git = _repo(tmp_path)
    root = git.root
    (root / "wiki").mkdir()
    names = [f"wiki/p{n}.md" for n in range(8)] + ["top.md", "deep/er/c.md"]
    (root / "deep" / "er").mkdir(parents=True)
    rng = random.Random(5)
    for step in range(40):
        for relpath in rng.sample(names, rng.randint(1, 4)):
            if rng.random() < 0.2:
                (root / relpath).unlink(missing_ok=True)
            else:
                (root / relpath).write_text(f"{relpath} at step {step}: {rng.random()}\n")
        roll = rng.random()
        present = [p for p in names if (root / p).exists()]
        if roll < 0.4:
            git.commit(f"ours {step}", rng.sample(names, rng.randint(1, len(names))))
        elif roll < 0.6 and present:
            subprocess.run(["git", "-C", str(root), "add", "--", *present], check=True)
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(root),
                    "-c",
                    "user.name=p",
                    "-c",
                    "user.email=p@p",
                    "commit",
                    "--allow-empty",
                    "-q",
                    "-m",
                    f"a person's {step}",
                ],
                check=True,
            )
        fresh = GitRepo(root, "t", "t@example.invalid")
        asked = [*names, "wiki/none.md", "deep/er"]
        assert git._head_blobs(asked) == fresh._head_blobs(asked), step
        assert git.changed(asked) == fresh.changed(asked), step
