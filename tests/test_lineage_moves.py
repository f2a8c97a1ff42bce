"""A moved file is the same document (issue 27 item 1): its versions follow it to its new path,
so its next edit is its next version (carried, changes proposed) and deleting it there proposes
its retraction; moving it inside an ingested folder proposes no retraction. A copy is not a
move, and a file moved over another does not merge their lineages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.lineage import origin_key
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

V1 = (
    "# Harbour\n\n"
    "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.\n\n"
    "Fishing boats land their catch at the north quay every morning.\n\n"
    "Tourists visit the harbour museum during the summer months.\n"
)
V2 = V1.replace("1904", "1911")
RAIL = "# Railways\n\nThe mountain railway climbs 1,200 metres over eleven kilometres of track.\n"


def _once(vault: Vault, folder: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "watch", str(folder), "--once", "--json"]
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


def _events(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == name]


def _approve_all(vault: Vault) -> None:
    for (plan_id,) in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'").fetchall():
        result = CliRunner().invoke(main, ["--vault", str(vault.root), "approve", plan_id])
        assert result.exit_code == 0, result.output


def _pending(vault: Vault, like: str) -> list[str]:
    return [
        str(r[0])
        for r in vault.db.execute(
            "SELECT origin FROM plans WHERE status = 'pending' AND origin LIKE ?", (like,)
        )
    ]


def test_a_moved_file_keeps_its_lineage_for_its_next_edit_and_its_deletion(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    (folder / "papers").mkdir(parents=True)
    (folder / "papers" / "harbour.md").write_text(V1)
    _once(vault, folder)
    _approve_all(vault)
    v1 = SourceStore(vault).list()[0]
    (folder / "archive").mkdir()
    (folder / "papers" / "harbour.md").rename(folder / "archive" / "harbour.md")
    moved = _once(vault, folder)
    assert _events(moved, "scan")[0]["deleted"] == 0  # a move is not counted as a deletion
    assert [e["source"] for e in _events(moved, "moved")] == [
        str((folder / "papers" / "harbour.md").resolve())
    ]
    assert not _events(moved, "deleted") and _pending(vault, "lineage:%") == []
    new_key = origin_key(folder / "archive" / "harbour.md")
    assert SourceStore(vault).get(v1.id).origin_key == new_key
    assert SourceStore(vault).get(v1.id).origin == v1.origin  # where its bytes were read
    entry = vault.db.execute(
        "SELECT detail, actor FROM audit WHERE action = 'source_moved'"
    ).fetchone()
    assert json.loads(entry[0]) == {"from": v1.origin_key, "to": new_key, "sources": [v1.id]}

    # edited at its new place: version 2 of the same document, not a second source beside it
    (folder / "archive" / "harbour.md").write_text(V2)
    edited = _once(vault, folder)
    lineage = _events(edited, "ingested")[0]["lineage"]
    assert lineage["version"] == 2 and lineage["replaces"] == [v1.id]
    assert lineage["carried"] >= 2 and lineage["supersede_proposals"] >= 1
    old_live = vault.db.execute(
        "SELECT count(*) FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE e.source_id = ? AND c.status = 'active' AND c.text LIKE '%Fishing%'",
        (v1.id,),
    ).fetchone()[0]
    assert old_live == 0  # carried to version 2, not left active beside it

    # deleted there: a retraction proposal for its current version
    (folder / "archive" / "harbour.md").unlink()
    gone = _events(_once(vault, folder), "deleted")
    assert len(gone) == 1 and gone[0]["sources"] == [v1.id, lineage["source_id"]]
    assert gone[0]["lineage"]["plans"]
    short = lineage["source_id"][:12]
    assert f"lineage:deleted:{short}" in _pending(vault, "lineage:deleted:%")


def _ingest(vault: Vault, target: Path) -> dict[str, Any]:
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(target)], "trusted")
    out: dict[str, Any] = report.to_json()
    return out


def test_a_move_inside_an_ingested_folder_proposes_no_retraction(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour.md").write_text(V1)
    (folder / "rail.md").write_text(RAIL)
    _ingest(vault, folder)
    (folder / "sub").mkdir()
    (folder / "harbour.md").rename(folder / "sub" / "harbour.md")
    (folder / "rail.md").unlink()  # a real deletion in the same run: still proposed
    _ingest(vault, folder)
    origins = _pending(vault, "lineage:deleted:%")
    rail = next(s for s in SourceStore(vault).list() if s.name == "rail.md")
    harbour = next(s for s in SourceStore(vault).list() if s.name == "harbour.md")
    assert origins == [f"lineage:deleted:{rail.short_id}"]
    assert harbour.origin_key == origin_key(folder / "sub" / "harbour.md")


def test_a_copy_is_not_a_move_and_a_move_over_another_file_merges_nothing(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour.md").write_text(V1)
    (folder / "rail.md").write_text(RAIL)
    _ingest(vault, folder)
    store = SourceStore(vault)
    harbour = next(s for s in store.list() if s.name == "harbour.md")
    rail = next(s for s in store.list() if s.name == "rail.md")
    # a copy: the original is still there, so the copy's bytes keep their origin
    (folder / "copy.md").write_text(V1)
    _ingest(vault, folder / "copy.md")
    assert store.get(harbour.id).origin_key == origin_key(folder / "harbour.md")
    # harbour.md moved over rail.md, which has versions of its own: nothing is re-keyed
    (folder / "harbour.md").rename(folder / "rail.md")
    (folder / "copy.md").unlink()
    _ingest(vault, folder / "rail.md")
    assert store.get(harbour.id).origin_key == origin_key(folder / "harbour.md")
    assert store.get(rail.id).origin_key == origin_key(folder / "rail.md")
    assert (
        vault.db.execute("SELECT count(*) FROM audit WHERE action = 'source_moved'").fetchone()[0]
        == 0
    )


def test_a_file_copied_then_deleted_across_two_looks_is_moved_not_retracted(
    vault: Vault, tmp_path: Path
) -> None:
    """Some tools move a file by copying it and deleting the original later: the watch sees the
    copy (bytes it has) in one pass and the deletion in another. Still a move, not a deletion
    whose retraction would take claims the copy's bytes still back."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "harbour.md").write_text(V1)
    _once(vault, folder)
    v1 = SourceStore(vault).list()[0]
    (folder / "kept.md").write_text(V1)  # the copy: the original still there
    copied = _once(vault, folder)
    assert [e["status"] for e in _events(copied, "ingested")] == ["unchanged"]
    assert SourceStore(vault).get(v1.id).origin_key == origin_key(folder / "harbour.md")
    (folder / "harbour.md").unlink()
    later = _once(vault, folder)
    assert _events(later, "scan")[0]["deleted"] == 0
    assert [e["path"] for e in _events(later, "moved")] == [str((folder / "kept.md").resolve())]
    assert not _events(later, "deleted") and _pending(vault, "lineage:deleted:%") == []
    assert SourceStore(vault).get(v1.id).origin_key == origin_key(folder / "kept.md")
    # a real deletion afterwards is one: the bytes are nowhere in the folder any more
    (folder / "kept.md").unlink()
    gone = _once(vault, folder)
    assert [e["sources"] for e in _events(gone, "deleted")] == [[v1.id]]
    assert _pending(vault, "lineage:deleted:%") == [f"lineage:deleted:{v1.short_id}"]
