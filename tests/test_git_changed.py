"""The hand-edit check's HEAD lookups (one HEAD, each folder's tree read once) give what a
lookup by full path gave, and ``changed`` still finds every kind of difference from HEAD."""

from __future__ import annotations

import os
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
