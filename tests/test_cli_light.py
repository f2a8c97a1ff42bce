"""The light CLI (issue 25 item 3): ``affidavit --version`` and the reads a running daemon answers
(``ask``, ``search``, ``inbox``) import only what they use — never the engine, the gate, the
support check, numpy, bs4, pygit2, docutils, tantivy, pydantic or httpx — and the client's own
HTTP reader refuses what a broken or hostile socket sends instead of hanging or crashing.

Each command runs in a fresh interpreter (a subprocess) that reports ``sys.modules`` afterwards:
in this test process everything is imported already.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit import unix_http
from affidavit.client import find_daemon
from affidavit.unix_http import ProtocolError
from tests.conftest import ROOT
from tests.test_server_authz import make_alpha

HEAVY = (
    "numpy",
    "bs4",
    "soupsieve",
    "pygit2",
    "docutils",
    "tantivy",
    "spacy",
    "onnxruntime",
    "pydantic",
    "httpx",
    "fastapi",
    "yaml",
    "markdown_it",
    "tiktoken",
    "sqlite3",
    "affidavit.gate",
    "affidavit.support",
    "affidavit.extractive",
    "affidavit.ask",
    "affidavit.retrieval",
    "affidavit.service",
    "affidavit.vault",
    "affidavit.db",
    "affidavit.plan",
    "affidavit.sources",
    "affidavit.store",
)
"""Modules a command that only prints what the daemon sent must never import."""

PROBE = """
import json, sys
from affidavit.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code or 0
sys.stdout.flush()
print("\\n@@" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, list[str], str]:
    """``affidavit ARGS`` in a fresh interpreter: exit code, output, every module it imported,
    and what it wrote to stderr."""
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=full, check=False
    )
    out, _, report = done.stdout.rpartition("\n@@")
    assert report, done.stderr
    data = json.loads(report)
    return int(data["code"]), out, list(data["modules"]), done.stderr


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_version_imports_nothing_heavy() -> None:
    code, out, modules, _ = run_cli("--version")
    assert code == 0 and "affidavit, version" in out
    assert heavy(modules) == []
    assert len(modules) < 200, len(modules)


@pytest.fixture(scope="module")
def daemon() -> Iterator[tuple[Path, Path, Path]]:
    """A vault with the sample pages and a daemon serving it on a private socket (short path:
    a Unix socket's path has at most 107 bytes)."""
    base = Path(tempfile.mkdtemp(prefix="afd-light-", dir="/tmp"))
    root = base / "v"
    make_alpha(root)
    run = base / "run"
    run.mkdir(mode=0o700)
    sock = run / "d.sock"
    log = base / "d.log"
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    args += ["--socket", str(sock), "--vault", str(root), "--no-workers"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with log.open("wb") as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        deadline = time.monotonic() + 600  # a hang guard: a busy machine starts slowly
        while find_daemon(root, sock) is None:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield root, sock, log
    finally:
        proc.terminate()
        proc.wait(timeout=600)
        shutil.rmtree(base, ignore_errors=True)


def requests_seen(log: Path) -> list[str]:
    return [
        json.loads(line).get("route", "")
        for line in log.read_text(encoding="utf-8").splitlines()
        if line.startswith("{") and json.loads(line).get("event") == "request"
    ]


@pytest.mark.parametrize(
    ("args", "route"),
    [
        (["ask", "What are the four freedoms?", "--json"], "/v1/vaults/{vault}/ask"),
        (["ask", "What are the four freedoms?"], "/v1/vaults/{vault}/ask"),
        (["search", "four freedoms", "--json"], "/v1/vaults/{vault}/search"),
        (["search", "four freedoms"], "/v1/vaults/{vault}/search"),
        (["inbox", "--all", "--json"], "/v1/vaults/{vault}/plans"),
        (["inbox", "--all"], "/v1/vaults/{vault}/plans"),
    ],
)
def test_reads_through_the_daemon_import_nothing_heavy(
    daemon: tuple[Path, Path, Path], args: list[str], route: str
) -> None:
    root, sock, log = daemon
    before = len(requests_seen(log))
    env = {"AFFIDAVIT_SOCKET": str(sock), "AFFIDAVIT_NO_DAEMON": ""}
    code, out, modules, _ = run_cli("--vault", str(root), *args, env=env)
    assert code == 0, out
    assert heavy(modules) == [], heavy(modules)
    assert route in requests_seen(log)[before:]  # it did go through the daemon
    if args[0] == "ask":
        assert "freedom" in out.lower() and "Not in the wiki" not in out
    if "--json" in args and args[0] == "search":
        hits = json.loads(out)
        assert hits and all(h["evidence"] for h in hits)


def test_without_the_daemon_the_same_command_runs_in_process(
    daemon: tuple[Path, Path, Path],
) -> None:
    """The light path is the daemon's: in-process, the services are imported as before (so the
    check above is not vacuous), and the answer is the same."""
    root, sock, _ = daemon
    args = ("--vault", str(root), "search", "four freedoms", "--json")
    through = run_cli(*args, env={"AFFIDAVIT_SOCKET": str(sock), "AFFIDAVIT_NO_DAEMON": ""})
    local = run_cli(*args, env={"AFFIDAVIT_SOCKET": str(sock), "AFFIDAVIT_NO_DAEMON": "1"})
    assert through[0] == local[0] == 0
    assert json.loads(through[1]) == json.loads(local[1])
    assert "affidavit.retrieval.search" in local[2]


def test_a_question_too_long_is_refused_before_any_request(daemon: tuple[Path, Path, Path]) -> None:
    root, sock, log = daemon
    before = len(requests_seen(log))
    code, _, _, err = run_cli(
        "--vault", str(root), "ask", "x" * 2001, env={"AFFIDAVIT_SOCKET": str(sock)}
    )
    assert code == 2 and "2000 characters" in err, err
    assert requests_seen(log)[before:] == []


# --- the client's HTTP reader against a hostile socket ------------------------------------------


def serve_once(reply: bytes, hold: bool = False) -> tuple[Path, threading.Thread]:
    """A Unix socket that answers one request with ``reply`` (then closes, or with ``hold``
    keeps the connection open)."""
    folder = Path(tempfile.mkdtemp(prefix="afd-h-", dir="/tmp"))
    path = folder / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(reply)
            if hold:
                conn.recv(1)  # until the client gives up and closes
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return path, thread


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"a" * 70_000 + b"\r\n\r\n", "too long"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "closed before"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n", "CRLF"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffff\r\n", "too long"),
        (b"HTTP/1.1 200 OK\r\n bad header\r\n\r\n", "malformed header"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "closed before"),
    ],
)
def test_the_reader_refuses_a_malformed_reply(reply: bytes, message: str) -> None:
    path, thread = serve_once(reply)
    with pytest.raises(ProtocolError, match=message):
        unix_http.request(str(path), "GET", "/v1/whoami", timeout=60)
    thread.join(timeout=60)
    shutil.rmtree(path.parent, ignore_errors=True)


def test_the_reader_reads_a_chunked_reply_and_a_socket_that_says_nothing_times_out() -> None:
    path, thread = serve_once(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4;ext=1\r\n{"a"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\nTrailer: x\r\n\r\n'
    )
    assert unix_http.request(str(path), "GET", "/x", timeout=60).json() == {"a": 1}
    thread.join(timeout=60)
    shutil.rmtree(path.parent, ignore_errors=True)
    silent, thread = serve_once(b"", hold=True)
    with pytest.raises(TimeoutError):
        unix_http.request(str(silent), "GET", "/x", timeout=0.5)
    thread.join(timeout=60)
    shutil.rmtree(silent.parent, ignore_errors=True)


def test_a_socket_that_is_not_our_daemon_is_not_taken_for_one(tmp_path: Path) -> None:
    """Garbage, an error, or a whoami that doesn't list the vault as ours: the CLI works
    in-process instead of trusting the socket."""
    root = tmp_path / "v"
    for reply in (
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnull",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]",
        b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"vaults": 5}',
        b"HTTP/1.1 401 No\r\nContent-Length: 3\r\n\r\nno!",
        b'HTTP/1.1 200 OK\r\nContent-Length: 55\r\n\r\n{"vaults": [{"name": "x", "root": "/", "role": "owner"}]}',
        b"garbage",
    ):
        path, thread = serve_once(reply)
        assert find_daemon(root, path) is None
        thread.join(timeout=60)
        shutil.rmtree(path.parent, ignore_errors=True)
