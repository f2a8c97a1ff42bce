"""The lean database (issue 25 item 5): a decided plan's texts and context.md's snapshots are
stored compressed, whole (the plan still hashes to its id, doctor still re-derives every claim
from it); migration ``m013_plans_compressed`` converts a vault written before it; ``doctor
--stats`` says where the bytes are."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.evidence.spans import register as register_spans
from affidavit.hashing import sha256_hex
from affidavit.inbox import approve, get_plan, propose, reject
from affidavit.plan.stored import admission_text, plan_text, snapshot_text
from affidavit.vault import Vault, open_vault

from .conftest import add_samples, sample_plan_text


def test_a_decided_plan_is_stored_compressed_and_whole(vault: Vault) -> None:
    add_samples(vault)
    rejected = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    reject(vault, rejected, "no", "tester")
    applied = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    pending_row = vault.db.execute("SELECT * FROM plans WHERE id = ?", (applied,)).fetchone()
    assert pending_row["plan_json"] and pending_row["plan_z"] is None  # pending: plain text
    approve(vault, applied, None, "tester")
    for plan_id in (applied, rejected):
        row = vault.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        assert row["plan_json"] == "" and row["admission"] == ""
        assert len(row["plan_z"]) < len(plan_text(row, vault.db)) / 2
        assert sha256_hex(plan_text(row, vault.db)) == plan_id  # the text hashes to its id
        assert json.loads(admission_text(row, vault.db))["ops"]
    assert get_plan(vault, applied).plan.operations  # inbox show reads it back
    assert run_doctor(vault).clean


def _as_before_m013(vault: Vault) -> None:
    """Turn the vault's database back into what a release before m013 wrote."""
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    register_spans(db, vault.root)  # ALTER TABLE re-reads the evidence view's triggers
    db.row_factory = sqlite3.Row
    try:
        with db:
            for row in db.execute("SELECT * FROM plans").fetchall():
                db.execute(
                    "UPDATE plans SET plan_json = ?, admission = ? WHERE id = ?",
                    (plan_text(row, db), admission_text(row, db), row["id"]),
                )
            for row in db.execute("SELECT * FROM context_snapshots").fetchall():
                db.execute(
                    "UPDATE context_snapshots SET content = ? WHERE id = ?",
                    (snapshot_text(row, db), row["id"]),
                )
            db.execute("UPDATE context_snapshots SET base = NULL")  # whole, as before m023
            db.execute(
                "DELETE FROM _migrations WHERE name IN "
                "('m013_plans_compressed', 'm023_context_deltas')"
            )
        for table, column in (
            ("plans", "plan_z"),
            ("plans", "admission_z"),
            ("context_snapshots", "content_z"),
            ("context_snapshots", "base"),
        ):
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    finally:
        db.close()


def test_the_migration_compresses_an_existing_vault(vault: Vault) -> None:
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    approve(vault, plan_id, None, "tester")
    before = {
        r["id"]: (plan_text(r, vault.db), admission_text(r, vault.db))
        for r in vault.db.execute("SELECT * FROM plans").fetchall()
    }
    snapshots = [
        snapshot_text(r, vault.db) for r in vault.db.execute("SELECT * FROM context_snapshots")
    ]
    root = vault.root
    vault.close()
    _as_before_m013(vault)
    with open_vault(root) as again:
        rows = again.db.execute("SELECT * FROM plans").fetchall()
        assert rows and all(r["plan_json"] == "" and r["plan_z"] for r in rows)
        assert {
            r["id"]: (plan_text(r, again.db), admission_text(r, again.db)) for r in rows
        } == before
        rows = again.db.execute("SELECT * FROM context_snapshots").fetchall()
        after = [snapshot_text(r, again.db) for r in rows]
        assert after == snapshots and snapshots
        assert run_doctor(again).clean


def test_doctor_stats_says_where_the_bytes_are(vault: Vault) -> None:
    add_samples(vault)
    approve(vault, propose(vault, sample_plan_text(vault), "t", "s").plan_id, None, "t")
    runner = CliRunner()
    out = runner.invoke(main, ["--vault", str(vault.root), "doctor", "--stats", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    tables = {t["table"]: t for t in data["tables"]}
    assert tables["claims"]["rows"] > 0 and tables["claims"]["bytes"] > 0
    assert tables["plans"]["rows"] == 1
    assert "claims_fts_data" not in tables  # FTS5's shadow tables are counted under claims_fts
    assert data["sources_text_bytes"] > 0 and data["database_bytes"] >= sum(
        t["bytes"] for t in data["tables"]
    )
    assert data["database_per_source_byte"] == round(
        data["database_bytes"] / data["sources_text_bytes"], 2
    )
    text = runner.invoke(main, ["--vault", str(vault.root), "doctor", "--stats"])
    assert text.exit_code == 0 and "× the sources' text" in text.output
