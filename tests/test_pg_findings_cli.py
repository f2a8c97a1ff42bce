"""``affidavit findings`` against a PostgreSQL vault (issue 26): the findings a lint job stored,
listed and shown as the daemon serves them (the same JSON), dismissed and reopened (the row and
its audit entry, the local user named), a contradiction's fix proposed and approved through the
door as one batch — from the CLI with ``--database URL --vault NAME``. The attacker's tests: a
wildcard or forged finding id finds nothing, several ids decided all or none, a vault the
database doesn't hold, the URL's password never printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from affidavit.agents import local_actor

from .test_pg_findings_serve import LINT, Desk, contradiction

pytestmark = pytest.mark.xdist_group("postgres")

SECRET = "Finds-S3cret-pw"
ME = f"person:{local_actor()}"
ONE = ("--kind", "contradiction")
"""The kind these tests decide (a lint finds the ingested pages' link kinds too)."""


class Cli:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        assert desk.url.startswith("postgresql://postgres@"), desk.url
        self.url = desk.url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")

    def __call__(self, *args: str, code: int = 0, stdin: str | None = None) -> str:
        from affidavit.cli import main

        argv = ["findings", *args, "--database", self.url, "--vault", "team"]
        result: Result = CliRunner().invoke(main, argv, input=stdin, env={"AFFIDAVIT_DATABASE": ""})
        assert result.exit_code == code, (args, result.output, result.exception)
        assert SECRET not in result.output
        return result.output

    def audit(self) -> list[tuple[str, str]]:
        return [(e.action, e.actor) for e in self.desk.storage.audit("team")]


@pytest.fixture
def cli(pg_url: str) -> Iterator[Cli]:
    desk = Desk(pg_url)
    yield Cli(desk)
    desk.close()


def test_list_show_dismiss_reopen_as_the_daemon_serves_them(cli: Cli) -> None:
    found = contradiction(cli.desk)
    from affidavit.lint.findings import StoredFinding

    stored = StoredFinding.model_validate(found)  # the daemon's record, printed as the CLI does
    # the ingested pages' orphan_page and missing_link findings are left out (test_pg_lint_links)
    assert json.loads(cli("--json", *ONE)) == [stored.to_json()]  # (a folder's `findings --json`)
    listed = cli(*ONE)
    assert listed.startswith(f"! {found['id']}  contradiction: ") and "verified:" in listed
    shown = json.loads(cli("show", found["id"][:8], "--json"))
    assert shown == stored.to_json()
    assert cli.desk.call("GET", f"{LINT}/{found['id']}", "read").json() == found
    assert f"{found['id']}  contradiction" in cli("show", found["id"])
    assert "findings fix" in cli("show", found["id"])

    out = cli("dismiss", found["id"][:10], "--note", "both right, different years")
    assert out == f"{found['id']}: dismissed\n"
    row = cli.desk.q(
        "SELECT status, note, decided_by FROM {s}.findings WHERE id = %s", found["id"]
    )[0]
    assert row == {"status": "dismissed", "note": "both right, different years", "decided_by": ME}
    assert cli.audit()[-1] == ("finding_dismissed", ME)
    assert cli.desk.storage.verify_audit("team") == []
    assert cli(*ONE) == "No open findings. Run `affidavit lint` to look for some.\n"
    assert [f["id"] for f in json.loads(cli("--status", "all", "--json", *ONE))] == [found["id"]]
    assert cli("reopen", found["id"]) == f"{found['id']}: open\n"
    assert cli.audit()[-1] == ("finding_open", ME)
    # the options after the group serve its subcommands too
    from affidavit.cli import main

    argv = ["findings", "--database", cli.url, "--vault", "team", "show", found["id"], "--json"]
    assert json.loads(CliRunner().invoke(main, argv).output)["id"] == found["id"]


def test_a_contradictions_fix_proposed_then_approved_through_the_door(cli: Cli) -> None:
    found = contradiction(cli.desk)
    kept, dropped = found["finding"]["claims"]
    usage = cli("fix", found["id"], "--keep", kept, "--all", code=2)
    assert "give finding ids or --all, not both" in usage
    report = json.loads(cli("fix", found["id"], "--keep", kept, "--json"))
    (plan_id,) = report["plans"]
    (plan,) = cli.desk.lint_plans()
    assert plan["id"] == plan_id and plan["status"] == "pending"
    assert f'"claim":"{dropped}"' in plan["plan_json"]
    assert cli.desk.q("SELECT author FROM {s}.plans WHERE id = %s", plan_id)[0]["author"] == ME
    assert "No fix plan proposed." in cli("fix", found["id"], "--keep", kept)  # none twice

    refused = cli("approve", found["id"], stdin="n\n", code=1)
    assert "Approving 1 fix(es):" in refused and "nothing applied" in refused
    assert f"! {found['id']} (plan {plan_id[:12]}, op 1): supersede {dropped} “" in refused
    assert cli.desk.storage.batches("team")[-1].plans != (plan_id,)
    assert "add --yes" in cli("approve", found["id"], "--json", code=2)
    (done,) = json.loads(cli("approve", found["id"], "--yes", "--json"))
    assert done["plan"] == plan_id and done["applied"]
    assert done["message"].startswith(f"applied plan {plan_id[:12]}: 1 operation(s)")
    assert "1 superseded" in done["message"]
    status = cli.desk.q("SELECT status FROM {s}.claims WHERE id = %s", dropped)[0]["status"]
    assert status == "superseded"
    assert list(cli.desk.storage.batches("team")[-1].plans) == [plan_id]
    assert ("applied", ME) in cli.audit()
    assert "No pending fixes." in cli("approve", found["id"], "--yes")


def test_forged_ids_find_nothing_and_several_are_decided_all_or_none(cli: Cli) -> None:
    found = contradiction(cli.desk)
    for ref in ("f-____", "____", "%%%%f-", "f-' OR 1=1 --", "f-0000000000000000"):
        assert "no finding" in cli("show", ref, code=1), ref
        assert "no finding" in cli("dismiss", ref, code=1), ref
    out = cli("dismiss", found["id"], "f-____", code=1)
    assert "no finding" in out and "dismissed" not in out
    assert cli.desk.q("SELECT status FROM {s}.findings")[0]["status"] == "open"
    assert not [a for a, _ in cli.audit() if a.startswith("finding_")]
    assert "NUL" in cli("dismiss", found["id"], "--note", "a\x00b", code=1)
    from affidavit.cli import main

    argv = ["findings", "--database", cli.url, "--vault", "nosuch"]
    got: Any = CliRunner().invoke(main, argv)
    assert got.exit_code == 1 and "no vault 'nosuch'" in got.output and SECRET not in got.output


def test_lint_queues_a_job_a_worker_runs_and_its_findings_are_listed(cli: Cli) -> None:
    from affidavit.cli import main

    from .test_pg_after_ingest import V1, V2, sent

    cli.desk.submit(sent(V1, "harbour.md"))
    cli.desk.submit(sent(V2, "harbour-guide.md"))
    assert cli.desk.worker().run(drain=True) == 2

    def lint(*args: str, code: int = 0) -> str:
        argv = ["lint", *args, "--database", cli.url, "--vault", "team"]
        got = CliRunner().invoke(main, argv, env={"AFFIDAVIT_DATABASE": ""})
        assert got.exit_code == code, (args, got.output, got.exception)
        assert SECRET not in got.output
        return got.output

    before = len(cli.desk.jobs.rows("team", limit=100))
    for refused in ("--full", "--no-model"):
        assert f"{refused} can't be given to a database's lint" in lint(refused, code=2)
    assert len(cli.desk.jobs.rows("team", limit=100)) == before  # nothing queued
    job = json.loads(lint("--propose", "--json"))
    assert job["kind"] == "lint" and job["status"] == "queued"
    assert job["payload"]["propose"] is True and job["requested_by"] == local_actor()
    text = lint()
    assert text.startswith("Queued lint job job-") and "affidavit worker --database URL" in text
    assert cli.desk.worker().run(drain=True) == 2
    assert cli.desk.job(job["id"])["status"] == "done"
    (found,) = json.loads(cli("--json", *ONE))
    assert found["kind"] == "contradiction" and found["status"] == "open"
