"""A re-ingest costs what changed (issue 27): a carried claim's page keeps citing the version
its quote was verified in (``evidence_cited``, m030), so the carry leaves its page byte for byte
as it was — nothing rendered, committed or linted again for it — while the evidence follows the
newest version; the doctor re-derives every such citation from the audit log and catches a
forged one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.lint.runner import lint_scope, run_lint
from affidavit.sources.store import SourceStore
from affidavit.store.paths import page_relpath
from affidavit.vault import Vault

from .test_lineage import RAIL, V1, ingest, live, pending_lineage

LIGHTHOUSE = "The lighthouse keeper lived in a cottage beside the tower until 1950.\n\n"
FISHING = "Fishing boats land their catch at the north quay every morning."
V2 = V1.replace(LIGHTHOUSE, "")  # a sentence deleted: the others shift, none is new
V3 = V2.replace("north quay", "south quay")  # a carried sentence edited


def _pages(vault: Vault) -> dict[str, tuple[bytes, int]]:
    """Every page's bytes and inode (an atomic rewrite makes a new one)."""
    out = {}
    for path in sorted((vault.root / "wiki").rglob("*.md")):
        if path.name not in ("index.md", "log.md", "context.md"):
            out[str(path.relative_to(vault.root))] = (path.read_bytes(), path.stat().st_ino)
    return out


def _claim(vault: Vault, words: str) -> tuple[str, str]:
    """(id, page) of the active claim holding ``words``."""
    row = vault.db.execute(
        "SELECT id, page_slug FROM claims WHERE status = 'active' AND text LIKE ?", (f"%{words}%",)
    ).fetchone()
    return str(row[0]), str(row[1])


def _versions(tmp_path: Path, vault: Vault) -> tuple[Path, str]:
    path = tmp_path / "harbour.md"
    path.write_text(V1)
    ingest(vault, path)
    return path, SourceStore(vault).list()[0].id


def _lineage(report: dict[str, Any]) -> dict[str, Any]:
    [source] = report["sources"]
    return dict(source["lineage"])


def _footnote(vault: Vault, claim: str, page: str) -> str:
    text = (vault.root / page_relpath(page)).read_text()
    return next(line for line in text.splitlines() if f"claim `{claim}`" in line)


def test_a_carried_claims_page_is_byte_for_byte_what_it_was(vault: Vault, tmp_path: Path) -> None:
    path, v1 = _versions(tmp_path, vault)
    fishing, page = _claim(vault, "Fishing boats")
    before = _pages(vault)
    cites_v1 = _footnote(vault, fishing, page)
    path.write_text(V2)
    report = ingest(vault, path)
    lineage = _lineage(report)
    v2 = lineage["source_id"]
    assert lineage["carried"] >= 2
    # the evidence follows the newest version (what lint, ask and the desk read) ...
    assert live(vault)[fishing][1] == v2
    # ... the page is untouched: not re-rendered, not rewritten, its footnote still v1's
    assert _pages(vault) == before
    assert f"source `{v1[:12]}`" in cites_v1 and _footnote(vault, fishing, page) == cites_v1
    found = re.search(r"chars (\d+)–(\d+)", cites_v1)
    assert found is not None
    start, end = map(int, found.groups())
    assert SourceStore(vault).text(v1)[start:end] == FISHING  # v1's bytes still hold it
    # the deleted sentence's claim waits for a person, with both versions named
    lighthouse, _ = _claim(vault, "lighthouse keeper")
    assert [op["claim"] for op in pending_lineage(vault)] == [lighthouse]
    # one audit entry for the carry, naming its counts
    entry = json.loads(
        vault.db.execute(
            "SELECT detail FROM audit WHERE action = 'applied' AND plan_id = ?",
            (lineage["plans"][0],),
        ).fetchone()[0]
    )
    assert entry["ops"][0]["counts"]["claims"] == lineage["carried"]
    report_ = run_doctor(vault)
    assert report_.clean, report_.findings


def test_a_claim_carried_twice_keeps_its_first_citation_and_an_edit_of_it_is_proposed(
    vault: Vault, tmp_path: Path
) -> None:
    path, _ = _versions(tmp_path, vault)
    fishing, _ = _claim(vault, "Fishing boats")
    tourists, tourists_page = _claim(vault, "Tourists")
    cites = _footnote(vault, tourists, tourists_page)
    path.write_text(V2)
    ingest(vault, path)
    path.write_text(V3)
    report = ingest(vault, path)
    lineage = _lineage(report)
    assert lineage["version"] == 3
    assert live(vault)[tourists][1] == lineage["source_id"]
    assert _footnote(vault, tourists, tourists_page) == cites  # still v1's place
    # the carried claim whose sentence v3 edits is not carried: its change is proposed
    assert live(vault)[fishing][1] != lineage["source_id"]
    proposed = {op["claim"]: op["op"] for op in pending_lineage(vault)}
    assert proposed.get(fishing) == "supersede_claim"
    report_ = run_doctor(vault)
    assert report_.clean, report_.findings


FORGERIES = {
    "moved": 'UPDATE evidence_cited SET start = start + 8, "end" = "end" + 8',
    "checksum": "UPDATE evidence_cited SET crc = crc + 1",
    "deleted": "DELETE FROM evidence_cited",
    "invented": (
        'INSERT INTO evidence_cited SELECT claim_id, idx, source_key, start, "end", location, '
        "crc FROM evidence_rows WHERE claim_id NOT IN (SELECT claim_id FROM evidence_cited)"
    ),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_the_doctor_catches_a_forged_citation(vault: Vault, tmp_path: Path, forgery: str) -> None:
    """The attacker edits where a carried claim's page cites its quote (or drops or invents
    such a row) behind the door: the doctor re-derives each from the audit log's carries."""
    path, _ = _versions(tmp_path, vault)
    path.write_text(V2)
    ingest(vault, path)
    assert run_doctor(vault).clean
    vault.db.execute(FORGERIES[forgery])
    vault.db.commit()
    claims = [f for f in run_doctor(vault).findings if f.check == "claims"]
    assert any("page cit" in f.message for f in claims), claims


def test_a_tampered_quote_is_never_carried_behind_an_unchanged_page(
    vault: Vault, tmp_path: Path
) -> None:
    """The attacker's carry: a claim's offsets edited in ``evidence_rows`` before the re-ingest
    (its words unreadable) is not carried; the page can't hide it behind v1's citation."""
    path, _ = _versions(tmp_path, vault)
    fishing, _ = _claim(vault, "Fishing boats")
    vault.db.execute(
        'UPDATE evidence_rows SET start = start + 8, "end" = "end" - 3 WHERE claim_id = ?',
        (fishing,),
    )
    vault.db.commit()
    path.write_text(V2)
    report = ingest(vault, path)
    lineage = _lineage(report)
    assert live(vault)[fishing][1] != lineage["source_id"]
    cited = vault.db.execute(
        "SELECT count(*) FROM evidence_cited WHERE claim_id = ?", (fishing,)
    ).fetchone()[0]
    assert cited == 0
    assert not run_doctor(vault).clean


def test_lint_after_a_re_ingest_does_not_render_the_carried_pages_again(
    vault: Vault, tmp_path: Path
) -> None:
    path, _ = _versions(tmp_path, vault)
    _, page = _claim(vault, "Fishing boats")
    run_lint(vault)  # the checkpoint the next run starts from
    path.write_text(V2)
    report = ingest(vault, path)
    lineage = _lineage(report)
    settled = {
        str(r[0])
        for r in vault.db.execute(
            "SELECT DISTINCT claim_id FROM evidence WHERE source_id = ?", (lineage["source_id"],)
        )
    }
    assert settled
    with vault.write_lock():
        _, scope = lint_scope(vault, False, settled)
    assert scope is not None and scope.files is not None
    assert page_relpath(page) not in scope.files
    assert not settled & scope.claims


def test_a_carried_page_edited_by_hand_is_still_linted(vault: Vault, tmp_path: Path) -> None:
    """The attacker's side of the lint scope: a page whose claims were all carried, but whose
    file someone changed, is rendered again and compared (its file's stat changed)."""
    path, _ = _versions(tmp_path, vault)
    _, page = _claim(vault, "Fishing boats")
    run_lint(vault)
    path.write_text(V2)
    report = ingest(vault, path)
    lineage = _lineage(report)
    settled = {
        str(r[0])
        for r in vault.db.execute(
            "SELECT DISTINCT claim_id FROM evidence WHERE source_id = ?", (lineage["source_id"],)
        )
    }
    file = vault.root / page_relpath(page)
    file.write_text(file.read_text().replace("Fishing boats", "Fishing trawlers"))
    with vault.write_lock():
        _, scope = lint_scope(vault, False, settled)
    assert scope is not None and scope.files is not None
    assert page_relpath(page) in scope.files


def test_the_doctor_since_its_checkpoint_catches_a_forged_citation_and_its_page(
    vault: Vault, tmp_path: Path
) -> None:
    """The attacker moves a carried claim's citation and writes the page the forged row renders
    (so the page matches its rendering): the change-log doctor finds a row no door wrote."""
    from affidavit.doctor_since import run_doctor_since
    from affidavit.store.render import render_path

    path, _ = _versions(tmp_path, vault)
    fishing, page = _claim(vault, "Fishing boats")
    path.write_text(V2)
    ingest(vault, path)
    assert run_doctor_since(vault).clean  # no checkpoint: a full run, which records one
    vault.db.execute(
        'UPDATE evidence_cited SET start = start + 8, "end" = "end" + 8 WHERE claim_id = ?',
        (fishing,),
    )
    vault.db.commit()
    relpath = page_relpath(page)
    (vault.root / relpath).write_text(render_path(vault.db, relpath) or "")
    report = run_doctor_since(vault)
    assert not report.clean
    assert any(fishing in f"{f.subject} {f.message}" for f in report.findings), report.findings


def _linked_pair(vault: Vault, tmp_path: Path) -> tuple[str, str]:
    """Two pages, the first linking to the second, and a lint checkpoint after them."""
    _versions(tmp_path, vault)
    rail = tmp_path / "rail.md"
    rail.write_text(RAIL)
    ingest(vault, rail)
    _, harbour = _claim(vault, "Fishing boats")
    _, railway = _claim(vault, "mountain railway")
    assert harbour != railway
    vault.db.execute(
        "INSERT INTO links (src, dst, plan_id) SELECT ?, ?, id FROM plans LIMIT 1",
        (harbour, railway),
    )
    vault.db.commit()
    run_lint(vault)
    return harbour, railway


def _files(vault: Vault) -> set[str]:
    with vault.write_lock():
        _, scope = lint_scope(vault, False, None)
    assert scope is not None and scope.files is not None
    return scope.files


def test_a_page_written_to_is_linted_without_the_pages_it_links(
    vault: Vault, tmp_path: Path
) -> None:
    """Every write to a page moves its date: that changes the page, not the pages linking to or
    from it (they show its title alone)."""
    harbour, railway = _linked_pair(vault, tmp_path)
    vault.db.execute(
        "UPDATE pages SET updated_at = '2030-01-01T00:00:00Z' WHERE slug = ?", (harbour,)
    )
    vault.db.commit()
    files = _files(vault)
    assert page_relpath(harbour) in files and page_relpath(railway) not in files


def test_a_page_whose_title_changed_is_linted_with_the_pages_it_links(
    vault: Vault, tmp_path: Path
) -> None:
    """The other side: a new title shows in the pages linking to it, which are rendered again."""
    harbour, railway = _linked_pair(vault, tmp_path)
    vault.db.execute("UPDATE pages SET title = 'The mountain line' WHERE slug = ?", (railway,))
    vault.db.commit()
    files = _files(vault)
    assert page_relpath(harbour) in files and page_relpath(railway) in files
