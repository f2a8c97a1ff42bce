"""Binary content is refused whatever its extension; UTF-16 text with a BOM is still text."""

from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path

import pytest

from affidavit.errors import SourceError
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<w:document>Hello</w:document>")
    return buffer.getvalue()


def test_a_real_executable_renamed_txt_is_refused(vault: Vault, tmp_path: Path) -> None:
    exe = tmp_path / "notes.txt"
    exe.write_bytes(Path(os.path.realpath(sys.executable)).read_bytes())
    with pytest.raises(SourceError) as caught:
        SourceStore(vault).add_file(exe)
    message = str(caught.value)
    assert str(exe) in message and "ELF executable" in message and "binary" in message
    assert vault.db.execute("SELECT count(*) FROM sources").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("setup.md", b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 200, "Windows (PE)"),
        ("tool.txt", b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + b"\x00" * 64, "Mach-O"),
        ("report.txt", _zip(), "zip archive"),
        ("dump.rst", b"hello\x00world " * 20, "NUL bytes"),
        ("noise.txt", bytes(range(1, 9)) * 40 + b"some words", "control characters"),
        ("page.html", b"\x7fELF\x02\x01\x01" + b"\x00" * 64, "ELF"),
    ],
)
def test_binary_content_is_refused_whatever_the_name(
    vault: Vault, tmp_path: Path, name: str, data: bytes, why: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(SourceError, match="refusing binary content") as caught:
        SourceStore(vault).add_file(path)
    assert name in str(caught.value) and why in str(caught.value)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_text_with_a_bom_is_text(vault: Vault, tmp_path: Path, encoding: str) -> None:
    text = "The lighthouse at Eddystone was first lit in 1698.\n"
    bom = b"\xff\xfe" if encoding.endswith("le") else b"\xfe\xff"
    path = tmp_path / "notes.txt"
    path.write_bytes(bom + text.encode(encoding))
    store = SourceStore(vault)
    record = store.add_file(path).record
    assert store.text(record.id) == text


def test_text_with_a_few_control_characters_is_text(vault: Vault, tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes("Caf\u00e9 opened in 1901.\x1b[0m\tA bell\x07 rang.\n".encode("latin-1") * 5)
    assert SourceStore(vault).add_file(path).added


def test_a_folder_reports_the_binary_file_and_adds_the_rest(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Notes\n\nThe river floods every spring.\n")
    (folder / "evil.txt").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 64)
    failures: list[str] = []
    added = SourceStore(vault).add_dir(folder, on_error=lambda p, e: failures.append(f"{p} {e}"))
    assert [r.record.name for r in added] == ["good.md"]
    assert len(failures) == 1 and "evil.txt" in failures[0] and "ELF" in failures[0]
