"""The job runner's test hook (affidavit.jobs.hold): inert unless its variables are set; when set,
the real runner stops at the named apply step, says so in a file, and waits there until it is
asked to stop or killed — what test_server_crash.py kills the daemon at."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from affidavit.errors import ConfigError
from affidavit.jobs import IngestPayload, JobQueue, Worker
from affidavit.jobs.hold import HOLD_AT_ENV, HOLD_FILE_ENV, chain, hold_from_env
from affidavit.jobs.lease import pid_alive
from affidavit.vault import init_vault, open_vault

from .conftest import SAMPLES

SPEECHES = [str(p) for p in sorted((SAMPLES / "sotu").glob("*.md"))]


def until(condition: object, what: str) -> None:
    """Wait for a state; the bound only stops a hung test."""
    assert callable(condition)
    deadline = time.monotonic() + 600
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after 600 s: a hang, not slowness")
        time.sleep(0.02)


def test_inert_without_its_variables() -> None:
    assert hold_from_env({}, threading.Event()) is None
    assert hold_from_env({"AFFIDAVIT_VAULT": "/x", "HOME": "/root"}, threading.Event()) is None
    assert chain(None, None) is None


@pytest.mark.parametrize(
    ("at", "file", "names"),
    [
        ("done", "/tmp/held", HOLD_AT_ENV),  # no count
        ("done:0", "/tmp/held", HOLD_AT_ENV),
        ("nowhere:1", "/tmp/held", HOLD_AT_ENV),
        ("done:1", "", HOLD_FILE_ENV),  # half set: never silently unheld
        ("", "/tmp/held", HOLD_AT_ENV),
        ("done:1", "relative/held", HOLD_FILE_ENV),
    ],
)
def test_a_malformed_hold_is_refused_naming_the_variable(at: str, file: str, names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        hold_from_env({HOLD_AT_ENV: at, HOLD_FILE_ENV: file}, threading.Event())


def test_the_runner_refuses_to_start_with_a_malformed_hold(tmp_path: Path) -> None:
    env = {**os.environ, HOLD_AT_ENV: "later:1", HOLD_FILE_ENV: str(tmp_path / "held")}
    done = subprocess.run(
        [sys.executable, "-m", "affidavit.jobs.runner", "--standby"],
        input=b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert HOLD_AT_ENV.encode() in done.stderr
    assert not (tmp_path / "held").exists()


def test_the_nth_step_holds_until_stop(tmp_path: Path) -> None:
    stop = threading.Event()
    held = tmp_path / "held"
    step = hold_from_env({HOLD_AT_ENV: "renamed:2", HOLD_FILE_ENV: str(held)}, stop)
    assert step is not None
    for name in ("admitted", "renamed", "done", "admitted"):
        step(name)  # not the second "renamed": returns at once
    assert not held.exists()
    thread = threading.Thread(target=step, args=("renamed",))
    thread.start()
    until(held.exists, "hold file")
    assert held.read_text() == str(os.getpid())
    assert thread.is_alive()  # held: it does not return on its own
    stop.set()
    thread.join(60)
    assert not thread.is_alive()
    assert [p.name for p in tmp_path.iterdir()] == ["held"]  # no partial file left


@pytest.mark.slow
def test_a_worker_s_job_is_held_after_its_first_batch_then_stops_at_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real worker and the real runner: held after the first batch (one target of
    three applied), the job stays running; stopping the worker requeues it (the hold returns
    on SIGTERM and the job stops at its next checkpoint); unheld, it finishes."""
    root = tmp_path / "vault"
    vault, _ = init_vault(root)
    job = JobQueue(vault).submit(IngestPayload(sources=SPEECHES, trust="trusted", yes=True), "t")
    vault.close()
    held = tmp_path / "held"
    monkeypatch.setenv(HOLD_AT_ENV, "done:1")
    monkeypatch.setenv(HOLD_FILE_ENV, str(held))
    stop = threading.Event()
    with Worker(root, "holder", grace_seconds=60) as worker:
        thread = threading.Thread(target=worker.run_forever, args=(stop, 0.05))
        thread.start()
        try:
            until(held.exists, "the job held after its first batch")
            job_pid = int(held.read_text())
            assert pid_alive(job_pid)
            with open_vault(root) as vault:
                assert JobQueue(vault).get(job.id).status == "running"
                (applied,) = vault.db.execute(
                    "SELECT count(*) FROM plans WHERE status = 'applied'"
                ).fetchone()
                sources = vault.db.execute("SELECT count(*) FROM sources").fetchone()[0]
            assert applied >= 1 and sources == 1  # the first target only: held, not finished
        finally:
            stop.set()
            thread.join(120)
        assert not thread.is_alive()
    assert not pid_alive(job_pid)
    with open_vault(root) as vault:
        queue = JobQueue(vault)
        after = queue.get(job.id)
        assert (after.status, after.attempts) == ("queued", 0)  # shutdown gives the attempt back
        assert "shut down" in queue.events(job.id)[-1].data["reason"]
    monkeypatch.delenv(HOLD_AT_ENV)
    monkeypatch.delenv(HOLD_FILE_ENV)
    with Worker(root, "finisher") as worker:
        finished = worker.run_once()
    assert finished is not None and (finished.status, finished.error) == ("done", "")
