"""The CLI's own commands against a PostgreSQL database that doesn't answer (issue 26): `inbox`,
`lint`, `ask`, `findings`, `mirror`, `team` fail at once with one error naming the fix (is the
server up, is the URL right), exit 1 as the CLI's other errors, no traceback, the password
masked — never after the pool's minute; a command whose database stops answering mid-way
(`chat`) says so within seconds; `worker` waits a database out with a backoff it logs, and
runs jobs once it is back. A database that answers and refuses (a wrong name) is not waited
out: waiting won't fix it. The server is stopped as in a crash on a cluster of this module's
own (as tests/test_pg_serve_down.py)."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import pg_cluster
from .conftest import ROOT
from .test_pg_serve_cli import SECRET, cli, with_password

pytestmark = pytest.mark.xdist_group("postgres")

BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long.\n"
BOUND = 40
"""Seconds any of these commands may take against a database down: well under the pool's
minute, which they waited before (a bound, not a measure: bench/ measures)."""


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A cluster of its own with vault ``team`` (one source, applied)."""
    try:
        cluster = pg_cluster.private("clidown")
    except pg_cluster.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        url = with_password(cluster.create_database("clidown"))
        env = {"AFFIDAVIT_DATABASE": url}
        me = pwd.getpwuid(os.geteuid()).pw_name
        assert cli("team", "create", "team", "--owner", me, env=env).returncode == 0
        yield {"cluster": cluster, "url": url, "env": env, "tmp": tmp_path_factory.mktemp("c")}
    finally:
        if not cluster.running:
            cluster.running = False
        cluster.stop()


def bounded(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    return subprocess.run(
        [sys.executable, "-c", "from affidavit.cli import main; main()", *args],
        capture_output=True, text=True, env=full, timeout=BOUND, input=stdin,
    )  # fmt: skip


def test_each_command_against_a_stopped_database_fails_at_once_with_the_fix(
    own: dict[str, Any],
) -> None:
    cluster, env, tmp = own["cluster"], own["env"], own["tmp"]
    commands = {
        "inbox": ["inbox", "--vault", "team"],
        "lint": ["lint", "--vault", "team"],
        "ask": ["ask", "How long is the bridge?", "--vault", "team"],
        "findings": ["findings", "--vault", "team"],
        "jobs": ["jobs", "--vault", "team"],
        "mirror": ["mirror", "--vault", "team", str(tmp / "mirror")],
        "mirror-check": ["mirror", "--vault", "team", str(tmp / "mirror"), "--check"],
        "team": ["team", "token", "team", "--role", "read"],
    }
    cluster.stop_immediate()
    try:
        for name, argv in commands.items():
            run = bounded(*argv, env=env)
            out = run.stdout + run.stderr
            assert run.returncode == 1, (name, out)
            assert "Error: can't connect to the database postgresql://postgres:***@" in out, name
            assert "Is the PostgreSQL server up" in out and "the URL's host and port" in out, name
            assert "Traceback" not in out and SECRET not in out, (name, out)
            assert len(run.stderr.strip().splitlines()) == 1, (name, out)  # one error line
    finally:
        cluster.restart()
    assert not (tmp / "mirror" / "wiki").exists()  # nothing was written


def test_a_database_that_answers_and_refuses_is_not_taken_for_one_down(
    own: dict[str, Any],
) -> None:
    """The attacker's side of the classification: a wrong database name (the server answers) is
    said as such, with the fix for a URL, not as a server to start — and a worker exits at once
    instead of waiting for it for ever."""
    wrong = own["url"].replace("/clidown_", "/nosuchdb_", 1)
    assert wrong != own["url"]
    run = bounded("inbox", "--vault", "team", env={"AFFIDAVIT_DATABASE": wrong})
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "does not exist" in out, out
    assert "Check the URL's user and database name" in out and "server up" not in out
    assert SECRET not in out and "Traceback" not in out
    worker = bounded("worker", "--vault", "team", "--poll", "0.1",
                     env={"AFFIDAVIT_DATABASE": wrong})  # fmt: skip
    assert worker.returncode == 1 and "Check the URL's user and database name" in worker.stderr
    assert "database_error" not in worker.stderr and SECRET not in worker.stderr


def test_a_database_gone_mid_command_is_said_in_seconds(own: dict[str, Any]) -> None:
    """`chat` holds its pool open between questions: the database stopped after the first
    answer, the second question ends the command with the error and the fix, not after the
    pool's minute."""
    cluster, env = own["cluster"], own["env"]
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    chat = subprocess.Popen(
        [sys.executable, "-c", "from affidavit.cli import main; main()", "chat", "--vault",
         "team", "--json"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=full,
    )  # fmt: skip
    try:
        assert chat.stdin is not None and chat.stdout is not None
        chat.stdin.write("How long is the bridge?\n")
        chat.stdin.flush()
        first = json.loads(chat.stdout.readline())  # answered: the pool holds a connection
        assert first["turn"] == 1
        cluster.stop_immediate()
        try:
            _out, err = chat.communicate("When did it open?\n", timeout=BOUND)
        finally:
            cluster.restart()
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
    assert chat.returncode == 1, err
    assert "stopped answering" in err and "Is the PostgreSQL server up" in err, err
    assert "Traceback" not in err and SECRET not in err


def events(log: Path) -> list[dict[str, Any]]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if line.startswith("{")]


def until(check: Any, what: str, seconds: float = 300) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_worker_waits_a_database_out_with_a_backoff_and_runs_jobs_once_it_is_back(
    own: dict[str, Any],
) -> None:
    cluster, env, tmp = own["cluster"], own["env"], own["tmp"]
    note = tmp / "bridge.md"
    note.write_text(BRIDGE, encoding="utf-8")
    log = tmp / "worker.log"
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    cluster.stop_immediate()
    restarted = False
    with log.open("wb") as sink:
        worker = subprocess.Popen(
            [sys.executable, "-c", "from affidavit.cli import main; main()", "worker",
             "--vault", "team", "--poll", "0.2", "--lease", "5"],
            stdout=subprocess.DEVNULL, stderr=sink, env=full,
        )  # fmt: skip
    try:
        # down when it starts: it logs each try with the wait before the next, doubling
        waits = until(lambda: [e for e in events(log) if e["event"] == "database_error"][3:],
                      "four tries of the database")  # fmt: skip
        tries = [e for e in events(log) if e["event"] == "database_error"]
        assert worker.poll() is None
        assert [e["retry_in"] for e in tries[:4]] == [0.2, 0.4, 0.8, 1.6], waits
        assert [e["failures"] for e in tries[:4]] == [1, 2, 3, 4]
        assert all("Is the PostgreSQL server up" in e["error"] for e in tries)
        assert all(SECRET not in json.dumps(e) for e in tries)
        cluster.restart()
        restarted = True
        until(lambda: [e for e in events(log) if e["event"] == "ready"], "the worker ready", 120)
        added = cli("team", "add", "team", str(note), "--trust", "trusted", "--ingest", "--json",
                    env=env)  # fmt: skip
        assert added.returncode == 0, added.stderr
        until(lambda: [e for e in events(log) if e["event"] == "done"], "the job done")
        # down while it idles: logged with its backoff, the worker lives on, and runs the next
        seen = len(events(log))
        cluster.stop_immediate()
        restarted = False
        until(lambda: [e for e in events(log)[seen:] if e["event"] == "database_error"][1:],
              "two failed polls")  # fmt: skip
        later = [e for e in events(log)[seen:] if e["event"] == "database_error"]
        assert [e["failures"] for e in later[:2]] == [1, 2]
        assert later[1]["retry_in"] == 2 * later[0]["retry_in"]
        assert worker.poll() is None
        cluster.restart()
        restarted = True
        other = tmp / "tower.md"
        other.write_text("The tower is 80 metres tall.\n", encoding="utf-8")
        again = cli("team", "add", "team", str(other), "--trust", "trusted", "--ingest",
                    "--json", env=env)  # fmt: skip
        assert again.returncode == 0, again.stderr
        until(lambda: len([e for e in events(log) if e["event"] == "done"]) == 2, "the next job")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=120) == 0
    finally:
        if not restarted:
            cluster.restart()
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    text = log.read_text()
    assert "Traceback" not in text and SECRET not in text
    assert all(line.startswith("{") for line in text.splitlines()), text  # one JSON line each


def test_a_worker_stopped_while_it_waits_for_the_database_exits_cleanly(
    own: dict[str, Any],
) -> None:
    cluster, env, tmp = own["cluster"], own["env"], own["tmp"]
    log = tmp / "stopped.log"
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    cluster.stop_immediate()
    try:
        with log.open("wb") as sink:
            worker = subprocess.Popen(
                [sys.executable, "-c", "from affidavit.cli import main; main()", "worker",
                 "--drain", "--poll", "0.5"],
                stdout=subprocess.DEVNULL, stderr=sink, env=full,
            )  # fmt: skip
        until(lambda: [e for e in events(log) if e["event"] == "database_error"], "a try", 120)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=BOUND) == 0
    finally:
        cluster.restart()
    assert not [e for e in events(log) if e["event"] == "ready"]


def test_what_is_waited_out_and_what_is_not() -> None:
    """libpq gives a failed connection no SQLSTATE: the server's ``FATAL:`` text tells a server
    that answered (a wrong name or password: refused, said with the URL's fix) from one that
    didn't, or is starting, stopping or full (waited out)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    from affidavit.storage.pg_connect import full, unanswered

    def failed(text: str) -> psycopg.OperationalError:
        return psycopg.OperationalError(f'connection failed: connection to server at "db" {text}')

    waited = [
        PoolTimeout("couldn't get a connection after 3.00 sec"),
        failed("failed: Connection refused Is the server running on that host?"),
        failed("failed: No such file or directory"),
        failed("failed: timeout expired"),
        failed("failed: FATAL:  the database system is starting up"),
        failed("failed: FATAL:  the database system is shutting down"),
        failed("failed: FATAL:  sorry, too many clients already"),
        psycopg.InterfaceError("the connection is closed"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
    ]
    refused = [
        failed('failed: FATAL:  database "wiki" does not exist'),
        failed('failed: FATAL:  password authentication failed for user "wiki"'),
        failed('failed: FATAL:  role "wiki" does not exist'),
        failed('failed: FATAL:  no pg_hba.conf entry for host "10.0.0.2"'),
        psycopg.errors.InsufficientPrivilege("permission denied for schema v_team"),
        ValueError("not a database error"),
    ]
    assert [unanswered(e) for e in waited] == [True] * len(waited)
    assert [unanswered(e) for e in refused] == [False] * len(refused)
    assert full(failed("failed: FATAL:  sorry, too many clients already"))
    assert not full(failed("failed: Connection refused")) and not full(refused[0])
