"""``affidavit jobs --database URL --vault NAME`` (issue 26): a PostgreSQL vault's jobs listed,
shown, waited for and cancelled from the CLI, printed as a vault folder's are (the same JSON
fields); a cancel from the CLI is recorded as the local user's and stops the worker running the
job. And ``GET …/jobs/{id}/events`` streams a PostgreSQL job's events (it answered 501). The
attacker's tests: a wrong vault name or a LIKE pattern as a job id finds nothing and says what to
do; the URL's password is never printed, whatever fails; a Last-Event-ID past BIGINT is no 500."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from affidavit.agents import local_actor
from affidavit.cli import main
from affidavit.errors import NotFoundError
from affidavit.jobs.payloads import LintPayload
from affidavit.service.pg_jobs import LintRequest, PgJobs

from .test_pg_jobs import Counting, Team, sources, until

pytestmark = pytest.mark.xdist_group("postgres")

SECRET = "Jobs-S3cret-pw"


def with_password(url: str) -> str:
    """``url`` with a password (the test cluster trusts its socket, so any password connects)."""
    assert url.startswith("postgresql://postgres@"), url
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@", 1)


def cli(*args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
    result: Result = CliRunner().invoke(main, list(args), env=env)
    assert result.exit_code == code, (result.output, result.exception)
    assert SECRET not in result.output
    return result.output


class Db:
    """A team vault (:class:`Team`) and the CLI's options naming it, the password included."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.url = with_password(team.url)

    def jobs(self, *args: str, code: int = 0) -> str:
        if args and args[0] in ("show", "cancel", "wait"):  # the options after the subcommand
            return cli("jobs", *args, "--database", self.url, "--vault", "team", code=code)
        return cli("jobs", "--database", self.url, "--vault", "team", *args, code=code)

    def ingest(self, first: int, count: int) -> str:
        return str(self.team.submit(sources(first, count))["id"])


@pytest.fixture
def db(pg_url: str) -> Iterator[Db]:
    team = Team(pg_url)
    yield Db(team)
    team.close()


def test_a_status_is_found_below_a_thousand_newer_jobs(db: Db) -> None:
    """``--status`` asks the database for that status, not the newest thousand jobs filtered:
    a failed or done job under 1,000 newer queued ones is still listed."""
    done = db.ingest(0, 1)
    db.team.worker().run(drain=True)
    jobs = PgJobs(db.team.registry.get("team").service)
    for _ in range(1001):
        jobs.submit_lint(LintRequest(kind="lint"), local_actor())
    assert [j.id for j in jobs.list("done", 5)] == [done]
    assert json.loads(db.jobs("--status", "done", "--json"))[0]["id"] == done
    assert len(jobs.list(None, 1000)) == 1000 and len(jobs.list("queued", 3)) == 3
    with pytest.raises(NotFoundError, match="no job status"):
        jobs.list("exploded")


def test_list_and_show_a_queued_and_a_done_job(db: Db) -> None:
    done = db.ingest(0, 2)
    db.team.worker().run(drain=True)
    queued = db.ingest(5, 1)
    listed = json.loads(db.jobs("--json"))
    assert [(j["id"], j["status"]) for j in listed] == [(queued, "queued"), (done, "done")]
    lines = db.jobs().splitlines()
    assert lines[0].startswith(f"{queued}  queued ") and lines[1].startswith(f"{done}  done ")
    assert json.loads(db.jobs("--status", "done", "--json"))[0]["id"] == done
    shown = json.loads(db.jobs("show", done[:10], "--json"))  # a prefix, as on SQLite
    assert shown["id"] == done and shown["result"]["totals"] == {"applied": 2}
    types = [e["type"] for e in shown["events"]]
    assert types[0] == "submitted" and types[-1] == "done" and "progress" in types
    assert shown["events"][0]["data"] == {"kind": "ingest_stored", "requested_by": "ann"}
    text = db.jobs("show", done)
    assert f"{done}  ingest_stored  done" in text and "progress: 2/2" in text
    assert "requested by ann" in db.jobs("show", queued)
    before = cli("jobs", "--database", db.url, "--vault", "team", "show", queued)  # the group's
    assert before == db.jobs("show", queued)
    assert f"{done} done" in db.jobs("wait", done, "--deadline", "5")
    assert "still queued" in db.jobs("wait", queued, "--deadline", "0.1", code=124)


def test_the_json_is_sqlites_for_the_same_job(db: Db, tmp_path: Path) -> None:
    from affidavit.jobs.queue import JobQueue
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v")
    try:
        JobQueue(vault).submit(LintPayload(), requested_by=local_actor())
    finally:
        vault.close()
    PgJobs(db.team.registry.get("team").service).submit_lint(
        LintRequest(kind="lint"), local_actor()
    )
    folder = json.loads(cli("--vault", str(tmp_path / "v"), "jobs", "--json"))[0]
    database = json.loads(db.jobs("--json"))[0]
    assert sorted(folder) == sorted(database)
    same = ("kind", "status", "queued", "payload", "requested_by", "progress", "attempts",
            "error", "result", "cancel_requested", "cancelled_by", "lease_owner")  # fmt: skip
    assert {k: folder[k] for k in same} == {k: database[k] for k in same}
    one = json.loads(cli("--vault", str(tmp_path / "v"), "jobs", "show", folder["id"], "--json"))
    two = json.loads(db.jobs("show", database["id"], "--json"))
    assert sorted(one) == sorted(two)
    assert [sorted(e) for e in one["events"]] == [sorted(e) for e in two["events"]]
    assert [(e["type"], e["data"]) for e in one["events"]] == [
        (e["type"], e["data"]) for e in two["events"]
    ]


def test_a_cancel_from_the_cli_stops_the_worker_and_names_who_asked(db: Db) -> None:
    queued = db.ingest(0, 1)
    assert f"Cancelled {queued}." in db.jobs("cancel", queued)
    assert "already cancelled" in db.jobs("cancel", queued, code=1)
    long = db.ingest(10, 30)
    worker = db.team.worker(Counting(pause=0.05))
    thread = threading.Thread(target=worker.run, kwargs={"drain": True})
    thread.start()
    try:
        until(lambda: db.team.jobs.rows("team", long)[0]["progress_done"] >= 1, "a chunk")
        out = db.jobs("cancel", long)
        assert f"Asked the worker to stop {long}" in out or f"Cancelled {long}." in out
    finally:
        thread.join(timeout=600)
    row = db.team.jobs.rows("team", long)[0]
    assert row["cancel_requested_by"] == local_actor()  # as the daemon records its caller
    final = json.loads(db.jobs("show", long, "--json"))
    assert final["status"] == "cancelled" and final["cancelled_by"] == local_actor()
    assert final["progress"]["done"] < 30  # the worker stopped
    assert len(db.team.applied()) == final["progress"]["done"]
    asked = [e for e in final["events"] if e["type"] == "cancel_requested"]
    assert asked[0]["data"] == {"actor": local_actor()}


def test_a_wrong_vault_or_job_is_refused_saying_what_to_do(db: Db) -> None:
    db.ingest(0, 1)
    out = cli("jobs", "--database", db.url, "--vault", "nope", code=1)
    assert "no vault 'nope' in this database (it has: team)" in out
    assert "affidavit team create" in out
    out = cli("jobs", "show", "job-1234", "--database", db.url, "--vault", "x'; DROP--", code=1)
    assert "no vault" in out and "Traceback" not in out
    assert "give --database URL too" in cli("jobs", "--vault", "team", code=2)
    listed = cli("jobs", "--vault", "team", "--json", env={"AFFIDAVIT_DATABASE": db.url})
    assert len(json.loads(listed)) == 1  # the URL from the environment, as `ask` takes it
    for pattern in ("job-%%%%", "____", "job-____"):  # a LIKE pattern matches no job
        assert "no job" in db.jobs("show", pattern, code=1)
    assert "too short" in db.jobs("show", "job-ab", code=1)
    assert "affidavit worker --database" in db.jobs("work", code=2)


def test_the_password_is_never_printed(db: Db) -> None:
    job = db.ingest(0, 1)
    for args in (("--json",), ("show", job), ("wait", job, "--deadline", "0")):
        db.jobs(*args, code=124 if args[0] == "wait" else 0)
    for args in (("show", "job-ffffffff"), ("cancel", "job-0000")):
        assert "no job" in db.jobs(*args, code=1)
    gone = db.url.rsplit("/", 1)[0] + "/no_such_database"
    out = cli("jobs", "--database", gone, "--vault", "team", code=1)
    assert "***" in out or "no_such_database" in out  # what failed, without the password


def test_a_jobs_events_stream_on_postgresql(db: Db) -> None:
    job = db.ingest(0, 2)
    db.team.worker().run(drain=True)
    got = events_of(db, job)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"].startswith("text/event-stream")
    events = parse(got.text)
    assert events[0]["type"] == "submitted" and events[-1]["type"] == "done"
    shown = json.loads(db.jobs("show", job, "--json"))["events"]
    assert events == shown  # the same records as the CLI shows
    later = events_of(db, job[:9], last_event_id=str(events[1]["seq"]))  # a prefix, resumed
    assert parse(later.text) == events[2:]
    huge = events_of(db, job, last_event_id="9" * 20)
    assert huge.status_code == 200 and parse(huge.text) == []
    assert events_of(db, "job-ffffffffffff").status_code == 404


def events_of(db: Db, job: str, last_event_id: str = "") -> Any:
    headers = {"Authorization": f"Bearer {db.team.tokens['read']}"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    return db.team.client.get(f"/v1/vaults/team/jobs/{job}/events", headers=headers)


def parse(stream: str) -> list[dict[str, Any]]:
    """The ``data`` of each server-sent event of ``stream``."""
    return [
        json.loads(line.removeprefix("data: "))
        for line in stream.splitlines()
        if line.startswith("data: ")
    ]
