"""A journal's temp file is written in the files' fsync pass: a kill before its rename leaves it,
and opening the vault removes it (a ``*.json`` journal is the only kind recovery reads)."""

from __future__ import annotations

from pathlib import Path

from affidavit.store.atomic import temp_path
from affidavit.vault import init_vault, open_vault


def test_open_removes_a_stray_journal_temp(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    journal_dir = vault.journal_dir
    vault.close()
    journal_dir.mkdir(parents=True, exist_ok=True)
    stray = temp_path(journal_dir / "b-0123456789abcdef.json")
    stray.write_text('{"batch": "b-0123456789abcdef"', encoding="utf-8")  # torn, never renamed
    vault = open_vault(tmp_path / "v")
    try:
        assert not stray.exists()
        assert list(vault.journal_dir.iterdir()) == []
    finally:
        vault.close()
