"""Migration ``m027_plans_packed_with_claims`` (issue 25 item 5): a decided plan's text packed
with the texts of the claims it created as zlib's preset dictionary. Read back byte for byte,
smaller than packed alone; a list of claims edited, a claim's text or owner changed, or a forged
pack is an IntegrityError (and a doctor finding), never a plan believed; an existing vault is
repacked by the migration with its contents unchanged."""

from __future__ import annotations

import sqlite3

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError
from affidavit.evidence.spans import register as register_spans
from affidavit.hashing import sha256_hex
from affidavit.inbox import approve, get_plan, propose
from affidavit.plan.stored import (
    _parse_ranges,
    _ranges,
    claims_dictionary,
    needs_dictionary,
    pack,
    plan_text,
    unpack_plan,
)
from affidavit.vault import Vault, open_vault

from .conftest import add_samples, sample_plan_text


def _applied(vault: Vault) -> tuple[str, str]:
    """An applied plan's id and its canonical text as proposed."""
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    text = vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan_id,)).fetchone()[0]
    approve(vault, plan_id, None, "tester")
    return plan_id, str(text)


def _row(db: sqlite3.Connection, plan_id: str) -> sqlite3.Row:
    row: sqlite3.Row = db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
    return row


def _tamper(vault: Vault, sql: str, *args: object) -> None:
    vault.db.execute(sql, args)


def test_a_plan_is_packed_against_its_claims_and_read_back_whole(vault: Vault) -> None:
    plan_id, text = _applied(vault)
    row = _row(vault.db, plan_id)
    assert row["plan_json"] == "" and needs_dictionary(row["plan_z"])
    claims = vault.db.execute(
        "SELECT rowid FROM claims WHERE plan_id = ? ORDER BY rowid", (plan_id,)
    ).fetchall()
    assert claims and row["packed_with"] == _ranges([r[0] for r in claims])
    assert plan_text(row, vault.db) == text  # byte for byte
    assert sha256_hex(text) == plan_id
    assert len(row["plan_z"]) < len(pack(text))  # its claims' texts are back-references
    assert get_plan(vault, plan_id).plan.operations  # the inbox reads it back
    assert run_doctor(vault).clean
    with pytest.raises(IntegrityError, match="with its database"):
        plan_text(row)


@pytest.mark.parametrize(
    "tampering",
    [
        "the list names other claims",
        "the list is not a list",
        "the list is emptied",
        "a claim's text changed",
        "a claim belongs to another plan",
        "a claim is gone",
    ],
)
def test_a_tampered_pack_is_refused_and_reported(vault: Vault, tampering: str) -> None:
    plan_id, _ = _applied(vault)
    ranges = _row(vault.db, plan_id)["packed_with"]
    first = int(ranges.split(",")[0].split("-")[0])
    gone = vault.db.execute("SELECT id FROM claims WHERE rowid = ?", (first,)).fetchone()[0]
    other = "f" * 64  # another plan's id
    if tampering == "the list names other claims":
        last = vault.db.execute("SELECT max(rowid) FROM claims").fetchone()[0]
        _tamper(vault, "UPDATE plans SET packed_with = ? WHERE id = ?", f"{last + 1}", plan_id)
    elif tampering == "the list is not a list":
        _tamper(vault, "UPDATE plans SET packed_with = ? WHERE id = ?", "9-3", plan_id)
    elif tampering == "the list is emptied":
        _tamper(vault, "UPDATE plans SET packed_with = '' WHERE id = ?", plan_id)
    elif tampering == "a claim's text changed":
        _tamper(vault, "UPDATE claims SET text = text || '!' WHERE rowid = ?", first)
    elif tampering == "a claim belongs to another plan":
        _tamper(vault, "UPDATE claims SET plan_id = ? WHERE rowid = ?", other, first)
    else:
        _tamper(
            vault,
            "DELETE FROM evidence_rows WHERE claim_id IN (SELECT id FROM claims WHERE rowid = ?)",
            first,
        )
        _tamper(vault, "DELETE FROM claims WHERE rowid = ?", first)
    with pytest.raises(IntegrityError):
        plan_text(_row(vault.db, plan_id), vault.db)
    report = run_doctor(vault)
    found = [str(f) for f in report.findings]
    assert any("no longer hashes to its id" in f for f in found), found
    if tampering == "a claim is gone":  # still named by id: the audit entry lists the claims
        assert any(gone in f and "missing from the database" in f for f in found), found


def test_a_forged_pack_against_the_right_claims_is_refused(vault: Vault) -> None:
    """The dictionary is right (zlib's Adler-32 passes) and the text inflates: only the hash
    of the text against the plan's id can tell, and it does."""
    plan_id, text = _applied(vault)
    ranges = _row(vault.db, plan_id)["packed_with"]
    forged = pack(
        text.replace("Four Freedoms", "Five Freedoms"), claims_dictionary(vault.db, plan_id, ranges)
    )
    with pytest.raises(IntegrityError, match="doesn't hash to its id"):
        unpack_plan(vault.db, plan_id, forged)


def test_ranges_read_back_and_refuse_what_no_door_wrote() -> None:
    rowids = [3, 4, 5, 9, 11, 12]
    assert _ranges(rowids) == "3-5,9,11-12"
    assert _parse_ranges(_ranges(rowids), "p") == [(3, 5), (9, 9), (11, 12)]
    for bad in ("", "5,3", "3-5,5", "1-0", "a", "1,,2", " 1", "1-", "0-999999999"):
        with pytest.raises(IntegrityError, match="restore the database"):
            _parse_ranges(bad, "p")


def test_the_migration_repacks_plans_packed_alone(vault: Vault) -> None:
    plan_id, text = _applied(vault)
    before = {r["id"]: plan_text(r, vault.db) for r in vault.db.execute("SELECT * FROM plans")}
    root = vault.root
    vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite", isolation_level=None)
    register_spans(db, root)
    try:  # as m013 packed it, before m027
        db.execute("BEGIN")
        for pid, plain in before.items():
            db.execute("UPDATE plans SET plan_z = ? WHERE id = ?", (pack(plain), pid))
        db.execute("ALTER TABLE plans DROP COLUMN packed_with")
        db.execute("DELETE FROM _migrations WHERE name = 'm027_plans_packed_with_claims'")
        db.execute("COMMIT")
    finally:
        db.close()
    with open_vault(root) as again:
        row = _row(again.db, plan_id)
        assert needs_dictionary(row["plan_z"]) and row["packed_with"]
        after = {r["id"]: plan_text(r, again.db) for r in again.db.execute("SELECT * FROM plans")}
        assert after == before and after[plan_id] == text
        assert run_doctor(again).clean


def test_doctor_stats_tells_an_outside_reader_how_to_read_a_packed_plan(vault: Vault) -> None:
    """The note's recipe, followed with sqlite3 and zlib alone, gives the plan's text back."""
    import zlib

    from affidavit.dbstats import PACKED_NOTE, vault_stats

    plan_id, text = _applied(vault)
    assert PACKED_NOTE in vault_stats(vault).notes
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        blob, ranges = db.execute(
            "SELECT plan_z, packed_with FROM plans WHERE id = ?", (plan_id,)
        ).fetchone()
        texts: list[str] = []
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            texts += [
                r[0]
                for r in db.execute(
                    "SELECT text FROM claims WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
                    (int(low), int(high or low)),
                )
            ]
    finally:
        db.close()
    inflate = zlib.decompressobj(zdict="\n".join(texts).encode()[-32 * 1024 :])
    assert inflate.decompress(blob).decode() == text


def test_a_plan_approved_in_two_parts_is_packed_against_its_last_part(vault: Vault) -> None:
    """Approved op by op, a plan is decided (and packed) by its last apply: its dictionary is
    the claims that apply wrote, and it still reads back byte for byte; a rejected plan wrote
    no claims and is packed alone."""
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    text = vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan_id,)).fetchone()[0]
    count = len(get_plan(vault, plan_id).plan.operations)
    approve(vault, plan_id, [1], "tester")
    assert _row(vault.db, plan_id)["status"] == "pending"
    first = {
        r[0] for r in vault.db.execute("SELECT rowid FROM claims WHERE plan_id = ?", (plan_id,))
    }
    approve(vault, plan_id, list(range(2, count + 1)), "tester")
    row = _row(vault.db, plan_id)
    assert row["status"] == "applied" and row["packed_with"]
    named = {
        n for low, high in _parse_ranges(row["packed_with"], plan_id) for n in range(low, high + 1)
    }
    assert named and not named & first  # the last apply's claims
    assert plan_text(row, vault.db) == text
    assert run_doctor(vault).clean
