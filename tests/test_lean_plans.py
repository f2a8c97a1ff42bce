"""Migration ``m021b_lean_words_and_admissions`` (issue 25 item 5): a decided plan's admission
packed with its plan's text as zlib's preset dictionary (read back whole, smaller than packed
alone, a wrong dictionary or a forged header refused, older rows repacked) and ``claim_words``
naming words by integer (the same postings)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError
from affidavit.evidence.spans import register as register_spans
from affidavit.inbox import approve, get_plan, propose
from affidavit.lint.nearby import index_claims
from affidavit.lint.postings import every_posting
from affidavit.plan.stored import admission_text, needs_dictionary, pack, plan_text, unpack
from affidavit.vault import Vault, open_vault

from .conftest import add_samples, sample_plan_text


def _decided(vault: Vault) -> str:
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    approve(vault, plan_id, None, "tester")
    return plan_id


def _words_as_before(db: sqlite3.Connection, pairs: Sequence[tuple[str, int]] = ()) -> None:
    """``claim_words`` as m017 made it, m021b (and so m022, m028) not yet applied."""
    db.executescript(
        """
        BEGIN;
        DROP TABLE word_postings;
        DROP TABLE words;
        CREATE TABLE claim_words (word TEXT NOT NULL, claim INTEGER NOT NULL,
            PRIMARY KEY (word, claim)) WITHOUT ROWID;
        DELETE FROM _migrations WHERE name IN ('m021b_lean_words_and_admissions',
            'm022_word_counts', 'm028_word_postings');
        """
    )
    db.executemany("INSERT INTO claim_words VALUES (?, ?)", pairs)
    db.execute("COMMIT")


def test_the_admission_is_packed_with_its_plan_as_dictionary(vault: Vault) -> None:
    plan_id = _decided(vault)
    row = vault.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
    blob = row["admission_z"]
    assert needs_dictionary(blob) and needs_dictionary(row["plan_z"])  # both packed (m027)
    text = admission_text(row, vault.db)
    assert json.loads(text)["ops"]
    assert len(blob) < len(pack(text))  # the plan's quotes are back-references
    assert get_plan(vault, plan_id).admission.ops  # the inbox reads it back
    with pytest.raises(IntegrityError):  # another plan's text is not its dictionary
        unpack(blob, "admission", plan_text(row, vault.db).replace('"', "'"))
    with pytest.raises(IntegrityError):  # a header that asks for a dictionary it wasn't given
        unpack(blob, "admission")


def test_the_migration_repacks_admissions_stored_alone(vault: Vault) -> None:
    plan_id = _decided(vault)
    before = admission_text(
        vault.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone(), vault.db
    )
    root = vault.root
    vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite", isolation_level=None)
    register_spans(db, root)
    try:  # as m013 packed it, before m021b
        db.execute("UPDATE plans SET admission_z = ? WHERE id = ?", (pack(before), plan_id))
        _words_as_before(db)
    finally:
        db.close()
    with open_vault(root) as again:
        row = again.db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        assert needs_dictionary(row["admission_z"])
        assert admission_text(row, again.db) == before
        assert run_doctor(again).clean


def _postings(db: sqlite3.Connection) -> list[tuple[str, int]]:
    words = dict(db.execute("SELECT id, word FROM words").fetchall())
    return sorted((str(words[w]), claim) for w, claim in every_posting(db))


def test_the_migration_names_claim_words_by_integer(vault: Vault) -> None:
    """m021b: the postings of ``claim_words`` are the same (word, claim) pairs, the word's text
    kept once in ``words``; look-ups after it find what they found before."""
    _decided(vault)
    index_claims(vault.db)
    pairs = _postings(vault.db)
    assert pairs
    root = vault.root
    vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite", isolation_level=None)
    register_spans(db, root)
    try:
        _words_as_before(db, pairs)
    finally:
        db.close()
    with open_vault(root) as again:
        assert _postings(again.db) == pairs  # and packed by m028 (lint/postings.py)
        counts = dict(again.db.execute("SELECT word, n FROM words").fetchall())
        assert counts == dict(Counter(word for word, _ in pairs))  # m022 counted them
        assert index_claims(again.db) == 0  # nothing to redo
