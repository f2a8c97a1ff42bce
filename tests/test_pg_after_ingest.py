"""The pass after an ingest's chunks, and the ``lint`` job, on PostgreSQL (issue 26; jobs/pg_after):
a new version of a source that changes a fact gets a ``stale`` finding and a ``supersede_claim``
proposal waiting for a person, through the services SQLite's ingest runs. The attacker's tests: a
worker whose lease was taken writes nothing of the pass; a worker killed mid-pass leaves it to the
next claim, which does it once (one finding run, one proposal); a re-run reads the pass's row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from affidavit.config import Config
from affidavit.jobs import pg_after
from affidavit.jobs.payloads import StoredIngestPayload
from affidavit.jobs.pg_after import PgAfterIngest
from affidavit.jobs.pg_ingest import PgIngest
from affidavit.storage.jobs import LeaseLost
from affidavit.storage.pg_sql import placeholders

from .test_pg_jobs import Crash, Team, until

pytestmark = pytest.mark.xdist_group("postgres")

PASS = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0"})
NO_PASS = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0",
                  "ingest.propose_supersessions": False})  # fmt: skip
LINT_EVERY_2 = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "2"})

V1 = (
    "# Harbour light\n\n"
    "The harbour light at Kettle Point has 112 steps to its lamp room. "
    "Its keeper lives in the cottage beside the tower.\n"
)
V2 = V1.replace("112 steps", "148 steps")
RELEASE_1 = V1.replace("\n\n", "\n\nVersion 1.0\n\n", 1)
RELEASE_2 = V2.replace("\n\n", "\n\nVersion 2.0\n\n", 1)


def sent(text: str, name: str = "harbour.md") -> list[dict[str, str]]:
    return [{"name": name, "text": text, "trust": "trusted"}]


class Pass(Team):
    def __init__(self, url: str, config: Config) -> None:
        super().__init__(url)
        self.config = config

    def worker(self, provider: Any = None, **kw: Any) -> Any:
        made = super().worker(provider, **kw)
        made.config = self.config
        return made

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.call("GET", f"/jobs/{job_id}", "read").json())

    def lint_plans(self) -> list[dict[str, Any]]:
        return self.q("SELECT id, status, plan_json FROM {s}.plans WHERE origin = 'lint'")

    def passes(self, job: str) -> int:
        """How many pass rows job ``job`` has (0 or 1)."""
        return int(self.q("SELECT count(*) AS n FROM {s}.after_ingest WHERE job_id = %s",
                          job)[0]["n"])  # fmt: skip

    def findings(self) -> list[dict[str, Any]]:
        return self.q("SELECT id, kind, status, plan_id, claims FROM {s}.findings ORDER BY id")


@pytest.fixture
def team(pg_url: str) -> Iterator[Pass]:
    made = Pass(pg_url, PASS)
    yield made
    made.close()


def two_versions(team: Pass) -> str:
    """Ingest V1, then queue V2 — two releases of the document, each stating its version (a
    new version of the same origin is the lineage's: its changed facts wait in one proposal
    with the old claims' end, tests/test_pg_lineage.py); the V2 job's id."""
    first = release(team, RELEASE_1, "1.0")
    assert team.worker().run(drain=True) == 1
    assert team.job(first["id"])["status"] == "done"
    assert team.findings() == []  # one version: nothing is stale
    return str(release(team, RELEASE_2, "2.0")["id"])


def release(team: Pass, text: str, folder: str) -> dict[str, Any]:
    """Queue an ingest of ``text`` as ``docs/FOLDER/harbour.md`` (as ``team add --ingest``
    of that file): two folders' files are two origins, releases of one document."""
    from affidavit.jobs.payloads import StoredIngestPayload

    source = team.storage.add_source(
        "team", text.encode(), origin=f"/docs/{folder}/harbour.md", name="harbour.md",
        added_at="2026-12-01T00:00:00Z", media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    payload = StoredIngestPayload(sources=[source]).model_dump(mode="json")
    return {"id": team.jobs.enqueue("team", payload, "ann")}


def test_a_new_version_that_changes_a_fact_gets_a_supersede_proposal(team: Pass) -> None:
    job = two_versions(team)
    assert team.worker().run(drain=True) == 1
    done = team.job(job)
    assert done["status"] == "done", done
    after = done["result"]["after_ingest"]
    found = team.findings()
    assert [f["kind"] for f in found] == ["stale"], found
    assert after["supersessions"]["findings"] == [found[0]["id"]]
    plans = team.lint_plans()
    assert len(plans) == 1 and plans[0]["status"] == "pending"  # waits for a person
    assert after["supersessions"]["plans"] == [plans[0]["id"]] == [found[0]["plan_id"]]
    ops = json.loads(plans[0]["plan_json"])["operations"]
    stale, newer = json.loads(found[0]["claims"])[:2]
    assert ops == [{"op": "supersede_claim", "claim": stale, "successor": newer,
                    "reason": ops[0]["reason"]}]  # fmt: skip
    texts = {r["id"]: r["text"] for r in team.q("SELECT id, text FROM {s}.claims")}
    assert "112 steps" in texts[stale] and "148 steps" in texts[newer]
    # the pass's row, under the claim that did it; a re-run of the pass reads it back
    row = team.q("SELECT fence, result FROM {s}.after_ingest WHERE job_id = %s", job)
    assert len(row) == 1 and json.loads(row[0]["result"]) == after
    assert team.q("SELECT count(*) AS n FROM {s}.lint_runs")[0]["n"] == 1


def test_a_worker_killed_mid_pass_leaves_it_to_the_next_done_once(
    team: Pass, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker A dies (no cleanup) in the pass, after it recorded the findings and proposed the
    plan in its transaction but before that committed: nothing of it stays. Worker B re-claims
    the job once A's lease expired: the chunks are not asked again, the pass runs once — one
    finding run, one proposal, one pass row."""
    job = two_versions(team)
    real = PgAfterIngest.propose_fixes

    def dying(self: PgAfterIngest, *args: Any) -> Any:
        real(self, *args)  # the proposal written in the open transaction
        raise Crash()

    monkeypatch.setattr(PgAfterIngest, "propose_fixes", dying)
    with pytest.raises(Crash):
        team.worker(lease_seconds=0.5).run_once()
    assert team.findings() == [] and team.lint_plans() == []
    assert team.passes(job) == 0
    assert team.q("SELECT count(*) AS n FROM {s}.lint_runs")[0]["n"] == 0
    monkeypatch.setattr(PgAfterIngest, "propose_fixes", real)
    until(lambda: team.worker(lease_seconds=60).run_once(), "A's lease to expire")
    done = team.job(job)
    assert done["status"] == "done" and done["attempts"] == 2, done
    assert [f["kind"] for f in team.findings()] == ["stale"]
    assert len(team.lint_plans()) == 1
    assert team.q("SELECT count(*) AS n FROM {s}.lint_runs")[0]["n"] == 1
    assert team.passes(job) == 1


def test_a_pass_that_committed_is_not_done_again(team: Pass) -> None:
    """The worker dies after the pass committed, before the job ended: the next claim reads the
    pass's result from its row; no second finding run or proposal."""
    job = two_versions(team)
    claim = team.jobs.claim("team", "worker-a", 0.3)
    assert claim is not None and claim.job_id == job
    payload = StoredIngestPayload(**team.job(job)["payload"])
    PgIngest(team.jobs, claim, team.worker().provider_for(None), requested_by="ann",
             config=PASS).run(payload)  # fmt: skip
    first = PgAfterIngest(team.jobs, claim, requested_by="ann", config=PASS).run()
    assert first["supersessions"]["plans"]  # committed; the job still "running" (A is gone)
    until(lambda: team.worker(lease_seconds=60).run_once(), "A's lease to expire")
    done = team.job(job)
    assert done["status"] == "done" and done["result"]["after_ingest"] == first
    assert len(team.lint_plans()) == 1 and len(team.findings()) == 1
    assert team.q("SELECT count(*) AS n FROM {s}.lint_runs")[0]["n"] == 1


def test_a_worker_whose_lease_was_taken_writes_nothing_of_the_pass(team: Pass) -> None:
    """A ingested the chunks, then paused past its lease; B claimed the job. A's pass is
    refused at its write: no finding, run, proposal, nonce, counter or pass row of A's."""
    job = two_versions(team)
    a = team.jobs.claim("team", "worker-a", 0.2)
    assert a is not None and a.job_id == job
    payload = StoredIngestPayload(**team.job(job)["payload"])
    PgIngest(team.jobs, a, team.worker().provider_for(None), requested_by="ann",
             config=PASS).run(payload)  # fmt: skip
    b = until(lambda: team.jobs.claim("team", "worker-b", 60), "A's lease to expire")
    nonces = team.q("SELECT count(*) AS n FROM {s}.nonces")[0]["n"]
    counted = team.q("SELECT value FROM {s}.counters")[0]["value"]
    with pytest.raises(LeaseLost):
        PgAfterIngest(team.jobs, a, requested_by="ann", config=PASS).run()
    assert team.findings() == [] and team.lint_plans() == []
    assert team.q("SELECT count(*) AS n FROM {s}.lint_runs")[0]["n"] == 0
    assert team.passes(job) == 0
    assert team.q("SELECT value FROM {s}.counters")[0]["value"] == counted  # V1's source
    assert team.q("SELECT count(*) AS n FROM {s}.nonces")[0]["n"] == nonces
    # B's pass goes through, once
    assert PgAfterIngest(team.jobs, b, requested_by="ann", config=PASS).run()["supersessions"]
    assert len(team.lint_plans()) == 1 and team.passes(job) == 1
    assert team.q("SELECT value FROM {s}.counters")[0]["value"] == counted + 1


def test_the_lint_job_records_findings_as_sqlites_lint_does(team: Pass) -> None:
    """Two unrelated sources disagree about one fact: the lint job records a contradiction
    (origin extractive, two verified quotes) in a run of trigger "job"; without propose, no
    plan; run again, the same finding is refreshed, not doubled."""
    team.config = NO_PASS
    team.submit(sent(V1, "harbour.md"))
    team.submit(sent(V2, "harbour-guide.md"))  # another origin: a contradiction, not stale
    assert team.worker().run(drain=True) == 2
    assert team.findings() == []  # no automatic lint, no supersession pass
    job = team.jobs.enqueue("team", {"kind": "lint"}, "ann")
    assert team.worker().run(drain=True) == 1
    done = team.job(job)
    assert done["status"] == "done", done
    # as SQLite's lint: the two pages share the title "Harbour light" (a missing link each way)
    # and no page links to the other (two orphans)
    everything = team.findings()
    assert sorted(f["kind"] for f in everything) == [
        "contradiction", "missing_link", "missing_link", "orphan_page", "orphan_page"
    ], everything  # fmt: skip
    found = [f for f in everything if f["kind"] == "contradiction"]
    result = done["result"]
    assert result["counts"] == {"contradiction": 1, "missing_link": 2, "orphan_page": 2}
    assert result["new"] == 5
    (contra,) = [f for f in result["findings"] if f["kind"] == "contradiction"]
    assert contra["id"] == found[0]["id"]
    quotes = contra["quotes"]
    assert len(quotes) == 2 and all(q["verified"] for q in quotes)
    runs = team.q("SELECT trigger, kept FROM {s}.lint_runs")
    assert runs == [{"trigger": "job", "kept": 3}]  # the finder's: the pair and the two links
    assert team.lint_plans() == []  # a contradiction has no fix until a person says which
    # again, sent over the API: the same finding refreshed, not a second one
    sent_job = team.call("POST", "/jobs", "propose", json={"kind": "lint"})
    assert sent_job.status_code == 202, sent_job.text
    assert sent_job.json()["payload"] == {"kind": "lint", "propose": False}
    team.worker().run(drain=True)
    assert team.job(sent_job.json()["id"])["result"]["new"] == 0 and len(team.findings()) == 5


def test_a_lint_job_with_propose_puts_the_stale_fix_in_the_inbox(team: Pass) -> None:
    team.config = NO_PASS  # no pass after the ingest: the lint job finds the stale claim
    two_versions(team)
    team.worker().run(drain=True)
    assert team.findings() == []
    job = team.call("POST", "/jobs", "propose", json={"kind": "lint", "propose": True}).json()
    team.worker().run(drain=True)
    done = team.job(job["id"])
    assert done["status"] == "done", done
    found = [f for f in team.findings() if f["kind"] != "orphan_page"]  # the page: linked to none
    assert [f["kind"] for f in found] == ["stale"]
    plans = team.lint_plans()
    assert len(plans) == 1 and plans[0]["status"] == "pending"
    assert done["result"]["fixes"]["plans"] == [plans[0]["id"]] == [found[0]["plan_id"]]
    # a token's lint: its fix plans are an agent's, still pending; none twice for one claim
    again = team.call("POST", "/jobs", "propose", json={"kind": "lint", "propose": True}).json()
    team.worker().run(drain=True)
    assert team.job(again["id"])["result"]["fixes"]["plans"] == []
    assert len(team.lint_plans()) == 1


def test_who_may_queue_a_lint_and_what_it_may_carry(team: Pass) -> None:
    assert team.call("POST", "/jobs", "read", json={"kind": "lint"}).status_code == 403
    for bad in ({"kind": "lint", "sources": [{"name": "a.md", "text": "x"}]},
                {"kind": "lint", "propose": "yes please"}, {"kind": "reindex"}):  # fmt: skip
        assert team.call("POST", "/jobs", "propose", json=bad).status_code == 422, bad
    assert team.jobs.rows("team") == []


def test_the_automatic_lint_runs_every_n_ingested_sources(pg_url: str) -> None:
    team = Pass(pg_url, LINT_EVERY_2)
    try:
        team.submit(sent(V1, "harbour.md"))
        team.worker().run(drain=True)
        assert team.q("SELECT value FROM {s}.counters")[0]["value"] == 1
        job = team.submit(sent(V2, "harbour-guide.md"))
        team.worker().run(drain=True)
        lint = team.job(job["id"])["result"]["after_ingest"]["lint"]
        assert lint is not None, lint  # a whole-wiki run: its missing links too, as SQLite's
        assert lint["counts"] == {"contradiction": 1, "missing_link": 2}, lint
        assert team.q("SELECT value FROM {s}.counters")[0]["value"] == 0
        # the pass recorded the contradiction first; the automatic lint found it again
        runs = team.q("SELECT trigger, kept FROM {s}.lint_runs ORDER BY id")
        assert runs == [{"trigger": "ingest", "kept": 1}, {"trigger": "auto", "kept": 3}]
        assert len(team.findings()) == 3
    finally:
        team.close()


def test_placeholders_leave_quoted_text_alone() -> None:
    assert placeholders("SELECT ? FROM t WHERE a = '?' AND b LIKE ?") == (
        "SELECT %s FROM t WHERE a = '?' AND b LIKE %s"
    )
    assert placeholders("SELECT '%' || ?") == "SELECT '%%' || %s"
    assert pg_after.LINT_ORIGIN == "lint"
