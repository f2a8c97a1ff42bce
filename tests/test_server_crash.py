"""kill -9 the daemon while its ingest job is applying plans; restart it; nothing lost, nothing twice.

The deterministic version (a kill at each apply step of a worker) is in test_jobs_crash.py; this
one kills the real ``affidavit serve`` process at whatever point the job has reached after a few
plans were applied, as a crash would, and checks the end state against an uninterrupted ingest.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault
from tests.conftest import SAMPLES, SHARED_DATA, needs_shared_data
from tests.test_server_authz import private_dir, start_daemon

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="runs daemons as root"),
    pytest.mark.slow,
]


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


def _until(what: str, check: Any, deadline: float) -> Any:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _speeches(folder: Path, count: int) -> Path:
    """``count`` SOTU speeches as text files: an ingest long enough to span several batches of
    the door, so the daemon is killed after one batch applied and before the job ends."""
    folder.mkdir()
    with (SHARED_DATA / "corpus" / "sotu.jsonl").open() as lines:
        for n, line in zip(range(count), lines, strict=False):
            speech = json.loads(line)
            (folder / f"{speech['year']}-{n}.txt").write_text(speech["text"])
    return folder


@needs_shared_data
def test_a_daemon_killed_mid_ingest_finishes_the_job_once_after_restart() -> None:
    base = private_dir("afd-crash-")
    corpus = _speeches(base / "corpus", 16)
    reference, _ = init_vault(base / "reference")
    Ingestor(reference, ExtractiveProvider(), apply_now=True).run([str(corpus)], "trusted")
    reference.close()

    root = base / "alpha"
    init_vault(root)[0].close()
    first = start_daemon([root], base, workers=True, name="first")
    with first.unix() as client:
        response = client.post(
            "/v1/vaults/alpha/jobs",
            json={
                "kind": "ingest",
                "sources": [str(corpus)],
                "trust": "trusted",
                "yes": True,
            },
        )
        assert response.status_code in (200, 201, 202), response.text
        job = response.json()["id"]

    def applied() -> int:
        return len(_query(root, "SELECT id FROM plans WHERE status = 'applied'"))

    _until("a first applied batch", lambda: applied() >= 1, 120)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    (pid,) = _query(root, "SELECT lease_pid FROM jobs WHERE id = ?", job)[0]
    if pid:  # the job process notices its supervisor is gone and takes its group down
        _until("the orphaned job process to exit", lambda: _gone(int(pid)), 60)
    status = _query(root, "SELECT status FROM jobs WHERE id = ?", job)[0][0]
    assert status == "running"  # killed mid-job, not finished

    second = start_daemon([root], base, workers=True, name="second")
    try:
        _until(
            "the resumed job to finish",
            lambda: (
                _query(root, "SELECT status FROM jobs WHERE id = ?", job)[0][0]
                in ("done", "failed", "cancelled")
            ),
            180,
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
    with open_vault(base / "reference") as ref:
        expected = sorted(
            tuple(r) for r in ref.db.execute("SELECT id, page_slug, text FROM claims")
        )
        assert (
            len(plans)
            == ref.db.execute("SELECT count(*) FROM plans WHERE status = 'applied'").fetchone()[0]
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
