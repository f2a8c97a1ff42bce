"""A file moved and edited while the watch was down (issue 27): paired with the file it was by
its text, one to one, it is a move plus a new version; anything less sure is a deletion and a new
document, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.ingest.renames import RENAMED, shingles, similarity
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.lineage import origin_key
from affidavit.vault import Vault

from .conftest import SAMPLES

WASHINGTON = (SAMPLES / "sotu" / "1790-washington.md").read_text()
MONROE = (SAMPLES / "sotu" / "1823-monroe.md").read_text()
ROOSEVELT = (SAMPLES / "sotu" / "1941-roosevelt.md").read_text()


def _edited(text: str) -> str:
    """``text`` with a few sentences changed (well under a tenth of its words)."""
    out = text.replace("agreeable", "welcome", 1).replace("important", "pressing", 1)
    out = out.replace("United States", "Union", 2)
    assert out != text
    return out


def _once(vault: Vault, folder: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "watch", str(folder), "--once", "--json"]
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


def _named(events: list[dict[str, Any]], name: str) -> dict[str, dict[str, Any]]:
    return {Path(e["path"]).name: e for e in events if e["event"] == name}


def _version(vault: Vault, path: Path) -> tuple[int, str | None]:
    row = vault.db.execute(
        "SELECT version, previous_id FROM sources WHERE origin_key = ? ORDER BY version DESC",
        (origin_key(path),),
    ).fetchone()
    return int(row[0]), row[1]


def _deletions(vault: Vault) -> int:
    return int(
        vault.db.execute(
            "SELECT count(*) FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:deleted:%'"
        ).fetchone()[0]
    )


def _folder(vault: Vault, tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "washington.md").write_text(WASHINGTON)
    (folder / "roosevelt.md").write_text(ROOSEVELT)
    _once(vault, folder)
    for (plan_id,) in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'").fetchall():
        result = CliRunner().invoke(main, ["--vault", str(vault.root), "approve", plan_id])
        assert result.exit_code == 0, result.output
    first = vault.db.execute(
        "SELECT id FROM sources WHERE origin_key = ?", (origin_key(folder / "washington.md"),)
    ).fetchone()[0]
    return folder, str(first)


def test_the_threshold_tells_an_edit_from_another_document() -> None:
    same = similarity(shingles(WASHINGTON), shingles(_edited(WASHINGTON)))
    other = similarity(shingles(WASHINGTON), shingles(MONROE))
    assert same >= RENAMED > other


def test_a_file_moved_and_edited_while_down_is_its_next_version(
    vault: Vault, tmp_path: Path
) -> None:
    folder, first = _folder(vault, tmp_path)
    (folder / "speeches").mkdir()
    (folder / "speeches" / "address.md").write_text(_edited(WASHINGTON))
    (folder / "washington.md").unlink()
    events = _once(vault, folder)
    moved = _named(events, "moved")["address.md"]
    assert moved["edited"] is True
    assert moved["source"] == str((folder / "washington.md").resolve())
    assert not _named(events, "deleted") and _deletions(vault) == 0
    [scan] = [e for e in events if e["event"] == "scan"]
    assert (scan["changed"], scan["deleted"]) == (1, 0)  # a move, not counted as deleted
    assert _version(vault, folder / "speeches" / "address.md") == (2, first)
    lineage = _named(events, "ingested")["address.md"]
    assert lineage["status"] == "ingested"
    carry = vault.db.execute("SELECT count(*) FROM plans WHERE origin LIKE 'lineage:carry:%'")
    assert carry.fetchone()[0] == 1  # the unchanged claims are carried to it, not left behind
    moves = vault.db.execute("SELECT count(*) FROM audit WHERE action = 'source_moved'")
    assert moves.fetchone()[0] == 1


def test_an_unrelated_file_appearing_inherits_nothing(vault: Vault, tmp_path: Path) -> None:
    """The attacker's file: a new document appears as one vanishes — it must not take over the
    vanished file's lineage (and so its claims)."""
    folder, _ = _folder(vault, tmp_path)
    (folder / "washington.md").unlink()
    (folder / "monroe.md").write_text(MONROE)
    events = _once(vault, folder)
    assert not _named(events, "moved")
    assert set(_named(events, "deleted")) == {"washington.md"} and _deletions(vault) == 1
    assert _version(vault, folder / "monroe.md") == (1, None)


def test_two_candidates_for_one_vanished_file_are_no_guess(vault: Vault, tmp_path: Path) -> None:
    folder, _ = _folder(vault, tmp_path)
    (folder / "washington.md").unlink()
    (folder / "a.md").write_text(_edited(WASHINGTON))
    (folder / "b.md").write_text(_edited(WASHINGTON) + "\nA closing line of the copy.\n")
    events = _once(vault, folder)
    assert not _named(events, "moved")
    assert set(_named(events, "deleted")) == {"washington.md"} and _deletions(vault) == 1
    assert _version(vault, folder / "a.md") == (1, None)
    assert _version(vault, folder / "b.md") == (1, None)


def test_a_file_moved_under_an_ignored_path_pairs_with_nothing(
    vault: Vault, tmp_path: Path
) -> None:
    folder, _ = _folder(vault, tmp_path)
    (folder / ".affidavitignore").write_text("private/\n")
    (folder / "private").mkdir()
    (folder / "private" / "washington.md").write_text(_edited(WASHINGTON))
    (folder / "washington.md").unlink()
    events = _once(vault, folder)
    assert not _named(events, "moved")
    assert set(_named(events, "deleted")) == {"washington.md"}
    assert (
        vault.db.execute(
            "SELECT count(*) FROM sources WHERE origin_key = ?",
            (origin_key(folder / "private" / "washington.md"),),
        ).fetchone()[0]
        == 0
    )


def test_ingest_dir_pairs_a_file_moved_and_edited_inside_it(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "washington.md").write_text(WASHINGTON)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    first = vault.db.execute("SELECT id FROM sources").fetchone()[0]
    (folder / "address.md").write_text(_edited(WASHINGTON))
    (folder / "washington.md").unlink()
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    assert report.deleted == [] and _deletions(vault) == 0
    assert _version(vault, folder / "address.md") == (2, first)
    [outcome] = [s for s in report.to_json()["sources"] if s["name"] == "address.md"]
    assert outcome["lineage"]["carried"] > 0
