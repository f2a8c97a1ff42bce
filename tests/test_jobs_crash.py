"""Exactly once (SPEC W6, issue 6): kill -9 the worker (the daemon) and its job while an ingest
job is applying a plan; a fresh worker resumes the job; the wiki equals an uninterrupted run's,
no plan is proposed or applied twice, and doctor is clean."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.evidence import spans
from affidavit.jobs import IngestPayload, JobQueue
from affidavit.vault import init_vault, open_vault

from .conftest import SAMPLES, FakeClock
from .test_jobs_support import SUPPORT_RUNNER

WORKER = """
import json, sys
from pathlib import Path
from affidavit.jobs import Worker
worker = Worker(Path(sys.argv[1]), sys.argv[2], runner=json.loads(sys.argv[3]))
job = worker.run_once()
print(job.status if job else "none")
"""
FIXED = ("--fixed-clock",)
DOCS = ("1790-washington.md", "1941-roosevelt.md")


def run_worker(root: Path, name: str, *runner_args: str) -> subprocess.CompletedProcess[str]:
    runner = [*SUPPORT_RUNNER, *FIXED, *runner_args]
    return subprocess.run(
        [sys.executable, "-c", WORKER, str(root), name, json.dumps(runner)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault with one queued ingest job (two speeches, trusted, --yes)."""
    base = tmp_path_factory.mktemp("jobs-crash")
    docs = base / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(SAMPLES / "sotu" / name, docs / name)
    root = base / "template"
    vault, _ = init_vault(root, clock=FakeClock())
    JobQueue(vault).submit(IngestPayload(sources=[str(docs)], trust="trusted", yes=True), "ann")
    vault.close()
    return root


def state(root: Path) -> dict[str, Any]:
    """Open (and so recover) the vault; the wiki's bytes and the knowledge in the database, minus
    what is random by design (plan ids follow from fresh nonces)."""
    vault = open_vault(root)
    try:
        report = run_doctor(vault)
        assert report.clean, report.findings
        assert list(vault.journal_dir.iterdir()) == []
        files = {p.name: p.read_bytes() for p in sorted(vault.wiki_dir.glob("*.md"))}
        assert vault.git.is_clean(["wiki"])
    finally:
        vault.close()
    trailers = subprocess.run(
        ["git", "log", "--format=%B"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.count("Affidavit-Plan:")
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    spans.register(db, root)  # the evidence view needs its function (m021)
    try:
        tables = {
            "claims": "SELECT id, page_slug, section, position, text, status, trust, created_at "
            "FROM claims ORDER BY id",
            "evidence": 'SELECT claim_id, idx, source_id, quote, start, "end" FROM evidence '
            "ORDER BY claim_id, idx",
            "pages": "SELECT slug, title, summary, category, created_at, updated_at FROM pages "
            "ORDER BY slug",
            "links": "SELECT src, dst FROM links ORDER BY src, dst",
            "plans": "SELECT status, count(*) FROM plans GROUP BY status ORDER BY status",
            "applied": "SELECT count(*), count(DISTINCT plan_id) FROM audit "
            "WHERE action = 'applied'",
            "chunks": "SELECT source_id, start, outcome FROM ingested_chunks ORDER BY 1, 2",
        }
        rows = {name: db.execute(sql).fetchall() for name, sql in tables.items()}
    finally:
        db.close()
    return {"files": files, "trailers": trailers, **rows}


@pytest.fixture(scope="module")
def uninterrupted(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("jobs-crash-clean") / "vault"
    shutil.copytree(template, root)
    done = run_worker(root, "clean")
    assert (done.returncode, done.stdout.strip()) == (0, "done"), done.stderr
    after = state(root)
    assert after["applied"][0][0] == after["applied"][0][1] == after["trailers"] >= 4
    assert after["plans"] == [("applied", after["trailers"])]
    return after


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["db_written", "journal", "db_commit", "renamed", "done"])
def test_killed_mid_apply_the_job_resumes_and_applies_each_plan_once(
    template: Path, uninterrupted: dict[str, Any], tmp_path: Path, kill_at: str
) -> None:
    root = tmp_path / "vault"
    shutil.copytree(template, root)
    # during the ingest's batch (its chunks' plans are applied together: one batch here)
    crashed = run_worker(root, "doomed", "--kill-at", f"{kill_at}:1")
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    vault = open_vault(root)
    try:
        queue = JobQueue(vault)
        [job] = queue.list()  # the look finds its worker dead: back in the queue, not "running"
        assert (job.status, job.attempts, job.lease_owner) == ("queued", 1, None)
        requeued = queue.events(job.id)[-1]
        assert requeued.type == "requeued" and "doomed" in requeued.data["reason"]
    finally:
        vault.close()
    resumed = run_worker(root, "next")
    assert (resumed.returncode, resumed.stdout.strip()) == (0, "done"), resumed.stderr
    assert state(root) == uninterrupted
    vault = open_vault(root)
    try:
        queue = JobQueue(vault)
        job = queue.get(job.id)
        assert job.status == "done" and job.attempts == 2
        assert job.result is not None
        assert job.result["job_chunks"] == {"applied": len(uninterrupted["chunks"])}
        started = [e.data for e in queue.events(job.id) if e.type == "started"]
        assert [(s["worker"], s["resumed"]) for s in started] == [
            ("doomed", False),
            ("next", True),
        ]
    finally:
        vault.close()
