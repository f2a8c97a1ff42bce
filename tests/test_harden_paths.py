"""W10, issue 11 item 1, re-attacked: a vault's owner who controls its files must not make a
process of another user (a root daemon reading their vault) read a file they could not read
themselves, nor hang it. ``inside()`` checks a path and then the file is opened by name, so
the owner can swap a folder for a symlink in between, put a FIFO where a source's text
belongs, or leave a file of someone else's (a hard link) in their vault.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from affidavit.errors import AffidavitError, IntegrityError
from affidavit.sources.store import SourceStore
from affidavit.store.paths import read_inside
from affidavit.vault import init_vault, open_vault
from tests.conftest import add_samples

NOBODY = 65534
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
SECRET = "root's secret: sk-root-0123456789\n"


def their_vault(_tmp: Path) -> tuple[Path, str, str]:
    """A vault with the samples, to be handed to nobody, in a folder nobody can reach (a root
    process reads another user's vault with that user's authority, W10); returns it, a source
    id and its text file."""
    from tests.test_server_authz import private_dir

    base = private_dir("afd-harden-")
    os.chmod(base, 0o755)
    vault, _ = init_vault(base / "v")
    add_samples(vault)
    source_id, text_file = vault.db.execute(
        "SELECT id, text_file FROM sources ORDER BY id LIMIT 1"
    ).fetchone()
    vault.close()
    return base / "v", source_id, text_file


@ROOT_ONLY
def test_a_folder_swapped_for_a_symlink_never_reads_roots_files(tmp_path: Path) -> None:
    root, source_id, _ = their_vault(tmp_path)
    secret_dir = tmp_path / "rootonly"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "secret.txt").write_text(SECRET)
    real = root / "sources"
    # the owner points the source's text at a name only root's folder holds ...
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    db.execute("UPDATE sources SET text_file = 'sources/secret.txt' WHERE id = ?", (source_id,))
    db.commit()
    db.close()
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(root)], check=True)
    parked = root / "sources-real"
    link = root / "sources-link"
    link.symlink_to(secret_dir)
    stop = threading.Event()

    def swap() -> None:  # ... and swaps sources/ for a symlink to it, over and over
        while not stop.is_set():
            os.rename(real, parked)
            os.rename(link, real)
            os.rename(real, link)
            os.rename(parked, real)

    swapper = threading.Thread(target=swap)
    seen: set[str] = set()
    with open_vault(root) as vault:
        assert vault.read_only
        swapper.start()
        try:
            for _ in range(3000):
                store = SourceStore(vault)  # no cache between tries
                with contextlib.suppress(AffidavitError, OSError):
                    seen.add(store.text(source_id))
                with contextlib.suppress(AffidavitError, OSError):
                    seen.add(read_inside(root, "sources/secret.txt", under="sources").decode())
        finally:
            stop.set()
            swapper.join()
    assert SECRET not in seen


@ROOT_ONLY
def test_a_file_of_another_user_in_their_vault_is_not_read_for_them(tmp_path: Path) -> None:
    root, source_id, text_file = their_vault(tmp_path)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(root)], check=True)
    os.chown(root / text_file, 0, 0)  # what a hard link to a file of root's looks like
    with open_vault(root) as vault:
        with pytest.raises(IntegrityError, match="it is not read for that vault"):
            SourceStore(vault).text(source_id)
        assert SourceStore(vault).check_integrity(source_id)  # reported, not read


def test_a_fifo_where_a_source_text_belongs_is_refused_not_waited_on(tmp_path: Path) -> None:
    root, source_id, text_file = their_vault(tmp_path)
    path = root / text_file
    os.chmod(path, 0o644)
    path.unlink()
    os.mkfifo(path)
    with open_vault(root) as vault:
        with pytest.raises(IntegrityError, match="not a regular file"):
            SourceStore(vault).text(source_id)
        problems = SourceStore(vault).check_integrity(source_id)
        assert any("not a regular file" in p for p in problems), problems


def test_the_jobs_lock_is_never_opened_through_a_symlink(tmp_path: Path) -> None:
    from affidavit.jobs.runner import _job_lock

    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    target = tmp_path / "outside" / "planted.lock"
    target.parent.mkdir()
    (tmp_path / "v" / ".affidavit" / "jobs.lock").symlink_to(target)
    with pytest.raises(OSError):
        _job_lock(tmp_path / "v" / ".affidavit", threading.Event(), 1.0)
    assert not target.exists()


def test_lint_never_reads_a_wiki_file_through_a_symlink(tmp_path: Path) -> None:
    from affidavit.lint.runner import run_lint

    vault, _ = init_vault(tmp_path / "v")
    outside = tmp_path / "private-notes.md"
    outside.write_text("my bank PIN is 4321\n")
    index = vault.wiki_dir / "index.md"
    index.unlink()
    index.symlink_to(outside)
    report = run_lint(vault)
    shown = repr(report)
    assert "4321" not in shown and "index.md" in shown
    vault.close()
