"""The duplicate check's page indexes, kept in step by the connection's change log, hold exactly
what a full read of each page gives, after any history of writes (differential tests).

A full read is the query the gate ran for every admission before: every live claim of the page
(status active or pending), in the page's order.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
from pathlib import Path

import pytest

from affidavit.db import connect, migrate
from affidavit.gate import duplicates
from affidavit.gate.admission import NEAR_DUPLICATE, NEAR_MIN_WORDS, _comparable
from affidavit.gate.duplicates import PageIndex, PageIndexes

PAGES = ["alpha", "beta", "gamma", ""]
WORDS = ["tax", "war", "peace", "trade", "navy", "army", "bank", "debt", "gold", "land", "law"]
STATUSES = ["active", "pending", "quarantined", "superseded", "retracted"]


def _full(db: sqlite3.Connection, slug: str) -> PageIndex:
    cursor = db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT id, text FROM claims WHERE page_slug = ? AND status IN ('active','pending')",
        (slug,),
    ).fetchall()
    index = PageIndex(_comparable, NEAR_MIN_WORDS)
    index.sync((claim_id, text, n) for n, (claim_id, text) in enumerate(rows))
    return index


def _same(kept: PageIndex, full: PageIndex) -> None:
    assert kept.items == full.items
    assert sorted(kept.order, key=kept.order.__getitem__) == list(full.order)
    assert kept.exact == full.exact
    assert kept.postings == full.postings
    for text, normal, stems in list(full.items.values())[:4]:
        assert kept.candidates(normal, stems, NEAR_DUPLICATE) == full.candidates(
            normal, stems, NEAR_DUPLICATE
        ), text


class _History:
    """Random writes to ``claims`` through one connection (savepoints, rollbacks, REPLACE,
    moves, deletes) and commits through another."""

    def __init__(self, db: sqlite3.Connection, other: sqlite3.Connection, seed: int) -> None:
        self.db, self.other = db, other
        self.rng = random.Random(seed)
        self.made = 0
        self.savepoints = 0

    def _text(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(2, 8)))

    def _id(self) -> str:
        if self.made and self.rng.random() < 0.15:  # an id that may exist (or did)
            return f"c-{self.rng.randrange(self.made)}"
        self.made += 1
        return f"c-{self.made}"

    def _some_claim(self) -> str | None:
        row = self.db.execute("SELECT id FROM claims ORDER BY random() LIMIT 1").fetchone()
        return None if row is None else str(row[0])

    def insert(self, db: sqlite3.Connection, verb: str = "INSERT") -> None:
        rng = self.rng
        claim_id = self._id()
        with contextlib.suppress(sqlite3.IntegrityError):  # a plain INSERT of an id taken
            db.execute(
                f"{verb} INTO claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES (?, ?, 's', ?, ?, ?, 'trusted', 'p', 't')",
                (
                    claim_id,
                    rng.choice(PAGES),
                    rng.randint(0, 30),
                    self._text(),
                    rng.choice(STATUSES[:2] * 3 + STATUSES),
                ),
            )

    def step(self) -> None:
        rng, db = self.rng, self.db
        kind = rng.random()
        claim = self._some_claim()
        if kind < 0.35 or claim is None:
            self.insert(db)
        elif kind < 0.45:
            db.execute("UPDATE claims SET status = ? WHERE id = ?", (rng.choice(STATUSES), claim))
        elif kind < 0.5:
            db.execute("UPDATE claims SET text = ? WHERE id = ?", (self._text(), claim))
        elif kind < 0.55:
            db.execute(
                "UPDATE claims SET page_slug = ?, position = ? WHERE id = ?",
                (rng.choice(PAGES), rng.randint(0, 30), claim),
            )
        elif kind < 0.58:
            db.execute("UPDATE claims SET position = ? WHERE id = ?", (rng.randint(0, 30), claim))
        elif kind < 0.6:
            db.execute("UPDATE claims SET trust = 'untrusted' WHERE id = ?", (claim,))
        elif kind < 0.64:
            db.execute("DELETE FROM claims WHERE id = ?", (claim,))
        elif kind < 0.66:
            db.execute("UPDATE OR REPLACE claims SET id = ? WHERE id = ?", (self._id(), claim))
        elif kind < 0.69:
            self.insert(db, "INSERT OR REPLACE")
        elif kind < 0.72:
            db.execute(
                "UPDATE claims SET status = 'active' WHERE page_slug = ? AND status = 'pending'",
                (rng.choice(PAGES),),
            )
        elif kind < 0.8:
            self.savepoints += 1
            db.execute(f"SAVEPOINT s{self.savepoints}")
        elif kind < 0.88 and self.savepoints:
            db.execute(f"ROLLBACK TO s{self.savepoints}")
            db.execute(f"RELEASE s{self.savepoints}")
            self.savepoints -= 1
        elif kind < 0.92 and self.savepoints:
            db.execute(f"RELEASE s{self.savepoints}")
            self.savepoints -= 1
        elif kind < 0.95 and not db.in_transaction:
            db.execute("BEGIN IMMEDIATE")
        elif kind < 0.97 and db.in_transaction and not self.savepoints:
            db.execute(rng.choice(["COMMIT", "ROLLBACK"]))
        elif not db.in_transaction:  # another connection writes, or the schema changes
            if rng.random() < 0.8:
                for _ in range(rng.randint(1, 3)):
                    self.insert(self.other)
                self.other.execute(
                    "UPDATE claims SET status = 'retracted' WHERE id = ?", (self._some_claim(),)
                )
            elif rng.random() < 0.3:
                db.execute("VACUUM")
            elif rng.random() < 0.4:
                _rebuild(db)
            elif db.execute("SELECT 1 FROM sqlite_master WHERE name = 'claims_trust'").fetchone():
                db.execute("DROP INDEX claims_trust")
            else:
                db.execute("CREATE INDEX claims_trust ON claim_rows(trust)")


def _rebuild(db: sqlite3.Connection) -> None:
    """Make the claims' table (``claim_rows`` since m032) anew, as a migration that changes a
    column would: the triggers on the old table go with it."""
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'claim_rows'").fetchone()
    db.execute("DROP TRIGGER IF EXISTS search_claims_delete")  # of the search index: not here
    db.execute("DROP TRIGGER IF EXISTS claims_fts_delete")
    made = sql.replace('"claim_rows"', "claim_rows", 1)  # as a rename writes it
    db.execute(made.replace("CREATE TABLE claim_rows", "CREATE TABLE claim_rows_new", 1))
    db.execute("INSERT INTO claim_rows_new SELECT * FROM claim_rows ORDER BY rowid")
    db.execute("DROP TABLE claim_rows")
    db.execute("PRAGMA legacy_alter_table = ON")  # the view names claim_rows: gone meanwhile
    db.execute("ALTER TABLE claim_rows_new RENAME TO claim_rows")
    db.execute("PRAGMA legacy_alter_table = OFF")
    db.execute("CREATE INDEX claims_page ON claim_rows(page_slug, position)")


def _db(path: Path) -> sqlite3.Connection:
    db = connect(path)
    migrate(db)
    return db


@pytest.mark.parametrize("seed", range(6))
def test_kept_indexes_equal_full_reads_over_random_histories(tmp_path: Path, seed: int) -> None:
    db = _db(tmp_path / "db.sqlite")
    other = connect(tmp_path / "db.sqlite")
    history = _History(db, other, seed)
    indexes = PageIndexes(_comparable, NEAR_MIN_WORDS, size=3 if seed % 2 else 100)
    rng = random.Random(seed)
    for n in range(700):
        history.step()
        for slug in rng.sample(PAGES, rng.randint(0, 2)):
            _same(indexes.page(db, slug), _full(db, slug))
        if n % 50 == 0:
            for slug in PAGES:
                _same(indexes.page(db, slug), _full(db, slug))
    db.close()
    other.close()


def test_a_page_that_only_gained_claims_is_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _db(tmp_path / "db.sqlite")
    history = _History(db, db, 3)
    indexes = PageIndexes(_comparable, NEAR_MIN_WORDS, size=100)
    reads: list[str] = []
    full_read = duplicates._full_read
    monkeypatch.setattr(
        duplicates, "_full_read", lambda db, slug: reads.append(slug) or full_read(db, slug)
    )
    for slug in PAGES:
        indexes.page(db, slug)
    assert sorted(reads) == sorted(PAGES)  # the first time, every page is read whole
    db.execute("BEGIN IMMEDIATE")
    for n in range(300):
        if n % 20 == 0:
            db.execute(f"SAVEPOINT s{n}")  # savepoints that are kept change nothing
        history.insert(db)
        if n % 20 == 19:
            db.execute(f"RELEASE s{n - 19}")
        for slug in PAGES:
            _same(indexes.page(db, slug), _full(db, slug))
    db.execute("COMMIT")
    assert len(reads) == len(PAGES)  # then only the claims logged since are read
    db.execute("BEGIN IMMEDIATE")
    db.execute("SAVEPOINT plan")
    history.insert(db)
    for slug in PAGES:
        _same(indexes.page(db, slug), _full(db, slug))
    db.execute("ROLLBACK TO plan")  # what the index saw is undone: the page is read again
    db.execute("RELEASE plan")
    for slug in PAGES:
        _same(indexes.page(db, slug), _full(db, slug))
    db.execute("COMMIT")
    db.close()


def test_a_log_made_inside_a_transaction_rolled_back_is_made_anew(tmp_path: Path) -> None:
    db = _db(tmp_path / "db.sqlite")
    history = _History(db, db, 11)
    indexes = PageIndexes(_comparable, NEAR_MIN_WORDS, size=100)
    db.execute("BEGIN IMMEDIATE")
    for slug in PAGES:
        indexes.page(db, slug)  # the log is made inside the transaction
    db.execute("ROLLBACK")  # and goes with it: the writes below are not logged
    for _ in range(40):
        history.insert(db)
    for slug in PAGES:
        _same(indexes.page(db, slug), _full(db, slug))
    made = duplicates._LOGS[id(db)]
    assert made is not None
    tables = db.execute(
        "SELECT name FROM sqlite_temp_master WHERE type = 'table' AND name LIKE 'affidavit%'"
    ).fetchall()
    assert [t[0] for t in tables] == [made.table]  # one log, the one in use
    db.close()


def test_a_new_connection_under_an_old_ones_id_is_read_whole(tmp_path: Path) -> None:
    first = _db(tmp_path / "db.sqlite")
    indexes = PageIndexes(_comparable, NEAR_MIN_WORDS, size=100)
    _History(first, first, 5).insert(first)
    for slug in PAGES:
        indexes.page(first, slug)
    second = connect(tmp_path / "db.sqlite")
    # as if ``second`` had the id of ``first`` (ids of objects gone are reused)
    duplicates._LOGS[id(second)] = duplicates._LOGS[id(first)]
    for slug in PAGES:
        indexes.pages[(id(second), slug)] = indexes.pages[(id(first), slug)]
    history = _History(second, second, 6)
    for _ in range(30):
        history.insert(second)
    for slug in PAGES:
        _same(indexes.page(second, slug), _full(second, slug))
    first.close()
    second.close()


def test_the_full_read_is_in_the_order_of_the_page_index(tmp_path: Path) -> None:
    db = _db(tmp_path / "db.sqlite")
    plan = db.execute("EXPLAIN QUERY PLAN " + duplicates._FULL_READ, ("alpha",)).fetchall()
    assert "claims_page" in str([tuple(row) for row in plan])
    assert "TEMP B-TREE" not in str([tuple(row) for row in plan])  # no sort: the index's order
    plan = db.execute("EXPLAIN QUERY PLAN " + duplicates._BY_ID, ('["c-1"]', "alpha")).fetchall()
    assert "(id=?)" in str([tuple(row) for row in plan])  # each claim by its id
    db.close()


def test_a_log_grown_past_its_limit_is_made_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(duplicates, "LOG_LIMIT", 50)
    db = _db(tmp_path / "db.sqlite")
    history = _History(db, db, 8)
    indexes = PageIndexes(_comparable, NEAR_MIN_WORDS, size=100)
    epochs = set()
    for _ in range(200):
        history.insert(db)
        for slug in PAGES:
            _same(indexes.page(db, slug), _full(db, slug))
        log = duplicates._LOGS[id(db)]
        assert log is not None
        epochs.add(log.epoch)
    assert len(epochs) > 2
    tables = db.execute(
        "SELECT name FROM sqlite_temp_master WHERE name LIKE 'affidavit_claim_log_%'"
    ).fetchall()
    assert {t[0] for t in tables} <= {log.table, f"{log.table}_slug"} | {
        f"{log.table}_{kind}"
        for kind in ("insert", "update", "delete", "replace", "update_replace")
    }
    db.close()
