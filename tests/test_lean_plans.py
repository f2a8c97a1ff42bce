"""A decided plan's admission packed with its plan's text as zlib's preset dictionary (issue 25
item 5, migration ``m021b_admission_by_plan``): read back whole, smaller than packed alone, a
wrong dictionary or a forged header refused, and older rows repacked by the migration."""

from __future__ import annotations

import json
import sqlite3

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError
from affidavit.evidence.spans import register as register_spans
from affidavit.inbox import approve, get_plan, propose
from affidavit.plan.stored import admission_text, needs_dictionary, pack, plan_text, unpack
from affidavit.vault import Vault, open_vault

from .conftest import add_samples, sample_plan_text


def _decided(vault: Vault) -> str:
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    approve(vault, plan_id, None, "tester")
    return plan_id


def test_the_admission_is_packed_with_its_plan_as_dictionary(vault: Vault) -> None:
    plan_id = _decided(vault)
    row = vault.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
    blob = row["admission_z"]
    assert needs_dictionary(blob) and not needs_dictionary(row["plan_z"])
    text = admission_text(row)
    assert json.loads(text)["ops"]
    assert len(blob) < len(pack(text))  # the plan's quotes are back-references
    assert get_plan(vault, plan_id).admission.ops  # the inbox reads it back
    with pytest.raises(IntegrityError):  # another plan's text is not its dictionary
        unpack(blob, "admission", plan_text(row).replace('"', "'"))
    with pytest.raises(IntegrityError):  # a header that asks for a dictionary it wasn't given
        unpack(blob, "admission")


def test_the_migration_repacks_admissions_stored_alone(vault: Vault) -> None:
    plan_id = _decided(vault)
    before = admission_text(
        vault.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
    )
    root = vault.root
    vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite", isolation_level=None)
    register_spans(db, root)
    try:  # as m013 packed it, before m021b
        db.execute("UPDATE plans SET admission_z = ? WHERE id = ?", (pack(before), plan_id))
        db.execute("DELETE FROM _migrations WHERE name = 'm021b_admission_by_plan'")
    finally:
        db.close()
    with open_vault(root) as again:
        row = again.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        assert needs_dictionary(row["admission_z"])
        assert admission_text(row) == before
        assert run_doctor(again).clean
