"""One contract, two backends: the door's database step (lock, re-check W5, write, gap-free batch
number) on today's SQLite vault and on a real PostgreSQL 15 (tests/pg_cluster.py), run by
threads and by processes, with faults injected between the steps."""

from __future__ import annotations

import json
import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.storage import SQLiteStorage, Storage, open_storage
from affidavit.vault import init_vault

from . import pg_appliers as ap

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

ATTACKS = [
    'it\'s "quoted" \\ back\\slash',
    "'; DROP TABLE plans; --",
    "$$; DROP SCHEMA affidavit CASCADE; $$",
    "%s %(name)s {s} {} ?",
    "שלום עולם ‮evil‬ 𝕏 🧪 e\u0301 \u200b\ufeff",
    "line\r\nbreak\ttab\x7f\x01",
]


def fresh_pg_vault(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS v_main CASCADE")
        conn.execute("DROP SCHEMA IF EXISTS v_other CASCADE")
        conn.execute("DROP SCHEMA IF EXISTS affidavit CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The address of an empty database holding vault ``main``, for each backend."""
    if request.param == "sqlite":
        vault, _ = init_vault(tmp_path / "vault")
        vault.close()
        yield str(tmp_path / "vault")
        return
    url = str(request.getfixturevalue("pg_url"))
    fresh_pg_vault(url)
    storage = open_storage(url)
    try:
        storage.create_vault(ap.VAULT, "owner")
    finally:
        storage.close()
    yield url


@pytest.fixture
def storage(where: str) -> Iterator[Storage]:
    made = ap.storage_at(where)
    yield made
    made.close()


def test_one_batch_commits_with_the_next_number(storage: Storage) -> None:
    ap.propose_all(storage, ["p1", "p2", "p3"])
    first = ap.apply_once(storage, "b-1", ["p1", "p2"])
    second = ap.apply_once(storage, "b-2", ["p3"])
    assert (first.seq, second.seq) == (1, 2), (first.error, second.error)
    records = storage.batches(ap.VAULT)
    assert [(r.seq, r.batch_id, r.plans) for r in records] == [
        (1, "b-1", ("p1", "p2")),
        (2, "b-2", ("p3",)),
    ]
    assert [json.loads(e.detail) for e in records[0].entries] == first.details
    assert [r.seq for r in storage.batches(ap.VAULT, after=1)] == [2]
    assert (storage.committed(ap.VAULT, "b-1"), storage.committed(ap.VAULT, "b-2")) == (1, 2)
    assert storage.committed(ap.VAULT, "b-3") is None
    assert storage.batches(ap.VAULT, after=2) == []
    assert {storage.plan(ap.VAULT, p).status for p in ("p1", "p2", "p3")} == {"applied"}  # type: ignore[union-attr]
    assert storage.verify_audit(ap.VAULT) == []


def test_an_aborted_batch_leaves_nothing_and_no_number(storage: Storage) -> None:
    ap.propose_all(storage, ["p1", "p2", "p3"])

    def boom(step: str, door: object, leave: object) -> None:
        if step == "sealed":
            raise ap.Abort("after the seal, before the commit")

    aborted = ap.apply_once(storage, "b-x", ["p1", "p2"], fault=boom)
    assert aborted.seq is None and "Abort" in aborted.error
    assert storage.batches(ap.VAULT) == [] and storage.audit(ap.VAULT) == []
    assert storage.committed(ap.VAULT, "b-x") is None  # recovery rolls it back
    assert storage.plan(ap.VAULT, "p1").status == "pending"  # type: ignore[union-attr]
    after = ap.apply_once(storage, "b-y", ["p3", "p1"])
    assert after.seq == 1  # the aborted batch's number was never taken
    assert [r.plans for r in storage.batches(ap.VAULT)] == [("p3", "p1")]


def test_the_door_rechecks_each_plan_under_the_lock(storage: Storage) -> None:
    """W5: applied, expired, unknown plans are refused at the door, and the whole batch with."""
    ap.propose_all(storage, ["ok", "done"])
    storage.propose(
        ap.VAULT, "old", author="a", origin="o", plan_json="{}",
        created_at=ap.NOW, expires_at=ap.NOW,
    )  # fmt: skip
    assert ap.apply_once(storage, "b-1", ["done"]).seq == 1
    for plans, word in (
        (["ok", "done"], "applied"),
        (["ok", "old"], "expired"),
        (["nope"], "no plan"),
    ):
        out = ap.apply_once(storage, f"b-{word}", plans)
        assert out.seq is None and "ConflictError" in out.error and word in out.error
    assert storage.plan(ap.VAULT, "ok").status == "pending"  # type: ignore[union-attr]
    assert [r.batch_id for r in storage.batches(ap.VAULT)] == ["b-1"]


def test_a_batch_id_is_used_once_and_an_empty_batch_has_no_number(storage: Storage) -> None:
    ap.propose_all(storage, ["p1", "p2"])
    assert ap.apply_once(storage, "b-1", ["p1"]).seq == 1
    again = ap.apply_once(storage, "b-1", ["p2"])
    assert again.seq is None and "already recorded" in again.error
    with (
        pytest.raises(ConflictError, match="applied no plan"),
        storage.door(ap.VAULT, "b-2") as door,
    ):
        door.seal()
    assert [r.seq for r in storage.batches(ap.VAULT)] == [1]


def test_attacker_strings_round_trip(storage: Storage) -> None:
    big = "x'y\"z;" * (1024 * 1024 // 6)  # ~1 MB
    for n, text in enumerate([*ATTACKS, big]):
        storage.propose(
            ap.VAULT, f"plan {text[:40]} {n}", author=text, origin=text,
            plan_json=json.dumps({"t": text}), created_at=ap.NOW, expires_at=ap.EXPIRES,
        )  # fmt: skip
        row = storage.plan(ap.VAULT, f"plan {text[:40]} {n}")
        assert row is not None and row.author == text and row.origin == text
        batch = f"batch {text[:60]}"
        if not batch.isprintable():  # a line break, tab, control or bidi character: refused
            with pytest.raises(ConflictError, match="printable"), storage.door(ap.VAULT, batch):
                pass
            batch = f"batch {n}"
        with storage.door(ap.VAULT, batch) as door:
            entry = door.mark_applied(
                f"plan {text[:40]} {n}", now=ap.NOW, actor=text, detail={"text": text}
            )
        assert json.loads(entry.detail) == {"text": text, "batch": batch}
    entries = storage.audit(ap.VAULT)
    assert [json.loads(e.detail)["text"] for e in entries] == [*ATTACKS, big]
    assert [e.actor for e in entries] == [*ATTACKS, big]
    assert [r.seq for r in storage.batches(ap.VAULT)] == list(range(1, len(ATTACKS) + 2))
    assert storage.verify_audit(ap.VAULT) == []


def test_nul_and_bad_vault_names_are_refused(storage: Storage) -> None:
    with pytest.raises(ConflictError, match="NUL"):
        storage.propose(
            ap.VAULT, "p\x00", author="a", origin="o", plan_json="{}",
            created_at=ap.NOW, expires_at=ap.EXPIRES,
        )  # fmt: skip
    # a batch id is one printable token: a line break would forge a git trailer in a mirror
    # ("b-1\nAffidavit-Batch: 9 x"), a bidi override would show another id than it holds
    for batch in ("b-1\nAffidavit-Batch: 9 x", "b\r1", "b\t1", "b-\u202e1", "", "b" * 201):
        with pytest.raises(ConflictError, match="printable"), storage.door(ap.VAULT, batch):
            pass
    for name in ("main; DROP SCHEMA affidavit", "Main", 'v"x', "", "1st"):
        with pytest.raises(ConflictError):
            storage.create_vault(name, "owner")
    assert storage.vaults() == [ap.VAULT]


def _check_storm(storage: Storage, outcomes: list[ap.Outcome], witness: Path) -> None:
    ok = [o for o in outcomes if o.seq is not None]
    failed = [o for o in outcomes if o.seq is None]
    records = storage.batches(ap.VAULT)
    assert [r.seq for r in records] == list(range(1, len(ok) + 1))  # gap-free
    by_id = {r.batch_id: r for r in records}
    assert set(by_id) == {o.batch_id for o in ok}
    for o in ok:
        record = by_id[o.batch_id]
        assert record.seq == o.seq and list(record.plans) == o.plans
        assert [json.loads(e.detail) for e in record.entries] == o.details
    for o in failed:
        assert {storage.plan(ap.VAULT, p).status for p in o.plans} == {"pending"}  # type: ignore[union-attr]
    for o in outcomes:
        assert storage.committed(ap.VAULT, o.batch_id) == o.seq
    assert len(storage.audit(ap.VAULT)) == sum(len(o.plans) for o in ok)
    assert storage.verify_audit(ap.VAULT) == []
    assert ap.interleavings(witness) == []


def test_200_concurrent_applies_with_random_aborts_threads(
    storage: Storage, where: str, tmp_path: Path
) -> None:
    """Four threads, 50 batches each, a third of them aborted between steps, while a reader
    polls "batches after the last one I saw": it misses none (numbers commit in order)."""
    witness = tmp_path / "witness"
    seen: list[int] = []
    done = threading.Event()

    def read() -> None:
        reader = ap.storage_at(where)
        try:
            while True:
                last = done.is_set()
                seen.extend(r.seq for r in reader.batches(ap.VAULT, after=seen[-1] if seen else 0))
                if last:
                    return
        finally:
            reader.close()

    with ThreadPoolExecutor(5) as pool:
        polling = pool.submit(read)
        runs = [pool.submit(ap.storm, where, f"t{n}", 50, n, str(witness), 0.33) for n in range(4)]
        outcomes = [o for run in runs for o in run.result()]
        done.set()
        polling.result()
    assert len(outcomes) == 200
    assert 20 < sum(o.seq is None for o in outcomes) < 120, "the faults fired"
    _check_storm(storage, outcomes, witness)
    assert seen == list(range(1, len(seen) + 1)) and len(seen) == len(storage.batches(ap.VAULT))


def _spawn() -> Any:
    return multiprocessing.get_context("spawn")


def test_concurrent_applies_in_processes_never_interleave(
    storage: Storage, where: str, tmp_path: Path
) -> None:
    witness = tmp_path / "witness"
    with ProcessPoolExecutor(2, mp_context=_spawn()) as pool:
        runs = [
            pool.submit(ap.storm, where, f"p{n}", 25, 100 + n, str(witness), 0.2) for n in range(2)
        ]
        outcomes = [o for run in runs for o in run.result()]
    assert len(outcomes) == 50
    _check_storm(storage, outcomes, witness)


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_racing_appliers_apply_each_plan_exactly_once(
    storage: Storage, where: str, tmp_path: Path, mode: str
) -> None:
    plans = [f"shared-{n}" for n in range(20)]
    ap.propose_all(storage, plans)
    witness = tmp_path / "witness"
    executor = (
        ThreadPoolExecutor(2) if mode == "threads" else ProcessPoolExecutor(2, mp_context=_spawn())
    )
    with executor as pool:
        runs = [pool.submit(ap.race, where, f"r{n}", plans, n, str(witness)) for n in range(2)]
        outcomes = [o for run in runs for o in run.result()]
    won = [o for o in outcomes if o.seq is not None]
    assert sorted(p for o in won for p in o.plans) == sorted(plans)  # each exactly once
    assert all(ap.lost_race(o) for o in outcomes if o.seq is None)
    records = storage.batches(ap.VAULT)
    assert [r.seq for r in records] == list(range(1, 21))
    assert sorted(r.plans[0] for r in records) == sorted(plans)
    assert ap.interleavings(witness) == []


def test_sqlite_storage_is_todays_vault(tmp_path: Path) -> None:
    """The SQLite backend adds nothing to the vault: its migrations are today's, and a batch's
    number is read from the audit entries today's door writes."""
    from affidavit import db as dbmod

    vault, _ = init_vault(tmp_path / "vault")
    storage = SQLiteStorage(vault, "main")
    try:
        assert storage.migrate() == []
        tables = {r[0] for r in vault.db.execute("SELECT name FROM sqlite_master")}
        ap.propose_all(storage, ["p1"])
        ap.apply_once(storage, "b-1", ["p1"])
        assert {r[0] for r in vault.db.execute("SELECT name FROM sqlite_master")} == tables
        assert [n for n, _ in dbmod.MIGRATIONS] == [
            r[0] for r in vault.db.execute("SELECT name FROM _migrations ORDER BY rowid")
        ]
        with pytest.raises(ConflictError, match="one vault"):
            storage.create_vault("other", "owner")
    finally:
        vault.close()
