"""Issue 11 item 6, re-attacked: the door commits exactly what it wrote, and so does adding a
source: a file someone dropped into sources/ (or staged by hand) never rides along in a commit
Affidavit authors."""

from __future__ import annotations

import subprocess
from pathlib import Path

from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault


def tree(root: Path) -> set[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "--name-only", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


def test_adding_a_source_commits_only_its_own_files(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    planted = vault.sources_dir / "planted.extracted.txt"
    planted.write_text("The council approved the dam in 1936.\n")
    (vault.sources_dir / "link.md").symlink_to("/etc/passwd")
    staged = vault.sources_dir / "staged.md"
    staged.write_text("staged by hand\n")
    subprocess.run(["git", "-C", str(vault.root), "add", "sources/staged.md"], check=True)
    doc = tmp_path / "rivers.md"
    doc.write_text("# Rivers\n\nThe river floods every spring and the dam holds it back.\n")
    added = SourceStore(vault).add_file(doc)
    committed = tree(vault.root)
    assert added.record.original_file in committed and added.record.text_file in committed
    assert not {"sources/planted.extracted.txt", "sources/link.md", "sources/staged.md"} & committed
    vault.close()
