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

    def head_plan(self) -> str | None:
        """The plan id in HEAD's ``Affidavit-Plan`` trailer, if HEAD is a plan commit."""
        if self.head() is None:
            return None
        body = self.run("log", "-1", "--format=%B")
        for line in body.splitlines():
            if line.startswith(PLAN_TRAILER + ":"):
                return line.split(":", 1)[1].strip()
        return None

    def commit(self, message: str, paths: list[str]) -> str:
        """Stage ``paths`` (additions, changes and deletions) and commit; returns the new HEAD."""
        self.run("add", "--all", "--", *paths)
        self.run("commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
        head = self.head()
        assert head is not None
        return head

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
