"""``doctor`` re-derives claims and evidence from the applied plans the audit chain covers: an
attacker who edits the database, re-renders the wiki and commits it is still found."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError
from affidavit.evidence import spans
from affidavit.inbox import approve, propose
from affidavit.plan.stored import (
    MAX_TEXT,
    claims_dictionary,
    pack,
    plan_text,
    unpack,
    unpack_plan,
)
from affidavit.store.apply import render_all_files
from affidavit.vault import Vault

from .conftest import add_samples, sample_plan_text


@pytest.fixture
def wiki(vault: Vault) -> Vault:
    add_samples(vault)
    proposal = propose(vault, sample_plan_text(vault), "tester", "sample")
    approve(vault, proposal.plan_id, None, "tester")
    return vault


def tamper(vault: Vault, *sql: str) -> None:
    """Change the database directly, re-render every wiki file from it and commit: everything
    but the replay of the applied plans agrees afterwards."""
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    spans.register(db, vault.root)  # the evidence view's function, as any connection of ours
    try:
        with db:
            for statement in sql:
                db.execute(statement)
    finally:
        db.close()
    render_all_files(vault)
    vault.git.run("add", "--all", "--", "wiki")
    vault.git.run("commit", "--quiet", "--allow-empty", "-m", "tidy up")


def one_claim(vault: Vault) -> str:
    row = vault.db.execute(
        "SELECT id FROM claims WHERE page_slug = 'four-freedoms' AND status = 'active' "
        "ORDER BY position LIMIT 1"
    ).fetchone()
    return str(row[0])


def claim_findings(vault: Vault) -> dict[str, str]:
    report = run_doctor(vault)
    return {f.subject: f.message for f in report.findings if f.check == "claims"}


CASES: dict[str, Callable[[str], list[str]]] = {
    "text": lambda c: [
        f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'"
    ],
    # evidence is offsets (m021): the view refuses a quote unlike the span, so the words
    # recorded at the offsets (their CRC) are what is altered
    "quote": lambda c: [f"UPDATE evidence_rows SET crc = crc + 1 WHERE claim_id = '{c}'"],
    "offsets": lambda c: [
        f'UPDATE evidence SET start = start + 1, "end" = "end" + 1 WHERE claim_id = \'{c}\''
    ],
    "page": lambda c: [f"UPDATE claims SET page_slug = 'monroe-doctrine' WHERE id = '{c}'"],
    "status": lambda c: [f"UPDATE claims SET status = 'retracted' WHERE id = '{c}'"],
}


@pytest.mark.parametrize("what", sorted(CASES))
def test_a_tampered_claim_or_evidence_row_is_reported(wiki: Vault, what: str) -> None:
    assert claim_findings(wiki) == {}
    claim = one_claim(wiki)
    tamper(wiki, *CASES[what](claim))
    found = claim_findings(wiki)
    assert claim in found, (what, found)
    assert not run_doctor(wiki).clean


def test_a_claim_inserted_by_sql_is_reported(wiki: Vault) -> None:
    claim = one_claim(wiki)
    tamper(
        wiki,
        "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
        "created_at, derived_from) SELECT 'c-planted0000000000', page_slug, section, 99, "
        f"'Roosevelt wanted a king.', 'active', trust, plan_id, created_at, '[]' FROM claims "
        f"WHERE id = '{claim}'",
        'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
        f"SELECT 'c-planted0000000000', idx, source_id, quote, start, \"end\", location "
        f"FROM evidence WHERE claim_id = '{claim}'",
    )
    assert "Roosevelt wanted a king." in (wiki.wiki_dir / "four-freedoms.md").read_text()
    found = claim_findings(wiki)
    assert "no applied plan created this claim" in found["c-planted0000000000"]


def test_a_deleted_claim_is_reported(wiki: Vault) -> None:
    claim = one_claim(wiki)
    tamper(
        wiki,
        f"DELETE FROM evidence WHERE claim_id = '{claim}'",
        f"DELETE FROM claims WHERE id = '{claim}'",
    )
    assert "missing from the database" in claim_findings(wiki)[claim]


@pytest.mark.parametrize("where", ["compressed", "against its claims", "text"])
def test_an_altered_plan_is_reported(wiki: Vault, where: str) -> None:
    """An applied plan's text is stored compressed against its claims (plan/stored.py): edited
    and packed alone, or forged and packed against the same claims (the dictionary right, the
    text not), or written back as plain text (which a reader takes first), it no longer hashes
    to its id."""
    row, *_ = wiki.db.execute("SELECT * FROM plans WHERE status = 'applied'").fetchall()
    plan_id, text = row["id"], plan_text(row, wiki.db)
    altered = text.replace("Four Freedoms", "Five Freedoms")
    assert altered != text and row["packed_with"]
    if where == "compressed":
        set_it = f"UPDATE plans SET plan_z = x'{pack(altered).hex()}' WHERE id = '{plan_id}'"
    elif where == "against its claims":
        forged = pack(altered, claims_dictionary(wiki.db, plan_id, row["packed_with"]))
        with pytest.raises(IntegrityError, match="doesn't hash to its id"):
            unpack_plan(wiki.db, plan_id, forged)
        set_it = f"UPDATE plans SET plan_z = x'{forged.hex()}' WHERE id = '{plan_id}'"
    else:
        quoted = altered.replace("'", "''")
        set_it = f"UPDATE plans SET plan_json = '{quoted}' WHERE id = '{plan_id}'"
    tamper(wiki, set_it)
    found = claim_findings(wiki)
    assert any("no longer hashes to its id" in m for m in found.values()), found


def test_a_compressed_plan_that_inflates_without_end_is_refused(wiki: Vault) -> None:
    """A planted zlib bomb (or bytes that are not zlib) in a decided plan's column is an
    integrity problem reported by doctor, never inflated whole into memory."""
    import zlib

    (plan_id,), *_ = wiki.db.execute("SELECT id FROM plans WHERE status = 'applied'").fetchall()
    bomb = zlib.compress(b"[" * (MAX_TEXT + 1), 9)
    with pytest.raises(IntegrityError, match="inflates past"):
        unpack(bomb)
    with pytest.raises(IntegrityError, match="not readable"):
        unpack(b"not zlib at all")
    tamper(wiki, f"UPDATE plans SET plan_z = x'{bomb.hex()}' WHERE id = '{plan_id}'")
    assert "no longer hashes to its id" in claim_findings(wiki)[plan_id]
