"""Lint's integrity findings on a PostgreSQL vault (issue 26): ``source_tampered`` (a source row
whose bytes or text no longer hash to what it records), ``evidence_unverified`` (an active
claim's quote not found again at its recorded offsets) and ``unsupported_claim`` (an active claim
its quotes don't support) — what ``affidavit doctor --database`` finds, now in the lint job the
CLI's ``lint --database`` and the desk queue, with the findings, fingerprints and
``retract_claim`` fixes a SQLite vault's lint gives over the same sources and plans. Before, a
PostgreSQL lint found none of them. The attacker is a superuser editing rows: a byte of a
source's text, the text and its recorded hash together, a quote's offsets, a claim's words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from affidavit.clock import utc_now
from affidavit.jobs.pg_checks import PG_CHECKS, run_pg_checks
from affidavit.lint.checks import run_checks
from affidavit.lint.findings import Finding
from affidavit.service.pg_vaults import PgVault
from affidavit.sources.store import SourceStore
from affidavit.storage.pg_sql import PgSql
from affidavit.vault import Vault

from .test_pg_lint_links import TRUSTING, WASHINGTON, lint_job
from .test_pg_lint_links import twins as twins  # the fixture: a SQLite and a PostgreSQL vault

pytestmark = pytest.mark.xdist_group("postgres")

KINDS = ["source_tampered", "evidence_unverified", "unsupported_claim"]
MINT = "The establishment of the militia, of a mint"  # quoted by two claims, at 6616


def pg_checks(pg: PgVault) -> list[Finding]:
    with pg.storage._tx() as conn:
        return [f for f in run_pg_checks(PgSql(conn, "v_team"), TRUSTING, utc_now)
                if f.kind in KINDS]  # fmt: skip


def same(f: Finding) -> tuple[Any, ...]:
    """What two backends' findings share: all but the restore hint (git there, a backup here)
    and the integrity wording (a file there, a row here)."""
    quotes = [q.model_dump(exclude={"context"}) for q in f.quotes]
    message = f.message if f.kind != "source_tampered" else f.message.rsplit("(", 1)[1]
    return (f.kind, f.severity, f.subject, f.claims, f.pages, f.fix, f.fingerprint, quotes,
            message)  # fmt: skip


def pg_exec(pg: PgVault, sql: str, params: tuple[Any, ...] = ()) -> Any:
    with pg.storage.pool.connection() as conn:
        return conn.execute(sql, params)


def mint_claims(pg: PgVault) -> list[str]:
    rows = pg_exec(pg, "SELECT DISTINCT claim_id FROM v_team.evidence WHERE start = 6616 "
                   "ORDER BY claim_id").fetchall()  # fmt: skip
    return [str(r["claim_id"]) for r in rows]


def alter_sqlite_text(vault: Vault, old: str, new: str) -> str:
    """A byte of the source's extracted text file changed; its id."""
    (record,) = [r for r in SourceStore(vault).list() if r.id.startswith(WASHINGTON)]
    path = vault.root / record.text_file
    path.chmod(0o644)
    text = path.read_text("utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), "utf-8")
    return record.id


def alter_pg_text(pg: PgVault, old: str, new: str, rehash: bool = False) -> None:
    """The superuser's edit: the source row's text, and with ``rehash`` its recorded hash too."""
    from affidavit.hashing import sha256_hex

    (row,) = pg_exec(pg, "SELECT id, text FROM v_team.sources WHERE id LIKE %s",
                     (WASHINGTON + "%",)).fetchall()  # fmt: skip
    text = str(row["text"])
    assert text.count(old) == 1
    text = text.replace(old, new)
    digest = sha256_hex(text.encode("utf-8")) if rehash else None
    pg_exec(pg, "UPDATE v_team.sources SET text = %s, "
            "text_sha256 = coalesce(%s, text_sha256) WHERE id = %s",
            (text, digest, row["id"]))  # fmt: skip


def test_a_clean_vault_has_none_on_either(twins: tuple[Vault, PgVault]) -> None:
    sqlite, pg = twins
    assert pg_checks(pg) == [] == run_checks(sqlite, kinds=KINDS)
    assert {"source_tampered", "evidence_unverified", "unsupported_claim"} <= set(PG_CHECKS)


def test_a_byte_changed_in_a_source_is_found_as_on_sqlite(twins: tuple[Vault, PgVault]) -> None:
    sqlite, pg = twins
    source = alter_sqlite_text(sqlite, "of the militia, of a mint", "of the militia, of a hint")
    alter_pg_text(pg, "of the militia, of a mint", "of the militia, of a hint")
    found, folder = pg_checks(pg), run_checks(sqlite, kinds=KINDS)
    assert [same(f) for f in found] == [same(f) for f in folder]
    tampered = [f for f in found if f.kind == "source_tampered"]
    assert [f.subject for f in tampered] == [source]
    assert "pg_restore" in tampered[0].fix_hint and "git" not in tampered[0].fix_hint
    assert "(2 active claim(s) cite it)" in tampered[0].message
    unverified = [f for f in found if f.kind == "evidence_unverified"]
    assert [f.subject for f in unverified] == mint_claims(pg)
    for f in unverified:  # the source is to be restored, not the claims retracted
        assert f.severity == "error" and f.fix is None
        assert "from a backup (`pg_restore`)" in f.fix_hint
        assert next(q.quote for q in f.quotes if not q.verified).startswith(MINT)
        assert all(q.source_id == source for q in f.quotes)


def test_a_text_rehashed_with_it_still_fails_its_quotes(twins: tuple[Vault, PgVault]) -> None:
    """The attacker rewrites the recorded hash with the text: the row looks intact, so no
    source_tampered — but the quotes are not there, and the fix is to retract the claims."""
    _, pg = twins
    alter_pg_text(pg, "of the militia, of a mint", "of the militia, of a hint", rehash=True)
    found = pg_checks(pg)
    assert "source_tampered" not in {f.kind for f in found}
    unverified = [f for f in found if f.kind == "evidence_unverified"]
    assert [f.subject for f in unverified] == mint_claims(pg)
    for f in unverified:
        assert f.fix is not None and f.fix["op"] == "retract_claim"
        assert f.fix["claim"] == f.subject


def test_shifted_offsets_and_edited_words(twins: tuple[Vault, PgVault]) -> None:
    """A quote's offsets moved by 4: found elsewhere in an intact source, a warning (no claim is
    retracted for it); a claim's words edited: not supported by its (verified) quotes."""
    _, pg = twins
    shifted, edited = mint_claims(pg)
    pg_exec(pg, 'UPDATE v_team.evidence SET start = start + 4, "end" = "end" + 4 '
            "WHERE claim_id = %s AND start = 6616", (shifted,))  # fmt: skip
    pg_exec(pg, "UPDATE v_team.claims SET text = %s WHERE id = %s",
            ("Washington presumed the abolition of the post office.", edited))  # fmt: skip
    found = {(f.kind, f.subject): f for f in pg_checks(pg)}
    moved = found.pop(("evidence_unverified", shifted))
    assert moved.severity == "warning" and moved.fix is None
    assert moved.quotes[0].reason == (
        "quote found at 6616-6659, recorded at 6620-6663: the evidence row's offsets were changed"
    )
    assert "pg_restore" in moved.fix_hint
    unsupported = found.pop(("unsupported_claim", edited))
    assert found == {}
    assert unsupported.fix is not None and "abolition" in unsupported.fix["reason"]
    assert (unsupported.fix["op"], unsupported.fix["claim"]) == ("retract_claim", edited)
    assert unsupported.quotes and all(q.verified for q in unsupported.quotes)
    assert any(q.quote.startswith(MINT) for q in unsupported.quotes)


def test_the_same_edits_on_sqlite_give_the_same_unsupported_claim(
    twins: tuple[Vault, PgVault],
) -> None:
    sqlite, pg = twins
    (_, edited) = mint_claims(pg)
    words = "Washington presumed the abolition of the post office."
    pg_exec(pg, "UPDATE v_team.claims SET text = %s WHERE id = %s", (words, edited))
    sqlite.db.execute("UPDATE claims SET text = ? WHERE id = ?", (words, edited))
    sqlite.db.commit()
    found, folder = pg_checks(pg), run_checks(sqlite, kinds=KINDS)
    assert [same(f) for f in found] == [same(f) for f in folder]
    assert [(f.kind, f.subject) for f in found] == [("unsupported_claim", edited)]


def stored(pg: PgVault) -> list[tuple[str, str, str]]:
    rows = pg_exec(pg, "SELECT kind, subject, status FROM v_team.findings WHERE kind = ANY(%s) "
                   "ORDER BY kind, subject", (KINDS,)).fetchall()  # fmt: skip
    return [(r["kind"], r["subject"], r["status"]) for r in rows]


def test_a_lint_job_records_shows_proposes_and_resolves_them(
    twins: tuple[Vault, PgVault],
) -> None:
    _, pg = twins
    claims = mint_claims(pg)
    alter_pg_text(pg, "of the militia, of a mint", "of the militia, of a hint", rehash=True)
    result = lint_job(pg, propose=True)
    assert result["checks"] == list(PG_CHECKS) and "source" not in result["not_run"]
    assert stored(pg) == [("evidence_unverified", c, "open") for c in claims]
    shown = [f for f in result["findings"] if f["kind"] == "evidence_unverified"]
    assert sorted(f["subject"] for f in shown) == claims
    for f in shown:  # the quote that failed, with why
        (failed,) = [q for q in f["quotes"] if not q["verified"]]
        assert failed["quote"].startswith(MINT) and "not" in failed["reason"]
    pending = pg_exec(pg, "SELECT plan_json FROM v_team.plans WHERE status = 'pending'").fetchall()
    retracts = sorted(op["claim"] for p in pending for op in json.loads(p["plan_json"])
                      ["operations"] if op["op"] == "retract_claim")  # fmt: skip
    assert retracts == claims
    alter_pg_text(pg, "of the militia, of a hint", "of the militia, of a mint", rehash=True)
    again = lint_job(pg, propose=False)
    assert again["resolved"] >= 2
    assert stored(pg) == [("evidence_unverified", c, "resolved") for c in claims]
