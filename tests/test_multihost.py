"""Several hosts for real (issue 26 item 6): PostgreSQL on its own host and ``affidavit worker``
processes on two others, each host a network namespace joined to the database's by a veth pair
(tests/netns.py) — the workers reach PostgreSQL over TCP on their link's address, with a password
(pg_hba.conf admits that /24 only), and nothing else. Faults injected:

1. kill -9 of the worker inside each step of a chunk's apply (its nonce, the plan admitted, its
   claims written, the audit entry, the batch sealed, the checkpoint, after the commit, the job's
   end);
2. a lease holder's link taken down (``ip link set eth0 down`` in its namespace) past its lease,
   another worker takes the job, the link healed: the first worker's late write is refused by
   the fencing token;
3. ``pg_ctl stop -m immediate`` in the middle of a batch, and a start;
4. ``pg_terminate_backend`` of a worker's connection in the middle of its transaction.

After each: every chunk's plan applied exactly once (the audit log, the gap-free batch sequence,
one ``Affidavit-Batch`` trailer per batch in the mirror), the mirror equal to a fresh rebuild and
to the database (``mirror --check``, run on a third host over TCP), the audit chain and the
sources intact.

A worker is stopped inside a step without any test hook in the product: the test installs a
trigger in the vault's schema that waits for an advisory lock the test holds (the first time the
step is reached once a batch exists), sees the worker's backend waiting on it
(``pg_locks``; the connection's client address names the host), and acts. Every wait is for a
state, polled with a generous deadline; no test depends on a timing margin.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import netns
from .conftest import ROOT
from .pg_cluster import BIN, USER, Cluster, Unavailable, drop_vaults
from .test_pg_jobs import TEXT, until

psycopg = pytest.importorskip("psycopg")
pygit2 = pytest.importorskip("pygit2")

from affidavit.jobs.payloads import StoredIngestPayload  # noqa: E402
from affidavit.mirror import check, mirror  # noqa: E402
from affidavit.storage.postgres import LOCK_CLASS, PostgresStorage  # noqa: E402
from affidavit.storage.postgres_jobs import PostgresJobStore  # noqa: E402

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


pytestmark = pytest.mark.skipif(
    (why := netns.unavailable()) is not None, reason=str(why)
)  # fmt: skip


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
        self.starts: Counter[str] = Counter()
        self.sources = 0

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
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=self.env)
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
        for proc in self.workers.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=600)
        self.storage.close()

    # -- the database, as the test sees it ---------------------------------------------------
    def q(self, vault: str, text: str, *params: Any) -> list[dict[str, Any]]:
        with self.storage.pool.connection() as conn:
            return list(conn.execute(text.replace("{s}", f"v_{vault}"), params).fetchall())

    def vault(self, name: str) -> str:
        self.storage.create_vault(name, "ann")
        return name

    def add(self, vault: str, count: int = SOURCES) -> list[str]:
        """``count`` new sources (one chunk each); their ids."""
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

    def submit(self, vault: str, count: int = SOURCES) -> str:
        return self.enqueue(vault, self.add(vault, count))

    def done(self, vault: str, job: str) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            row = self.jobs.rows(vault, job)[0]
            return row if row["status"] in ("done", "failed", "cancelled") else None

        row = until(finished, f"job {job} to end", DEADLINE)
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
    """A stop at ``step`` for the vault's next chunk once it has a batch: a trigger waits for an
    advisory lock this object holds on its own connection until :meth:`release`."""

    def __init__(self, hosts: Hosts, vault: str, step: str) -> None:
        table, event, condition = STEPS[step]
        self.hosts = hosts
        self.key = secrets.randbelow(2**31)
        self.conn = psycopg.connect(hosts.url, autocommit=True)
        self.conn.execute("SELECT pg_advisory_lock(%s::int4, %s::int4)", (HOLD_CLASS, self.key))
        s = f"v_{vault}"
        # nested IFs: the sequence moves only once the step is reached with a batch committed
        body = f"""
            CREATE SEQUENCE {s}.hold_seq;
            CREATE FUNCTION {s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
              IF {condition} THEN
                IF EXISTS (SELECT 1 FROM {s}.batches) THEN
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
        got = until(lambda: self.hosts.waiting(HOLD_CLASS, self.key), "a worker at the step",
                    DEADLINE)  # fmt: skip
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


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosts]:
    with netns.Network("mh", HOSTS) as net:
        try:
            db = start_database(net)
        except Unavailable as exc:
            pytest.skip(str(exc))
        made = Hosts(net, db, tmp_path_factory.mktemp("multihost"))
        try:
            drop_vaults(made.url)
            for host in WORKERS:
                made.start_worker(host)
            yield made
        finally:
            made.close()
            db.stop()


def sound(hosts: Hosts, vault: str, chunks: int) -> None:
    """Every chunk's plan applied exactly once, batches 1..n gap-free and each the audit log's,
    the audit chain and the sources intact, and the mirror — made incrementally after each fault,
    and rebuilt afresh — one commit per batch with its trailers, equal to the database."""
    storage = hosts.storage
    applied = [e.plan_id for e in storage.audit(vault) if e.action == "applied"]
    assert len(applied) == len(set(applied)) == chunks, Counter(applied).most_common(2)
    origins = [r["origin"] for r in hosts.q(vault, "SELECT origin FROM {s}.plans")]
    assert len(origins) == len(set(origins)) == chunks
    batches = storage.batches(vault)  # each checked against its audit entries as it is read
    assert [b.seq for b in batches] == list(range(1, chunks + 1))
    assert sorted(p for b in batches for p in b.plans) == sorted(applied)
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
    fresh = hosts.tmp / f"rebuilt-{vault}-{secrets.token_hex(4)}"
    mirror(storage, vault, fresh)
    assert trailers(folder) == [(b.seq, b.batch_id, list(b.plans)) for b in batches]
    assert head(fresh) == head(folder)  # the same commits, ids and all
    for each in (folder, fresh):
        report = check(storage, vault, each)
        assert report.ok, report.problems


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


def victim(hosts: Hosts, host: str) -> subprocess.Popen[bytes]:
    assert host in WORKERS, host
    return hosts.workers[host]


def test_the_hosts_reach_the_database_on_their_link_and_nothing_else(hosts: Hosts) -> None:
    """Each host's one route is its /30; the database answers on the host's link with the
    password, and refuses without it; nothing outside the links is reachable."""
    assert hosts.net.routes("w1").split() == [
        "10.231.7.0/30", "dev", "eth0", "proto", "kernel", "scope", "link", "src", "10.231.7.2",
    ]  # fmt: skip
    probe = (
        "import socket, sys\n"
        "for addr in sys.argv[1:]:\n"
        "    s = socket.socket(); s.settimeout(5)\n"
        "    try:\n"
        "        s.connect((addr, 5432)); print(addr, 'open')\n"
        "    except OSError as e:\n"
        "        print(addr, e.errno)\n"
    )
    other = hosts.net.database_address("w2")  # the database's address on another host's link
    done = subprocess.run(
        hosts.net.argv("w1", [sys.executable, "-c", probe, hosts.net.database_address("w1"),
                              other, "127.0.0.1", "1.1.1.1"]),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    got = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert got[hosts.net.database_address("w1")] == "open"
    import errno

    assert got[other] == got["1.1.1.1"] == str(errno.ENETUNREACH)
    assert got["127.0.0.1"] == str(errno.ECONNREFUSED)  # nothing listens on w1's loopback
    connect = "import psycopg, sys; psycopg.connect(sys.argv[1]).close(); print('in')"
    url = hosts.db.tcp_url("w1", "team")
    env = {k: v for k, v in hosts.env.items() if k != "PGPASSWORD"}
    refused = subprocess.run(hosts.net.argv("w1", [sys.executable, "-c", connect, url]),
                             capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert refused.returncode != 0 and "password" in refused.stderr
    wrong = {**env, "PGPASSWORD": "not-" + hosts.db.password}
    refused = subprocess.run(hosts.net.argv("w1", [sys.executable, "-c", connect, url]),
                             capture_output=True, text=True, env=wrong, timeout=120, check=False)  # fmt: skip
    assert refused.returncode != 0 and "password authentication failed" in refused.stderr
    allowed = subprocess.run(hosts.net.argv("w1", [sys.executable, "-c", connect, url]),
                             capture_output=True, text=True, env=hosts.env, timeout=120, check=False)  # fmt: skip
    assert allowed.stdout.strip() == "in", allowed.stderr


@pytest.mark.parametrize("step", list(STEPS))
def test_a_worker_killed_at_each_step_leaves_each_plan_applied_once(
    hosts: Hosts, step: str
) -> None:
    """kill -9 of the worker stopped at ``step`` in its job's second chunk (its first is
    committed): the other worker, on another host, takes the job once the lease expired and
    finishes it; nothing of the killed chunk's transaction is left, each plan applied once."""
    vault = hosts.vault(f"kill_{step}")
    hold = Hold(hosts, vault, step)
    try:
        job = hosts.submit(vault)
        pid, host = hold.held()
        proc = victim(hosts, host)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=600) == -signal.SIGKILL
        hold.release()  # the killed worker's backend reads EOF and rolls back
        until(lambda: not hosts.q(vault, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", pid),
              "the killed worker's session to end", DEADLINE)  # fmt: skip
        row = hosts.done(vault, job)
    finally:
        hold.release()
    # claimed again after the kill (more than once if a loaded host let a lease lapse)
    assert row["attempts"] >= 2 and row["fence"] == row["attempts"], row
    (survivor,) = [h for h in WORKERS if h != host]
    assert any(e["event"] == "done" and e["job"] == job for e in hosts.events(survivor))
    hosts.start_worker(host, wait=False)  # the host comes back for the next fault
    sound(hosts, vault, SOURCES)
    if step == "done":
        mirror_checked_over_tcp(hosts, vault)


def test_a_lease_holder_cut_off_past_its_lease_writes_nothing_when_healed(hosts: Hosts) -> None:
    """Worker A waits at the vault's door (the test holds the door's lock) when its host's link
    goes down. Its lease expires; worker B, on another host, claims the job (the fence goes up)
    and queues at the door too. A's link is healed and the door opened: A's backend gets the lock
    first, and A's first write under it — the claim check — is refused by the fence (A logs
    ``lease_lost``). B finishes the job; every chunk is B's, each plan applied once."""
    vault = hosts.vault("cut")
    (key,) = [r["id"] for r in hosts.q(vault, "SELECT id FROM affidavit.vaults WHERE name = %s",
                                       vault)]  # fmt: skip
    door = psycopg.connect(hosts.url, autocommit=True)
    healed: list[str] = []
    try:
        ids = hosts.add(vault)  # (adding a source takes the door's lock too)
        door.execute("SELECT pg_advisory_lock(%s::int4, %s::int4)", (LOCK_CLASS, key))
        job = hosts.enqueue(vault, ids)
        ((_, a),) = until(lambda: hosts.waiting(LOCK_CLASS, key), "a worker at the door", DEADLINE)
        (b,) = [h for h in WORKERS if h != a]
        first = hosts.jobs.rows(vault, job)[0]
        hosts.net.link(a, up=False)
        try:
            assert hosts.net.routes(a) == ""  # cut off: not even its own /30 is reachable
            # A's lease expires (its heartbeats can't get through) and B claims the job: the
            # fence goes up (B claims within its poll of the expiry: wait for the claim)
            until(lambda: hosts.jobs.rows(vault, job)[0]["fence"] > first["fence"],
                  "A's lease to expire and another worker to claim the job", DEADLINE)  # fmt: skip

            def b_waits() -> bool:
                return b in {h for _, h in hosts.waiting(LOCK_CLASS, key)}

            until(b_waits, "B to queue at the door", DEADLINE)
            taken = hosts.jobs.rows(vault, job)[0]
            assert taken["fence"] == first["fence"] + 1 and taken["lease_owner"] != first[
                "lease_owner"]  # fmt: skip
        finally:
            hosts.net.link(a, up=True)
            healed.append(a)
        door.execute("SELECT pg_advisory_unlock(%s::int4, %s::int4)", (LOCK_CLASS, key))
        row = hosts.done(vault, job)
    finally:
        door.close()
    assert healed == [a]
    lost = until(lambda: [e for e in hosts.events(a) if e["event"] == "lease_lost"],
                 "A to find its claim gone", DEADLINE)  # fmt: skip
    assert lost[0]["job"] == job
    assert row["fence"] >= first["fence"] + 1 and row["attempts"] >= 2
    # A's nonce of the first chunk was issued before the cut; every checkpoint is a later claim's
    fences = {r["fence"] for r in hosts.q(vault, "SELECT fence FROM {s}.ingested_chunks")}
    assert fences and min(fences) > first["fence"], fences
    assert hosts.workers[a].poll() is None  # A lives on, and takes the next jobs
    sound(hosts, vault, SOURCES)
    again = hosts.submit(vault)
    hosts.done(vault, again)
    sound(hosts, vault, 2 * SOURCES)


def test_the_database_stopped_immediately_mid_batch_and_started_again(hosts: Hosts) -> None:
    """``pg_ctl stop -m immediate`` while a worker is inside a batch (its audit entry written,
    its batch not sealed), then a start: crash recovery drops the uncommitted batch, the workers
    reconnect, the job is claimed again and finished, each plan applied once."""
    vault = hosts.vault("restart")
    hold = Hold(hosts, vault, "applied")
    try:
        job = hosts.submit(vault)
        hold.held()
        hosts.db.stop_immediate()
        hold.release()
        hosts.db.restart()
        row = hosts.done(vault, job)
    finally:
        hold.release()
    assert row["attempts"] >= 2, row
    for host in WORKERS:
        assert hosts.workers[host].poll() is None, hosts.log(host).read_text()[-2000:]
    sound(hosts, vault, SOURCES)
    mirror_checked_over_tcp(hosts, vault)


def test_a_workers_backend_terminated_mid_transaction(hosts: Hosts) -> None:
    """``pg_terminate_backend`` of the worker's connection while its transaction waits at the
    batch's seal: the transaction leaves nothing, the worker logs the error and lives on, and the
    job — claimed again once the lease expired — applies each plan once."""
    vault = hosts.vault("terminate")
    hold = Hold(hosts, vault, "sealed")
    try:
        job = hosts.submit(vault)
        pid, host = hold.held()
        assert hosts.q(vault, "SELECT pg_terminate_backend(%s) AS ok", pid)[0]["ok"]
        hold.release()
        row = hosts.done(vault, job)
    finally:
        hold.release()
    assert row["attempts"] >= 2, row
    errors = [e for e in hosts.events(host) if e["event"] == "database_error"]
    assert errors and errors[-1]["job"] == job
    assert hosts.workers[host].poll() is None
    sound(hosts, vault, SOURCES)


def test_namespaces_are_removed_after_a_failed_test_and_swept_after_a_kill() -> None:
    """The helper's own cleanup: a test that fails inside ``Network`` leaves no namespace; one
    whose process is killed outright (no cleanup runs) leaves them to the next run's sweep."""
    net = netns.Network("fail", ["w1"])
    with pytest.raises(RuntimeError, match="the test failed"), net:
        assert len(net.exists()) == 2
        raise RuntimeError("the test failed")
    assert net.exists() == []
    child = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); from tests import netns\n"
        "net = netns.Network('killed', ['w1']); net.create(); print(net.base, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run([sys.executable, "-c", child, str(ROOT)], capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    base = done.stdout.strip()
    left = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                      check=True).stdout.split() if n.startswith(base)]  # fmt: skip
    assert len(left) == 2
    assert sorted(n for n in netns.sweep() if n.startswith(base)) == sorted(left)
    assert not [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                          text=True, check=True).stdout.split()
                if n.startswith(base)]  # fmt: skip


def test_without_root_the_tests_skip_saying_how_to_run_them() -> None:
    """The helper run as an ordinary user (by the system's python: the helper is stdlib only)."""
    code = Path(netns.__file__).read_text(encoding="utf-8") + "\nprint(unavailable())\n"
    done = subprocess.run(
        ["runuser", "-u", USER, "--", "/usr/bin/python3", "-c", code],
        capture_output=True, text=True, timeout=120, check=False, cwd="/",
    )  # fmt: skip
    assert "run them as root" in done.stdout, done.stderr
