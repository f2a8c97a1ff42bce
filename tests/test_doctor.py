"""``affidavit doctor``: a fresh wiki is clean; every kind of tampering is found and reported."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import DoctorReport, run_doctor
from affidavit.inbox import approve, list_plans, propose
from affidavit.vault import Vault

from .conftest import add_samples, sample_plan_text

ROOSEVELT = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
PAGE = "wiki/four-freedoms.md"


@pytest.fixture
def wiki(vault: Vault) -> Vault:
    """The sample wiki, proposed and approved through the door."""
    add_samples(vault)
    proposal = propose(vault, sample_plan_text(vault), "tester", "sample")
    approve(vault, proposal.plan_id, None, "tester")
    return vault


def doctor_json(vault: Vault, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), "doctor", "--json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def checks(report: DoctorReport) -> set[str]:
    return {f.check for f in report.findings}


def flip_byte(path: Path, needle: bytes) -> None:
    """Change one byte of ``path`` inside the first occurrence of ``needle`` (read-only files)."""
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    at = data.index(needle) + 4
    data[at] ^= 0x01  # "f" becomes "g" (a case flip would still verify: quotes are casefolded)
    path.write_bytes(bytes(data))


def test_a_freshly_applied_wiki_is_clean(wiki: Vault) -> None:
    report = run_doctor(wiki)
    assert report.clean and report.findings == []
    assert report.counts["sources"] == 3 and report.counts["claims"] == 10
    assert report.counts["applied_plans"] == 1
    code, data = doctor_json(wiki)
    assert (code, data["clean"], data["findings"], data["proposals"]) == (0, True, [], [])
    human = CliRunner().invoke(main, ["--vault", str(wiki.root), "doctor"])
    assert human.exit_code == 0 and "clean: sources, quotes, files" in human.stdout


def test_a_flipped_byte_in_a_source_text_breaks_sources_and_evidence(wiki: Vault) -> None:
    flip_byte(wiki.sources_dir / f"{ROOSEVELT}.extracted.txt", b"The first is freedom of speech")
    report = run_doctor(wiki)
    assert checks(report) == {"sources", "evidence"}
    [source] = [f for f in report.findings if f.check == "sources" and "writable" not in f.message]
    assert source.subject == ROOSEVELT and "no longer matches its SHA-256" in source.message
    assert any(f.message.endswith(".extracted.txt is writable") for f in report.findings)
    [evidence] = [f for f in report.findings if f.check == "evidence"]
    assert "no longer verifies" in evidence.message
    code, data = doctor_json(wiki)
    assert code == 1 and data["clean"] is False
    assert {f["check"] for f in data["findings"]} == {"sources", "evidence"}


def test_a_flipped_byte_in_an_original_is_reported_under_sources(wiki: Vault) -> None:
    flip_byte(wiki.sources_dir / f"{ROOSEVELT}.md", b"The first is freedom of speech")
    report = run_doctor(wiki)
    messages = [f.message for f in report.findings if f.check == "sources"]
    assert checks(report) == {"sources"}
    assert any("original file" in m and "no longer matches" in m for m in messages)
    assert any(m.endswith("is writable") for m in messages)


def test_a_hand_edited_page_is_reported_under_files(wiki: Vault) -> None:
    path = wiki.root / PAGE
    path.write_text(path.read_text().replace("first essential freedom", "first freedom"))
    report = run_doctor(wiki)
    [files] = [f for f in report.findings if f.check == "files"]
    assert files.subject == PAGE and "differs from what the database renders" in files.message
    assert "--propose" in files.fix
    assert checks(report) == {"files", "git"}  # the edit is also uncommitted
    code, data = doctor_json(wiki)
    assert code == 1 and data["clean"] is False


def test_an_edited_audit_row_breaks_the_chain(wiki: Vault) -> None:
    db = sqlite3.connect(wiki.state_dir / "db.sqlite")
    try:
        with db:
            db.execute("UPDATE audit SET detail = '{}' WHERE action = 'proposed'")
    finally:
        db.close()
    report = run_doctor(wiki)
    assert checks(report) == {"audit"}
    code, data = doctor_json(wiki)
    assert code == 1 and [f["check"] for f in data["findings"]] == ["audit"]


def test_unknown_and_missing_files_are_reported(wiki: Vault) -> None:
    (wiki.wiki_dir / "notes.md").write_text("# My notes\n")
    (wiki.root / "wiki/washington-1790.md").unlink()
    report = run_doctor(wiki)
    by_subject = {f.subject: f.message for f in report.findings if f.check == "files"}
    assert by_subject == {
        "wiki/notes.md": "unknown file: no page in the database renders it",
        "wiki/washington-1790.md": "missing",
    }
    code, data = doctor_json(wiki)
    assert code == 1 and data["clean"] is False


def test_propose_turns_a_hand_edit_into_a_plan_and_approval_makes_it_clean(wiki: Vault) -> None:
    path = wiki.root / PAGE
    edited = path.read_text().replace(
        "## See also",
        "A future founded upon four essential freedoms.[^x]\n\n## See also",
    ) + (
        "[^x]: “In the future days, which we seek to make secure, we look forward to a world "
        f"founded upon four essential human freedoms” — source `{ROOSEVELT[:12]}`\n"
    )
    path.write_text(edited)
    code, data = doctor_json(wiki, "--propose")
    assert code == 1 and data["clean"] is False  # the file still differs until approval
    [proposal] = data["proposals"]
    assert proposal["status"] == "pending" and proposal["file"] == PAGE
    [op] = proposal["operations"]
    assert (op["op"], op["page"], op["section"]) == ("add_claims", "four-freedoms", "Security")
    claims = proposal["admission"]["ops"][0]["claims"]
    assert [c["status"] for c in claims] == ["admitted"]
    assert claims[0]["evidence"][0]["verified"] is True
    assert path.read_text() == edited  # --propose itself writes nothing
    assert [p.id for p in list_plans(wiki)] == [proposal["plan_id"]]
    approve(wiki, proposal["plan_id"], None, "tester")
    assert re.search(r"A future founded upon four essential freedoms\.\[\^\d+\]", path.read_text())
    assert run_doctor(wiki).clean
    code, data = doctor_json(wiki, "--propose")
    assert (code, data["clean"], data["proposals"]) == (0, True, [])


def test_propose_prints_what_it_could_not_convert(wiki: Vault) -> None:
    path = wiki.root / PAGE
    path.write_text(
        path.read_text().replace("## Security\n", "## Security\n\nAn unsourced aside.\n")
    )
    result = CliRunner().invoke(main, ["--vault", str(wiki.root), "doctor", "--propose"])
    assert result.exit_code == 1
    assert f"{PAGE}: no operation could be made from the hand edit" in result.stdout
    assert f"✗ {PAGE}:" in result.stdout and "needs a quote" in result.stdout
    assert "✗ [files] wiki/four-freedoms.md" in result.stdout
    assert list_plans(wiki) == []
