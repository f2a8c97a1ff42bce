"""The job queue in the database: typed payloads, the lease, cancellation, old rows (no workers)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from affidavit.errors import ConflictError, NotFoundError
from affidavit.ingest.pipeline import Ingestor
from affidavit.jobs import (
    JOB_PAYLOAD,
    IngestPayload,
    JobPayloadError,
    JobQueue,
    LintPayload,
    ReindexPayload,
    parse_payload,
    register_handler,
)
from affidavit.jobs.lease import claim, finish, renew
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import Vault

from .conftest import SAMPLES, FakeClock

DOC = str(SAMPLES / "sotu" / "1790-washington.md")


def submit(vault: Vault, **kwargs: object) -> str:
    payload = IngestPayload(sources=[DOC], yes=True)
    return JobQueue(vault).submit(payload, "ann", **kwargs).id  # type: ignore[arg-type]


def test_payloads_are_a_closed_typed_union() -> None:
    ok = parse_payload({"kind": "ingest", "sources": [DOC, "https://example.org/a"], "yes": True})
    assert isinstance(ok, IngestPayload) and ok.yes and ok.trust is None
    assert parse_payload('{"kind": "lint"}') == LintPayload(propose=False)
    assert isinstance(JOB_PAYLOAD.validate_python({"kind": "reindex"}), ReindexPayload)
    bad = [
        {"kind": "ingest", "sources": [DOC], "shell": "rm -rf /"},  # extra field
        {"kind": "ingest", "sources": ["notes.md"]},  # relative: the job runs elsewhere
        {"kind": "ingest", "sources": ["file:///etc/passwd"]},  # only http(s) URLs
        {"kind": "ingest", "sources": []},
        {"kind": "ingest", "sources": [DOC], "trust": "root"},
        {"kind": "exec", "command": "id"},  # unknown kind
        {"sources": [DOC]},  # no kind
        {"kind": "lint", "propose": "yes please"},
    ]
    for data in bad:
        with pytest.raises(JobPayloadError):
            parse_payload(data)
    with pytest.raises(JobPayloadError, match="not JSON"):
        parse_payload("{nope")
    with pytest.raises(ValueError, match="must default"):
        register_handler("other", LintPayload, lambda ctx, payload: {})


def test_submit_get_list_and_events(vault: Vault) -> None:
    queue = JobQueue(vault)
    first = queue.submit(IngestPayload(sources=[DOC]), "ann")
    second = queue.submit({"kind": "reindex"}, "bob", timeout_seconds=5, max_attempts=1)
    assert first.status == "queued" and first.queued and first.attempts == 0
    assert first.payload == {
        "kind": "ingest",
        "sources": [DOC],
        "trust": None,
        "model": None,
        "yes": False,
        "dry_run": False,
        "budget": None,
    }
    assert first.timeout_seconds == 3600 and first.max_attempts == 3  # the jobs.* defaults
    assert (second.timeout_seconds, second.max_attempts) == (5, 1)
    assert queue.get(first.id.removeprefix("job-")[:6]) == first
    assert queue.get(second.id[:9]).requested_by == "bob"
    assert [j.id for j in queue.list()] == [second.id, first.id]
    assert [j.id for j in queue.list(status="queued", limit=1)] == [second.id]
    assert queue.list(status="done") == []
    [event] = queue.events(first.id)
    assert (event.type, event.data) == ("submitted", {"kind": "ingest", "requested_by": "ann"})
    assert queue.events(first.id, after_seq=event.seq) == []
    with pytest.raises(NotFoundError):
        queue.get("job-zzzzzz")
    with pytest.raises(NotFoundError, match="too short"):
        queue.get("jo")
    for forged in ("____", "job-____", "%%%%", first.id[:8] + "%", "_" * len(first.id)):
        with pytest.raises(NotFoundError, match="no job"):  # LIKE's wildcards are literal
            queue.get(forged)
    with pytest.raises(NotFoundError):
        queue.list(status="exploded")
    assert queue.wait(first.id, 0).status == "queued"  # the deadline passes: returned as is


def test_cancel_a_queued_job_and_refuse_a_finished_one(vault: Vault) -> None:
    queue = JobQueue(vault)
    job_id = submit(vault)
    cancelled = queue.cancel(job_id, "ann")
    assert cancelled.status == "cancelled" and cancelled.error == "cancelled by ann"
    assert [e.type for e in queue.events(job_id)] == ["submitted", "cancelled"]
    with pytest.raises(ConflictError, match="already cancelled"):
        queue.cancel(job_id, "ann")
    assert claim(vault.db, "w", 30, 1000.0, vault.clock) is None  # nothing left to run


def test_one_lease_per_vault_and_only_its_token_writes(vault: Vault) -> None:
    first, second = submit(vault), submit(vault)
    lease = claim(vault.db, "worker-a", 10, 1000.0, vault.clock)
    assert lease is not None and (lease.job_id, lease.attempt) == (first, 1)
    assert claim(vault.db, "worker-b", 10, 1005.0, vault.clock) is None  # a live lease
    assert renew(vault.db, lease, 10, 1008.0)
    assert claim(vault.db, "worker-b", 10, 1015.0, vault.clock) is None  # renewed until 1018
    job = JobQueue(vault).get(first)
    assert job.status == "running" and (job.lease_owner or "").startswith("worker-a (pid ")
    assert not finish(vault.db, first, "not-the-token", "done", "now")
    assert finish(vault.db, first, lease.token, "done", "now", result={"ok": True})
    nxt = claim(vault.db, "worker-b", 10, 1016.0, vault.clock)
    assert nxt is not None and nxt.job_id == second
    assert JobQueue(vault).get(first).result == {"ok": True}


def test_database_refuses_a_second_running_job(vault: Vault) -> None:
    first, second = submit(vault), submit(vault)
    vault.db.execute("UPDATE jobs SET status = 'running' WHERE id = ?", (first,))
    with pytest.raises(sqlite3.IntegrityError):
        vault.db.execute("UPDATE jobs SET status = 'running' WHERE id = ?", (second,))


def test_expired_lease_is_resumed_then_given_up(vault: Vault) -> None:
    job_id = submit(vault, max_attempts=2)
    lost = claim(vault.db, "worker-a", 10, 1000.0, vault.clock)
    assert lost is not None
    resumed = claim(vault.db, "worker-b", 10, 1011.0, vault.clock)  # worker-a stopped beating
    assert resumed is not None and (resumed.job_id, resumed.attempt) == (job_id, 2)
    assert not renew(vault.db, lost, 10, 1012.0)  # the old holder can't write any more
    assert not finish(vault.db, job_id, lost.token, "done", "now")
    started = [e.data for e in JobQueue(vault).events(job_id) if e.type == "started"]
    assert started == [
        {"attempt": 1, "resumed": False, "worker": "worker-a"},
        {"attempt": 2, "resumed": True, "worker": "worker-b"},
    ]
    assert claim(vault.db, "worker-c", 10, 1030.0, vault.clock) is None  # attempts used up
    job = JobQueue(vault).get(job_id)
    assert job.status == "failed" and "gave up after 2 attempt(s)" in job.error


def test_a_dead_holder_is_resumed_without_waiting_for_its_lease(vault: Vault) -> None:
    job_id = submit(vault)
    assert claim(vault.db, "worker-a", 3600, 1000.0, vault.clock) is not None
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                          capture_output=True, check=True)  # fmt: skip
    vault.db.execute("UPDATE jobs SET lease_pid = ? WHERE id = ?", (int(gone.stdout), job_id))
    resumed = claim(vault.db, "worker-b", 10, 1001.0, vault.clock)
    assert resumed is not None and resumed.attempt == 2


def test_cancelling_a_running_job_asks_its_worker(vault: Vault) -> None:
    queue = JobQueue(vault, now=lambda: 1001.0)
    job_id = submit(vault)
    assert claim(vault.db, "worker-a", 10, 1000.0, vault.clock) is not None
    job = queue.cancel(job_id, "bob")
    assert job.status == "running" and job.cancel_requested and job.cancelled_by == "bob"
    assert queue.events(job_id)[-1].type == "cancel_requested"
    late = JobQueue(vault, now=lambda: 2000.0)  # the worker is gone: cancelled at once
    assert late.cancel(job_id, "bob").status == "cancelled"


def test_a_resumed_job_with_a_cancel_pending_is_cancelled(vault: Vault) -> None:
    job_id = submit(vault)
    assert claim(vault.db, "worker-a", 10, 1000.0, vault.clock) is not None
    JobQueue(vault, now=lambda: 1001.0).cancel(job_id, "bob")
    assert claim(vault.db, "worker-b", 10, 1020.0, vault.clock) is None
    assert JobQueue(vault).get(job_id).status == "cancelled"


def test_rows_from_before_the_queue_stay_valid(vault: Vault, clock: FakeClock) -> None:
    report = Ingestor(vault, provider_from_config(vault.config, "extractive")).run([DOC])
    queue = JobQueue(vault)
    [job] = queue.list()
    assert job.id == report.job_id and not job.queued and job.status == "done"
    assert job.payload == {"kind": "ingest", "targets": [DOC]}
    assert job.result is not None and job.result["totals"]["sources"] == {"ingested": 1}
    assert claim(vault.db, "w", 30, 1000.0, vault.clock) is None  # never picked up by a worker
    with pytest.raises(ConflictError):
        queue.cancel(job.id, "ann")


def test_queue_needs_a_vault(tmp_path: Path) -> None:
    from affidavit.errors import VaultError
    from affidavit.jobs import Worker

    with pytest.raises(VaultError, match="affidavit init"):
        Worker(tmp_path, "w")


def test_a_workers_reused_pid_is_not_its_holder(vault: Vault) -> None:
    """A queue worker's lease records when its process started, as a foreground run's does: a
    worker that died and whose pid the kernel gave to a later process (this one) is gone, so its
    job is requeued by the next look and resumed at once, not left running until the lease
    expires (before, the pid alone said "alive")."""
    import re

    from affidavit.jobs.lease import process_start

    job_id = submit(vault)
    lease = claim(vault.db, "worker-a", 3600, time.time(), vault.clock)
    assert lease is not None
    row = vault.db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    started = process_start(os.getpid())
    assert row["lease_pid"] == os.getpid() and f"started {started})" in row["lease_owner"]
    assert JobQueue(vault).get(job_id).status == "running"  # it is us, alive
    assert claim(vault.db, "worker-b", 3600, time.time(), vault.clock) is None
    other = re.sub(r"started \d+\)", f"started {int(str(started)) - 1})", row["lease_owner"])
    vault.db.execute("UPDATE jobs SET lease_owner = ? WHERE id = ?", (other, job_id))
    again = claim(vault.db, "worker-b", 3600, time.time(), vault.clock)  # the lease is young
    assert again is not None and (again.job_id, again.attempt) == (job_id, 2)
