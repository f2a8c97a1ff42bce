"""What only PostgreSQL has: named migrations per schema, several vaults in one database (each with
its own lock and batch sequence), backends killed mid-transaction, and the test cluster itself."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from affidavit.storage import Door, open_storage

from . import pg_appliers as ap
from .conftest import ROOT

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def url(pg_url: str) -> str:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        schemas = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname = 'affidavit' OR nspname LIKE 'v\\_%'"
        ).fetchall()
        for (name,) in schemas:
            conn.execute(
                psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(name))
            )
    return pg_url


@pytest.fixture
def storage(url: str) -> Iterator[Any]:
    made = open_storage(url)
    yield made
    made.close()


def tables(url: str, schema: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
    return {r[0] for r in rows}


def test_migrations_apply_once_per_schema_and_are_idempotent(storage: Any, url: str) -> None:
    from affidavit.storage.pg_migrations import REGISTRY, VAULT

    assert storage.vaults() == []
    assert storage.migrate() == [f"affidavit.{n}" for n, _ in REGISTRY]
    assert storage.migrate() == []
    storage.create_vault("main", "ann")
    storage.create_vault("main", "someone else")  # idempotent: the first owner stays
    assert tables(url, "v_main") == {
        "_migrations", "plans", "slug_reservations", "audit", "batch_counter", "batches",
        "jobs", "job_events", "sources", "pages", "claims", "evidence",
        "source_flags", "links", "context_snapshots", "evidence_carried",
        "api_tokens", "nonces", "agent_calls", "ingested_chunks",
        "lint_runs", "findings", "counters", "after_ingest", "questions", "model_calls",
    }  # fmt: skip
    with psycopg.connect(url) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM v_main._migrations ORDER BY name")]
        owner = conn.execute("SELECT owner FROM affidavit.vaults WHERE name = 'main'").fetchone()
    assert names == sorted(n for n, _ in VAULT) and owner == ("ann",)
    assert storage.migrate() == []
    with psycopg.connect(url, autocommit=True) as conn:  # a migration added later, for one vault
        conn.execute("DELETE FROM v_main._migrations WHERE name = 'pg001_batch_sequence'")
        conn.execute("DROP TABLE v_main.batches, v_main.batch_counter")
    assert storage.migrate() == ["v_main.pg001_batch_sequence"]
    assert storage.migrate() == []


def test_concurrent_migrations_and_vault_creation_do_not_collide(url: str) -> None:
    def make(n: int) -> None:
        storage = open_storage(url)
        try:
            storage.migrate()
            storage.create_vault(f"v{n % 3}", f"owner{n}")
            storage.migrate()
        finally:
            storage.close()

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(make, range(6)))
    storage = open_storage(url)
    try:
        assert sorted(storage.vaults()) == ["v0", "v1", "v2"]
    finally:
        storage.close()


def test_vaults_have_their_own_schema_lock_and_sequence(storage: Any, url: str) -> None:
    storage.create_vault("main", "ann")
    storage.create_vault("other", "bob")
    other = open_storage(url, name="other")
    ap.propose_all(storage, ["p1", "p2"])
    for plan_id in ("q1", "p1"):
        storage.propose(
            "other", plan_id, author="b", origin="o", plan_json="{}",
            created_at=ap.NOW, expires_at=ap.EXPIRES,
        )  # fmt: skip
    try:
        with psycopg.connect(url, autocommit=True) as admin, storage.door("main", "b-1") as door:
            door.mark_applied("p1", now=ap.NOW, actor="ann", detail={})
            # main's lock is held (until this transaction ends); other's is free, so the door
            # of vault other goes through while main's is open
            held = "SELECT pg_try_advisory_xact_lock(%s::int4, id::int4) FROM affidavit.vaults WHERE name = %s"
            assert admin.execute(held, (0x4166, "main")).fetchone() == (False,)
            assert admin.execute(held, (0x4166, "other")).fetchone() == (True,)
            with storage.door("other", "b-1") as theirs:
                theirs.mark_applied("p1", now=ap.NOW, actor="bob", detail={})
                assert theirs.seal() == 1
            assert door.seal() == 1
        assert ap.apply_once(storage, "b-2", ["p2"]).seq == 2
        assert [r.plans for r in storage.batches("main")] == [("p1",), ("p2",)]
        assert [r.plans for r in storage.batches("other")] == [("p1",)]
        assert storage.plan("other", "q1").status == "pending"
        with pytest.raises(Exception, match="no vault 'third'"):
            storage.batches("third")
    finally:
        other.close()


def test_200_applies_with_backends_killed_mid_transaction(
    storage: Any, url: str, tmp_path: Path
) -> None:
    """Four threads, 50 batches each; at a random step a batch's backend is killed with
    ``pg_terminate_backend`` (from another connection) or an exception is raised: every
    committed batch is whole and numbered without gaps, every killed one left nothing."""
    storage.create_vault("main", "ann")
    witness = tmp_path / "witness"

    def run(n: int) -> list[ap.Outcome]:
        rng = random.Random(n)
        mine = open_storage(url)
        admin = psycopg.connect(url, autocommit=True)
        try:
            jobs = []
            for k in range(50):
                plans = [f"k{n}-{k}-{j}" for j in range(rng.randint(1, 3))]
                ap.propose_all(mine, plans)
                jobs.append((f"k{n}-b{k}", plans))

            def fault(step: str, door: Door, leave: Callable[[], None]) -> None:
                roll = rng.random()
                if roll < 0.1:
                    leave()  # the lock goes with the backend: note the exit first
                    pid = door.backend_pid  # type: ignore[attr-defined]
                    admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
                elif roll < 0.15:
                    raise ap.Abort(f"injected at {step}")

            return [ap.apply_once(mine, b, p, witness, fault) for b, p in jobs]
        finally:
            admin.close()
            mine.close()

    with ThreadPoolExecutor(4) as pool:
        outcomes = [o for run_ in pool.map(run, range(4)) for o in run_]
    killed = [o for o in outcomes if "terminating connection" in o.error]
    assert len(outcomes) == 200 and len(killed) > 10, "backends were killed"
    ok = [o for o in outcomes if o.seq is not None]
    records = storage.batches("main")
    assert [r.seq for r in records] == list(range(1, len(ok) + 1))
    by_id = {r.batch_id: r for r in records}
    assert set(by_id) == {o.batch_id for o in ok}
    for o in ok:
        assert list(by_id[o.batch_id].plans) == o.plans
        assert [json.loads(e.detail) for e in by_id[o.batch_id].entries] == o.details
    for o in outcomes:
        assert storage.committed("main", o.batch_id) == o.seq  # killed at the seal: None
        if o.seq is None:
            assert {storage.plan("main", p).status for p in o.plans} == {"pending"}
    assert storage.verify_audit("main") == []
    assert ap.interleavings(witness) == []
    with psycopg.connect(url) as conn:  # the counter row agrees with the table
        assert conn.execute("SELECT last FROM v_main.batch_counter").fetchone() == (len(ok),)


def test_a_second_door_waits_for_the_first_to_commit(storage: Any, url: str) -> None:
    """The number is taken under the vault's lock and only the first door's commit releases it:
    a second door (another connection) waits on the advisory lock, readers see no uncommitted
    batch, and the numbers commit in order."""
    storage.create_vault("main", "ann")
    ap.propose_all(storage, ["p1", "p2"])
    other = open_storage(url, name="main")
    outcome: list[ap.Outcome] = []
    waiting = "SELECT locktype, classid::int, objid::int FROM pg_locks WHERE NOT granted"
    key = (0x4166, storage._vault("main")[0])
    try:
        with psycopg.connect(url, autocommit=True) as admin:
            with storage.door("main", "b-1") as first:
                first.mark_applied("p1", now=ap.NOW, actor="ann", detail={})
                assert first.seal() == 1
                second = threading.Thread(
                    target=lambda: outcome.append(ap.apply_once(other, "b-2", ["p2"]))
                )
                second.start()
                while not (blocked := admin.execute(waiting).fetchall()):
                    time.sleep(0.01)  # until the second door waits (no deadline)
                assert blocked == [("advisory", *key)]  # on the vault's lock, nothing else
                assert storage.batches("main") == [] and storage.committed("main", "b-1") is None
            second.join()
        assert outcome[0].seq == 2, outcome[0].error
        assert [(r.seq, r.batch_id) for r in storage.batches("main")] == [(1, "b-1"), (2, "b-2")]
    finally:
        other.close()


def test_a_tampered_audit_or_batch_row_is_found(storage: Any, url: str) -> None:
    storage.create_vault("main", "ann")
    ap.propose_all(storage, ["p1", "p2"])
    ap.apply_once(storage, "b-1", ["p1"])
    ap.apply_once(storage, "b-2", ["p2"])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE v_main.audit SET actor = 'mallory' WHERE seq = 1")
        conn.execute("UPDATE v_main.batches SET plans = '[\"p9\"]' WHERE seq = 2")
    assert any("altered" in p for p in storage.verify_audit("main"))
    with pytest.raises(Exception, match="does not match its audit entries"):
        storage.batches("main")


def test_the_test_cluster_is_unprivileged_and_has_no_tcp(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
        data = conn.execute("SHOW data_directory").fetchone()[0]
    if os.geteuid() == 0:
        import pwd

        assert pwd.getpwuid(os.stat(data).st_uid).pw_name == "affidavit-pg"
    assert "host=" in pg_url and "localhost" not in pg_url


def test_a_plain_install_never_imports_psycopg() -> None:
    """Importing the storage package (and opening a SQLite vault through it) needs no extra;
    asking for PostgreSQL without it names the install command."""
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import affidavit.storage as s\n"
        "from affidavit.errors import ConfigError\n"
        "try:\n"
        "    s.open_storage('postgresql://nobody@/x?host=/nonexistent')\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
        "print('psycopg' in sys.modules and sys.modules['psycopg'] is not None)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "pip install 'affidavit[postgres]'" in done.stdout
    assert done.stdout.strip().endswith("False")


def test_a_cluster_outlives_no_test_process_killed_outright(pg_cluster: Any) -> None:
    """A test process killed with SIGKILL runs no atexit; the cluster's watchdog stops the
    server and deletes its dir anyway."""
    code = (
        "import os, signal, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import pg_cluster\n"
        "c = pg_cluster.cluster()\n"
        "print(c.root, (c.data / 'postmaster.pid').read_text().split()[0], flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTEST_XDIST_WORKER": "killed"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "tests")], capture_output=True, text=True, env=env
    )
    assert done.returncode == -9, done.stderr
    root, pid = done.stdout.split()
    while Path(root).exists() or Path(f"/proc/{pid}").exists():
        time.sleep(0.1)  # until the watchdog has stopped it (no deadline: the suite's timeout)


def test_a_registry_row_that_is_not_a_vault_name_creates_no_schema(storage: Any, url: str) -> None:
    # An attacker with a write on the registry table (a tampered dump, a hand-made row) must not
    # make migrate() create a schema for a name create_vault() would refuse, nor list it.
    storage.create_vault("main", "ann")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO affidavit.vaults (name, owner) VALUES ('Main\"; --', 'eve')")
        conn.execute(
            "INSERT INTO affidavit.vaults (name, owner) VALUES ('x' || repeat('y', 60), 'e')"
        )
    assert storage.migrate() == []
    assert storage.vaults() == ["main"]
    with psycopg.connect(url) as conn:
        schemas = {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace")}
    assert [s for s in schemas if s.startswith("v_")] == ["v_main"]
