"""doctor by default checks what changed since its last clean check (issue 25 item 6): the cost
of a check follows what changed — and whatever changed outside the door between two runs is
still caught: a row edited with SQL (the audit chain untouched), the change log trimmed after,
a source file replaced under the same mtime, a wiki file edited under the same mtime, the clock
moved back, history rewritten."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor_since import checkpoint_path, run_doctor_since, run_full
from affidavit.inbox import approve, propose
from affidavit.vault import Vault

from .conftest import FakeClock, add_samples, add_text, claim, make_plan, sample_plan_text


@pytest.fixture
def wiki(vault: Vault) -> Vault:
    add_samples(vault)
    approve(vault, propose(vault, sample_plan_text(vault), "t", "sample").plan_id, None, "t")
    assert run_full(vault).clean and checkpoint_path(vault).exists()
    return vault


def sql(vault: Vault, *statements: str) -> None:
    """Change the database directly, as someone with the file would."""
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        with db:
            for statement in statements:
                db.execute(statement)
    finally:
        db.close()


def messages(vault: Vault) -> list[str]:
    report = run_doctor_since(vault)
    assert "mode_since_checkpoint" in report.counts or "mode_full" in report.counts
    return [f"{f.check}: {f.subject}: {f.message}" for f in report.findings]


def a_claim(vault: Vault) -> str:
    return str(
        vault.db.execute("SELECT id FROM claims WHERE page_slug != '' LIMIT 1").fetchone()[0]
    )


def test_nothing_changed_checks_nothing_again(wiki: Vault) -> None:
    report = run_doctor_since(wiki)
    assert report.clean
    assert report.counts["claims_rechecked"] == report.counts["files_rechecked"] == 0
    assert report.counts["sources_rehashed"] == 0


def test_a_new_plan_is_checked_and_leaves_it_clean(wiki: Vault) -> None:
    source = add_text(wiki, "notes.md", "# Notes\n\nThe bridge opened in 1932 after six years.\n")
    plan = make_plan(
        wiki,
        {
            "op": "create_page",
            "slug": "bridge",
            "title": "The bridge",
            "summary": "When the bridge opened.",
            "section": "History",
            "claims": [claim("The bridge opened in 1932.", source, "The bridge opened in 1932")],
        },
    )
    approve(wiki, propose(wiki, json.dumps(plan), "t", "x").plan_id, None, "t")
    report = run_doctor_since(wiki)
    assert report.clean, report.findings
    assert report.counts["plans_applied_since"] == 1
    assert report.counts["claims_rechecked"] >= 1 and report.counts["sources_rehashed"] == 1
    assert run_doctor_since(wiki).counts["claims_rechecked"] == 0  # the checkpoint moved on


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'",
        "UPDATE evidence_rows SET start = start + 1 WHERE claim_id = '{c}'",
        "UPDATE claims SET trust = 'trusted', status = 'active' WHERE id = '{c}'",
        "DELETE FROM evidence_rows WHERE claim_id = '{c}'",
        "UPDATE pages SET title = 'Five Freedoms' WHERE slug = 'four-freedoms'",
        "UPDATE sources SET trust = 'trusted'",
        "UPDATE audit SET actor = 'someone else' WHERE seq = 1",
        "UPDATE plans SET reason = 'forged'",
        "INSERT INTO links (src, dst, plan_id) VALUES ('four-freedoms', 'nowhere', 'x')",
    ],
)
def test_a_row_edited_with_sql_is_caught(wiki: Vault, edit: str) -> None:
    sql(wiki, edit.format(c=a_claim(wiki)))
    assert messages(wiki), edit


def test_trimming_the_change_log_after_an_edit_is_caught(wiki: Vault) -> None:
    c = a_claim(wiki)
    sql(
        wiki,
        f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'",
        "DELETE FROM doctor_changes WHERE tbl = 'claims'",
    )
    assert any("change log" in m for m in messages(wiki))


def test_a_trigger_dropped_and_made_again_means_a_full_check(wiki: Vault) -> None:
    c = a_claim(wiki)
    sql_text = wiki.db.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'doctor_claims_update'"
    ).fetchone()[0]
    sql(
        wiki,
        "DROP TRIGGER doctor_claims_update",
        f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'",
        sql_text,
    )
    report = run_doctor_since(wiki)
    assert "mode_full" in report.counts and not report.clean


def test_a_source_replaced_under_the_same_mtime_is_caught(wiki: Vault) -> None:
    rel = wiki.db.execute("SELECT text_file FROM sources LIMIT 1").fetchone()[0]
    path = wiki.root / rel
    before = path.stat()
    os.chmod(path, 0o644)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"freedom", b"fr33dom", 1) if b"freedom" in data else data + b"x")
    os.chmod(path, before.st_mode & 0o7777)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size? same mtime
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert any(m.startswith("sources:") for m in messages(wiki))


def test_a_source_swapped_for_another_file_is_caught(wiki: Vault) -> None:
    rel = wiki.db.execute("SELECT original_file FROM sources LIMIT 1").fetchone()[0]
    path = wiki.root / rel
    before = path.stat()
    forged = path.with_name("forged")
    forged.write_bytes(path.read_bytes()[:-1] + b"!")
    os.chmod(forged, before.st_mode & 0o7777)
    os.utime(forged, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(forged, path)
    assert any(m.startswith("sources:") for m in messages(wiki))


def test_a_wiki_file_edited_under_the_same_mtime_is_caught(wiki: Vault) -> None:
    path = wiki.wiki_dir / "four-freedoms.md"
    before = path.stat()
    path.write_text(path.read_text().replace("freedom", "liberty", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    found = messages(wiki)
    assert any("wiki/four-freedoms.md" in m and "differs" in m for m in found), found


def test_a_clock_moved_back_changes_nothing(wiki: Vault, clock: FakeClock) -> None:
    """Nothing here is "newer than the last check": a vault whose clock went back (or whose
    files carry old times) is checked by what differs, not by when."""
    clock.advance(days=-400)
    c = a_claim(wiki)
    sql(wiki, f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'")
    path = wiki.wiki_dir / "monroe-doctrine.md"
    path.write_text(path.read_text() + "\nA note.\n")
    os.utime(path, ns=(0, 0))
    found = messages(wiki)
    assert any(c in m for m in found) and any("monroe-doctrine" in m for m in found), found


def test_a_tampered_vault_keeps_failing_until_it_is_fixed(wiki: Vault) -> None:
    """A run that finds something records no checkpoint: the next run looks again."""
    c = a_claim(wiki)
    sql(wiki, f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'")
    assert messages(wiki)
    assert messages(wiki)


def test_an_unreadable_checkpoint_means_a_full_check(wiki: Vault) -> None:
    checkpoint_path(wiki).write_text('{"version": 2, "audit_seq": "x"}')
    report = run_doctor_since(wiki)
    assert report.clean and "mode_full" in report.counts


def test_the_command_checks_since_by_default_and_everything_with_full(wiki: Vault) -> None:
    runner = CliRunner()
    base = ["--vault", str(wiki.root), "doctor", "--json"]
    since = json.loads(runner.invoke(main, base).output)
    full = json.loads(runner.invoke(main, [*base, "--full"]).output)
    assert since["clean"] and "mode_since_checkpoint" in since["counts"]
    assert full["clean"] and full["counts"]["mode_full"] == 1 and full["counts"]["claims"] > 0
    c = a_claim(wiki)
    sql(wiki, f"UPDATE claims SET text = 'Roosevelt named five freedoms.' WHERE id = '{c}'")
    out = runner.invoke(main, base[:-1])
    assert out.exit_code == 1 and c in out.output


def test_the_checkpoint_is_private(wiki: Vault) -> None:
    assert Path(checkpoint_path(wiki)).stat().st_mode & 0o077 == 0


def test_another_users_vault_gets_no_checkpoint(wiki: Vault) -> None:
    """Run as root on a vault someone else owns, doctor checks and writes nothing into it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the vault to another user")
    checkpoint_path(wiki).unlink()
    os.chown(wiki.state_dir, 65534, 65534)
    try:
        assert run_doctor_since(wiki).clean
        assert not checkpoint_path(wiki).exists()
    finally:
        os.chown(wiki.state_dir, 0, 0)
