"""The multi-host set-up of tests/test_multihost.py (issue 26 item 6), shared with
bench/bench_pg_faults.py: PostgreSQL on the ``db`` host and ``affidavit worker`` processes on
others, each host a network namespace (tests/netns.py); the faults, each injected on a fresh
job with no test hook in the product; and :func:`sound`, what must hold after each.

The workers reach PostgreSQL over TCP on their link's address, with a password (pg_hba.conf
admits that /24 only). A worker is stopped inside a step by a trigger the test installs in the
vault's schema: it waits for an advisory lock the test holds (the first time the step is reached
once a batch exists); the test sees the worker's backend waiting on it (``pg_locks``; the
connection's client address names the host) and acts. Every wait is for a state, polled with a
generous deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pygit2

from affidavit.jobs.payloads import StoredIngestPayload
from affidavit.mirror import check, mirror
from affidavit.storage.postgres import LOCK_CLASS, PostgresStorage
from affidavit.storage.postgres_jobs import PostgresJobStore

from . import netns
from .pg_cluster import BIN, USER, Cluster, Unavailable

ROOT = Path(__file__).resolve().parent.parent
TEXT = (
    "# Lighthouse {n}\n\n"
    "The lighthouse number {n} was painted red and white in the year {year}. "
    "Keepers climbed its {steps} steps every evening to light the lamp. "
    "Ships from the northern ports relied on its beam during the winter storms.\n"
)

HOSTS = ["w1", "w2", "w3"]
"""w1 and w2 run a worker each; w3 runs the mirror's checks."""
WORKERS = ["w1", "w2"]
LEASE = 2.0
HOLD_CLASS = 0x4668  # the first key of the test's hold locks (the product's is LOCK_CLASS)
SOURCES = 3  # one chunk each: a small job
DEADLINE = 300.0

STEPS: dict[str, tuple[str, str, str]] = {
    # step: (table, event, condition) — in the order a chunk reaches them
    "nonce": ("ingested_chunks", "INSERT", "NEW.outcome = 'started'"),
    "admitted": ("plans", "INSERT", "true"),
    "written": ("claims", "INSERT", "true"),
    "applied": ("audit", "INSERT", "NEW.action = 'applied'"),
    "sealed": ("batches", "INSERT", "true"),
    "checkpoint": ("ingested_chunks", "INSERT", "NEW.outcome = 'applied'"),
    "committed": ("jobs", "UPDATE", "NEW.progress_done > OLD.progress_done"),
    "done": ("jobs", "UPDATE", "NEW.status = 'done' AND OLD.status = 'running'"),
}
"""Where a worker is stopped: the nonce and 'started' checkpoint before the model is asked; in
the door's transaction the plan recorded, its claims, its audit entry, its batch number, the
chunk's checkpoint (the last write before the commit); the progress after the commit; the job's
end. ``committed`` and ``done`` are outside the chunk's transaction."""


def until(condition: Callable[[], Any], what: str, seconds: float = 300.0) -> Any:
    """Poll ``condition`` until it holds (no fixed margin: a loaded machine only waits longer)."""
    deadline = time.monotonic() + seconds
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def die_with_parent() -> None:
    """In a worker's child before it execs: SIGKILL it when the test process dies (a test run
    killed outright runs no cleanup; its workers would poll a stopped database for ever)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class DatabaseHost(Cluster):
    """The test's PostgreSQL, run in the ``db`` namespace: TCP on the database's address of each
    link (and the Unix socket, which only this test process uses), password auth for that /24
    and nothing else over TCP."""

    def __init__(self, root: Path, runas: str | None, net: netns.Network) -> None:
        super().__init__(root, runas)
        self.net = net
        self.password = secrets.token_hex(16)

    def _command(self, *args: str) -> list[str]:
        command = super()._command(*args)
        # only the server's start needs the namespace; a stop is signals (and must work from
        # the watchdog after the namespace is gone)
        return self.net.argv("db", command) if "start" in args else command

    def options(self) -> str:
        listen = ",".join(self.net.database_addresses())
        return (
            f"-k {self.root} -c listen_addresses='{listen}' -c port=5432 -c fsync=off "
            "-c full_page_writes=off -c max_connections=60"
        )

    def configure(self) -> None:
        (self.data / "pg_hba.conf").write_text(
            "# the test's own process: the Unix socket in the cluster's private dir\n"
            "local all all trust\n"
            f"# the hosts' links, and nothing else\nhost all all {netns.CIDR} scram-sha-256\n",
            encoding="utf-8",
        )

    def stop_immediate(self) -> None:
        self._run(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def tcp_url(self, host: str, dbname: str) -> str:
        """The URL host ``host`` connects with (the password comes from $PGPASSWORD)."""
        return f"postgresql://postgres@{self.net.database_address(host)}:5432/{dbname}"


def start_database(net: netns.Network) -> DatabaseHost:
    import pwd

    if not (BIN / "initdb").is_file():
        raise Unavailable(f"no PostgreSQL 15 server at {BIN}: run scripts/setup_postgres.sh")
    try:
        account = pwd.getpwnam(USER)
    except KeyError:
        raise Unavailable(f"no user {USER}: run scripts/setup_postgres.sh as root") from None
    root = Path(tempfile.mkdtemp(prefix="affidavit-pgnet-", dir="/tmp"))
    os.chown(root, account.pw_uid, account.pw_gid)
    made = DatabaseHost(root, USER, net)
    try:
        made.start()
        with psycopg.connect(made.url(), autocommit=True) as conn:
            conn.execute(f"ALTER ROLE postgres PASSWORD '{made.password}'")
            conn.execute("CREATE DATABASE team")
    except BaseException:
        made.stop()
        raise
    return made


class Hosts:
    """The network, the database host, a worker on each of w1 and w2 (``affidavit worker``
    with no ``--vault``: every vault of the database, so each test makes its own), and the test's
    own view of the database (the Unix socket)."""

    def __init__(self, net: netns.Network, db: DatabaseHost, tmp: Path) -> None:
        self.net = net
        self.db = db
        self.tmp = tmp
        self.url = db.url("team")
        self.storage = PostgresStorage(self.url)
        self.jobs = PostgresJobStore(self.storage)
        self.config = tmp / "affidavit.toml"
        self.config.write_text('[policy]\nauto_apply = "trusted"\n', encoding="utf-8")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PGPASSWORD": db.password}
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.daemons: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
        self.starts: Counter[str] = Counter()
        self.sources = 0
        self.per_job = SOURCES

    # -- processes -------------------------------------------------------------------------
    def cli(self, host: str, *args: str) -> list[str]:
        return self.net.argv(host, [sys.executable, "-c", "from affidavit.cli import main; main()",
                                    *args])  # fmt: skip

    def log(self, host: str) -> Path:
        return self.tmp / f"{host}-{self.starts[host]}.log"

    def start_worker(self, host: str, *, wait: bool = True) -> subprocess.Popen[bytes]:
        self.starts[host] += 1
        argv = self.cli(host, "worker", "--database", self.db.tcp_url(host, "team"),
                        "--lease", str(LEASE), "--poll", "0.1", "--config", str(self.config))  # fmt: skip
        with self.log(host).open("wb") as log:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=self.env,
                                    preexec_fn=die_with_parent)  # fmt: skip
        self.workers[host] = proc
        if not wait:
            return proc
        until(lambda: any(e["event"] == "ready" for e in self.events(host)) or proc.poll(),
              f"the worker on {host} to start", DEADLINE)  # fmt: skip
        assert proc.poll() is None, self.log(host).read_text()
        return proc

    def events(self, host: str) -> list[dict[str, Any]]:
        lines = self.log(host).read_text().splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def close(self) -> None:
        for proc in [*self.workers.values(), *(p for p, _ in self.daemons.values())]:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=600)
        self.storage.close()

    # -- the database, as the test sees it ---------------------------------------------------
    def q(self, vault: str, text: str, *params: Any) -> list[dict[str, Any]]:
        with self.storage.pool.connection() as conn:
            return list(conn.execute(text.replace("{s}", f"v_{vault}"), params).fetchall())

    def vault(self, name: str) -> str:
        """A new vault, owned by this process's user (the owner on a daemon's socket)."""
        import getpass

        self.storage.create_vault(name, getpass.getuser())
        return name

    def start_daemon(self, host: str) -> subprocess.Popen[bytes]:
        """``affidavit serve --database`` on ``host`` (its database over the host's link), on a
        Unix socket this process reaches (a path: not bound to a namespace); serves the vaults
        that exist when it starts."""
        self.starts[host] += 1
        run = self.tmp / f"run-{host}-{self.starts[host]}"
        run.mkdir(mode=0o700)
        argv = self.cli(host, "serve", "--database", self.db.tcp_url(host, "team"),
                        "--socket", str(run / "affidavit.sock"))  # fmt: skip
        with self.log(host).open("wb") as log:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=self.env,
                                    preexec_fn=die_with_parent)  # fmt: skip
        self.daemons[host] = (proc, run / "affidavit.sock")

        def healthy() -> bool:
            assert proc.poll() is None, self.log(host).read_text()
            with warnings.catch_warnings():  # a daemon still starting may drop the probe
                warnings.simplefilter("ignore", ResourceWarning)
                try:
                    return self.daemon_get(host, "/v1/health").status_code == 200
                except httpx.HTTPError:
                    return False

        until(healthy, f"the daemon on {host} to answer", DEADLINE)
        return proc

    def daemon_get(self, host: str, path: str, **params: str) -> httpx.Response:
        _, sock = self.daemons[host]
        transport = httpx.HTTPTransport(uds=str(sock))
        with httpx.Client(transport=transport, base_url="http://affidavit", timeout=600) as client:
            return client.get(path, params=params)

    def add(self, vault: str, count: int | None = None) -> list[str]:
        """``count`` new sources (one chunk each; :attr:`per_job` by default); their ids."""
        count = self.per_job if count is None else count
        ids = []
        for n in range(self.sources, self.sources + count):
            text = TEXT.format(n=n, year=1700 + n, steps=100 + n)
            ids.append(self.storage.add_source(
                vault, text.encode(), origin=f"/notes/light-{n}.md", name=f"light-{n}.md",
                added_at="2026-12-07T00:00:00Z", trust="trusted",
            ))  # fmt: skip
        self.sources += count
        return ids

    def enqueue(self, vault: str, ids: list[str]) -> str:
        payload = StoredIngestPayload(sources=ids).model_dump(mode="json")
        return self.jobs.enqueue(vault, payload, "ann", max_attempts=5)

    def submit(self, vault: str, count: int | None = None) -> str:
        return self.enqueue(vault, self.add(vault, count))

    def done(self, vault: str, job: str) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            row = self.jobs.rows(vault, job)[0]
            return row if row["status"] in ("done", "failed", "cancelled") else None

        row: dict[str, Any] = until(finished, f"job {job} to end", DEADLINE)
        assert row["status"] == "done", row
        return row

    def waiting(self, classid: int, objid: int) -> list[tuple[int, str]]:
        """The backends waiting for the advisory lock (classid, objid): (pid, host)."""
        found = self.q(
            "x",
            "SELECT l.pid, host(a.client_addr) AS addr FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND NOT l.granted AND l.classid = %s AND l.objid = %s",
            classid,
            objid,
        )
        return [(int(r["pid"]), self.net.host_of(str(r["addr"])) or "?") for r in found]


class Hold:
    """A stop at ``step`` in a running job of the vault once it committed a chunk: a trigger
    waits for an advisory lock this object holds on its own connection until :meth:`release`,
    which also drops the trigger (a vault can take one hold after another)."""

    def __init__(self, hosts: Hosts, vault: str, step: str) -> None:
        table, event, condition = STEPS[step]
        self.hosts = hosts
        self.key = secrets.randbelow(2**31)
        self.conn = psycopg.connect(hosts.url, autocommit=True)
        self.conn.execute("SELECT pg_advisory_lock(%s::int4, %s::int4)", (HOLD_CLASS, self.key))
        s = self.schema = f"v_{vault}"
        self.table = table
        # nested IFs: the sequence moves only once the step is reached in a running job that
        # committed a chunk (the first time only)
        body = f"""
            CREATE SEQUENCE {s}.hold_seq;
            CREATE FUNCTION {s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
              IF {condition} THEN
                IF EXISTS (SELECT 1 FROM {s}.jobs
                           WHERE status = 'running' AND progress_done >= 1) THEN
                  IF nextval('{s}.hold_seq') = 1 THEN
                    PERFORM pg_advisory_xact_lock({HOLD_CLASS}::int4, {self.key}::int4);
                  END IF;
                END IF;
              END IF;
              RETURN NEW; END $$;
            CREATE TRIGGER hold BEFORE {event} ON {s}.{table}
              FOR EACH ROW EXECUTE FUNCTION {s}.hold();
        """
        with hosts.storage.pool.connection() as conn:
            conn.execute(body)

    def held(self) -> tuple[int, str]:
        """Wait until a worker's backend waits at the step: (its pid, its host)."""
        got: list[tuple[int, str]] = until(
            lambda: self.hosts.waiting(HOLD_CLASS, self.key), "a worker at the step", DEADLINE
        )
        assert len(got) == 1, got
        return got[0]

    def release(self) -> None:
        if not self.conn.closed:
            # (when the server was stopped under it, the lock went with it)
            with contextlib.suppress(psycopg.OperationalError):
                self.conn.execute(
                    "SELECT pg_advisory_unlock(%s::int4, %s::int4)", (HOLD_CLASS, self.key)
                )
            self.conn.close()

    def close(self) -> None:
        """Release, and drop the trigger (the database must be up)."""
        self.release()
        s = self.schema
        with self.hosts.storage.pool.connection() as conn:
            conn.execute(f"DROP TRIGGER hold ON {s}.{self.table}; DROP FUNCTION {s}.hold(); "
                         f"DROP SEQUENCE {s}.hold_seq")  # fmt: skip


def sound(hosts: Hosts, vault: str, chunks: int, *, rebuild: bool = True) -> None:
    """Every chunk's plan applied exactly once, batches 1..n gap-free and each the audit log's,
    the audit chain and the sources intact, and the mirror — made incrementally after each fault,
    and (``rebuild``) rebuilt afresh — one commit per batch with its trailers, equal to the
    database."""
    storage = hosts.storage
    applied = [e.plan_id for e in storage.audit(vault) if e.action == "applied"]
    assert len(applied) == len(set(applied)) == chunks, Counter(applied).most_common(2)
    origins = [r["origin"] for r in hosts.q(vault, "SELECT origin FROM {s}.plans")]
    assert len(origins) == len(set(origins)) == chunks
    batches = storage.batches(vault)  # each checked against its audit entries as it is read
    assert [b.seq for b in batches] == list(range(1, chunks + 1))
    assert sorted(p for b in batches for p in b.plans) == sorted(p or "" for p in applied)
    outcomes = Counter(
        r["outcome"] for r in hosts.q(vault, "SELECT outcome FROM {s}.ingested_chunks")
    )
    assert outcomes == {"applied": chunks}, outcomes
    texts = [
        (r["page_slug"], r["text"])
        for r in hosts.q(vault, "SELECT page_slug, text FROM {s}.claims")
    ]
    assert len(texts) == len(set(texts))
    assert storage.verify_audit(vault) == []
    for row in hosts.q(vault, "SELECT id FROM {s}.sources"):
        storage.source_bytes(vault, row["id"])  # re-hashed against its id
    assert all(r["status"] == "done" for r in hosts.jobs.rows(vault))
    folder = hosts.tmp / f"mirror-{vault}"
    mirror(storage, vault, folder)
    assert trailers(folder) == [(b.seq, b.batch_id, list(b.plans)) for b in batches]
    report = check(storage, vault, folder)
    assert report.ok, report.problems
    if rebuild:
        fresh = hosts.tmp / f"rebuilt-{vault}-{secrets.token_hex(4)}"
        mirror(storage, vault, fresh)
        assert head(fresh) == head(folder)  # the same commits, ids and all
        report = check(storage, vault, fresh)
        assert report.ok, report.problems
        shutil.rmtree(fresh)


def tally(hosts: Hosts, vault: str, chunks: int) -> dict[str, int]:
    """What the faults may have broken, counted: plans applied twice, chunks whose plan was
    never applied, batch sequences with a gap or a mismatch, mirrors that differ from the
    database."""
    from affidavit.errors import IntegrityError

    applied = Counter(e.plan_id for e in hosts.storage.audit(vault) if e.action == "applied")
    try:
        hosts.storage.batches(vault)
        broken = 0
    except IntegrityError:
        broken = 1
    folder = hosts.tmp / f"mirror-{vault}"
    mirror(hosts.storage, vault, folder)
    return {
        "applied_twice": sum(n - 1 for n in applied.values()),
        "lost": chunks - len(applied),
        "sequence_broken": broken,
        "mirror_divergent": 0 if check(hosts.storage, vault, folder).ok else 1,
    }


def trailers(folder: Path) -> list[tuple[int, str, list[str]]]:
    """Each commit's batch and plans, oldest first, read from its trailers."""
    repo = pygit2.Repository(str(folder))
    out = []
    for commit in repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE):
        lines = commit.message.splitlines()
        (batch,) = [ln.split(": ", 1)[1] for ln in lines if ln.startswith("Affidavit-Batch: ")]
        seq, batch_id = batch.split(" ", 1)
        plans = [ln.split(": ", 1)[1] for ln in lines if ln.startswith("Affidavit-Plan: ")]
        out.append((int(seq), batch_id, plans))
    return out


def head(folder: Path) -> str:
    return str(pygit2.Repository(str(folder)).head.target)


def mirror_checked_over_tcp(hosts: Hosts, vault: str) -> None:
    """``affidavit mirror --check`` run on host w3, over its link: mirror = database."""
    done = subprocess.run(
        hosts.cli("w3", "mirror", "--database", hosts.db.tcp_url("w3", "team"), "--vault", vault,
                  str(hosts.tmp / f"mirror-{vault}"), "--check", "--json"),
        capture_output=True, text=True, env=hosts.env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert json.loads(done.stdout)["ok"] is True
    assert hosts.db.password not in done.stdout + done.stderr


# -- the faults ----------------------------------------------------------------------------
@dataclass
class Fault:
    """One injected fault: its kind, the job it hit, the host it hit, the job's row at its end
    and (for a cut link) the claim's row when the link went down."""

    kind: str
    job: str
    host: str
    row: dict[str, Any]
    first: dict[str, Any] | None = None


def kill_at(hosts: Hosts, vault: str, step: str) -> Fault:
    """kill -9 of the worker stopped at ``step`` in a new job's second chunk; the other host's
    worker finishes the job once the lease expired; the killed host's worker is started again."""
    hold = Hold(hosts, vault, step)
    try:
        job = hosts.submit(vault)
        pid, host = hold.held()
        proc = hosts.workers[host]
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=600) == -signal.SIGKILL
        hold.release()  # the killed worker's backend reads EOF and rolls back
        until(lambda: not hosts.q(vault, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", pid),
              "the killed worker's session to end", DEADLINE)  # fmt: skip
        row = hosts.done(vault, job)
    finally:
        hold.close()
    hosts.start_worker(host, wait=False)  # the host comes back for the next fault
    return Fault(f"kill:{step}", job, host, row)


def cut_link(hosts: Hosts, vault: str) -> Fault:
    """The lease holder ``A`` waits at the vault's door (the test holds the door's lock) when
    its link goes down; once another worker claimed the job and queued at the door, the link is
    healed and the door opened; returns once A logged ``lease_lost`` and the job is done."""
    (key,) = [r["id"] for r in hosts.q(vault, "SELECT id FROM affidavit.vaults WHERE name = %s",
                                       vault)]  # fmt: skip
    door = psycopg.connect(hosts.url, autocommit=True)
    try:
        ids = hosts.add(vault)  # (adding a source takes the door's lock too)
        door.execute("SELECT pg_advisory_lock(%s::int4, %s::int4)", (LOCK_CLASS, key))
        job = hosts.enqueue(vault, ids)
        ((_, a),) = until(lambda: hosts.waiting(LOCK_CLASS, key), "a worker at the door", DEADLINE)
        (b,) = [h for h in WORKERS if h != a]
        first = hosts.jobs.rows(vault, job)[0]
        lost_before = len(lease_lost(hosts, a, job))
        hosts.net.link(a, up=False)
        try:
            assert hosts.net.routes(a) == ""  # cut off: not even its own /30 is reachable
            # A's lease expires (its heartbeats can't get through) and B claims the job: the
            # fence goes up (B claims within its poll of the expiry: wait for the claim)
            until(lambda: hosts.jobs.rows(vault, job)[0]["fence"] > first["fence"],
                  "A's lease to expire and another worker to claim the job", DEADLINE)  # fmt: skip
            until(lambda: b in {h for _, h in hosts.waiting(LOCK_CLASS, key)},
                  "B to queue at the door", DEADLINE)  # fmt: skip
        finally:
            hosts.net.link(a, up=True)
        door.execute("SELECT pg_advisory_unlock(%s::int4, %s::int4)", (LOCK_CLASS, key))
        row = hosts.done(vault, job)
    finally:
        door.close()
    until(lambda: len(lease_lost(hosts, a, job)) > lost_before, "A to find its claim gone",
          DEADLINE)  # fmt: skip
    return Fault("cut", job, a, row, first)


def lease_lost(hosts: Hosts, host: str, job: str) -> list[dict[str, Any]]:
    return [e for e in hosts.events(host) if e["event"] == "lease_lost" and e["job"] == job]


def restart_mid_batch(hosts: Hosts, vault: str) -> Fault:
    """``pg_ctl stop -m immediate`` while a worker is inside a batch (its audit entry written,
    the batch not sealed), then a start; returns once the job is done."""
    hold = Hold(hosts, vault, "applied")
    try:
        job = hosts.submit(vault)
        _, host = hold.held()
        hosts.db.stop_immediate()
        hold.release()
        hosts.db.restart()
        row = hosts.done(vault, job)
    finally:
        hold.close()
    return Fault("restart", job, host, row)


def terminate_mid_transaction(hosts: Hosts, vault: str) -> Fault:
    """``pg_terminate_backend`` of the worker's connection while its transaction waits at the
    batch's seal; returns once the job is done."""
    hold = Hold(hosts, vault, "sealed")
    try:
        job = hosts.submit(vault)
        pid, host = hold.held()
        assert hosts.q(vault, "SELECT pg_terminate_backend(%s) AS ok", pid)[0]["ok"]
        hold.release()
        row = hosts.done(vault, job)
    finally:
        hold.close()
    return Fault("terminate", job, host, row)


# -- links between the other hosts (bench/bench_pg_hosts.py) ---------------------------------
CLIENT_SUBNET = "10.231.8"
"""The private /24 of the links :func:`client_links` adds (beside netns.SUBNET's database links;
like them it exists only inside the namespaces)."""


def client_links(net: netns.Network, client: str, servers: list[str]) -> dict[str, str]:
    """A veth pair from host ``client`` to each host of ``servers`` (``eth1`` there), one /30
    each out of :data:`CLIENT_SUBNET`: ``client`` reaches each server's address on its link and
    nothing else beyond its database link. Returns each server's address. The pairs go with
    the namespaces when the network is removed."""
    if len(servers) > 60:
        raise ValueError("at most 60 links fit in the /24")
    addresses = {}
    for n, server in enumerate(servers):
        mine, theirs = f"{CLIENT_SUBNET}.{4 * n + 1}", f"{CLIENT_SUBNET}.{4 * n + 2}"
        netns._ip("-n", net.ns(client), "link", "add", f"c{n}", "type", "veth", "peer", "name",
                  "eth1", "netns", net.ns(server))  # fmt: skip
        netns._ip("-n", net.ns(client), "addr", "add", f"{mine}/30", "dev", f"c{n}")
        netns._ip("-n", net.ns(server), "addr", "add", f"{theirs}/30", "dev", "eth1")
        netns._ip("-n", net.ns(client), "link", "set", f"c{n}", "up")
        netns._ip("-n", net.ns(server), "link", "set", "eth1", "up")
        addresses[server] = theirs
    return addresses
