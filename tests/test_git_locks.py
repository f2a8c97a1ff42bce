"""A git lock left by a command killed mid-commit (no apply journal: a source's commit)."""

from __future__ import annotations

import fcntl
import os

import pytest

from affidavit.errors import VaultError
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, open_vault

NOTE = b"# Note\n\nThe bridge opened in 1932 after six years of work.\n"


def test_a_stale_lock_is_cleared_when_the_vault_is_next_opened(vault: Vault) -> None:
    lock = vault.root / ".git" / "index.lock"
    lock.touch()  # what a kill -9 during `affidavit sources add` leaves
    vault.close()
    with open_vault(vault.root) as again:
        assert not lock.exists()
        added = SourceStore(again).add_bytes(NOTE, "/n.md", "n.md", media_type="text/markdown")
        assert added.added and again.git.head() is not None


def test_a_lock_is_left_alone_while_another_writer_may_be_committing(vault: Vault) -> None:
    lock = vault.root / ".git" / "index.lock"
    lock.touch()
    vault.close()
    # another Affidavit process holds the writer lock (a separate open file: flock conflicts)
    fd = os.open(vault.root / ".affidavit" / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with open_vault(vault.root):
            assert lock.exists()  # it may be that writer's commit in progress
    finally:
        os.close(fd)
    with open_vault(vault.root):  # the writer is gone: now it is stale
        assert not lock.exists()


def test_a_commit_that_meets_a_lock_names_the_file_and_the_fix(vault: Vault) -> None:
    lock = vault.root / ".git" / "index.lock"
    lock.touch()  # appeared after the vault was opened (someone's git, by hand)
    with pytest.raises(VaultError, match=r"index\.lock exists.*remove that file and retry"):
        SourceStore(vault).add_bytes(NOTE, "/n.md", "n.md", media_type="text/markdown")
    assert lock.exists()  # never removed behind a running git's back
