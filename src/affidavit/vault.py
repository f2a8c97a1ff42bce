"""The vault on disk (SPEC §1): layout, ``init``, opening with recovery, and the writer lock.

<vault>/affidavit.toml   wiki/   sources/   .affidavit/ (db.sqlite, journal/, lock)
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import db as dbmod
from .clock import Clock, utc_now
from .config import Config, load_config, render_default_config
from .errors import VaultError
from .store.gitrepo import GitRepo

CONFIG_NAME = "affidavit.toml"
STATE_DIR = ".affidavit"
GITIGNORE = (
    "# Affidavit: the database, journal and caches are local state, not history.\n"
    ".affidavit/\n*.affidavit-tmp\n"
)


@dataclass
class Vault:
    """An open vault. Build it with :func:`open_vault` or :func:`init_vault`; close it when done."""

    root: Path
    config: Config
    db: sqlite3.Connection
    git: GitRepo
    clock: Clock = field(default=utc_now)
    _lock_depth: int = field(default=0, repr=False)

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def sources_dir(self) -> Path:
        return self.root / "sources"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "journal"

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @contextmanager
    def write_lock(self, timeout: float = 60.0) -> Iterator[None]:
        """Hold the vault's single-writer lock (an ``flock`` on ``.affidavit/lock``); reentrant."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        path = self.state_dir / "lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise VaultError(
                            f"{self.root} is locked by another Affidavit process for over "
                            f"{timeout:.0f}s. Wait for it to finish, or stop it, and retry."
                        ) from None
                    time.sleep(0.05)
            self._lock_depth = 1
            yield
        finally:
            self._lock_depth = 0
            os.close(fd)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def find_vault_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds an ``affidavit.toml`` and state dir."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / CONFIG_NAME).is_file() and (candidate / STATE_DIR).is_dir():
            return candidate
    return None


def init_vault(root: Path, clock: Clock = utc_now) -> tuple[Vault, bool]:
    """Create a vault at ``root`` (idempotent). Returns the open vault and whether it was new.

    Refuses to create a vault inside another vault.
    """
    root = root.resolve()
    existing = find_vault_root(root)
    if existing is not None and existing != root:
        raise VaultError(
            f"{root} is inside the vault at {existing}. Vaults can't be nested: "
            f"use that vault, or choose a directory outside it."
        )
    created = existing is None
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("wiki", "sources", STATE_DIR, f"{STATE_DIR}/journal"):
        (root / sub).mkdir(exist_ok=True)
    config_path = root / CONFIG_NAME
    if not config_path.exists():
        config_path.write_text(render_default_config(), encoding="utf-8")
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(GITIGNORE, encoding="utf-8")
    vault = open_vault(root, clock=clock)
    if created or vault.git.head() is None:
        from .store.apply import render_all_files  # the door renders the empty wiki too

        with vault.write_lock():
            render_all_files(vault)
            vault.git.commit(
                "Initialize Affidavit vault", [CONFIG_NAME, ".gitignore", "wiki", "sources"]
            )
    return vault, created


def open_vault(root: Path | None = None, clock: Clock = utc_now) -> Vault:
    """Open the vault at ``root`` (or the one enclosing the working directory).

    Before anything else runs, an interrupted apply is recovered (rolled forward or back).
    """
    found = find_vault_root(root or Path.cwd())
    if found is None:
        where = root or Path.cwd()
        raise VaultError(
            f"No Affidavit vault at {where}. Create one with `affidavit init {where}` "
            f"or pass --vault PATH."
        )
    config = load_config(found / CONFIG_NAME)
    (found / STATE_DIR / "journal").mkdir(parents=True, exist_ok=True)
    connection = dbmod.connect(found / STATE_DIR / "db.sqlite")
    dbmod.migrate(connection)
    git = GitRepo(found, config.git_author_name, config.git_author_email)
    if not git.exists():
        git.init()
    vault = Vault(root=found, config=config, db=connection, git=git, clock=clock)
    from .store.recovery import recover

    recover(vault)
    return vault
