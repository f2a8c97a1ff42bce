"""The carry's re-pointed evidence is logged once per row in the change log (m031): the doctor
and the automatic lint after a re-ingest read half the entries. A row moved to another claim (a
hand edit no door makes) is still logged under both claims."""

from __future__ import annotations

from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

from .test_lineage_decision import TEA


def _seq(vault: Vault) -> int:
    row = vault.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'doctor_changes'")
    found = row.fetchone()
    return int(found[0]) if found else 0


def _logged(vault: Vault, since: int) -> list[str]:
    return [
        str(r[0])
        for r in vault.db.execute(
            "SELECT key FROM doctor_changes WHERE tbl = 'evidence' AND seq > ? ORDER BY seq",
            (since,),
        )
    ]


def test_a_carry_logs_each_re_pointed_row_once(vault: Vault, tmp_path: Path) -> None:
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    note.write_text(TEA + "White tea is steeped at 75 degrees Celsius for five minutes.\n")
    since = _seq(vault)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    carried = (report.sources[0].lineage or {})["carried"]
    assert carried >= 3
    version = vault.db.execute("SELECT max(key) FROM source_keys").fetchone()[0]
    rows: dict[str, int] = {}
    for (claim,) in vault.db.execute(
        "SELECT claim_id FROM evidence_rows WHERE source_key = ? AND claim_id IN "
        "(SELECT claim_id FROM evidence_cited)",  # carried: cited where first verified
        (version,),
    ):
        rows[str(claim)] = rows.get(str(claim), 0) + 1
    assert len(rows) == carried
    logged = _logged(vault, since)
    # one entry per re-pointed row (main: two, old and new claim id — the same claim)
    assert {c: logged.count(c) for c in rows} == rows


def test_a_row_moved_to_another_claim_is_logged_under_both(vault: Vault, tmp_path: Path) -> None:
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    a, b = [str(r[0]) for r in vault.db.execute("SELECT id FROM claims ORDER BY rowid LIMIT 2")]
    since = _seq(vault)
    vault.db.execute("UPDATE evidence_rows SET start = start WHERE claim_id = ? AND idx = 0", (a,))
    assert _logged(vault, since) == [a]  # main: [a, a]
    since = _seq(vault)
    vault.db.execute(
        "UPDATE evidence_rows SET claim_id = ?, idx = 9 WHERE claim_id = ? AND idx = 0", (b, a)
    )
    assert _logged(vault, since) == [a, b]
