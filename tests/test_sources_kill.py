"""``sources add`` killed (SIGKILL) between its database row and its git commit.

The source's files and row are there, but git never got them. Before, nothing noticed: doctor
was clean, and adding the same file again said "already stored; nothing changed", so the stored
copy stayed out of git for good. Now doctor reports it, and the next add of the same bytes (a
`sources add` or an ingest of the same file) commits the intact stored copy.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from affidavit.doctor import run_doctor
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault, open_vault

from .conftest import SAMPLES

CHILD = """
import os, signal, sys
from pathlib import Path
from affidavit.sources.store import SourceStore
from affidavit.vault import open_vault

vault = open_vault(Path(sys.argv[1]))
vault.git.commit = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies right there
store = SourceStore(vault)
if sys.argv[3] == "files":
    store.add_files([Path(sys.argv[2])], trust="trusted")
else:
    store.add_file(sys.argv[2], trust="trusted")
"""
DOC = SAMPLES / "sotu" / "1790-washington.md"


@pytest.mark.parametrize("how", ["file", "files"])
def test_an_add_killed_before_its_commit_is_reported_and_healed_by_the_next_add(
    tmp_path: Path, how: str
) -> None:
    root = tmp_path / "vault"
    init_vault(root)[0].close()
    killed = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(DOC), how],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with open_vault(root) as vault:
        [record] = SourceStore(vault).list()  # the row and the files are there ...
        assert vault.git.untracked("sources") == sorted([record.original_file, record.text_file])
        report = run_doctor(vault)  # ... and doctor says git lacks them, and how to fix it
        [finding] = [f for f in report.findings if f.subject == record.id]
        assert finding.check == "sources" and "not committed to git" in finding.message
        assert f"affidavit sources add {DOC}" in finding.fix
        again = SourceStore(vault).add_file(DOC, trust="trusted")
        assert not again.added and again.record.id == record.id
        assert vault.git.untracked("sources") == []
        assert vault.git.is_clean(["sources"])
        assert run_doctor(vault).clean
        subjects = vault.git.log_subjects()
        assert len(subjects) == 2  # the vault's first commit, then the source's


def test_a_tampered_stored_copy_is_not_committed_by_the_next_add(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)[0].close()
    subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(DOC), "file"], timeout=120, check=False
    )
    with open_vault(root) as vault:
        [record] = SourceStore(vault).list()
        text = root / record.text_file
        text.chmod(0o644)
        text.write_text("Something else entirely.\n")
        SourceStore(vault).add_file(DOC, trust="trusted")
        assert record.text_file in vault.git.untracked("sources")  # never into git as is
        assert not run_doctor(vault).clean
