"""``affidavit doctor --database URL --vault NAME`` (issue 26: "doctor proves" on a team's
database): clean on a vault as the door wrote it, and each thing an attacker with write access to
the database (or a broken restore) could alter found and named: a source's text, a quote's
offsets, a claim's words, an audit entry, the batch sequence, a plan applied twice; with
``--mirror DIR`` the mirror proved equal and a stale one reported. Refusals name the fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

pytestmark = pytest.mark.xdist_group("postgres")
psycopg = pytest.importorskip("psycopg")

from .conftest import claim  # noqa: E402
from .test_pg_ask import FERRY, Team, apply_on_pg  # noqa: E402


class Doctor:
    def __init__(self, url: str) -> None:
        self.url = url
        self.team = Team(url)

    def __call__(self, *args: str, code: int = 0, vault: str = "team") -> str:
        from affidavit.cli import main

        argv = ["doctor", "--database", self.url, "--vault", vault, *args]
        result: Result = CliRunner().invoke(main, argv, env={"AFFIDAVIT_DATABASE": ""})
        assert result.exit_code == code, (args, result.output, result.exception)
        return result.output

    def report(self, *args: str, code: int = 1) -> dict[str, Any]:
        return dict(json.loads(self("--json", *args, code=code)))

    def sql(self, query: str, *params: Any) -> None:
        with self.team.team.storage.pool.connection() as conn:
            conn.execute(query.replace("{s}", "v_team"), params or None)


@pytest.fixture
def doctor(pg_url: str) -> Iterator[Doctor]:
    made = Doctor(pg_url)
    yield made
    made.team.close()


def checks(report: dict[str, Any]) -> set[str]:
    return {f["check"] for f in report["findings"]}


def test_a_vault_the_door_wrote_is_clean(doctor: Doctor) -> None:
    out = doctor()
    assert "clean: sources, quotes, support, audit chain and batches all agree" in out
    report = doctor.report(code=0)
    assert report["clean"] and report["findings"] == []
    counts = report["counts"]
    assert counts["sources"] == 3 and counts["batches"] == 2
    assert counts["quotes"] == 8 and counts["claims_support_checked"] == 8
    assert counts["audit_entries"] >= 2


def test_an_altered_source_text_is_found(doctor: Doctor) -> None:
    doctor.sql("UPDATE {s}.sources SET text = replace(text, '1882', '1883')")
    report = doctor.report()
    assert "sources" in checks(report)
    found = [f for f in report["findings"] if f["check"] == "sources"]
    assert len(found) == 1 and "pg_restore" in found[0]["fix"]


def test_a_quote_moved_from_its_offsets_is_found(doctor: Doctor) -> None:
    doctor.sql(
        'UPDATE {s}.evidence SET start = start + 4, "end" = "end" + 4 '
        "WHERE claim_id = (SELECT id FROM {s}.claims WHERE text LIKE 'Its light%')"
    )
    report = doctor.report()
    assert checks(report) >= {"evidence"}
    (found,) = [f for f in report["findings"] if f["check"] == "evidence"]
    assert "quote 0" in found["subject"]


def test_a_claim_rewritten_against_its_quote_is_unsupported(doctor: Doctor) -> None:
    doctor.sql(
        "UPDATE {s}.claims SET text = 'Its present tower was designed by Isambard Brunel "
        "and lit in 1882.' WHERE text LIKE 'Its present tower%'"
    )
    report = doctor.report()
    assert checks(report) == {"support"}
    (found,) = report["findings"]
    assert "Isambard Brunel" in found["message"] and "supersede" in found["fix"]


def test_an_altered_audit_entry_breaks_the_chain(doctor: Doctor) -> None:
    doctor.sql("UPDATE {s}.audit SET actor = 'mallory' WHERE seq = 1")
    report = doctor.report()
    assert "audit" in checks(report)
    assert any("altered" in f["message"] for f in report["findings"])


def test_a_batch_missing_from_the_sequence_is_found(doctor: Doctor) -> None:
    doctor.sql("UPDATE {s}.batches SET seq = 7 WHERE seq = 2")
    report = doctor.report()
    messages = [f["message"] for f in report["findings"] if f["check"] == "batches"]
    assert any("missing from the sequence" in m for m in messages), messages
    assert any("batch counter is at 2, the last batch is 7" in m for m in messages), messages


def test_a_plan_recorded_in_two_batches_is_applied_twice(doctor: Doctor) -> None:
    doctor.sql(
        "UPDATE {s}.batches SET plans = (SELECT plans FROM {s}.batches WHERE seq = 1) WHERE seq = 2"
    )
    report = doctor.report()
    messages = [f["message"] for f in report["findings"] if f["check"] == "batches"]
    assert any("applied twice" in m for m in messages), messages
    assert any("applied but in no batch" in m for m in messages), messages


def test_the_mirror_is_proved_and_a_stale_one_reported(doctor: Doctor, tmp_path: Path) -> None:
    from affidavit.cli import main

    folder = tmp_path / "mirror"
    made = CliRunner().invoke(
        main, ["mirror", "--database", doctor.url, "--vault", "team", str(folder)]
    )
    assert made.exit_code == 0, made.output
    out = doctor("--mirror", str(folder))
    assert "all agree with the mirror" in out
    page = next((folder / "wiki").glob("eddystone*.md"))
    page.write_text(page.read_text() + "\nA hand edit.\n")
    (edited,) = doctor.report("--mirror", str(folder))["findings"]
    assert "by hand" in edited["message"] and "affidavit propose" in edited["fix"]
    page.write_text(page.read_text().replace("\nA hand edit.\n", ""))
    source = doctor.team.team.storage.add_source(
        "team", FERRY.encode(), origin="/f2", name="ferry.md", added_at="2026-12-01T00:00:00Z",
        media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    apply_on_pg(doctor.team.team, {
        "op": "create_page", "slug": "ferry", "title": "Ferry", "summary": "The ferry",
        "claims": [claim("The ferry crossed the strait until 1950.", source,
                         "The ferry crossed the strait twice a day until 1950")],
    })  # fmt: skip
    report = doctor.report("--mirror", str(folder))
    assert checks(report) == {"mirror"}
    assert any("the mirror is at batch 2, the database at 3" in f["message"]
               for f in report["findings"])  # fmt: skip


def test_refusals_name_the_fix(doctor: Doctor, tmp_path: Path) -> None:
    assert "mirror" in doctor("--propose", code=2)
    assert "pg_total_relation_size" in doctor("--stats", code=2)
    out = doctor(code=1, vault="nosuch")
    assert "no vault 'nosuch'" in out or "no vault" in out
    from affidavit.cli import main

    alone = CliRunner().invoke(main, ["doctor", "--mirror", str(tmp_path)],
                               env={"AFFIDAVIT_DATABASE": ""})  # fmt: skip
    assert alone.exit_code == 2 and "--vault NAME" in alone.output
