"""``serve --workers N``: several processes accept on one socket; each is the whole daemon.

Which worker accepts a connection is the kernel's choice, so the tests choose for it: every other
worker is stopped (SIGSTOP, until ``/proc`` says it is stopped) while the requests are sent, and
the request log names the process (``pid``) that answered. Each worker must then see the caller's
own UID and refuse whom the single daemon refuses; jobs run once; SIGTERM stops them all; a killed
worker is replaced; and workers die with their parent.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.test_server_authz import (
    NOBODY,
    ROOT,
    Daemon,
    as_user,
    make_alpha,
    private_dir,
    start_daemon,
)

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user"),
    pytest.mark.slow,
]

TERMINAL = {"done", "failed", "cancelled"}


def _until(what: str, check: Any, seconds: float = 600) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _events(daemon: Daemon, name: str) -> list[dict[str, Any]]:
    return [x for x in daemon.log_lines() if x.get("event") == name]


def _live(daemon: Daemon) -> dict[int, int]:
    """slot → pid of the ready workers that have not exited."""
    exited = {x["pid"] for x in _events(daemon, "worker_exited")}
    live = {x["slot"]: x["pid"] for x in _events(daemon, "worker_ready")}
    return {slot: pid for slot, pid in live.items() if pid not in exited}


def _workers(daemon: Daemon, count: int) -> dict[int, int]:
    """slot → pid of the live workers, once ``count`` of them are ready."""
    found: dict[int, int] = _until(
        f"{count} ready workers", lambda: (live := _live(daemon)) and len(live) == count and live
    )
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def _gone(pid: int) -> bool:
    return _state(pid) in ("gone", "Z")


def _write_locked(root: Path) -> bool:
    """Whether some process holds the vault database's write lock right now."""
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite", timeout=0)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.rollback()
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        db.close()


@contextmanager
def only(workers: dict[int, int], pid: int, root: Path | None = None) -> Iterator[None]:
    """Every worker but ``pid`` stopped: each new connection is accepted by ``pid``. With the
    vault's ``root``, never stopped while holding its database's write lock (the job worker's
    heartbeat or claim is a write transaction: a request then waited for a frozen lock and
    failed with 500, once at load 12); stopped again until they are not."""
    others = [p for p in workers.values() if p != pid]
    while True:
        for other in others:
            os.kill(other, signal.SIGSTOP)
        for other in others:
            _until(f"worker {other} to stop", lambda o=other: _state(o) == "T")
        if root is None or not _write_locked(root):
            break
        for other in others:
            os.kill(other, signal.SIGCONT)
        _until("the write lock to be released", lambda: not _write_locked(root))
    try:
        yield
    finally:
        for other in others:
            os.kill(other, signal.SIGCONT)


def _requests_by(daemon: Daemon, pid: int, seen: int, count: int) -> list[dict[str, Any]]:
    """The request log lines worker ``pid`` wrote after the first ``seen``, once there are
    ``count`` of them: a worker logs a request after its response is sent, so the line may
    still be on its way when the client has its answer."""

    def logged() -> list[dict[str, Any]] | None:
        got = [x for x in _events(daemon, "request")[seen:] if x["pid"] == pid]
        return got if len(got) >= count else None

    found: list[dict[str, Any]] = _until(f"{count} request lines from worker {pid}", logged)
    return found


@pytest.fixture(scope="module")
def alpha() -> Iterator[tuple[Path, dict[str, str]]]:
    base = private_dir("afd-workers-")
    root = base / "alpha"
    yield root, make_alpha(root)


def test_every_worker_sees_the_callers_uid_and_refuses_whom_one_daemon_refuses(
    alpha: tuple[Path, dict[str, str]],
) -> None:
    root, ids = alpha
    daemon = start_daemon([root], root.parent, "--workers", "2", name="uids")
    try:
        workers = _workers(daemon, 2)
        assert len(set(workers.values())) == 2 and daemon.proc.pid not in workers.values()
        prefix = "/v1/vaults/alpha"
        for pid in workers.values():
            seen = len(_events(daemon, "request"))
            with only(workers, pid):
                with daemon.unix() as client:  # the owner (root)
                    whoami = client.get("/v1/whoami").json()
                    search = client.get(f"{prefix}/search", params={"q": "union"})
                assert whoami["uid"] == 0 and whoami["vaults"][0]["role"] == "owner"
                assert search.status_code == 200
                other = as_user(
                    NOBODY,
                    daemon.socket,
                    [
                        ("GET", "/v1/whoami", None),
                        ("GET", f"{prefix}/search?q=union", None),
                        ("GET", f"{prefix}/pages/{ids['slug']}", None),
                        ("POST", f"{prefix}/plans", {"plan": "x"}),
                    ],
                )
                with daemon.tcp() as bare, daemon.tcp("afd_nosuch_token") as forged:
                    tcp = [
                        bare.get(f"{prefix}/search", params={"q": "union"}).status_code,
                        forged.get(f"{prefix}/search", params={"q": "union"}).status_code,
                    ]
            assert tcp == [401, 401]  # over TCP: no token, a forged one
            assert json.loads(other[0][1])["uid"] == NOBODY
            assert json.loads(other[0][1])["vaults"] == []
            assert [status for status, _ in other[1:]] == [403, 403, 403]
            answered = _requests_by(daemon, pid, seen, 8)
            assert [(x.get("uid"), x["status"]) for x in answered] == [
                (0, 200),
                (0, 200),
                (NOBODY, 200),
                (NOBODY, 403),
                (NOBODY, 403),
                (NOBODY, 403),
                (None, 401),
                (None, 401),
            ]
    finally:
        assert daemon.stop() == 0


def test_one_job_runs_once_and_sigterm_stops_every_worker(
    alpha: tuple[Path, dict[str, str]],
) -> None:
    root, _ = alpha
    daemon = start_daemon([root], root.parent, "--workers", "2", workers=True, name="jobs")
    stopped = False
    try:
        workers = _workers(daemon, 2)
        ready = _events(daemon, "worker_ready")
        assert [x["slot"] for x in ready if x["jobs"]] == [0]  # one process runs the jobs
        assert len(_events(daemon, "workers_started")) == 1
        prefix = "/v1/vaults/alpha"
        ids = []
        for pid in workers.values():  # submitted through each worker
            with only(workers, pid, root), daemon.unix() as client:
                response = client.post(f"{prefix}/jobs", json={"kind": "lint", "propose": False})
                assert response.status_code == 202, response.text
                ids.append(response.json()["id"])
        with daemon.unix() as client:

            def finished() -> list[dict[str, Any]] | None:
                got = [client.get(f"{prefix}/jobs/{i}").json() for i in ids]
                return got if all(j["status"] in TERMINAL for j in got) else None

            jobs = _until("the jobs to finish", finished, 120)
        assert [(j["status"], j["attempts"]) for j in jobs] == [("done", 1)] * len(ids)
        db = sqlite3.connect(f"file:{root / '.affidavit' / 'db.sqlite'}?mode=ro", uri=True)
        try:
            started = db.execute(
                "SELECT job_id, count(*) FROM job_events WHERE type = 'started' "
                f"AND job_id IN ({','.join('?' * len(ids))}) GROUP BY job_id",
                ids,
            ).fetchall()
        finally:
            db.close()
        assert sorted(started) == sorted((i, 1) for i in ids)

        assert daemon.stop() == 0
        stopped = True
        assert all(_gone(pid) for pid in workers.values())
        assert not daemon.socket.exists()
        exited = _events(daemon, "worker_exited")
        assert sorted((x["pid"], x["exit"], x["replaced"]) for x in exited) == sorted(
            (pid, 0, False) for pid in workers.values()
        )
        assert _events(daemon, "workers_stopped")[0]["still_running"] == []
        last = daemon.log_lines()[-1]
        assert last["event"] == "stopped" and last["pid"] == daemon.proc.pid
    finally:
        if not stopped:
            daemon.stop()


def test_a_killed_worker_is_replaced_in_its_slot(alpha: tuple[Path, dict[str, str]]) -> None:
    root, _ = alpha
    daemon = start_daemon([root], root.parent, "--workers", "2", name="replace")
    try:
        before = _workers(daemon, 2)
        os.kill(before[1], signal.SIGKILL)
        after = _until(
            "a replacement in slot 1",
            lambda: len(live := _live(daemon)) == 2 and live[1] != before[1] and live,
        )
        assert after[0] == before[0] and after[1] != before[1]
        (exit_event,) = _events(daemon, "worker_exited")
        assert (exit_event["pid"], exit_event["exit"], exit_event["replaced"]) == (
            before[1],
            -signal.SIGKILL,
            True,
        )
        seen = len(_events(daemon, "request"))
        with only(after, after[1]), daemon.unix() as client:
            assert client.get("/v1/whoami").json()["uid"] == 0
        assert [x["uid"] for x in _requests_by(daemon, after[1], seen, 1)] == [0]
    finally:
        assert daemon.stop() == 0
    assert not daemon.socket.exists()


def test_workers_die_with_a_killed_daemon_and_the_next_one_starts(
    alpha: tuple[Path, dict[str, str]],
) -> None:
    root, _ = alpha
    first = start_daemon([root], root.parent, "--workers", "2", name="killed")
    workers = _workers(first, 2)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    for pid in workers.values():
        _until(f"worker {pid} to die with its parent", lambda p=pid: _gone(p))
    second = start_daemon([root], root.parent, "--workers", "2", name="again")
    try:
        with second.unix() as client:
            assert client.get("/v1/whoami").status_code == 200
    finally:
        assert second.stop() == 0


def test_web_with_several_workers_is_refused_with_the_fix(tmp_path: Path) -> None:
    from affidavit.vault import init_vault

    init_vault(tmp_path / "v")[0].close()
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve", "--web"]
    args += ["--workers", "2", "--vault", str(tmp_path / "v"), "--socket", str(tmp_path / "s")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(args, capture_output=True, env=env, timeout=600, check=False)
    assert done.returncode != 0
    assert b"--workers 1 with --web" in done.stderr
    assert not (tmp_path / "s").exists()
