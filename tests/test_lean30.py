"""Issue 25 item 5, lean30: a claim's repeated strings stored once (m032) and the search change log
trimmed by the door, the database still readable by plain ``sqlite3``.

A vault made before m032 is migrated in place: ``claims`` reads the same rows, rowids included,
from a bare connection with no function of ours; doctor is clean; ingest, search, ask, retract,
lint and doctor work on it. The attacker's side: a writer going through the view (a script, a
test) keeps the search and doctor logs as a write to the table did; the two small tables are
append-only (one edited row would change many claims behind those logs), and a claim whose key
lost its entry shows, never hides. The log's trim never leaves an index answering stale.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.db_claims import on_rows
from affidavit.doctor import run_doctor
from affidavit.evidence import spans
from affidavit.gate import duplicates
from affidavit.retrieval import tantivy_index
from affidavit.retrieval.tantivy_index import index_problems, open_index, wait_for_refresh
from affidavit.vault import open_vault

from .conftest import SAMPLES

COLUMNS = (
    "rowid, id, page_slug, section, position, text, status, trust, plan_id, created_at, "
    "superseded_by, derived_from, support, support_check"
)
OLD_TABLE = """
    CREATE TABLE claims (
        id TEXT PRIMARY KEY, page_slug TEXT NOT NULL, section TEXT NOT NULL,
        position INTEGER NOT NULL, text TEXT NOT NULL, status TEXT NOT NULL, trust TEXT NOT NULL,
        plan_id TEXT NOT NULL, created_at TEXT NOT NULL, superseded_by TEXT,
        derived_from TEXT NOT NULL DEFAULT '[]', support TEXT NOT NULL DEFAULT '',
        support_check TEXT NOT NULL DEFAULT '')"""


def run(root: Path, *args: str) -> str:
    result = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"}).invoke(main, ["--vault", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def bare(root: Path) -> sqlite3.Connection:
    """What ``sqlite3`` the shell opens: no function of ours, foreign keys off."""
    return sqlite3.connect(root / ".affidavit" / "db.sqlite", isolation_level=None)


def digest(db: sqlite3.Connection) -> str:
    rows = db.execute(f"SELECT {COLUMNS} FROM claims ORDER BY rowid").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def as_before_m032(root: Path) -> None:
    """The database as a vault made before m032 has it: ``claims`` a table (the same rows under
    the same rowids, its indexes and triggers), no ``claim_rows`` or small tables."""
    db = bare(root)
    spans.register(db, root)  # renaming a table parses the schema: the evidence view's triggers
    made = db.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'claim_rows' AND sql IS NOT NULL "
        "AND type IN ('index', 'trigger') ORDER BY rowid"
    ).fetchall()
    db.execute("BEGIN")
    db.execute(OLD_TABLE.replace("claims", "claims_old", 1))
    db.execute(f"INSERT INTO claims_old ({COLUMNS}) SELECT {COLUMNS} FROM claims ORDER BY rowid")
    db.execute("DROP VIEW claims")
    db.execute("DROP TABLE claim_rows")
    db.execute("ALTER TABLE claims_old RENAME TO claim_rows")  # the others' keys name claim_rows
    db.execute("ALTER TABLE claim_rows RENAME TO claims")
    for (sql,) in made:
        db.execute(str(sql).replace("ON claim_rows", "ON claims", 1))
    db.execute("DROP TABLE claim_origins")
    db.execute("DROP TABLE claim_sections")
    db.execute("DELETE FROM _migrations WHERE name = 'm032_claim_strings_once'")
    db.execute("COMMIT")
    db.close()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault of two speeches, its database turned back to before m032."""
    root = tmp_path_factory.mktemp("lean30") / "v"
    run(root.parent, "init", str(root))
    docs = [str(SAMPLES / "sotu" / n) for n in ("1790-washington.md", "1823-monroe.md")]
    run(root, "ingest", *docs, "--trust", "trusted", "--yes")
    wait_for_refresh(60)
    as_before_m032(root)
    return root


def test_a_vault_made_before_is_migrated_and_reads_the_same(made: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    db = bare(root)
    assert db.execute("SELECT type FROM sqlite_master WHERE name = 'claims'").fetchone() == (
        "table",
    )
    before, count = digest(db), db.execute("SELECT count(*) FROM claims").fetchone()[0]
    fts = db.execute("SELECT rowid FROM claims_fts WHERE claims_fts MATCH 'congress'").fetchall()
    db.close()
    assert count > 50
    with open_vault(root) as vault:  # opening migrates
        assert run_doctor(vault).clean
    db = bare(root)
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master WHERE name LIKE 'claim%'"))
    assert kinds["claims"] == "view" and kinds["claim_rows"] == "table"
    assert digest(db) == before  # plain sqlite3: the same rows, rowids, columns and order
    names = [d[0] for d in db.execute("SELECT * FROM claims LIMIT 1").description]
    assert names == [*[c.strip() for c in COLUMNS.split(",")][1:], "rowid"]
    assert db.execute("SELECT count(*) FROM claim_origins").fetchone()[0] < count / 5
    assert db.execute("SELECT count(*) FROM claim_sections").fetchone()[0] < count / 5
    assert (
        db.execute("SELECT rowid FROM claims_fts WHERE claims_fts MATCH 'congress'").fetchall()
        == fts
    )
    db.execute("INSERT INTO claims_fts (claims_fts) VALUES ('integrity-check')")
    for table in ("evidence_rows", "evidence_cited", "vectors"):
        parents = {r[2] for r in db.execute(f"PRAGMA foreign_key_list({table})")}
        assert "claims" not in parents and "claim_rows" in parents
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    dump = "\n".join(db.iterdump())  # the shell's .dump: no function needed
    assert "CREATE VIEW claims" in dump and 'INSERT INTO "claim_rows"' in dump
    db.close()


def test_every_command_works_on_the_migrated_vault(made: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    run(root, "ingest", str(SAMPLES / "sotu" / "1941-roosevelt.md"), "--trust", "trusted", "--yes")
    wait_for_refresh(60)
    assert "freedom" in run(root, "search", "freedom").lower()
    assert run(root, "ask", "What did the congress do?")
    with open_vault(root) as vault:
        _cid, plan, section = vault.db.execute(
            "SELECT id, plan_id, section FROM claims WHERE status = 'active' ORDER BY rowid DESC"
        ).fetchone()
        assert vault.db.execute("SELECT 1 FROM plans WHERE id = ?", (plan,)).fetchone()
        assert section
    run(root, "sources", "list")
    run(root, "lint")
    with open_vault(root) as vault:
        report = run_doctor(vault)
        assert report.clean, report
        assert not index_problems(vault.db)
    run(root, "doctor", "--full")


def test_writes_through_the_view_log_as_the_table_did(made: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    with open_vault(root):
        pass
    db = bare(root)
    cid, rowid, text = db.execute("SELECT id, rowid, text FROM claims LIMIT 1").fetchone()

    def logged() -> tuple[int, int, int]:
        return (
            db.execute("SELECT count(*) FROM search_changes").fetchone()[0],
            db.execute("SELECT count(*) FROM doctor_changes").fetchone()[0],
            db.execute("SELECT token FROM search_version").fetchone()[0],
        )

    start = logged()
    db.execute("UPDATE claims SET support = 'checked' WHERE id = ?", (cid,))  # no search column
    after = logged()
    assert after[0] == start[0] and after[2] == start[2] and after[1] > start[1]
    db.execute("UPDATE claims SET section = 'A new heading' WHERE id = ?", (cid,))
    assert logged()[2] != after[2]  # what search reads moved the version
    assert db.execute("SELECT section FROM claims WHERE id = ?", (cid,)).fetchone()[0] == (
        "A new heading"
    )
    db.execute("UPDATE claims SET text = 'zebra crossings everywhere' WHERE id = ?", (cid,))
    hits = db.execute("SELECT rowid FROM claims_fts WHERE claims_fts MATCH 'zebra'").fetchall()
    assert hits == [(rowid,)]
    db.execute("INSERT INTO claims_fts (claims_fts) VALUES ('integrity-check')")
    db.execute(
        "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
        "created_at) VALUES ('c-new', '', 'Elsewhere', 99, 'an okapi', 'active', 'trusted', "
        "'p-x', '2026-01-01T00:00:00Z')"
    )
    row = db.execute(
        "SELECT section, plan_id, derived_from, support, support_check FROM claims "
        "WHERE id = 'c-new'"
    ).fetchone()
    assert row == ("Elsewhere", "p-x", "[]", "", "")
    db.execute("DELETE FROM claims WHERE id = 'c-new'")
    assert db.execute("SELECT count(*) FROM claim_rows WHERE id = 'c-new'").fetchone()[0] == 0
    with pytest.raises(sqlite3.IntegrityError):  # a claim needs its plan id
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "created_at) VALUES ('c-bad', '', 'S', 1, 't', 'active', 'trusted', 'now')"
        )
    db.execute("UPDATE claims SET text = ? WHERE id = ?", (text, cid))
    db.close()


def test_the_small_tables_only_grow_and_a_lost_key_shows(made: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    with open_vault(root):
        pass
    db = bare(root)
    for sql in (
        "UPDATE claim_sections SET section = 'Forged'",
        "UPDATE claim_origins SET plan_id = 'forged'",
        "DELETE FROM claim_sections",
        "DELETE FROM claim_origins",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="never"):
            db.execute(sql)
    count = db.execute("SELECT count(*) FROM claims").fetchone()[0]
    # the triggers dropped by hand (the shell can): the claims still show, with nothing for
    # what they lost, and doctor says so
    db.execute("DROP TRIGGER claim_origins_kept_delete")
    db.execute("DELETE FROM claim_origins WHERE key = (SELECT origin FROM claim_rows LIMIT 1)")
    db.close()
    with open_vault(root) as vault:
        assert vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] == count
        assert vault.db.execute("SELECT count(*) FROM claims WHERE plan_id IS NULL").fetchone()[0]
        assert not run_doctor(vault).clean


def test_the_door_trims_the_search_log_and_the_index_stays_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tantivy_index, "LOG_KEPT", 20)
    monkeypatch.setattr(tantivy_index, "TRIM_EVERY", 5)
    root = tmp_path / "v"
    run(tmp_path, "init", str(root))
    run(root, "ingest", str(SAMPLES / "sotu" / "1790-washington.md"), "--trust", "trusted", "--yes")
    wait_for_refresh(60)
    saved = tmp_path / "index-then"  # the index as it is now; the next ingest goes past the log
    shutil.copytree(root / ".affidavit" / tantivy_index.DIRNAME, saved)
    with open_vault(root) as vault:
        index = open_index(vault.db)
        assert index is not None
        stale = index.position
    run(root, "ingest", str(SAMPLES / "sotu" / "1823-monroe.md"), "--trust", "trusted", "--yes")
    wait_for_refresh(60)
    with open_vault(root) as vault:
        db = vault.db
        top = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'search_changes'")
        seq = top.fetchone()[0]
        low, rows = db.execute("SELECT min(seq), count(*) FROM search_changes").fetchone()
        assert seq > 60 and rows <= 25 and low == seq - rows + 1  # the latest, bounded
        assert stale is not None and stale.seq < low - 1
        assert not index_problems(db)
        assert run_doctor(vault).clean
    # a copy of the vault whose index is the one from before: the trim went past its position,
    # so it rebuilds, never answers from a stale state
    other = tmp_path / "w"
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".affidavit" / tantivy_index.DIRNAME)
    shutil.copytree(saved, other / ".affidavit" / tantivy_index.DIRNAME)
    with open_vault(other) as vault:
        db = vault.db
        index = open_index(db)
        assert index is not None
        assert index.current(stale) and not index.current(tantivy_index.db_position(db))
        active = db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
        pages = db.execute("SELECT count(*) FROM pages").fetchone()[0]
        position = index.catch_up(db)
        assert position is not None and position.seq == seq
        assert index.index.searcher().num_docs - 1 == active + pages
        assert not index_problems(db)


def test_on_rows_moves_only_the_clause() -> None:
    sql = "CREATE TRIGGER t AFTER INSERT ON claims BEGIN INSERT INTO claims_fts VALUES (1); END"
    assert on_rows(sql) == sql.replace("ON claims ", "ON claim_rows ")
    assert on_rows("CREATE INDEX i ON claims_fts(x)") == "CREATE INDEX i ON claims_fts(x)"


def test_the_gate_keeps_its_page_log_on_the_migrated_vault(made: Path, tmp_path: Path) -> None:
    """The duplicate check follows a page's changes by temp triggers on the claims' table; on a
    view they can't be made, and every admission read each page whole (silently: the same
    verdicts, the cost growing with the page)."""
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    with open_vault(root) as vault:
        log = duplicates._log(vault.db)
        assert log is not None
        on = vault.db.execute(
            "SELECT DISTINCT tbl_name FROM sqlite_temp_master WHERE type = 'trigger' "
            "AND name LIKE 'affidavit_claim_log_%'"
        ).fetchall()
        assert [tuple(r) for r in on] == [("claim_rows",)]
        slug = vault.db.execute("SELECT page_slug FROM claims WHERE page_slug != ''").fetchone()[0]
        indexes = duplicates.PageIndexes(lambda text: (text, frozenset(text.split())), 3, 8)
        indexes.page(vault.db, slug)
        stamp = vault.db.execute(log.last_sql, (slug,)).fetchone()[0]
        vault.db.execute(
            "UPDATE claim_rows SET position = position + 1000 WHERE page_slug = ? "
            "AND rowid = (SELECT min(rowid) FROM claim_rows WHERE page_slug = ?)",
            (slug, slug),
        )
        assert vault.db.execute(log.last_sql, (slug,)).fetchone()[0] != stamp


def test_a_gone_connections_log_is_not_taken_for_a_new_ones(made: Path, tmp_path: Path) -> None:
    """Logs are kept by ``id(connection)``; a connection closed and gone may hand its id to a
    new one, which then found the old log, whose table and triggers are not on it (CI met this:
    no triggers on the vault a test had just opened)."""
    root = tmp_path / "v"
    shutil.copytree(made, root, symlinks=True)
    with open_vault(root):  # migrated to m032's claim_rows
        pass
    db_path = root / ".affidavit" / "db.sqlite"
    first = sqlite3.connect(db_path)
    old = duplicates._log(first)
    assert old is not None
    first.close()
    second = sqlite3.connect(db_path)
    try:
        duplicates._LOGS[id(second)] = old  # what a reused id finds
        log = duplicates._log(second)
        assert log is not None and log is not old
        on = second.execute(
            "SELECT DISTINCT tbl_name FROM sqlite_temp_master WHERE type = 'trigger' "
            "AND name = ?", (f"{log.table}_insert",),
        ).fetchall()  # fmt: skip
        assert on == [("claim_rows",)]
        assert duplicates._log(second) is log  # found again while it stands
    finally:
        duplicates._forget(second)
        second.close()
