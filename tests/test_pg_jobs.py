"""Ingest jobs on PostgreSQL (issue 26 item 3): the daemon's jobs routes queue an ingest of the
sources sent; a worker (:class:`~affidavit.jobs.pg_worker.PgWorker`) claims it, and every write
it makes — the chunk's nonce, the plan, its apply through the door, the checkpoint, progress —
carries its claim. The attacker's tests: a worker whose lease expired and whose job another took
writes nothing; a worker that dies between chunks leaves a job another finishes with each chunk's
plan applied once; a forged claim; roles (a token's ingest waits for a person, W13; a trusted
source needs approve); cancel; a SQLite vault refuses the kind."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from affidavit.config import Config
from affidavit.jobs.payloads import JobPayloadError, StoredIngestPayload
from affidavit.jobs.pg_ingest import PgIngest
from affidavit.jobs.pg_worker import PgWorker
from affidavit.providers.base import Completion, ModelRequest, Provider
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.server.pg_app import create_pg_app
from affidavit.server.pg_registry import PgRegistry
from affidavit.storage.jobs import LeaseLost
from affidavit.storage.postgres import PostgresStorage
from affidavit.storage.postgres_jobs import PostgresJobStore

from .pg_cluster import drop_vaults

pytestmark = pytest.mark.xdist_group("postgres")

TEXT = (
    "# Lighthouse {n}\n\n"
    "The lighthouse number {n} was painted red and white in the year {year}. "
    "Keepers climbed its {steps} steps every evening to light the lamp. "
    "Ships from the northern ports relied on its beam during the winter storms.\n"
)
TRUSTED = Config({"policy.auto_apply": "trusted"})


def sources(first: int, count: int, trust: str = "trusted") -> list[dict[str, str]]:
    return [
        {"name": f"light-{n}.md", "text": TEXT.format(n=n, year=1850 + n, steps=100 + n),
         "trust": trust}
        for n in range(first, first + count)
    ]  # fmt: skip


def until(condition: Callable[[], Any], what: str, seconds: float = 60) -> Any:
    """Poll ``condition`` until it holds (no fixed margin: a loaded machine only waits longer)."""
    deadline = time.monotonic() + seconds
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Crash(BaseException):
    """What a test provider raises to stop a worker dead between two chunks (as kill -9 would:
    no cleanup of the job, which stays running under the lost claim)."""


class Counting(Provider):
    """The extractive engine, counting calls; ``crash_at`` stops the worker dead on that call,
    ``pause`` sleeps before each answer (a slow model)."""

    name = "extractive"
    supports_schema = True
    reads_prompt = False

    def __init__(self, crash_at: int = 0, pause: float = 0.0) -> None:
        self.inner = ExtractiveProvider()
        self.calls = 0
        self.crash_at = crash_at
        self.pause = pause

    def complete(self, request: ModelRequest) -> Completion:
        self.calls += 1
        if self.calls == self.crash_at:
            raise Crash()
        time.sleep(self.pause)
        return self.inner.complete(request)


class Team:
    """Vault team in a fresh database; the daemon's app in-process; tokens of each role."""

    def __init__(self, url: str) -> None:
        drop_vaults(url)
        self.url = url
        self.storage = PostgresStorage(url)
        self.storage.create_vault("team", "nobody-here")
        self.jobs = PostgresJobStore(self.storage)
        self.registry = PgRegistry.open(url, TRUSTED)
        self.client = TestClient(create_pg_app(self.registry))
        self.client.__enter__()
        team = self.registry.get("team").service
        self.tokens = {
            role: team.create_token(role, timedelta(days=1), role, "test")[1]
            for role in ("read", "propose", "approve")
        }

    def close(self) -> None:
        self.client.__exit__(None, None, None)
        self.storage.close()

    def call(self, method: str, path: str, role: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"}
        return self.client.request(method, f"/v1/vaults/team{path}", headers=headers, **kw)

    def submit(self, body: list[dict[str, str]], role: str = "") -> dict[str, Any]:
        """Queue an ingest of ``body``: as a token of ``role`` over the API (an agent's job), or
        by default as the vault's owner ``ann`` (the socket's caller: a person's job)."""
        if role:
            got = self.call("POST", "/jobs", role, json={"sources": body})
            assert got.status_code == 202, got.text
            return dict(got.json())
        from affidavit.service.pg_jobs import IngestRequest, PgJobs

        service = PgJobs(self.registry.get("team").service)
        return service.submit(IngestRequest(sources=body), "ann", True).model_dump()

    def worker(self, provider: Provider | None = None, **kw: Any) -> PgWorker:
        return PgWorker(
            self.storage, vaults=["team"], config=TRUSTED, log=lambda e: None,
            provider_for=lambda model: provider or ExtractiveProvider(), **kw,
        )  # fmt: skip

    def q(self, text: str, *params: Any) -> list[dict[str, Any]]:
        with self.storage.pool.connection() as conn:
            return list(conn.execute(text.replace("{s}", "v_team"), params).fetchall())

    def applied(self) -> list[str]:
        return [e.plan_id or "" for e in self.storage.audit("team") if e.action == "applied"]


@pytest.fixture
def team(pg_url: str) -> Iterator[Team]:
    made = Team(pg_url)
    yield made
    made.close()


def assert_once(team: Team) -> None:
    """Each chunk's plan proposed once and applied at most once; batches 1..n, no gap; no
    claim written twice on a page."""
    applied = team.applied()
    assert len(applied) == len(set(applied)), Counter(applied).most_common(3)
    origins = [r["origin"] for r in team.q("SELECT origin FROM {s}.plans")]
    assert len(origins) == len(set(origins)), Counter(origins).most_common(3)
    batches = team.storage.batches("team")  # checked against the audit log as it reads
    assert [b.seq for b in batches] == list(range(1, len(batches) + 1))
    texts = [(r["page_slug"], r["text"]) for r in team.q("SELECT page_slug, text FROM {s}.claims")]
    assert len(texts) == len(set(texts)), Counter(texts).most_common(3)


def test_a_job_sent_to_the_daemon_is_ingested_by_a_worker(team: Team) -> None:
    job = team.submit(sources(0, 3))
    assert job["status"] == "queued" and job["kind"] == "ingest_stored"
    assert len(job["payload"]["sources"]) == 3
    assert team.worker().run(drain=True) == 1
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done", done
    assert done["result"]["totals"] == {"applied": 3}, done["result"]
    assert done["progress"]["done"] == done["progress"]["total"] == 3
    assert len(team.applied()) == 3
    pages = team.call("GET", "/pages", "read").json()
    assert {p["slug"] for p in pages} >= {"light-0", "light-1", "light-2"}
    claims = team.q("SELECT text FROM {s}.claims WHERE status = 'active'")
    assert any("painted red and white in the year 1851" in c["text"] for c in claims)
    assert_once(team)
    # the same sources again: every chunk is checkpointed, nothing is asked or written twice
    again = team.submit(sources(0, 3))
    provider = Counting()
    team.worker(provider).run(drain=True)
    result = team.call("GET", f"/jobs/{again['id']}", "read").json()["result"]
    assert provider.calls == 0 and result["totals"] == {"applied": 3}
    assert len(team.applied()) == 3
    listed = team.call("GET", "/jobs", "read").json()
    assert [j["id"] for j in listed] == [again["id"], job["id"]]
    assert [j["id"] for j in team.call("GET", "/jobs?status=queued", "read").json()] == []


def test_a_worker_whose_lease_expired_and_was_taken_writes_nothing(team: Team) -> None:
    """Worker A claims, is paused past its lease; worker B claims the job. A then runs the
    job as if nothing happened: its first write (the chunk's nonce and checkpoint) is refused,
    and so is every later one — no nonce, plan, checkpoint, audit entry or batch of A's. B's
    writes go through."""
    job = team.submit(sources(0, 2))
    payload = StoredIngestPayload(
        **team.call("GET", f"/jobs/{job['id']}", "read").json()["payload"]
    )
    a = team.jobs.claim("team", "worker-a", 0.2)
    assert a is not None
    b = until(lambda: team.jobs.claim("team", "worker-b", 60), "A's lease to expire")
    assert b.job_id == a.job_id and b.fence == a.fence + 1
    before = team.q("SELECT count(*) AS n FROM {s}.nonces")[0]["n"]
    late = PgIngest(team.jobs, a, ExtractiveProvider(), requested_by="ann", config=TRUSTED)
    with pytest.raises(LeaseLost):
        late.run(payload)
    assert team.q("SELECT count(*) AS n FROM {s}.nonces")[0]["n"] == before
    assert team.q("SELECT count(*) AS n FROM {s}.ingested_chunks")[0]["n"] == 0
    assert team.q("SELECT count(*) AS n FROM {s}.plans")[0]["n"] == 0
    assert team.applied() == [] and team.storage.batches("team") == []
    # A's claim with B's fence, or B's fence with a guessed secret: refused as well
    for forged in (replace(a, fence=b.fence), replace(b, token="0" * 32)):
        with pytest.raises(LeaseLost):
            PgIngest(team.jobs, forged, ExtractiveProvider(), requested_by="ann").run(payload)
    assert team.q("SELECT count(*) AS n FROM {s}.plans")[0]["n"] == 0
    result = PgIngest(team.jobs, b, ExtractiveProvider(), requested_by="ann", config=TRUSTED)
    assert result.run(payload)["totals"] == {"applied": 2}
    team.jobs.complete(b, {})
    assert {r["fence"] for r in team.q("SELECT fence FROM {s}.ingested_chunks")} == {b.fence}
    assert len(team.applied()) == 2
    assert_once(team)


def test_a_worker_that_dies_mid_job_leaves_it_to_another_each_plan_once(team: Team) -> None:
    """Worker A dies (no cleanup) on its fourth model call: three chunks were committed with
    their checkpoints, the fourth not at all. Worker B claims the job once A's lease expired
    and finishes it: the three are not asked again, each of the five chunks' plans is applied
    exactly once, and the batch numbers run 1..5."""
    job = team.submit(sources(0, 5))
    dying = team.worker(Counting(crash_at=4), lease_seconds=0.5)
    with pytest.raises(Crash):
        dying.run_once()
    assert len(team.applied()) == 3
    row = team.jobs.rows("team", job["id"])[0]
    assert row["status"] == "running" and row["progress_done"] == 3
    started = team.q("SELECT outcome FROM {s}.ingested_chunks WHERE outcome = 'started'")
    assert len(started) == 1  # the chunk in flight: its nonce issued, nothing else of it
    survivor = Counting()
    until(lambda: team.worker(survivor, lease_seconds=60).run_once(), "A's lease to expire")
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done" and done["attempts"] == 2, done
    assert done["result"]["totals"] == {"applied": 5}
    assert survivor.calls == 2
    assert len(team.applied()) == 5
    assert [b.seq for b in team.storage.batches("team")] == [1, 2, 3, 4, 5]
    assert_once(team)


def test_roles_a_tokens_ingest_waits_and_trusted_needs_approve(team: Team) -> None:
    refused = team.call("POST", "/jobs", "read", json={"sources": sources(0, 1)})
    assert refused.status_code == 403
    trusted = team.call("POST", "/jobs", "propose", json={"sources": sources(0, 1)})
    assert trusted.status_code == 403 and "approve" in trusted.text
    for bad in ({"sources": []}, {"sources": sources(0, 1), "paths": ["/etc/passwd"]},
                {"sources": [{"name": "../x.md", "text": "x"}]}):  # fmt: skip
        assert team.call("POST", "/jobs", "approve", json=bad).status_code == 422, bad
    assert team.q("SELECT count(*) AS n FROM {s}.jobs")[0]["n"] == 0
    job = team.submit(sources(0, 2, "semi-trusted"), role="propose")
    team.worker().run(drain=True)
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    # an agent's (a token's) plans always wait for a person (W13), trusted or not
    assert done["status"] == "done" and done["result"]["totals"] == {"pending": 2}
    plans = team.call("GET", "/plans", "read").json()
    assert len(plans) == 2 and {p["proposer"] for p in plans} == {"agent"}
    assert team.applied() == []


def test_cancel_a_queued_job_and_a_running_one(team: Team) -> None:
    queued = team.submit(sources(0, 1, "untrusted"), role="propose")
    other = team.submit(sources(1, 1))
    denied = team.call("POST", f"/jobs/{other['id']}/cancel", "propose")
    assert denied.status_code == 403  # propose cancels only its own jobs
    cancelled = team.call("POST", f"/jobs/{queued['id']}/cancel", "propose").json()
    assert cancelled["status"] == "cancelled"
    again = team.call("POST", f"/jobs/{queued['id']}/cancel", "approve")
    assert again.status_code == 409
    team.call("POST", f"/jobs/{other['id']}/cancel", "approve")
    long = team.submit(sources(10, 30))
    worker = team.worker(Counting(pause=0.05))
    thread = threading.Thread(target=worker.run, kwargs={"drain": True})
    thread.start()
    until(lambda: team.jobs.rows("team", long["id"])[0]["progress_done"] >= 1, "a chunk")
    stopping = team.call("POST", f"/jobs/{long['id']}/cancel", "approve").json()
    assert stopping["status"] in ("running", "cancelled") and stopping["cancel_requested"]
    thread.join(timeout=600)
    final = team.call("GET", f"/jobs/{long['id']}", "read").json()
    assert final["status"] == "cancelled" and final["cancelled_by"], final
    assert final["progress"]["done"] < 30
    assert len(team.applied()) == final["progress"]["done"]
    assert_once(team)


def test_a_sqlite_vault_refuses_a_database_only_job(tmp_path: Path) -> None:
    from affidavit.jobs.queue import JobQueue
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v")
    try:
        with pytest.raises(JobPayloadError, match="PostgreSQL"):
            JobQueue(vault).submit({"kind": "ingest_stored", "sources": ["a" * 64]}, "me")
    finally:
        vault.close()


def test_job_rows_read_back_as_the_api_shows_them(team: Team) -> None:
    job = team.submit(sources(0, 1), role="approve")
    shown = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert shown["requested_by"].startswith("token:") and shown["queued"] is True
    assert shown["created_at"].endswith("Z") and shown["lease_owner"] is None
    assert json.loads(json.dumps(shown["payload"]))["kind"] == "ingest_stored"
    missing = team.call("GET", "/jobs/job-000000000000", "read")
    assert missing.status_code == 404


def test_a_stopping_worker_gives_its_job_back_and_another_finishes_it(team: Team) -> None:
    """SIGTERM's path: the worker stops after its current chunk and releases the job (fenced),
    which another worker claims at once (no lease to wait out) and finishes; each plan once."""
    job = team.submit(sources(0, 12))
    first = team.worker(Counting(pause=0.05))
    thread = threading.Thread(target=first.run)
    thread.start()
    until(lambda: team.jobs.rows("team", job["id"])[0]["progress_done"] >= 2, "two chunks")
    first.stop.set()
    thread.join(timeout=600)
    row = team.jobs.rows("team", job["id"])[0]
    assert row["status"] == "queued" and row["lease_token"] is None, row
    assert 2 <= row["progress_done"] < 12
    second = Counting()
    assert team.worker(second).run(drain=True) == 1
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done" and done["attempts"] == 2
    assert second.calls == 12 - row["progress_done"]
    assert len(team.applied()) == 12
    assert_once(team)


def test_jobs_a_worker_cannot_run_fail_saying_why(team: Team) -> None:
    """A kind not on PostgreSQL yet, and a source the vault doesn't hold: the job fails with
    the reason; nothing is written to the wiki."""
    other = team.jobs.enqueue("team", {"kind": "reindex"}, "ann")
    missing = team.jobs.enqueue("team", {"kind": "ingest_stored", "sources": ["ab" * 32]}, "ann")
    team.worker().run(drain=True)
    rows = {r["id"]: r for r in team.jobs.rows("team")}
    assert rows[other]["status"] == "failed" and "PostgreSQL" in rows[other]["error"]
    assert rows[missing]["status"] == "failed" and "abababababab" in rows[missing]["error"]
    assert team.q("SELECT count(*) AS n FROM {s}.plans")[0]["n"] == 0


def test_an_agents_ingest_waits_until_a_person_approves_it(team: Team) -> None:
    job = team.submit(sources(0, 1, "untrusted"), role="propose")
    team.worker().run(drain=True)
    (plan_id,) = team.call("GET", f"/jobs/{job['id']}", "read").json()["result"]["sources"][0][
        "plans"
    ]
    shown = team.call("GET", f"/plans/{plan_id}", "read").json()
    assert shown["status"] == "pending" and shown["origin"] == "ingest:light-0.md#1"
    assert team.call("POST", f"/plans/{plan_id}/approve", "propose", json={}).status_code == 403
    ok = team.call("POST", f"/plans/{plan_id}/approve", "approve", json={})
    assert ok.status_code == 200 and ok.json()["applied"], ok.text
    assert team.applied() == [plan_id]


def test_two_jobs_of_the_same_sources_at_once_propose_each_chunk_once(team: Team) -> None:
    """Two jobs naming the same sources, run side by side by two workers: each chunk's plan is
    proposed and applied once; the job that comes second to a chunk reports it settled."""
    first = team.submit(sources(0, 8))
    second = team.jobs.enqueue("team", first["payload"], "ann")
    workers = [team.worker(Counting(pause=0.05)) for _ in range(2)]
    threads = [threading.Thread(target=w.run, kwargs={"drain": True}) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    rows = {r["id"]: r for r in team.jobs.rows("team")}
    assert rows[first["id"]]["status"] == rows[second]["status"] == "done"
    assert len(team.applied()) == 8
    assert_once(team)


def test_a_language_models_invalid_reply_is_asked_again(team: Team) -> None:
    """A model that reads the prompt: its first reply is not a plan, so it is sent back with
    the error; the second, which quotes the chunk under the prompt's nonce, is applied. A model
    that never answers with a plan leaves the chunk 'invalid', and nothing is written."""
    from affidavit.providers.scripted import ScriptedProvider

    def plan(request: ModelRequest) -> str:
        task = request.task
        assert task is not None and any(task.nonce in m.content for m in request.messages)
        quote = "Keepers climbed its 100 steps every evening to light the lamp"
        claim = {"text": quote + ".", "evidence": [{"source": task.source_id, "quote": quote}]}
        return json.dumps({"nonce": task.nonce, "operations": [{
            "op": "create_page", "slug": "keepers", "title": "Keepers", "summary": quote + ".",
            "claims": [claim]}]})  # fmt: skip

    model = ScriptedProvider(["this is not a plan", plan])
    job = team.submit(sources(0, 1))
    team.worker(model).run(drain=True)
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["result"]["totals"] == {"applied": 1}, done
    assert len(model.requests) == 2
    assert "not one JSON object" in model.requests[1].messages[-1].content
    page = team.call("GET", "/pages/keepers", "read").json()
    assert [c["text"] for c in page["claims"]] == [
        "Keepers climbed its 100 steps every evening to light the lamp."
    ]
    stubborn = ScriptedProvider(["no"] * 10)
    job = team.submit(sources(1, 1))
    team.worker(stubborn).run(drain=True)
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["result"]["totals"] == {"invalid": 1}
    assert "invalid reply" in done["result"]["sources"][0]["problems"][0]
    assert len(team.applied()) == 1


def test_the_policy_applies_a_chunks_sure_part_and_the_rest_waits(team: Team) -> None:
    """A chunk's plan of a supported claim and an uncertain one, from a trusted source: the
    policy applies the supported one and the uncertain one waits as the plan's remainder, as an
    ingest on SQLite leaves it (the chunk 'partial'); a person approves the rest later."""
    from affidavit.providers.scripted import ScriptedProvider

    def plan(request: ModelRequest) -> str:
        task = request.task
        assert task is not None
        sure = "Keepers climbed its 100 steps every evening to light the lamp"
        unsure = "The lighthouse number 0 was painted red and white in the year 1850"
        claims = [
            {"text": sure + ".", "evidence": [{"source": task.source_id, "quote": sure}]},
            {"text": unsure + " in Bristol.",
             "evidence": [{"source": task.source_id, "quote": unsure}]},
        ]  # fmt: skip
        return json.dumps({"nonce": task.nonce, "operations": [{
            "op": "create_page", "slug": "keepers", "title": "Keepers", "summary": sure + ".",
            "claims": claims}]})  # fmt: skip

    job = team.submit(sources(0, 1))
    team.worker(ScriptedProvider([plan])).run(drain=True)
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["result"]["totals"] == {"partial": 1}, done
    page = team.call("GET", "/pages/keepers", "read").json()
    assert [c["text"] for c in page["claims"]] == [
        "Keepers climbed its 100 steps every evening to light the lamp."
    ]
    (waiting,) = team.call("GET", "/plans", "read").json()
    assert [(w["part"], w["verdict"], w["applied"]) for w in waiting["waiting"]] == [
        ("claim 2", "uncertain", True)
    ]
    rest = team.call("POST", f"/plans/{waiting['id']}/approve", "approve", json={})
    assert rest.status_code == 200 and rest.json()["applied"], rest.text
    page = team.call("GET", "/pages/keepers", "read").json()
    assert len(page["claims"]) == 2 and team.call("GET", "/plans", "read").json() == []
    assert [b.seq for b in team.storage.batches("team")] == [1, 2]  # the sure part, the rest
    assert team.applied() == [waiting["id"]] * 2


def test_a_backend_terminated_mid_transaction_writes_nothing_of_that_chunk(team: Team) -> None:
    """``pg_terminate_backend`` of the worker's own connection inside the third chunk's
    transaction (after the plan was recorded and applied, as its checkpoint is written): that
    transaction leaves nothing — no plan, audit entry or batch number — the worker goes on, and
    the job, claimed again once the lease expired, applies chunks 3..5 once each: batches 1..5."""
    with team.storage.pool.connection() as conn:
        conn.execute(
            "CREATE SEQUENCE v_team.fault_seq; "
            "CREATE FUNCTION v_team.fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.outcome = 'applied' AND nextval('v_team.fault_seq') = 3 THEN "
            "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); END IF; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER fault BEFORE INSERT ON v_team.ingested_chunks "
            "FOR EACH ROW EXECUTE FUNCTION v_team.fault()"
        )
    job = team.submit(sources(0, 5))
    events: list[dict[str, Any]] = []
    first = PgWorker(
        team.storage, vaults=["team"], config=TRUSTED, lease_seconds=0.5, log=events.append,
        provider_for=lambda model: ExtractiveProvider(),
    )  # fmt: skip
    assert first.run_once()
    assert [e["event"] for e in events] == ["claimed", "database_error"]
    assert len(team.applied()) == 2 and len(team.storage.batches("team")) == 2
    assert team.jobs.rows("team", job["id"])[0]["status"] == "running"
    survivor = Counting()
    until(lambda: team.worker(survivor).run_once(), "the lease to expire")
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done" and done["attempts"] == 2, done
    assert survivor.calls == 3
    assert [b.seq for b in team.storage.batches("team")] == [1, 2, 3, 4, 5]
    assert_once(team)


def test_a_worker_that_loses_the_database_while_claiming_tries_again(team: Team) -> None:
    """The server ends the worker's session in the middle of its claim (as a restart of the
    database, or a cut link, does): the worker logs ``database_error`` and claims again at its
    next poll instead of exiting; the claim that never committed left nothing, so the job's
    first attempt is the one that runs it."""
    with team.storage.pool.connection() as conn:
        conn.execute(
            "CREATE SEQUENCE v_team.fault_seq; "
            "CREATE FUNCTION v_team.fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.fence > OLD.fence AND nextval('v_team.fault_seq') = 1 THEN "
            "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); END IF; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER fault BEFORE UPDATE ON v_team.jobs "
            "FOR EACH ROW EXECUTE FUNCTION v_team.fault()"
        )
    job = team.submit(sources(0, 2))
    events: list[dict[str, Any]] = []
    worker = PgWorker(
        team.storage, vaults=["team"], config=TRUSTED, poll_seconds=0.05, log=events.append,
        provider_for=lambda model: ExtractiveProvider(),
    )  # fmt: skip
    assert worker.run(drain=True) == 1
    assert [e["event"] for e in events] == ["database_error", "claimed", "done"], events
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done" and done["attempts"] == 1, done
    assert_once(team)


def test_text_a_renderer_hides_in_a_sent_source_never_becomes_a_claim(team: Team) -> None:
    """W12 on the PostgreSQL door as on SQLite: a markdown source sent to the daemon hides a
    sentence in inline HTML a style hides; it is flagged at storage and never reaches the wiki,
    while the visible sentences do."""
    text = (
        "# Harbour Tower\n\nThe harbour tower was painted green in the year 1901.\n\n"
        '<span style="display:none">The harbour tower was condemned as unsafe in 1902.</span>\n\n'
        "Its keeper lit the lamp every evening for forty years.\n"
    )
    job = team.submit([{"name": "tower.md", "text": text, "trust": "trusted"}])
    source = job["payload"]["sources"][0]
    kinds = {
        r["kind"] for r in team.q("SELECT kind FROM {s}.source_flags WHERE source_id = %s", source)
    }
    assert {"hidden", "hidden_styling"} <= kinds, kinds
    team.worker().run(drain=True)
    for plan in team.q("SELECT id FROM {s}.plans WHERE status = 'pending'"):
        # a person approves everything the inbox holds: still nothing hidden gets in
        team.call("POST", f"/plans/{plan['id']}/approve", "approve", json={})
    claims = [c["text"] for c in team.q("SELECT text FROM {s}.claims WHERE status = 'active'")]
    assert any("painted green in the year 1901" in c for c in claims), claims
    assert not [c for c in claims if "condemned" in c], claims


class _SlowStop(threading.Event):
    """A worker's stop whose ``wait`` doesn't come back until the test opens its gate (a
    worker's poll of its stop, made as slow as a starved host can make it)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.waited = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waited += 1
        self.gate.wait()
        return self.is_set()


def test_a_jobs_end_does_not_wait_for_the_workers_look_at_its_stop(team: Team) -> None:
    """The thread passing the worker's stop to a job ends when the job does: the worker goes
    on to the next job at once, without waiting for its own next look at ``stop`` (each
    one-chunk job paid up to that poll's 0.2 s; bench/bench_pg_hosts.py)."""
    for n in range(2):
        team.submit(sources(n, 1))
    worker = team.worker()
    worker.stop = _SlowStop()
    ended: list[int] = []
    thread = threading.Thread(target=lambda: ended.append(worker.run(drain=True)))
    thread.start()
    try:
        thread.join(timeout=120)  # a deadline for a hang, not a speed margin
        assert ended == [2], "the job's end waited for the worker's look at its stop"
        assert worker.stop.waited == 0
    finally:
        worker.stop.gate.set()
        thread.join()
    assert len(team.applied()) == 2
    assert_once(team)


class _Counting:
    """A connection that counts the statements run through it."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.statements: list[str] = []

    def execute(self, query: Any, params: Any = None) -> Any:
        self.statements.append(str(query))
        return self.conn.execute(query, params)


def test_the_door_reads_each_source_reference_once_per_transaction(team: Team) -> None:
    """The gate, the verifier and the door each resolve every quote's source: inside the door's
    lock a reference is read from the database once. The memory is the transaction's: a source
    added after it (adding one waits for the door's lock) is found by the next."""
    from affidavit.errors import NotFoundError
    from affidavit.hashing import sha256_hex
    from affidavit.storage.postgres_gate import PgSources

    team.submit(sources(0, 1))
    assert team.worker().run(drain=True) == 1
    (one,) = [str(r["id"]) for r in team.q("SELECT id FROM {s}.sources")]
    later = TEXT.format(n=99, year=1799, steps=199).encode()
    with team.storage.door("team", "batch-read-once") as door:
        conn = _Counting(door.conn)
        view = PgSources(conn, "v_team")  # type: ignore[arg-type]
        for _ in range(3):
            assert view.resolve(one[:12]) == one
            assert view.get(one[:16]).id == one
            assert view.resolve(sha256_hex(later)[:12]) is None
        lookups = [q for q in conn.statements if "LIKE" in q]
        assert len(lookups) == 3, lookups  # one per distinct reference
        with pytest.raises(NotFoundError):
            view.get("0" * 63 + "g")  # not hex: refused before any read
    added = team.storage.add_source("team", later, origin="/notes/later.md", name="later.md",
                                    added_at="2026-12-07T00:00:00Z", trust="trusted")  # fmt: skip
    assert added == sha256_hex(later)
    with team.storage.door("team", "batch-read-again") as door:
        assert PgSources(door.conn, "v_team").resolve(added[:12]) == added
    assert [b.seq for b in team.storage.batches("team")] == [1]
