"""Several hosts for real (issue 26 item 6): PostgreSQL on its own host, ``affidavit worker``
processes on two others, the mirror's checks and a daemon on a third; each host a network
namespace joined to the database's by a veth pair (tests/netns.py). The hosts reach PostgreSQL
over TCP on their link's address, with a password (pg_hba.conf admits that /24 only), and
nothing else. Faults injected:

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

The set-up and the faults are tests/multihost.py's (bench/bench_pg_faults.py injects them by the
hundred): a worker is stopped inside a step without any test hook in the product, by a trigger
that waits for an advisory lock the test holds. Every wait is for a state, polled with a
generous deadline; no test depends on a timing margin.
"""

from __future__ import annotations

import errno
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import netns
from .pg_cluster import USER, Unavailable, drop_vaults

psycopg = pytest.importorskip("psycopg")
pygit2 = pytest.importorskip("pygit2")

from .multihost import (  # noqa: E402
    HOSTS,
    ROOT,
    SOURCES,
    STEPS,
    WORKERS,
    Hosts,
    cut_link,
    kill_at,
    mirror_checked_over_tcp,
    restart_mid_batch,
    sound,
    start_database,
    terminate_mid_transaction,
)

pytestmark = pytest.mark.skipif(
    (why := netns.unavailable()) is not None, reason=str(why)
)  # fmt: skip


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
    fault = kill_at(hosts, vault, step)
    # claimed again after the kill (more than once if a loaded host let a lease lapse)
    assert fault.row["attempts"] >= 2 and fault.row["fence"] == fault.row["attempts"], fault
    (survivor,) = [h for h in WORKERS if h != fault.host]
    assert [e for e in hosts.events(survivor) if e["event"] == "done" and e["job"] == fault.job]
    sound(hosts, vault, SOURCES)
    if step == "done":
        mirror_checked_over_tcp(hosts, vault)


def test_a_lease_holder_cut_off_past_its_lease_writes_nothing_when_healed(hosts: Hosts) -> None:
    """Worker A waits at the vault's door (the test holds the door's lock) when its host's link
    goes down. Its lease expires; worker B, on another host, claims the job (the fence goes up)
    and queues at the door too. A's link is healed and the door opened: A's first write under
    the lock — the claim check — is refused by the fence (A logs ``lease_lost``). B finishes the
    job; no checkpoint is A's, each plan applied once; A lives on and runs the next job."""
    vault = hosts.vault("cut")
    fault = cut_link(hosts, vault)
    first, row = fault.first, fault.row
    assert first is not None and row["fence"] > first["fence"] and row["attempts"] >= 2
    assert row["lease_owner"] is None or row["lease_owner"] != first["lease_owner"]
    # A's nonce of the first chunk was issued before the cut; every checkpoint is a later claim's
    fences = {r["fence"] for r in hosts.q(vault, "SELECT fence FROM {s}.ingested_chunks")}
    assert fences and min(fences) > first["fence"], fences
    assert hosts.workers[fault.host].poll() is None
    sound(hosts, vault, SOURCES)
    hosts.done(vault, hosts.submit(vault))
    sound(hosts, vault, 2 * SOURCES)


def test_the_database_stopped_immediately_mid_batch_and_started_again(hosts: Hosts) -> None:
    """``pg_ctl stop -m immediate`` while a worker is inside a batch (its audit entry written,
    its batch not sealed), then a start: crash recovery drops the uncommitted batch, the workers
    and a daemon on the third host reconnect, the job is claimed again and finished, each plan
    applied once, and the daemon serves it."""
    vault = hosts.vault("restart")
    daemon = hosts.start_daemon("w3")  # a daemon on the third host serves the vault throughout
    fault = restart_mid_batch(hosts, vault)
    assert fault.row["attempts"] >= 2, fault
    for host in WORKERS:
        assert hosts.workers[host].poll() is None, hosts.log(host).read_text()[-2000:]
    sound(hosts, vault, SOURCES)
    mirror_checked_over_tcp(hosts, vault)
    # the daemon's pool reconnects over its link: it serves what the workers applied
    audit = hosts.daemon_get("w3", f"/v1/vaults/{vault}/audit")
    assert audit.status_code == 200, audit.text
    applied = [e["plan_id"] for e in audit.json()["entries"] if e["action"] == "applied"]
    assert applied == [e.plan_id for e in hosts.storage.audit(vault) if e.action == "applied"]
    assert len(applied) == SOURCES
    hits = hosts.daemon_get("w3", f"/v1/vaults/{vault}/search", q="lighthouse painted red")
    assert hits.status_code == 200 and hits.json(), hits.text
    assert daemon.poll() is None


def test_a_workers_backend_terminated_mid_transaction(hosts: Hosts) -> None:
    """``pg_terminate_backend`` of the worker's connection while its transaction waits at the
    batch's seal: the transaction leaves nothing, the worker logs the error and lives on, and the
    job — claimed again once the lease expired — applies each plan once."""
    vault = hosts.vault("terminate")
    fault = terminate_mid_transaction(hosts, vault)
    assert fault.row["attempts"] >= 2, fault
    errors = [e for e in hosts.events(fault.host) if e["event"] == "database_error"]
    assert errors and errors[-1]["job"] == fault.job
    assert hosts.workers[fault.host].poll() is None
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
