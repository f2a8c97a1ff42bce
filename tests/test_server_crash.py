"""kill -9 the daemon while its ingest job is held after a batch; restart it; nothing lost or twice.

The exhaustive version (a kill at each apply step of a worker) is in test_jobs_crash.py; this one
kills the real ``affidavit serve`` process, as a crash would, and checks the end state against an
uninterrupted ingest. The kill lands at a known point every time, on any machine: the daemon is
started with the job runner's test hook (:mod:`affidavit.jobs.hold`), so its job's process stops
at the named apply step and says so in a file; the test waits for that file and kills the daemon
while the job is held there — after a batch of plans was applied, before the job ends.
"""

from __future__ import annotations

import difflib
import os
import re
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.ingest.pipeline import Ingestor
from affidavit.jobs.hold import HOLD_AT_ENV, HOLD_FILE_ENV
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault
from tests.conftest import SAMPLES
from tests.test_server_authz import Daemon, private_dir, start_daemon

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="runs daemons as root"),
    pytest.mark.slow,
    # three ingests and three daemons of fixed work took 150 s on 2 cores at load 12: the
    # suite's default (1200 s) is the hang guard (each wait below has its own)
]

# One target per speech: the ingest closes its batch before each target, so the job applies at
# least three batches, whatever the machine's speed (a batch also closes after 2 s).
SPEECHES = [str(p) for p in sorted((SAMPLES / "sotu").glob("*.md"))]


def _query(root: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"file:{root / '.affidavit' / 'db.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        return list(db.execute(sql, args))
    finally:
        db.close()


_STAMP = re.compile(rb"^(created|updated): .*$", re.M)


def _wiki(root: Path) -> dict[str, bytes]:
    """The rendered pages and context, without the apply times (the pages' created/updated
    stamps; log.md, which dates every apply, is left out)."""
    wiki = root / "wiki"
    return {
        str(p.relative_to(wiki)): _STAMP.sub(rb"\1: <time>", p.read_bytes())
        for p in sorted(wiki.rglob("*.md"))
        if p.name != "log.md"
    }


def _until(what: str, check: Callable[[], Any], daemon: Daemon | None = None) -> Any:
    """Wait for ``check()`` to be true. The bound only guards against a hang (a condition that
    never comes): nothing here depends on how fast the machine is."""
    end = time.monotonic() + 600
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        if daemon is not None and daemon.proc.poll() is not None:
            raise AssertionError(f"the daemon exited waiting for {what}: {daemon.log.read_text()}")
        time.sleep(0.05)
    log = daemon.log.read_text() if daemon is not None else ""
    raise AssertionError(f"no {what} after 600 s: a hang, not slowness\n{log}")


def _group_gone(pgid: int) -> bool:
    """Whether every process of group ``pgid`` has exited (zombies count as exited)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[-1].split()
        except OSError:  # exited while we looked
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return False
    return True


def _status(root: Path, job: str) -> str:
    return str(_query(root, "SELECT status FROM jobs WHERE id = ?", job)[0][0])


@pytest.mark.parametrize(
    "hold_at",
    [
        "done:1",  # the first batch committed everywhere; two targets still to go
        "db_commit:2",  # the second batch committed in the database only: rolled forward
    ],
)
def test_a_daemon_killed_mid_ingest_finishes_the_job_once_after_restart(
    hold_at: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = private_dir("afd-crash-")
    reference, _ = init_vault(base / "reference")
    Ingestor(reference, ExtractiveProvider(), apply_now=True).run(SPEECHES, "trusted")
    reference.close()
    want_plans = _query(base / "reference", "SELECT count(*) FROM plans WHERE status = 'applied'")

    root = base / "alpha"
    init_vault(root)[0].close()
    held = base / "held"
    monkeypatch.setenv(HOLD_AT_ENV, hold_at)
    monkeypatch.setenv(HOLD_FILE_ENV, str(held))
    first = start_daemon([root], base, workers=True, name="first")
    monkeypatch.delenv(HOLD_AT_ENV)
    monkeypatch.delenv(HOLD_FILE_ENV)
    try:
        with first.unix() as client:
            response = client.post(
                "/v1/vaults/alpha/jobs",
                json={"kind": "ingest", "sources": SPEECHES, "trust": "trusted", "yes": True},
            )
            assert response.status_code in (200, 201, 202), response.text
            job = response.json()["id"]
        _until(f"job process held at {hold_at}", held.exists, first)
        job_pid = int(held.read_text())
        applied = _query(root, "SELECT count(*) FROM plans WHERE status = 'applied'")
        assert 1 <= applied[0][0] < want_plans[0][0]  # held after a batch, before the end
        assert _status(root, job) == "running"
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait()
    # the job's process sees its worker gone (its stdin closes) and takes its group down
    _until("the held job's processes to exit", lambda: _group_gone(job_pid))
    assert _status(root, job) == "running"  # killed mid-job, not finished

    second = start_daemon([root], base, workers=True, name="second")
    try:
        _until(
            "the resumed job to finish",
            lambda: _status(root, job) in ("done", "failed", "cancelled"),
            second,
        )
    finally:
        assert second.stop() == 0
    status, attempts, error = _query(
        root, "SELECT status, attempts, error FROM jobs WHERE id = ?", job
    )[0]
    assert (status, attempts) == ("done", 2), error

    with open_vault(root) as vault:
        assert run_doctor(vault).clean
        plans = [r[0] for r in vault.db.execute("SELECT id FROM plans WHERE status = 'applied'")]
        audit = [
            r[0] for r in vault.db.execute("SELECT plan_id FROM audit WHERE action = 'applied'")
        ]
        trailers = vault.git.run("log", "--format=%(trailers:key=Affidavit-Plan,valueonly)")
        committed = [line for line in trailers.split() if line]
        assert sorted(audit) == sorted(plans) == sorted(committed)  # each plan applied once
        claims = sorted(
            tuple(r) for r in vault.db.execute("SELECT id, page_slug, text FROM claims")
        )
    assert len(plans) == want_plans[0][0]
    with open_vault(base / "reference") as ref:
        expected = sorted(
            tuple(r) for r in ref.db.execute("SELECT id, page_slug, text FROM claims")
        )
    assert claims == expected
    got, want = _wiki(root), _wiki(base / "reference")
    assert sorted(got) == sorted(want)
    for name in sorted(want):
        diff = difflib.unified_diff(
            want[name].decode().splitlines(), got[name].decode().splitlines(), lineterm="", n=1
        )
        assert got[name] == want[name], f"{name} differs:\n" + "\n".join(list(diff)[:20])


def test_a_resumed_job_clears_the_git_lock_its_killed_attempt_left(tmp_path: Path) -> None:
    """The race behind the crash test's rare ``failed``: the daemon's job process is killed with
    its whole group, so a git it was running dies mid-commit and leaves ``.git/index.lock``.
    When that commit was not a plan's (a source's, which has no journal), opening the vault finds
    nothing to recover and the lock stays; the resumed attempt's first commit then failed and
    the job with it. The job process clears it once it holds the vault's job lock (the previous
    attempt's processes are gone) and the writer lock (no other writer runs git)."""
    from affidavit.jobs.queue import JobQueue
    from affidavit.jobs.worker import Worker

    root = tmp_path / "vault"
    init_vault(root)[0].close()
    with open_vault(root) as vault:
        job = JobQueue(vault).submit(
            {"kind": "ingest", "sources": [str(SAMPLES / "sotu")], "trust": "trusted", "yes": True},
            "tester",
        )
    (root / ".git" / "index.lock").write_bytes(b"")  # as a git killed mid-commit leaves it
    with Worker(root, "resumer") as worker:
        finished = worker.run_once()
    assert finished is not None and finished.id == job.id
    assert (finished.status, finished.error) == ("done", "")
    assert not (root / ".git" / "index.lock").exists()
    with open_vault(root) as vault:
        assert run_doctor(vault).clean
