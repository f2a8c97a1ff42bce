"""The daemon's authorisation matrix, on a real server: a real Unix socket and a real loopback port.

For every route (the table below is checked against the OpenAPI document) and every kind of
caller — the vault's owner on the socket, another local user on the socket (a forked child that
setuid()s to nobody), a token of each role, an expired and a revoked token, a token of another
vault, no token — only what the role allows succeeds; everything else is 401/403 and leaves the
vault exactly as it was (database rows, wiki files, git HEAD).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from affidavit import inbox
from affidavit.jobs.queue import JobQueue
from affidavit.service import tokens as token_store
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault, open_vault
from tests.conftest import add_samples, fresh_nonce, sample_plan_text

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")

NOBODY = 65534
LEVEL = {"read": 1, "propose": 2, "approve": 3, "owner": 4}
ROOT = Path(__file__).resolve().parent.parent


# --- a daemon in a subprocess ------------------------------------------------------------------


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    socket: Path
    port: int
    log: Path

    def unix(self, headers: dict[str, str] | None = None) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=str(self.socket))
        return httpx.Client(
            transport=transport, base_url="http://affidavit", timeout=600, headers=headers
        )

    def tcp(self, token: str | None = None, headers: dict[str, str] | None = None) -> httpx.Client:
        merged = dict(headers or {})
        if token is not None:
            merged["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=600, headers=merged)

    def log_lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def stop(self) -> int:
        """SIGTERM and wait: the daemon shuts down gracefully (exit 0, socket removed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def private_dir(prefix: str) -> Path:
    """A directory under /tmp other users may traverse (0711), so a refusal is ours, not the
    file system's."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(path, 0o711)
    if not _MADE:
        atexit.register(lambda: [shutil.rmtree(p, ignore_errors=True) for p in _MADE])
    _MADE.append(path)
    return path


_MADE: list[Path] = []


def start_daemon(
    vaults: list[Path], base: Path, *extra: str, workers: bool = False, name: str = "d"
) -> Daemon:
    run = base / f"run-{name}"
    run.mkdir(mode=0o711)
    os.chmod(run, 0o711)
    sock = run / "affidavit.sock"
    port = free_port()
    log = base / f"{name}.log"
    args = [sys.executable, "-c", "from affidavit.cli import main; main()", "serve"]
    args += ["--socket", str(sock), "--tcp", f"127.0.0.1:{port}", "--shared"]
    args += [a for v in vaults for a in ("--vault", str(v))]
    args += [] if workers else ["--no-workers"]
    args += list(extra)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with log.open("wb") as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, env=env)
    daemon = Daemon(proc, sock, port, log)
    deadline = time.monotonic() + 600  # a hang guard: a busy machine starts slowly
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"daemon exited: {log.read_text()}")
            if sock.exists():
                # a daemon still starting may drop the probe's connection; httpx then leaves
                # its socket to the collector (a ResourceWarning, an error here) on a busy machine
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ResourceWarning)
                    try:
                        with daemon.unix() as client:
                            if client.get("/v1/health").status_code == 200:
                                return daemon
                    except httpx.HTTPError:
                        pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"daemon did not start: {log.read_text()}")
            time.sleep(0.05)
    except BaseException:  # a failed start or a test timeout here: no daemon outlives the test
        proc.kill()
        proc.wait()
        raise


def as_user(
    uid: int,
    sock: Path,
    requests: list[tuple[str, str, Any]],
    headers: dict[str, str] | None = None,
) -> list[tuple[int, str]]:
    """Send ``requests`` over the socket from a forked child that became ``uid``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to uid, talk, report, exit without cleanup
        status = 0
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out: list[Any] = []
            transport = httpx.HTTPTransport(uds=str(sock))
            with httpx.Client(
                transport=transport, base_url="http://affidavit", timeout=600, headers=headers
            ) as client:
                for method, path, body in requests:
                    response = client.request(method, path, json=body)
                    out.append([response.status_code, response.text])
            payload = json.dumps(out).encode()
        except BaseException as exc:  # report anything to the parent
            payload = json.dumps({"error": repr(exc)}).encode()
            status = 1
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert not isinstance(data, dict), data
    return [(int(status), text) for status, text in data]


# --- vaults and fingerprints ---------------------------------------------------------------------


def fingerprint(root: Path) -> dict[str, Any]:
    """Everything a request could change: every database row, every file outside .git and
    .affidavit, and git HEAD."""
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    try:
        rows = list(db.iterdump())
    finally:
        db.close()
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and rel.parts[0] not in (".git", ".affidavit"):
            files[str(rel)] = path.read_bytes()
    head = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(root), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {"db": rows, "files": files, "head": head}


_counter = [0]


def fresh_plan(vault: Vault) -> str:
    """A new pending plan of its own (its own source and page), so any test may decide it."""
    _counter[0] += 1
    n = _counter[0]
    words = ["amber", "basalt", "cedar", "dune", "ember", "fjord", "garnet", "heath", "iris"]
    w1, w2 = words[n % 9], words[(n * 4 + 1) % 9]
    text = f"The {w1} lantern number {n} was repaired by the {w2} guild in the year {1700 + n}.\n"
    source = SourceStore(vault).add_bytes(
        text.encode(), f"/test/lantern-{n}.md", f"lantern-{n}.md", "text/markdown", "trusted"
    )
    quote = f"lantern number {n} was repaired by the {w2} guild"
    plan = {
        "nonce": fresh_nonce(vault),
        "operations": [
            {
                "op": "create_page",
                "slug": f"lantern-{n}",
                "title": f"Lantern {n}",
                "summary": f"Lantern number {n} was repaired by the {w2} guild.",
                "claims": [
                    {
                        "text": f"Lantern number {n} was repaired by the {w2} guild.",
                        "evidence": [{"source": source.record.id, "quote": quote}],
                    }
                ],
            }
        ],
    }
    proposal = inbox.propose(vault, plan, "tester", "test")
    assert proposal.status == "pending", proposal.message
    return proposal.plan_id


@dataclass
class World:
    base: Path
    alpha: Path
    beta: Path
    daemon: Daemon
    tokens: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)

    def vault(self) -> Vault:
        return open_vault(self.alpha)


def make_alpha(root: Path) -> dict[str, str]:
    vault, _ = init_vault(root)
    toml = root / "affidavit.toml"  # each answer's rows written with it: the fingerprint
    toml.write_text(toml.read_text().replace("ask_log_batch = 32\n", "ask_log_batch = 1\n"))
    try:
        add_samples(vault)
        proposal = inbox.propose(vault, sample_plan_text(vault), "tester", "sample")
        applied = inbox.approve(vault, proposal.plan_id, None, "tester")
        claim = applied.claims[0]
        slug = vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (claim,)).fetchone()[0]
        source = vault.db.execute("SELECT id FROM sources LIMIT 1").fetchone()[0]
        return {"claim": claim, "slug": slug, "source": source, "applied": proposal.plan_id}
    finally:
        vault.close()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    base = private_dir("afd-authz-")
    alpha, beta = base / "alpha", base / "beta"
    ids = make_alpha(alpha)
    other, _ = init_vault(beta)
    with other:  # before the chown: once nobody owns beta, root only reads it
        _, beta_token = token_store.create_token(
            other.db, other.clock, "approve", timedelta(days=1), "beta", "nobody"
        )
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(beta)], check=True)
    with open_vault(alpha) as vault:
        tokens = {}
        for role in ("read", "propose", "approve"):
            _, tokens[role] = token_store.create_token(
                vault.db, vault.clock, role, timedelta(days=1), role, "root"
            )
        info, tokens["expired"] = token_store.create_token(
            vault.db, vault.clock, "approve", timedelta(days=1), "old", "root"
        )
        vault.db.execute(
            "UPDATE api_tokens SET expires_at = '2001-01-01T00:00:00Z' WHERE id = ?", (info.id,)
        )
        info, tokens["revoked"] = token_store.create_token(
            vault.db, vault.clock, "approve", timedelta(days=1), "gone", "root"
        )
        token_store.revoke_token(vault.db, vault.clock, info.id, "root")
    tokens["beta"] = beta_token
    daemon = start_daemon([alpha, beta], base)
    try:
        yield World(base, alpha, beta, daemon, tokens, ids)
    finally:
        assert daemon.stop() == 0
        assert not daemon.socket.exists()


# --- the route table -------------------------------------------------------------------------------

A = "/v1/vaults/alpha"


@dataclass(frozen=True)
class Route:
    method: str
    template: str  # as in the OpenAPI document
    level: str  # public | authenticated | read | propose | approve | owner
    prepare: Callable[[World], tuple[str, Any]]  # -> (path, json body)
    allowed: tuple[int, ...] = ()  # statuses besides 2xx that show the route itself ran


def fixed(path: str, body: Any = None) -> Callable[[World], tuple[str, Any]]:
    return lambda w: (path.format(**w.ids), body)


def _with_vault(
    action: Callable[[Vault, World], tuple[str, Any]],
) -> Callable[[World], tuple[str, Any]]:
    def prepare(w: World) -> tuple[str, Any]:
        with w.vault() as vault:
            return action(vault, w)

    return prepare


def _plan(suffix: str, body: Any) -> Callable[[World], tuple[str, Any]]:
    return _with_vault(lambda v, w: (f"{A}/plans/{fresh_plan(v)}{suffix}", body))


def _new_plan_body(vault: Vault, w: World) -> tuple[str, Any]:
    plan = json.loads(sample_plan_text(vault))
    plan["operations"] = plan["operations"][:1]
    plan["operations"][0]["slug"] = f"copy-{_counter[0]}"
    _counter[0] += 1
    return f"{A}/plans", {"plan": plan, "origin": "test"}


def _job(cancelled: bool, by: str = "someone-else") -> Callable[[World], str]:
    def make(w: World) -> str:
        with w.vault() as vault:
            queue = JobQueue(vault)
            job = queue.submit({"kind": "reindex"}, by)
            if cancelled:
                queue.cancel(job.id, by)
            return job.id

    return make


def _watch_id(w: World) -> str:
    """A watch of a new folder (each removal needs its own)."""
    from affidavit.watch.registered import WatchCreate, add_watch

    folder = Path(tempfile.mkdtemp(prefix="watched-", dir=w.base))
    with w.vault() as vault:
        return add_watch(vault, WatchCreate(folder=str(folder)), "root").id


def _token_id(w: World) -> str:
    with w.vault() as vault:
        info, _ = token_store.create_token(
            vault.db, vault.clock, "read", timedelta(hours=1), "to-revoke", "root"
        )
        return info.id


ROUTES = [
    Route("GET", "/v1/health", "public", fixed("/v1/health")),
    Route("GET", "/openapi.json", "public", fixed("/openapi.json")),
    Route("GET", "/v1/whoami", "authenticated", fixed("/v1/whoami")),
    Route("GET", "/v1/plan-schema", "authenticated", fixed("/v1/plan-schema")),
    Route("GET", "/v1/vaults/{vault}", "read", fixed(A)),
    Route("GET", "/v1/vaults/{vault}/sources", "read", fixed(A + "/sources")),
    Route("GET", "/v1/vaults/{vault}/sources/{source_id}", "read", fixed(A + "/sources/{source}")),
    Route("GET", "/v1/vaults/{vault}/pages", "read", fixed(A + "/pages")),
    Route("GET", "/v1/vaults/{vault}/pages/{slug}", "read", fixed(A + "/pages/{slug}")),
    Route("GET", "/v1/vaults/{vault}/claims/{claim_id}", "read", fixed(A + "/claims/{claim}")),
    Route("GET", "/v1/vaults/{vault}/search", "read", fixed(A + "/search?q=freedom")),
    Route("POST", "/v1/vaults/{vault}/ask", "read", fixed(A + "/ask", {"question": "freedom?"})),
    Route(
        "POST",
        "/v1/vaults/{vault}/ask#save",
        "propose",
        fixed(A + "/ask", {"question": "What are the four freedoms?", "save": True}),
    ),
    Route("GET", "/v1/vaults/{vault}/audit", "read", fixed(A + "/audit?limit=5")),
    Route("GET", "/v1/vaults/{vault}/plans", "read", fixed(A + "/plans?status=all")),
    Route("GET", "/v1/vaults/{vault}/plans/{plan_id}", "read", fixed(A + "/plans/{applied}")),
    Route("POST", "/v1/vaults/{vault}/nonces", "propose", fixed(A + "/nonces", {"hours": 1})),
    Route("POST", "/v1/vaults/{vault}/plans", "propose", _with_vault(_new_plan_body)),
    Route("POST", "/v1/vaults/{vault}/plans/{plan_id}/approve", "approve", _plan("/approve", {})),
    Route(
        "POST",
        "/v1/vaults/{vault}/plans/approve",
        "approve",
        _with_vault(lambda v, w: (f"{A}/plans/approve", {"plans": [fresh_plan(v)]})),
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/plans/{plan_id}/reject",
        "approve",
        _plan("/reject", {"reason": "no"}),
    ),
    Route("GET", "/v1/vaults/{vault}/jobs", "read", fixed(A + "/jobs")),
    Route("POST", "/v1/vaults/{vault}/jobs", "propose", fixed(A + "/jobs", {"kind": "reindex"})),
    Route(
        "POST",
        "/v1/vaults/{vault}/jobs#ingest",
        "owner",
        fixed(A + "/jobs", {"kind": "ingest", "sources": [str(ROOT / "README.md")]}),
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/jobs#watch",
        "owner",  # a watch job reads folders as the daemon, like an ingest job
        fixed(A + "/jobs", {"kind": "watch", "folders": [str(ROOT / "docs")]}),
    ),
    Route(
        "GET",
        "/v1/vaults/{vault}/jobs/{job_id}",
        "read",
        lambda w: (f"{A}/jobs/{_job(False)(w)}", None),
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/jobs/{job_id}/cancel",
        "approve",
        lambda w: (f"{A}/jobs/{_job(False)(w)}/cancel", None),
    ),
    Route(
        "GET",
        "/v1/vaults/{vault}/jobs/{job_id}/events",
        "read",
        lambda w: (f"{A}/jobs/{_job(True)(w)}/events", None),
    ),
    Route("GET", "/v1/vaults/{vault}/lint/findings", "read", fixed(A + "/lint/findings")),
    Route(
        "GET",
        "/v1/vaults/{vault}/lint/findings/{finding_id}",
        "read",
        fixed(A + "/lint/findings/nonexistent-finding"),
        allowed=(404,),  # past the guard, the route finds no such finding
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/lint/findings/{finding_id}/decision",
        "approve",
        fixed(A + "/lint/findings/nonexistent-finding/decision", {"status": "dismissed"}),
        allowed=(404,),
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/lint/fixes",
        "propose",
        fixed(A + "/lint/fixes", {"findings": []}),
    ),
    Route(
        "POST",
        "/v1/vaults/{vault}/watches",
        "owner",  # a watch reads a folder as the daemon, like an ingest job: never a token
        fixed(A + "/watches", {"folder": str(ROOT / "docs")}),
    ),
    Route("GET", "/v1/vaults/{vault}/watches", "approve", fixed(A + "/watches")),
    Route(
        "DELETE",
        "/v1/vaults/{vault}/watches/{watch_id}",
        "approve",
        lambda w: (f"{A}/watches/{_watch_id(w)}", None),
    ),
    Route("GET", "/v1/vaults/{vault}/tokens", "owner", fixed(A + "/tokens")),
    Route(
        "POST",
        "/v1/vaults/{vault}/tokens",
        "owner",
        fixed(A + "/tokens", {"role": "read", "expires_hours": 2}),
    ),
    Route(
        "DELETE",
        "/v1/vaults/{vault}/tokens/{token_id}",
        "owner",
        lambda w: (f"{A}/tokens/{_token_id(w)}", None),
    ),
]

# who calls: (name, how, role on alpha or None, authenticated?)
CALLERS = [
    ("owner", "unix", "owner", True),
    ("other-user", "nobody", None, True),
    ("token-read", "read", "read", True),
    ("token-propose", "propose", "propose", True),
    ("token-approve", "approve", "approve", True),
    ("token-expired", "expired", None, False),
    ("token-revoked", "revoked", None, False),
    ("token-other-vault", "beta", None, True),
    ("no-token", None, None, False),
]


def expected(level: str, role: str | None, authenticated: bool) -> str:
    if level == "public":
        return "ok"
    if not authenticated:
        return "401"
    if level == "authenticated":
        return "ok"
    return "ok" if role is not None and LEVEL[role] >= LEVEL[level] else "403"


def send(world: World, how: str | None, method: str, path: str, body: Any) -> tuple[int, str]:
    if how == "unix":
        with world.daemon.unix() as client:
            response = client.request(method, path, json=body)
            return response.status_code, response.text
    if how == "nobody":
        return as_user(NOBODY, world.daemon.socket, [(method, path, body)])[0]
    token = world.tokens[how] if how is not None else None
    with world.daemon.tcp(token) as client:
        response = client.request(method, path, json=body)
        return response.status_code, response.text


def test_the_route_table_covers_every_route(world: World) -> None:
    with world.daemon.unix() as client:
        document = client.get("/openapi.json").json()
    documented = {(m.upper(), p) for p, item in document["paths"].items() for m in item}
    table = {(r.method, r.template.split("#")[0]) for r in ROUTES} - {("GET", "/openapi.json")}
    assert documented == table
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation.get("x-access"), f"{method} {path} declares no access"


@pytest.mark.parametrize("route", ROUTES, ids=[f"{r.method} {r.template}" for r in ROUTES])
def test_only_what_the_role_allows_succeeds(world: World, route: Route) -> None:
    for name, how, role, authenticated in CALLERS:
        path, body = route.prepare(world)
        want = expected(route.level, role, authenticated)
        before = fingerprint(world.alpha) if want != "ok" else None
        status, text = send(world, how, route.method, path, body)
        if want == "ok":
            assert 200 <= status < 300 or status in route.allowed, (name, status, text)
            continue
        assert status == int(want), (name, status, text)
        error = json.loads(text)["error"]
        assert error["type"] == ("Unauthenticated" if want == "401" else "Forbidden")
        assert error["message"] and error["fix"]
        assert fingerprint(world.alpha) == before, f"{name}: a refused request changed the vault"


def test_owners_are_kernel_attested_and_root_only_reads_others_vaults(world: World) -> None:
    # nobody owns beta: it sees beta (as owner) and not alpha
    who, beta_pages, alpha_pages, nonce, spoofed = as_user(
        NOBODY,
        world.daemon.socket,
        [
            ("GET", "/v1/whoami", None),
            ("GET", "/v1/vaults/beta/pages", None),
            ("GET", "/v1/vaults/alpha/pages", None),
            ("POST", "/v1/vaults/beta/nonces", {"hours": 1}),
            ("GET", "/v1/vaults/alpha/tokens", None),
        ],
        # an approve token of alpha, sent on the socket, changes nothing: the UID decides
        headers={"Authorization": f"Bearer {world.tokens['approve']}", "X-Remote-User": "root"},
    )
    me = json.loads(who[1])
    assert me["uid"] == NOBODY and me["token_id"] is None
    # a root daemon serves beta read-only (W10): even its owner only reads it through this daemon
    assert [(v["name"], v["role"]) for v in me["vaults"]] == [("beta", "read")]
    assert beta_pages[0] == 200 and nonce[0] == 403
    assert "read-only" in json.loads(nonce[1])["error"]["message"]
    assert alpha_pages[0] == 403 and spoofed[0] == 403
    # root reads beta (its one exception) but can't propose, approve or manage tokens there
    with world.daemon.unix() as client:
        vaults = {v["name"]: v["role"] for v in client.get("/v1/whoami").json()["vaults"]}
        assert vaults == {"alpha": "owner", "beta": "read"}
        assert client.get("/v1/vaults/beta/pages").status_code == 200
        before = fingerprint(world.beta)
        assert client.post("/v1/vaults/beta/nonces", json={"hours": 1}).status_code == 403
        assert client.get("/v1/vaults/beta/tokens").status_code == 403
        assert client.post("/v1/vaults/beta/tokens", json={"role": "read"}).status_code == 403
        assert fingerprint(world.beta) == before
    # a header can't make a TCP caller anyone
    with world.daemon.tcp(headers={"X-Remote-User": "root", "X-Forwarded-For": "127.0.0.1"}) as c:
        assert c.get("/v1/vaults/alpha/pages").status_code == 401


def test_tokens_are_hashed_scoped_and_audited(world: World) -> None:
    with world.daemon.unix() as client:
        created = client.post(
            f"{A}/tokens", json={"role": "propose", "expires_hours": 1, "label": "ci"}
        )
        assert created.status_code == 201
        secret = created.json()["token"]
        token_id = created.json()["info"]["id"]
        listed = client.get(f"{A}/tokens").json()
        assert token_id in [t["id"] for t in listed] and secret not in json.dumps(listed)
        too_long = client.post(f"{A}/tokens", json={"role": "read", "expires_hours": 24 * 91})
        assert too_long.status_code == 403  # server.token_max_days (90)
    with sqlite3.connect(world.alpha / ".affidavit" / "db.sqlite") as db:
        parts = token_store.split_token(secret)
        assert parts is not None and parts[1] not in json.dumps(list(db.iterdump()))
    with world.daemon.tcp(secret) as client:
        assert client.get(f"{A}/pages").status_code == 200
        assert client.post(f"{A}/nonces", json={"hours": 1}).status_code == 200
        assert client.get("/v1/vaults/beta/pages").status_code == 403
        forged = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")
    with world.daemon.tcp(forged) as client:
        assert client.get(f"{A}/pages").status_code == 401
    with world.daemon.unix() as client:
        assert client.delete(f"{A}/tokens/{token_id}").status_code == 200
        assert client.delete(f"{A}/tokens/{token_id}").status_code == 409
    with world.daemon.tcp(secret) as client:
        refused = client.get(f"{A}/pages")
        assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]
    with world.daemon.unix() as client:
        entries = client.get(f"{A}/audit?limit=500").json()["entries"]
    actions = [(e["action"], e["detail"].get("token")) for e in entries]
    assert ("token_created", token_id) in actions and ("token_revoked", token_id) in actions
    # the log names callers by UID or token id and never carries a secret
    text = world.daemon.log.read_text()
    assert secret not in text and all(t not in text for t in world.tokens.values())
    lines = [x for x in world.daemon.log_lines() if x.get("event") == "request"]
    assert any(x.get("token") == token_id for x in lines)
    assert all({"method", "route", "status", "ms"} <= set(x) for x in lines)
