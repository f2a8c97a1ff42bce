"""Evidence as offsets (issue 25 item 5, migration ``m021_lean_evidence``): ``evidence_rows``
keeps no quote text; the ``evidence`` view computes each quote as the source's own words at its
offsets (``evidence_span``), its triggers keep every writer working, a forged quote is refused,
an altered source shows no words and doctor says why, and a vault written before converts with
every quote identical."""

from __future__ import annotations

import ast
import json
import re
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import affidavit
from affidavit import db as dbmod
from affidavit import db_lean
from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.evidence import spans, verify
from affidavit.inbox import approve, propose
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, open_vault

from .conftest import add_samples, sample_plan_text


def _applied(vault: Vault) -> None:
    add_samples(vault)
    approve(vault, propose(vault, sample_plan_text(vault), "tester", "sample").plan_id, None, "t")


def _evidence(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in db.execute(
            'SELECT claim_id, idx, source_id, quote, start, "end", location FROM evidence '
            "ORDER BY claim_id, idx"
        )
    ]


def _span(vault: Vault, source_id: str, start: int, end: int) -> str:
    return SourceStore(vault).text(source_id)[start:end]


def test_evidence_keeps_offsets_and_the_view_shows_the_sources_words(vault: Vault) -> None:
    _applied(vault)
    rows = _evidence(vault.db)
    assert rows
    for _cid, _idx, source_id, quote, start, end, _loc in rows:
        assert quote == _span(vault, source_id, start, end) and quote
    columns = [r[1] for r in vault.db.execute("PRAGMA table_info(evidence_rows)")]
    assert "quote" not in columns and "source_key" in columns
    kinds = dict(vault.db.execute("SELECT name, type FROM sqlite_master").fetchall())
    assert kinds["evidence"] == "view"
    keyed = vault.db.execute("SELECT count(*) FROM evidence_rows").fetchone()[0]
    assert keyed == len(rows)
    spans.clear_cache()  # a fresh process: the text is read from its file and hashed again
    assert _evidence(vault.db) == rows
    assert run_doctor(vault).clean


def test_the_views_triggers_insert_update_and_delete(vault: Vault) -> None:
    _applied(vault)
    cid, idx, source_id, quote, start, end, location = _evidence(vault.db)[0]
    db = vault.db
    with dbmod.transaction(db):
        db.execute("DELETE FROM evidence WHERE claim_id = ? AND idx = ?", (cid, idx))
    assert not db.execute(
        "SELECT 1 FROM evidence_rows WHERE claim_id = ? AND idx = ?", (cid, idx)
    ).fetchone()
    with dbmod.transaction(db):  # a writer that gives the quote: it must be the span
        db.execute(
            'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (cid, idx, source_id, quote, start, end, location),
        )
    with dbmod.transaction(db):  # or leaves it out: it is computed all the same
        db.execute("DELETE FROM evidence WHERE claim_id = ? AND idx = ?", (cid, idx))
        db.execute(
            'INSERT INTO evidence (claim_id, idx, source_id, start, "end", location) '
            "VALUES (?, ?, ?, ?, ?, ?)",
            (cid, idx, source_id, start, end, location),
        )
    got = db.execute(
        "SELECT quote FROM evidence WHERE claim_id = ? AND idx = ?", (cid, idx)
    ).fetchone()
    assert got[0] == quote
    shorter = quote[: quote.rindex(" ")]
    with dbmod.transaction(db):
        db.execute(
            'UPDATE evidence SET "end" = ?, quote = ? WHERE claim_id = ? AND idx = ?',
            (start + len(shorter), shorter, cid, idx),
        )
    got = db.execute(
        'SELECT quote, "end" FROM evidence WHERE claim_id = ? AND idx = ?', (cid, idx)
    ).fetchone()
    assert tuple(got) == (shorter, start + len(shorter))
    logged = db.execute("SELECT tbl, key FROM doctor_changes WHERE tbl = 'evidence'").fetchall()
    assert ("evidence", cid) in [tuple(r) for r in logged]  # doctor's change log follows


def test_a_forged_quote_is_refused_by_the_view(vault: Vault) -> None:
    """The attacker's test: a writer (or hand-run SQL on an affidavit connection) gives a quote
    that is not the source's words at the offsets."""
    _applied(vault)
    cid, idx, source_id, quote, start, end, location = _evidence(vault.db)[0]
    forged = "The president never said this at all"
    refused = pytest.raises(sqlite3.IntegrityError, match="differs from the source")
    with refused, dbmod.transaction(vault.db):
        vault.db.execute(
            'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
            "VALUES (?, 9, ?, ?, ?, ?, ?)",
            (cid, source_id, forged, start, end, location),
        )
    refused = pytest.raises(sqlite3.IntegrityError, match="differs from the source")
    with refused, dbmod.transaction(vault.db):
        vault.db.execute(
            "UPDATE evidence SET quote = ? WHERE claim_id = ? AND idx = ?", (forged, cid, idx)
        )
    assert _evidence(vault.db)[0][3] == quote


def test_an_altered_source_shows_no_words_and_doctor_says_why(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    _applied(vault)
    source_id = _evidence(vault.db)[0][2]
    text_file = vault.db.execute(
        "SELECT text_file FROM sources WHERE id = ?", (source_id,)
    ).fetchone()[0]
    path = vault.root / text_file
    path.chmod(0o644)
    path.write_text(path.read_text(encoding="utf-8").replace("the", "teh"), encoding="utf-8")
    spans.clear_cache()  # a fresh process: no text cached, the verifier's neither
    monkeypatch.setattr(verify, "_SHARED", OrderedDict())
    quotes = vault.db.execute(
        "SELECT quote FROM evidence WHERE source_id = ?", (source_id,)
    ).fetchall()
    # never the altered file's words, never a blank: a marker no quote check verifies
    assert quotes and all(q[0] == spans.UNREADABLE for q in quotes)
    report = run_doctor(vault)
    assert not report.clean
    messages = [f.message for f in report.findings if f.check == "evidence"]
    assert messages and all("missing or altered" in m for m in messages)


def test_the_views_marker_is_the_modules() -> None:
    assert "'" + spans.UNREADABLE.replace("'", "''") + "'" in db_lean.m021_lean_evidence()


def test_offsets_edited_outside_the_view_show_no_words(vault: Vault) -> None:
    """The attacker's test: someone with the file moves a quote's offsets onto other words of
    the same source (a whole word on, so every word boundary still holds)."""
    _applied(vault)
    cid, idx, source_id, quote, start, end, _loc = _evidence(vault.db)[0]
    shift = quote.index(" ") + 1
    bare = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        with bare:
            bare.execute(
                'UPDATE evidence_rows SET start = start + ?, "end" = "end" + ? '
                "WHERE claim_id = ? AND idx = ?",
                (shift, shift, cid, idx),
            )
    finally:
        bare.close()
    moved = vault.db.execute(
        "SELECT quote FROM evidence WHERE claim_id = ? AND idx = ?", (cid, idx)
    ).fetchone()[0]
    assert moved == spans.UNREADABLE != _span(vault, source_id, start + shift, end + shift)
    report = run_doctor(vault)
    assert any(f.check == "evidence" and f.subject == cid for f in report.findings)


def test_a_bare_connection_lacks_the_function_and_is_told_so(vault: Vault) -> None:
    _applied(vault)
    bare = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            bare.execute("SELECT quote FROM evidence").fetchall()
        assert spans.lacks_function(caught.value)
        # offsets stay readable without it
        assert bare.execute("SELECT count(*) FROM evidence_rows").fetchone()[0] > 0
    finally:
        bare.close()
    out = CliRunner().invoke(main, ["--vault", str(vault.root), "doctor", "--stats", "--json"])
    assert out.exit_code == 0, out.output
    notes = json.loads(out.output)["notes"]
    assert any("evidence_span" in n and "evidence_rows" in n for n in notes)


def test_the_text_cache_is_bounded_by_characters(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    _applied(vault)
    spans.clear_cache()
    monkeypatch.setattr(spans, "CACHE_CHARS", 10)  # smaller than any source's text
    assert all(r[3] for r in _evidence(vault.db))
    assert spans.cached_chars() == 0
    monkeypatch.undo()
    _evidence(vault.db)
    assert 0 < spans.cached_chars() <= spans.CACHE_CHARS


def _as_before_m021(vault: Vault, forged: tuple[str, int] | None = None) -> None:
    """Turn the database back into what main's code wrote before m021 (the table with its quotes;
    ``forged``: one row whose stored quote is not its span), and so before m032 (``claims`` a
    table, which the old table's foreign keys name)."""
    from .test_lean30 import as_before_m032

    as_before_m032(vault.root)
    db = sqlite3.connect(vault.state_dir / "db.sqlite", isolation_level=None)
    spans.register(db, vault.root)
    try:
        rows = db.execute(
            'SELECT claim_id, idx, source_id, quote, start, "end", location FROM evidence'
        ).fetchall()
        db.executescript(
            """
            BEGIN;
            DROP VIEW evidence;
            DROP TABLE evidence_rows;
            DROP TABLE evidence_legacy;
            DROP TABLE source_keys;
            CREATE TABLE evidence (
                claim_id TEXT NOT NULL REFERENCES claims(id),
                idx INTEGER NOT NULL,
                source_id TEXT NOT NULL REFERENCES sources(id),
                quote TEXT NOT NULL,
                start INTEGER NOT NULL,
                "end" INTEGER NOT NULL,
                location TEXT NOT NULL,
                PRIMARY KEY (claim_id, idx)
            );
            CREATE INDEX evidence_source ON evidence(source_id);
            CREATE TRIGGER doctor_evidence_update AFTER UPDATE ON evidence BEGIN
                INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
                INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
            END;
            CREATE TRIGGER doctor_evidence_delete AFTER DELETE ON evidence BEGIN
                INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
            END;
            DELETE FROM _migrations WHERE name = 'm021_lean_evidence';
            """
        )
        for row in rows:
            quote = row[3]
            if forged == (row[0], row[1]):
                quote = "words the source never had at all"
            db.execute(
                "INSERT INTO evidence VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row[0], row[1], row[2], quote, row[4], row[5], row[6]),
            )
        db.execute("COMMIT")
    finally:
        db.close()


def test_the_migration_converts_a_vault_written_before_it(vault: Vault) -> None:
    _applied(vault)
    before = _evidence(vault.db)
    root = vault.root
    vault.close()
    _as_before_m021(vault)
    old = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    assert [
        tuple(r) for r in old.execute("SELECT * FROM evidence ORDER BY claim_id, idx")
    ] == before
    old.close()
    spans.clear_cache()
    with open_vault(root) as again:
        assert _evidence(again.db) == before  # every quote identical, read back computed
        assert not again.db.execute("SELECT * FROM evidence_legacy").fetchall()
        assert "evidence_old" not in {
            r[0] for r in again.db.execute("SELECT name FROM sqlite_master")
        }
        assert run_doctor(again).clean


def test_a_stored_quote_unlike_its_span_is_kept_and_reported(vault: Vault) -> None:
    """The attacker's test of the migration: a database edited before m021 to hold a quote the
    source doesn't have at its offsets. No surface shows either; doctor reports the old row,
    which is kept."""
    _applied(vault)
    cid, idx, _sid, quote, *_ = _evidence(vault.db)[0]
    root = vault.root
    vault.close()
    _as_before_m021(vault, forged=(cid, idx))
    with open_vault(root) as again:
        kept = again.db.execute("SELECT claim_id, idx, quote FROM evidence_legacy").fetchall()
        assert [tuple(r) for r in kept] == [(cid, idx, "words the source never had at all")]
        assert quote != spans.UNREADABLE  # its checksum is the old quote's: no words shown
        assert _evidence(again.db)[0][3] == spans.UNREADABLE
        report = run_doctor(again)
        assert any(
            f.check == "evidence" and f.subject == cid and "m021" in f.message
            for f in report.findings
        )


def test_a_left_join_to_the_view_is_not_materialized(vault: Vault) -> None:
    """The renderer and the search read ``claims LEFT JOIN evidence``: the view must flatten
    into it (looked up by claim), not be computed whole for every query."""
    _applied(vault)
    plan = [
        r[3]
        for r in vault.db.execute(
            "EXPLAIN QUERY PLAN SELECT c.id, e.quote FROM claims c "
            "LEFT JOIN evidence e ON e.claim_id = c.id WHERE c.page_slug = 'x'"
        )
    ]
    assert not any("MATERIALIZE" in step for step in plan), plan


_READS_EVIDENCE = re.compile(r"\b(?:FROM|JOIN|UPDATE)\s+evidence\b(?!_)")
_BY_SOURCE = re.compile(r"\bsource_(?:id|key)\s*(?:=|IN\b)", re.IGNORECASE)
_KEY_LOOKUP = re.compile(r"FROM\s+source_keys\s+WHERE\s+source_id\s*(?:=|IN\b)", re.IGNORECASE)
_INDEXED = re.compile(
    r"SEARCH (?:r|evidence_rows) USING (?:COVERING )?INDEX evidence_rows_source \(source_key="
)
_ONE_ROW = re.compile(r"SEARCH (?:r|evidence_rows) USING PRIMARY KEY \(claim_id=\? AND idx=\?\)")
_SCANNED = re.compile(r"^SCAN (?:r|evidence_rows)\b")

BY_SOURCE_QUERIES = {
    "ask/context.py": 1,
    "gate/reads.py": 2,
    "ingest/lineage.py": 3,
    "lint/checks_context.py": 1,
    "lint/nearby.py": 1,
    "lint/quotes.py": 1,
    "lint/since.py": 1,
    "store/blast.py": 1,
    "watch/changes.py": 1,
}
"""Every query of the code that selects evidence by its source, by module (the collector below
must find each: a query it missed would go unchecked)."""


OTHER_DATABASES = {"mirror/shadow.py", "jobs/pg_lineage.py", "jobs/pg_checks.py"}
"""Modules whose SQL reads no SQLite vault's database: the mirror's shadow is an in-memory
database of its own, whose ``evidence`` is a plain table indexed by ``source_id``
(storage/postgres_context.py's RENDER_SCHEMA), not the vault's view; PostgreSQL's lineage and
lint checks run their ``?`` statements on a PostgreSQL vault, whose ``evidence`` is a table indexed by
``source_id`` (pg_migrations.py's ``evidence_source``)."""


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    """Each string literal of a module, an f-string's values read as ``?``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "?" for v in node.values)
            out.append((node.lineno, text))
    return out


def _by_source(sql: str) -> bool:
    """Whether a statement reads the evidence view selecting rows by their source."""
    return bool(_READS_EVIDENCE.search(sql)) and bool(_BY_SOURCE.search(_KEY_LOOKUP.sub("", sql)))


def _plan(db: sqlite3.Connection, sql: str) -> list[str]:
    return [str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + sql, [None] * sql.count("?"))]


def _slow(plan: list[str], sql: str) -> bool:
    """A plan that reads every evidence row, or finds a source's rows by no index (one row
    named by its key, as an update names it, is found by the primary key)."""
    if any(_SCANNED.match(step) for step in plan):
        return True
    one_row = "claim_id = ? AND idx = ?" in sql and any(_ONE_ROW.match(s) for s in plan)
    return not one_row and not any(_INDEXED.match(step) for step in plan)


def test_evidence_by_source_is_searched_by_its_index_never_scanned(vault: Vault) -> None:
    """The view's ``source_id`` is computed (a scalar subquery), so a query filtering on it
    reads every evidence row (0.2 -> 18 ms at 233 speeches); each by-source query of the code
    names the source's key instead and must search ``evidence_rows`` by its index."""
    _applied(vault)
    vault.db.execute("ANALYZE")
    root = Path(affidavit.__file__).parent
    found: dict[str, int] = {}
    slow = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() in OTHER_DATABASES:
            continue
        for line, sql in _sql_strings(path):
            if not _by_source(sql):
                continue
            name = path.relative_to(root).as_posix()
            found[name] = found.get(name, 0) + 1
            plan = _plan(vault.db, sql)
            if _slow(plan, sql):
                slow.append((f"{name}:{line}", plan))
    assert found == BY_SOURCE_QUERIES
    assert not slow, slow


def test_a_query_on_the_computed_source_id_is_caught(vault: Vault) -> None:
    """The attacker's query: the old by-source shapes, by id and by IN list, and a correlated
    self-join on the computed column, are all found and all flagged as slow."""
    _applied(vault)
    old = [
        "SELECT claim_id FROM evidence WHERE source_id = ?",
        "SELECT DISTINCT c.id FROM evidence e JOIN claims c ON c.id = e.claim_id "
        "WHERE c.status = 'active' AND e.source_id IN (?, ?)",
        "SELECT 1 FROM evidence e WHERE e.claim_id = ? AND NOT EXISTS (SELECT 1 FROM evidence e2 "
        "WHERE e2.source_id = e.source_id AND e2.start = e.start)",
        "SELECT count(*) FROM sources s LEFT JOIN evidence e ON e.source_id = s.id WHERE s.id = ?",
        "SELECT e.claim_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
        "WHERE e.source_id = ? AND e.start >= ? AND e.idx = 0 AND c.status = 'active'",
    ]
    for sql in old:
        assert _by_source(sql), sql
        assert _slow(_plan(vault.db, sql), sql), sql
    fine = (
        "SELECT claim_id FROM evidence "
        "WHERE source_key = (SELECT key FROM source_keys WHERE source_id = ?)"
    )
    assert not _slow(_plan(vault.db, fine), fine)


def test_the_views_source_key_names_its_source(vault: Vault) -> None:
    _applied(vault)
    rows = vault.db.execute(
        "SELECT e.source_id, k.source_id FROM evidence e JOIN source_keys k ON k.key = e.source_key"
    ).fetchall()
    assert rows and all(a == b for a, b in rows)
    assert len(rows) == vault.db.execute("SELECT count(*) FROM evidence").fetchone()[0]
