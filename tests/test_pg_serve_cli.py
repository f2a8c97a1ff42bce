"""``affidavit serve --database URL`` end to end: a real daemon (uvicorn on a Unix socket and a
loopback port) over a real PostgreSQL, set up with ``affidavit team``; the URL's password never
printed or logged; ``[database] url`` in a vault's affidavit.toml; bad URLs and options refused
with the fix."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from affidavit.config import load_config
from affidavit.errors import ConfigError
from affidavit.storage.url import check_database_url, redact, scrub

from . import forker
from .conftest import ROOT
from .forker import zygote
from .pg_cluster import drop_vaults

pytestmark = pytest.mark.xdist_group("postgres")

SECRET = "Sup3r-S3cret-pw"
BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long.\n"


def with_password(url: str) -> str:
    """``url`` with a password (the test cluster trusts its socket, so any password connects)."""
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@", 1)


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str = ""
) -> Any:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    # a child forked from a zygote that imported the CLI once (tests/forker.py), not a fresh
    # interpreter per command: the same process boundary, exit code, output and environment
    return zygote(*forker.CLI, pythonpath=str(ROOT / "src")).run(
        "from affidavit.cli import main; main()", args, 600, env=full, cwd=cwd, stdin=stdin
    )


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    def __init__(self, base: Path, *args: str, env: dict[str, str], cwd: Path | None = None):
        run = base / "run"
        run.mkdir(mode=0o700, exist_ok=True)
        self.sock = run / "affidavit.sock"
        self.port = free_port()
        self.log = base / "daemon.log"
        argv = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
        argv += ["--socket", str(self.sock), "--tcp", f"127.0.0.1:{self.port}", *args]
        full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=err, env=full, cwd=cwd
            )
        deadline = time.monotonic() + 600
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited: {self.log.read_text()}")
            with warnings.catch_warnings():  # a daemon still starting may drop the probe
                warnings.simplefilter("ignore", ResourceWarning)
                try:
                    with self.tcp() as probe:
                        if probe.get("/v1/health").status_code == 200:
                            return
                except httpx.HTTPError:
                    pass
            if time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"daemon did not start: {self.log.read_text()}")
            time.sleep(0.1)

    def tcp(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}", headers=headers, timeout=600)

    def unix(self) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=str(self.sock))
        return httpx.Client(transport=transport, base_url="http://affidavit", timeout=600)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=600)


@pytest.fixture(scope="module")
def url(pg_url: str) -> str:
    drop_vaults(pg_url)
    return with_password(pg_url)


@pytest.fixture(scope="module")
def team(url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Vault team made with `affidavit team`, a source, and tokens; every output kept."""
    env = {"AFFIDAVIT_DATABASE": url}
    me = pwd.getpwuid(os.geteuid()).pw_name
    note = tmp_path_factory.mktemp("notes") / "bridge.md"
    note.write_text(BRIDGE, encoding="utf-8")
    runs = [cli("team", "create", "team", "--owner", me, env=env)]
    runs.append(cli("team", "add", "team", str(note), "--trust", "trusted", "--json", env=env))
    tokens = {}
    for role in ("read", "propose", "approve"):
        # $USER and $LOGNAME are the caller's to set: the token names who made it from the kernel
        spoofed = {**env, "USER": "mallory", "LOGNAME": "mallory"}
        runs.append(cli("team", "token", "team", "--role", role, "--json", env=spoofed))
        made = json.loads(runs[-1].stdout)
        assert made["info"]["created_by"] == me
        tokens[role] = made["token"]
    for run in runs:
        assert run.returncode == 0, run.stderr
    source = json.loads(runs[1].stdout)["source"]
    return {"tokens": tokens, "source": source, "outputs": runs, "env": env}


@pytest.fixture(scope="module")
def daemon(team: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    made = Daemon(tmp_path_factory.mktemp("daemon"), env=team["env"])
    yield made
    made.stop()


def test_a_team_proposes_approves_and_searches_over_a_real_daemon(
    daemon: Daemon, team: dict[str, Any]
) -> None:
    tokens = team["tokens"]
    with daemon.tcp(tokens["propose"]) as agent:
        nonce = agent.post("/v1/vaults/team/nonces", json={}).json()["nonce"]
        text = "The bridge is 503 metres long."
        quote_text = "The bridge is 503 metres long"
        quote = {"source": team["source"], "quote": quote_text}
        plan = {
            "nonce": nonce,
            "operations": [
                {"op": "create_page", "slug": "bridge", "title": "The bridge", "summary": text,
                 "claims": [{"text": text, "evidence": [quote]}]}
            ],
        }  # fmt: skip
        done = agent.post("/v1/vaults/team/plans", json={"plan": plan})
        assert done.status_code == 200, done.text
        plan_id = done.json()["plan_id"]
        assert agent.post(f"/v1/vaults/team/plans/{plan_id}/approve", json={}).status_code == 403
    with daemon.tcp(tokens["read"]) as reader:
        assert [p["id"] for p in reader.get("/v1/vaults/team/plans").json()] == [plan_id]
    with daemon.tcp(tokens["approve"]) as approver:
        ok = approver.post(f"/v1/vaults/team/plans/{plan_id}/approve", json={})
        assert ok.status_code == 200, ok.text
        again = approver.post(f"/v1/vaults/team/plans/{plan_id}/approve", json={})
        assert again.status_code == 200 and again.json()["applied"] is False, again.text
        hits = approver.get("/v1/vaults/team/search", params={"q": "how long is the bridge"})
        assert [h["text"] for h in hits.json()["hits"]] == [text]
        lint = approver.get("/v1/vaults/team/lint/findings")  # served: none recorded yet
        assert lint.status_code == 200 and lint.json() == [], lint.text
    with daemon.tcp(tokens["read"]) as reader:  # the same answerer as a SQLite vault's
        answer = reader.post("/v1/vaults/team/ask", json={"question": "How long is the bridge?"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["verdict"] == "answered", answer.text
        (cited,) = answer.json()["citations"]
        assert cited["text"] == text and cited["evidence"][0]["source_id"] == team["source"]
        (quote,) = cited["evidence"]
        assert BRIDGE[quote["start"] : quote["end"]] == quote["quote"] == quote_text
        absent = reader.post("/v1/vaults/team/ask", json={"question": "Who built the tunnel?"})
        assert absent.json()["verdict"] == "not_in_wiki"
        assert absent.json()["markdown"].startswith("Not in the wiki")
    # the CLI with the database's credentials: the same answer, no daemon needed
    run = cli("ask", "How long is the bridge?", "--vault", "team", "--json", env=team["env"])
    assert run.returncode == 0, run.stderr
    assert [c["text"] for c in json.loads(run.stdout)["citations"]] == [text]
    run = cli("ask", "How long is the bridge?", "--vault", "team", env=team["env"])
    assert quote_text in run.stdout and team["env"]["AFFIDAVIT_DATABASE"] not in run.stdout
    run = cli("search", "bridge", "--vault", "team", "--json", env=team["env"])
    assert [h["text"] for h in json.loads(run.stdout)] == [text]
    turns = "How long is the bridge?\nWhen did it open?\n"
    run = cli("chat", "--vault", "team", "--json", env=team["env"], stdin=turns)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["turn"] for line in lines] == [1, 2] and lines[0]["verdict"] == "answered"
    run = cli("ask", "How long?", "--vault", "nosuch", env=team["env"])
    assert run.returncode != 0 and "no vault 'nosuch'" in run.stderr
    # the owner on the Unix socket (the UID the kernel reports) manages the vault's tokens
    with daemon.unix() as owner:
        me = owner.get("/v1/whoami").json()
        assert [(v["name"], v["role"]) for v in me["vaults"]] == [("team", "owner")]
        made = owner.post("/v1/vaults/team/tokens", json={"role": "read", "expires_hours": 1})
        assert made.status_code == 201, made.text
    with daemon.tcp(made.json()["token"]) as new:
        assert new.get("/v1/vaults/team/pages").json()[0]["slug"] == "bridge"


def test_the_password_is_never_printed_or_logged(daemon: Daemon, team: dict[str, Any]) -> None:
    with daemon.tcp(team["tokens"]["read"]) as reader:
        assert reader.get("/v1/vaults/team").status_code == 200
    assert daemon.stop() == 0
    log = daemon.log.read_text(encoding="utf-8")
    assert SECRET not in log
    ready = [json.loads(x) for x in log.splitlines() if x.startswith("{") and '"ready"' in x]
    assert ready and "***" in ready[0]["database"] and ready[0]["vaults"] == ["team"]
    for run in team["outputs"]:
        assert SECRET not in run.stdout + run.stderr


def test_bad_urls_and_options_are_refused_with_the_fix(url: str, tmp_path: Path) -> None:
    base = ["serve", "--socket", str(tmp_path / "s.sock")]
    refused = {
        "mysql": cli(*base, "--database", f"mysql://me:{SECRET}@db/wiki"),
        "sqlite-env": cli(*base, env={"AFFIDAVIT_DATABASE": "sqlite:///tmp/x.db"}),
        "unreachable": cli(*base, "--database", f"postgresql://me:{SECRET}@127.0.0.1:1/wiki"),
        "both": cli(*base, "--database", url, "--vault", str(tmp_path)),
        "web": cli(*base, "--database", url, "--web", "--workers", "2"),
        "team": cli(
            "team", "create", "x", "--owner", "me", "--database", f"mysql://u:{SECRET}@h/d"
        ),
    }
    expect = {
        "mysql": "only PostgreSQL",
        "sqlite-env": "only PostgreSQL",
        "unreachable": "can't connect",
        "both": "give one of them",
        "web": "pass --workers 1 with --web",
        "team": "only PostgreSQL",
    }
    for kind, run in refused.items():
        assert run.returncode != 0, kind
        out = run.stdout + run.stderr
        assert expect[kind] in out, (kind, out)
        assert SECRET not in out and "Traceback" not in out, (kind, out)
    assert not (tmp_path / "s.sock").exists()


def test_database_url_in_a_vaults_config(url: str, team: dict[str, Any], tmp_path: Path) -> None:
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    (tmp_path / "v" / "affidavit.toml").write_text(f'[database]\nurl = "{url}"\n', "utf-8")
    assert load_config(tmp_path / "v" / "affidavit.toml").database_url == url
    made = Daemon(tmp_path, env={"AFFIDAVIT_DATABASE": ""}, cwd=tmp_path / "v")
    try:
        with made.tcp(team["tokens"]["read"]) as reader:
            assert reader.get("/v1/whoami").json()["vaults"][0]["name"] == "team"
            assert reader.get("/v1/vaults/v/pages").status_code == 404  # not the folder's SQLite
    finally:
        assert made.stop() == 0
    assert SECRET not in made.log.read_text(encoding="utf-8")
    # the folder's other commands don't fall back to its own SQLite database: they say so
    for args in (["search", "bridge"], ["inbox"], ["ask", "How long is the bridge?"], ["doctor"]):
        run = cli(*args, env={"AFFIDAVIT_DATABASE": ""}, cwd=tmp_path / "v")
        out = run.stdout + run.stderr
        assert run.returncode != 0 and "[database] url" in out, (args, out)
        assert SECRET not in out and "Traceback" not in out, (args, out)
    (tmp_path / "v" / "affidavit.toml").write_text(
        f'[database]\nurl = "mysql://me:{SECRET}@db/wiki"\n', "utf-8"
    )
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path / "v" / "affidavit.toml")
    assert "[database] url" in str(refused.value) and SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "given",
    [
        f"postgresql://me:{SECRET}@db/wiki",
        f"postgres://me:{SECRET}@db:5432/wiki?sslmode=require",
        f"postgresql://me@db/wiki?password={SECRET}&sslmode=require",
        f"postgresql:///wiki?host=/run/pg&password={SECRET}",
    ],
)
def test_redact_and_scrub_never_show_the_password(given: str) -> None:
    assert check_database_url(given) == given
    assert SECRET not in redact(given) and "***" in redact(given)
    said = f'connection to "{given}" failed for password "{SECRET}"'
    assert SECRET not in scrub(said, given)


@pytest.mark.parametrize(
    "given",
    [
        f"mysql://me:{SECRET}@db/wiki",
        "sqlite:///x.db",
        "/srv/wiki",
        5,
        f"postgresql://me:{SECRET}@db:port/x",
        f"postgresql://me:{SECRET}@db/wi ki",
        f"postgresql://me:{SECRET}@db/wi\nki",
    ],
)
def test_only_postgresql_urls_are_taken(given: object) -> None:
    with pytest.raises(ConfigError) as refused:
        check_database_url(given)
    assert SECRET not in str(refused.value)


def test_check_reports_the_database_and_its_vaults(
    url: str, team: dict[str, Any], tmp_path: Path
) -> None:
    base = ["serve", "--socket", str(tmp_path / "run" / "s.sock"), "--check"]
    good = cli(*base, "--database", url)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "ok  vault team: owner" in good.stdout and "migrations: up to date" in good.stdout
    bad = cli(*base, "--database", f"postgresql://me:{SECRET}@127.0.0.1:1/wiki")
    assert bad.returncode == 1 and "BAD database" in bad.stdout
    for run in (good, bad):
        assert SECRET not in run.stdout + run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "run").exists()  # nothing created


def test_worker_processes_share_the_sockets(team: dict[str, Any], tmp_path: Path) -> None:
    made = Daemon(tmp_path, "--workers", "2", env=team["env"])
    try:
        with made.tcp(team["tokens"]["read"]) as reader:
            for _ in range(20):
                assert reader.get("/v1/vaults/team/pages").status_code == 200
        with made.unix() as owner:
            assert owner.get("/v1/whoami").json()["vaults"][0]["role"] == "owner"
    finally:
        assert made.stop() == 0
    log = made.log.read_text(encoding="utf-8")
    ready = [x for x in log.splitlines() if '"worker_ready"' in x]
    assert len(ready) == 2 and SECRET not in log


def race(daemons: list[Daemon], plan_id: str, token: str) -> list[tuple[int, Any]]:
    """Approve ``plan_id`` through every daemon at once (a thread each); the statuses, each with
    the reply's ``applied``."""
    import threading

    statuses: list[tuple[int, Any]] = []
    barrier = threading.Barrier(len(daemons))

    def approve(daemon: Daemon) -> None:
        with daemon.tcp(token) as client:
            barrier.wait()
            got = client.post(f"/v1/vaults/team/plans/{plan_id}/approve", json={})
            statuses.append((got.status_code, got.json().get("applied")))

    threads = [threading.Thread(target=approve, args=(d,)) for d in daemons]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_two_daemon_processes_approve_one_plan_exactly_once(
    url: str, team: dict[str, Any], tmp_path: Path
) -> None:
    from affidavit.storage.postgres import PostgresStorage

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = Daemon(tmp_path / "a", env=team["env"])
    second = Daemon(tmp_path / "b", env=team["env"])
    tokens = team["tokens"]
    try:
        for n in range(3):
            with first.tcp(tokens["propose"]) as agent:
                nonce = agent.post("/v1/vaults/team/nonces", json={}).json()["nonce"]
                text = "The bridge opened in 1932."
                quote = {"source": team["source"], "quote": "The bridge opened in 1932"}
                plan = {"nonce": nonce, "operations": [
                    {"op": "create_page", "slug": f"race-{n}", "title": "The bridge",
                     "summary": text, "claims": [{"text": text, "evidence": [quote]}]}]}  # fmt: skip
                plan_id = agent.post("/v1/vaults/team/plans", json={"plan": plan}).json()["plan_id"]
            statuses = race([first, second] * 3, plan_id, tokens["approve"])
            # one applies it; the others learn it went in (nothing to do), as on SQLite
            assert sorted(statuses) == [(200, False)] * 5 + [(200, True)], statuses
    finally:
        assert first.stop() == 0 and second.stop() == 0
    storage = PostgresStorage(url)
    try:
        applied = [e.plan_id for e in storage.audit("team") if e.action == "applied"]
        assert len(applied) == len(set(applied))
        seqs = [b.seq for b in storage.batches("team")]
        assert seqs == list(range(1, len(seqs) + 1)) and storage.verify_audit("team") == []
    finally:
        storage.close()


def test_without_the_postgres_extra_the_error_names_the_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "from affidavit.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for args in (
        ["serve", "--socket", str(tmp_path / "s.sock"), "--database", "postgresql://x@/y"],
        ["team", "create", "x", "--owner", "me", "--database", "postgresql://x@/y"],
    ):
        run = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
            timeout=600,
        )  # fmt: skip
        out = run.stdout + run.stderr
        assert run.returncode == 1 and "pip install 'affidavit[server,postgres]'" in out, out
        assert "Traceback" not in out


def test_an_empty_database_or_one_the_user_cant_set_up_is_said(
    url: str, pg_cluster: Any, tmp_path: Path
) -> None:
    import psycopg

    empty = pg_cluster.create_database("pg_serve_empty")
    try:
        base = ["serve", "--socket", str(tmp_path / "s.sock"), "--database"]
        run = cli(*base, with_password(empty))
        assert run.returncode == 1 and "holds no vault" in run.stderr, run.stderr
        assert "affidavit team create" in run.stderr and SECRET not in run.stderr
    finally:
        pg_cluster.drop_database(empty)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS wiki_reader")
        conn.execute("CREATE ROLE wiki_reader LOGIN")
    try:
        reader = url.replace(f"postgres:{SECRET}@", f"wiki_reader:{SECRET}@", 1)
        run = cli("serve", "--socket", str(tmp_path / "s.sock"), "--database", reader)
        out = run.stdout + run.stderr
        assert run.returncode == 1 and "refused the daemon's setup" in out, out
        assert "Traceback" not in out and SECRET not in out
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP ROLE wiki_reader")
