"""The vault's git repository, driven through the real ``git`` command.

Every commit is authored and committed as the configured name (default "affidavit"); commits for
applied plans carry an ``Affidavit-Plan: <id>`` trailer so recovery can tell whether a plan's commit
already exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..errors import VaultError

PLAN_TRAILER = "Affidavit-Plan"
BATCH_TRAILER = "Affidavit-Batch"


class GitRepo:
    """A thin wrapper over ``git -C root``."""

    def __init__(self, root: Path, author_name: str, author_email: str) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "GIT_AUTHOR_NAME": author_name,
            "GIT_AUTHOR_EMAIL": author_email,
            "GIT_COMMITTER_NAME": author_name,
            "GIT_COMMITTER_EMAIL": author_email,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
        }

    def run(self, *args: str, check: bool = True) -> str:
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
            self.run("init", "--quiet", "--initial-branch=main")
        self.run("config", "user.name", self.env["GIT_AUTHOR_NAME"])
        self.run("config", "user.email", self.env["GIT_AUTHOR_EMAIL"])
        self.run("config", "core.autocrlf", "false")

    def clear_stale_lock(self) -> None:
        """Remove ``index.lock`` left by a git process killed mid-commit (we hold the vault lock)."""
        lock = self.root / ".git" / "index.lock"
        if lock.exists():
            lock.unlink()

    def head(self) -> str | None:
        out = self.run("rev-parse", "--verify", "--quiet", "HEAD", check=False).strip()
        return out or None

    def head_trailers(self, name: str) -> list[str]:
        """The values of HEAD's ``name:`` trailers (none when there is no HEAD)."""
        if self.head() is None:
            return []
        body = self.run("log", "-1", "--format=%B")
        return [
            line.split(":", 1)[1].strip()
            for line in body.splitlines()
            if line.startswith(name + ":")
        ]

    def head_plan(self) -> str | None:
        """The plan id in HEAD's (first) ``Affidavit-Plan`` trailer, if HEAD is a plan commit."""
        plans = self.head_trailers(PLAN_TRAILER)
        return plans[0] if plans else None

    def commit(self, message: str, paths: list[str]) -> str:
        """Stage exactly ``paths`` (files written or deleted, or a directory the caller owns
        whole) and commit only them; returns the new HEAD. Anything else changed or staged in
        the work tree (a hand edit, a new file) stays out of the commit."""
        present = [p for p in paths if os.path.lexists(self.root / p)]
        gone = [p for p in paths if p not in present]
        present += self._known(gone)  # deleted since HEAD: stage the deletion
        if present:
            self.run("add", "--all", "--", *present)
        # only pathspecs git knows after staging (an empty directory matches nothing)
        known = self._known(present)
        self.run(
            "commit",
            "--quiet",
            "--allow-empty",
            "--no-verify",
            "--only",
            "-m",
            message,
            "--",
            *known,
        )
        head = self.head()
        assert head is not None
        return head

    def _known(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` git tracks something under, in the index or in HEAD (two git
        calls, whatever the number of paths)."""
        if not paths:
            return []
        names = set(self.run("ls-files", "-z", "--", *paths).split("\0"))
        if self.head() is not None and not all(p in names for p in paths):
            out = self.run("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths)
            names |= set(out.split("\0"))
        names.discard("")

        def under(path: str) -> bool:
            prefix = path.rstrip("/") + "/"
            return path in names or any(n.startswith(prefix) for n in names)

        return [p for p in paths if under(p)]

    def untracked(self, path: str) -> list[str]:
        """Files under ``path`` git doesn't track (and doesn't ignore)."""
        out = self.run("ls-files", "-z", "--others", "--exclude-standard", "--", path)
        return sorted(p for p in out.split("\0") if p)

    def tree_of_head(self) -> str | None:
        if self.head() is None:
            return None
        return self.run("rev-parse", "HEAD^{tree}").strip()

    def log_subjects(self) -> list[str]:
        if self.head() is None:
            return []
        return self.run("log", "--format=%s").splitlines()

    def changed(self, paths: list[str]) -> list[str]:
        """Which of ``paths`` differ from HEAD on disk (modified, deleted or untracked)."""
        if not paths:
            return []
        out = self.run("status", "--porcelain", "--untracked-files=all", "--", *paths)
        return sorted(line[3:].strip().strip('"') for line in out.splitlines() if line.strip())

    def is_clean(self, paths: list[str]) -> bool:
        return self.run("status", "--porcelain", "--", *paths).strip() == ""
