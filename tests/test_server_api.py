"""The daemon's API on a real server: bad input, body limits, events, the CLI's front door, ops.

- schemathesis generates valid and invalid requests for every operation of the OpenAPI document:
  no 500s, and the wiki on disk still equals what the database renders (no write outside the door);
- bodies over the limit are refused with 413 from their Content-Length, before a byte is read;
- job events stream as server-sent events and resume with Last-Event-ID;
- two daemons on one vault never run two of its jobs at once;
- the CLI talks to the daemon when one serves the vault, and prints what it prints in-process;
- ``serve --check`` and the bind rules.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.service import tokens as token_store
from affidavit.store.render import expected_files
from affidavit.vault import init_vault, open_vault
from tests.test_server_authz import (
    ROOT,
    Daemon,
    fingerprint,
    free_port,
    make_alpha,
    private_dir,
    start_daemon,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="runs daemons as root")
TERMINAL = {"done", "failed", "cancelled"}


@pytest.fixture(scope="module")
def alpha() -> Iterator[tuple[Path, Daemon, str]]:
    base = private_dir("afd-api-")
    root = base / "alpha"
    make_alpha(root)
    with open_vault(root) as vault:
        _, token = token_store.create_token(
            vault.db, vault.clock, "approve", timedelta(days=1), "fuzz", "root"
        )
    daemon = start_daemon([root], base)
    try:
        yield root, daemon, token
    finally:
        assert daemon.stop() == 0


# its fixed work (8 cases a mode and route) took > 120 s at load 11: the suite's default (1200 s) is
# the hang guard
def test_fuzzing_the_openapi_document_finds_no_server_errors(
    alpha: tuple[Path, Daemon, str],
) -> None:
    import schemathesis
    from schemathesis.generation.modes import GenerationMode

    root, daemon, token = alpha
    base, auth = f"http://127.0.0.1:{daemon.port}", {"Authorization": f"Bearer {token}"}
    with daemon.tcp(token) as client:
        document = client.get("/openapi.json").json()
        schema = schemathesis.openapi.from_dict(document)
        failures: list[str] = []
        for result in schema.get_all_operations():
            operation = result.ok()
            fixed = {"vault": "alpha"} if "{vault}" in operation.path else None
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                strategy = operation.as_strategy(mode, path_parameters=fixed)

                @settings(
                    max_examples=8,
                    deadline=None,
                    database=None,
                    suppress_health_check=list(HealthCheck),
                )
                @given(case=strategy)
                def check(case: Any) -> None:
                    response = case.call(base_url=base, headers=auth)
                    text = response.content.decode("utf-8", "replace")
                    if response.status_code >= 500:
                        failures.append(
                            f"{case.method} {case.formatted_path} {case.query} "
                            f"{case.body!r:.200} -> {response.status_code} {text[:300]}"
                        )
                    elif response.status_code >= 400:
                        assert set(json.loads(text)) == {"error"}, text

                try:
                    check()
                except Unsatisfiable:  # nothing invalid to send (e.g. no parameters at all)
                    assert mode is GenerationMode.NEGATIVE
    assert not failures, "\n".join(failures[:5])
    with open_vault(root) as vault:
        on_disk = {
            str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted((root / "wiki").rglob("*.md"))
        }
        assert on_disk == {k: v for k, v in expected_files(vault.db).items() if k in on_disk}
        assert set(expected_files(vault.db)) == set(on_disk)
        assert run_doctor(vault).clean


def _raw(daemon: Daemon, head: bytes) -> bytes:
    """Send raw bytes on the Unix socket and read the response."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(daemon.socket))
        sock.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_oversized_bodies_are_refused_before_they_are_read(
    alpha: tuple[Path, Daemon, str],
) -> None:
    root, daemon, _ = alpha
    before = fingerprint(root)
    # 50 MB announced, not one byte sent: the answer comes anyway, so nothing was read
    reply = _raw(
        daemon,
        b"POST /v1/vaults/alpha/plans HTTP/1.1\r\nHost: affidavit\r\n"
        b"Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n",
    )
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b'"PayloadTooLarge"' in reply
    # no Content-Length (chunked): counted as it arrives and refused past the limit
    with daemon.unix() as client:

        def chunks() -> Iterator[bytes]:
            yield b'{"plan": {"nonce": "'
            for _ in range(200):  # 2,000,025 bytes: one chunk past server.max_body_bytes
                yield b"x" * 10_000
            yield b'"}}'

        response = client.post(
            "/v1/vaults/alpha/plans",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 413, response.text
        assert response.json()["error"]["type"] == "PayloadTooLarge"
        # under the limit, the same route answers normally (a schema error here)
        small = client.post("/v1/vaults/alpha/plans", json={"plan": {"nonce": "x"}})
        assert small.status_code == 422 and small.json()["error"]["type"] == "PlanValidationError"
    assert fingerprint(root) == before


def _events(
    client: httpx.Client, path: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Read a whole event stream (it ends after the job's last event)."""
    out: list[dict[str, Any]] = []
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        current: dict[str, Any] = {}
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if current:
                    out.append(current)
                current = {}
                continue
            key, _, value = line.partition(": ")
            current[key] = json.loads(value) if key == "data" else value
    return out


def _wait_terminal(client: httpx.Client, prefix: str, ids: list[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        states = [client.get(f"{prefix}/jobs/{i}").json()["status"] for i in ids]
        if all(s in TERMINAL for s in states):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"jobs did not finish: {states}")
        time.sleep(0.2)


def test_two_daemons_run_one_job_at_a_time_and_stream_events(tmp_path: Path) -> None:
    base = private_dir("afd-jobs-")
    root = base / "gamma"
    make_alpha(root)
    first = start_daemon([root], base, workers=True, name="one")
    second = start_daemon([root], base, workers=True, name="two")
    prefix = "/v1/vaults/gamma"
    try:
        with first.unix() as one, second.unix() as two:
            ids = []
            for n in range(6):
                client = one if n % 2 else two
                response = client.post(f"{prefix}/jobs", json={"kind": "lint", "propose": False})
                assert response.status_code == 202, response.text
                ids.append(response.json()["id"])
            stream = _events(one, f"{prefix}/jobs/{ids[0]}/events")
            _wait_terminal(one, prefix, ids, 120)
            # the stream: increasing ids, from submitted to a terminal event, then it ends
            seqs = [int(e["id"]) for e in stream]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
            assert stream[0]["event"] == "submitted" and stream[-1]["event"] in TERMINAL
            assert all(e["data"]["job_id"] == ids[0] for e in stream)
            resumed = _events(
                two, f"{prefix}/jobs/{ids[0]}/events", headers={"Last-Event-ID": str(seqs[0])}
            )
            assert [int(e["id"]) for e in resumed] == seqs[1:]
            past = {"Last-Event-ID": "9" * 20}  # past SQLite's INTEGER: nothing after it, no 500
            assert _events(two, f"{prefix}/jobs/{ids[0]}/events", headers=past) == []
        with open_vault(root) as vault:
            rows = vault.db.execute(
                "SELECT job_id, type, data FROM job_events ORDER BY seq"
            ).fetchall()
        running: set[str] = set()
        workers: set[str] = set()
        for job_id, kind, data in rows:
            if kind == "started":  # a retry of the same job may start again without a stop
                running.discard(job_id)
                assert not running, f"{job_id} started while {running} ran: {rows}"
                running.add(job_id)
                workers.add(json.loads(data).get("worker", ""))
            elif kind in TERMINAL or kind == "requeued":
                running.discard(job_id)
        assert len([r for r in rows if r[1] == "started"]) >= len(ids)
    finally:
        assert first.stop() == 0
        assert second.stop() == 0
    for daemon in (first, second):  # SIGTERM: the worker stopped, the socket is gone
        events = [x.get("event") for x in daemon.log_lines()]
        assert "workers_stopped" in events and events[-1] == "stopped"
        stopped = [x for x in daemon.log_lines() if x.get("event") == "workers_stopped"]
        assert stopped[0]["still_running"] == [] and not daemon.socket.exists()


def test_the_cli_goes_through_the_daemon_and_prints_the_same(
    alpha: tuple[Path, Daemon, str],
) -> None:
    root, daemon, _ = alpha
    runner = CliRunner()
    through = {"AFFIDAVIT_SOCKET": str(daemon.socket), "AFFIDAVIT_NO_DAEMON": ""}
    local = {"AFFIDAVIT_SOCKET": str(daemon.socket), "AFFIDAVIT_NO_DAEMON": "1"}
    seen = len(daemon.log_lines())
    for args in (
        ["search", "four freedoms", "--json"],
        ["inbox", "--all", "--json"],
        ["ask", "What are the four freedoms?", "--json"],
    ):
        a = runner.invoke(main, ["--vault", str(root), *args], env=through)
        b = runner.invoke(main, ["--vault", str(root), *args], env=local)
        assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
        if args[0] == "inbox":
            strip = ("age", "expires_in")
            assert [
                {k: v for k, v in x.items() if k not in strip} for x in json.loads(a.output)
            ] == [{k: v for k, v in x.items() if k not in strip} for x in json.loads(b.output)]
        else:  # the packed claims' token count includes the question's fresh nonce
            left, right = json.loads(a.output), json.loads(b.output)
            for data in (left, right):
                if isinstance(data, dict):
                    data.pop("context_tokens", None)
            assert left == right
    routes = [x.get("route") for x in daemon.log_lines()[seen:] if x.get("event") == "request"]
    assert "/v1/vaults/{vault}/search" in routes and "/v1/vaults/{vault}/ask" in routes
    assert "/v1/vaults/{vault}/plans" in routes
    # errors cross the socket as the same exceptions: same message, exit status 1
    a = runner.invoke(main, ["--vault", str(root), "approve", "ffff0000"], env=through)
    b = runner.invoke(main, ["--vault", str(root), "approve", "ffff0000"], env=local)
    assert a.exit_code == b.exit_code == 1 and "no plan ffff0000" in a.output
    # tokens: created through the daemon, by the owner only
    out = runner.invoke(
        main,
        ["--vault", str(root), "tokens", "create", "--role", "read", "--expires", "2h"],
        env=through,
    )
    assert out.exit_code == 0 and "afd_" in out.output
    listed = runner.invoke(main, ["--vault", str(root), "tokens", "list", "--json"], env=local)
    assert listed.exit_code == 0 and "afd_" not in listed.output


def test_serve_check_reports_and_exits(tmp_path: Path) -> None:
    base = private_dir("afd-check-")
    vault, _ = init_vault(base / "delta")
    vault.close()
    runner = CliRunner()
    sock = base / "run" / "d.sock"
    good = runner.invoke(
        main, ["serve", "--check", "--vault", str(vault.root), "--socket", str(sock)]
    )
    assert good.exit_code == 0, good.output
    assert "all checks passed" in good.output and not sock.parent.exists()  # it only reads
    remote = runner.invoke(
        main,
        [
            "serve",
            "--check",
            "--vault",
            str(vault.root),
            "--socket",
            str(sock),
            "--tcp",
            "0.0.0.0:9",
        ],
    )
    assert remote.exit_code == 1 and "--allow-remote" in remote.output
    loose = base / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    bad = runner.invoke(
        main, ["serve", "--check", "--vault", str(vault.root), "--socket", str(loose / "d.sock")]
    )
    assert bad.exit_code == 1 and "writable by others" in bad.output
    missing = runner.invoke(main, ["serve", "--check", "--vault", str(base / "nowhere")])
    assert missing.exit_code == 1 and "no vault" in missing.output


def test_a_non_loopback_address_needs_allow_remote(tmp_path: Path) -> None:
    base = private_dir("afd-remote-")
    vault, _ = init_vault(base / "eps")
    vault.close()
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    args += ["--vault", str(vault.root), "--socket", str(base / "run" / "s.sock")]
    args += ["--tcp", f"0.0.0.0:{free_port()}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1 and "--allow-remote" in done.stderr
    assert not (base / "run" / "s.sock").exists()


@given(
    value=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=90),
    scheme=st.sampled_from(["Bearer ", "bearer ", "Basic ", ""]),
)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_made_up_credentials_never_authenticate(
    alpha: tuple[Path, Daemon, str], value: str, scheme: str
) -> None:
    _, daemon, token = alpha
    if value in token:
        return
    with daemon.tcp(headers={"Authorization": scheme + value}) as client:
        response = client.get("/v1/vaults/alpha/pages")
    assert response.status_code == 401, response.text
    assert response.json()["error"]["type"] == "Unauthenticated"


def test_findings_are_decided_and_fixed_through_the_api(alpha: tuple[Path, Daemon, str]) -> None:
    from affidavit.lint.runner import run_lint

    root, daemon, _ = alpha
    with open_vault(root) as vault:
        report = run_lint(vault)
    fixable = [f for f in report.findings if f.finding.fix and not f.plan_id]
    other = fixable[0]  # dismissed after its fix is proposed
    with daemon.unix() as client:
        listed = client.get("/v1/vaults/alpha/lint/findings").json()
        assert {f["id"] for f in listed} == {f.id for f in report.findings}
        fixed = client.post("/v1/vaults/alpha/lint/fixes", json={"findings": [fixable[0].id]})
        assert fixed.status_code == 200, fixed.text
        plan_id = fixed.json()["fixed"][fixable[0].id]
        plan = client.get(f"/v1/vaults/alpha/plans/{plan_id}").json()
        assert plan["status"] == "pending"
        dismissed = client.post(
            f"/v1/vaults/alpha/lint/findings/{other.id}/decision",
            json={"status": "dismissed", "note": "fine as it is"},
        )
        assert dismissed.status_code == 200 and dismissed.json()["status"] == "dismissed"
        bad = client.post(
            f"/v1/vaults/alpha/lint/findings/{other.id}/decision", json={"status": "gone"}
        )
        assert bad.status_code == 422
    with open_vault(root) as vault:
        audit = [r[0] for r in vault.db.execute("SELECT action FROM audit ORDER BY seq")]
        assert audit[-1] == "finding_dismissed"
