"""The version the daemon's search answers are kept under moves with every write a search can
see, whoever writes it, and with no other (issue 25 item 4; migration ``m026``).

An attacker would look for a write that changes what search returns and leaves a cached answer
served: every table a search reads is written here by hand from another connection (as a later
migration or the ``sqlite3`` shell would), and through the door (a retraction approved). A write
rolled back must leave the cache as it was; the daemon's own answer log must not empty it (it did:
any commit moved ``PRAGMA data_version``); and a trigger dropped or altered by hand, or a table
rebuilt without them, must make the version fall back to every commit, never trust a token
nothing moves any more.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from affidavit import db as db_module
from affidavit import inbox
from affidavit.db import connect, migrate
from affidavit.retract import retract_claim_op, withdrawal_plan
from affidavit.retrieval.search import _row_cache
from affidavit.retrieval.search_version import SearchVersion, intact, triggers
from affidavit.retrieval.tantivy_index import wait_for_refresh
from affidavit.server.fastlane import search_body
from affidavit.server.registry import SearchCache
from affidavit.service import vaults as svc
from affidavit.service.models import AskRequest
from affidavit.vault import Vault, open_vault
from tests.test_server_authz import make_alpha

Q = "freedom"


@pytest.fixture(scope="module")
def alpha(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("version") / "alpha"
    make_alpha(root)
    return root


@contextmanager
def lane(root: Path) -> Iterator[tuple[Vault, SearchCache, Vault]]:
    """The lane's connection (``query_only``) with its cache, and another that writes."""
    with open_vault(root) as vault, open_vault(root) as other:
        vault.db.execute("PRAGMA query_only = ON")
        yield vault, SearchCache(64), other


def answer(vault: Vault, cache: SearchCache | None, q: str = Q) -> bytes:
    return search_body(vault, q, 10, "untrusted", cache)


def settled(vault: Vault, cache: SearchCache) -> bytes:
    """The answer once the search index reflects the database: the cache keeps only the index's
    answers (FTS5 answers while a rebuild runs in the background, after the epoch changed)."""
    for _ in range(5):
        body = answer(vault, cache)
        if answer(vault, cache) is body:
            return body
        wait_for_refresh(60)
    raise AssertionError("the search index never caught up")


def test_the_migration_makes_the_token_and_its_triggers(
    alpha: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_vault(alpha) as vault:
        assert intact(vault.db)[1]
        names = {
            r[0] for r in vault.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        assert set(triggers()) <= names and len(triggers()) == 22
    # a vault migrated before m026 gets it from migrate(), the triggers intact (those on claims
    # as m032 makes them again on claim_rows)
    db = sqlite3.connect(":memory:")
    before = [m for m in db_module.MIGRATIONS if m[0] < "m026"]
    monkeypatch.setattr(db_module, "MIGRATIONS", before)
    migrate(db)
    monkeypatch.undo()
    assert not intact(db)[1]
    assert "m026_search_version" in migrate(db)
    assert intact(db)[1]


def _other_source(db: sqlite3.Connection) -> str:
    """A copy of the first source under a new id (every column as it is)."""
    row = db.execute("SELECT * FROM sources LIMIT 1").fetchone()
    new = "f" * 64
    cols = row.keys()
    values = [new if c == "id" else row[c] for c in cols]
    db.execute(
        f"INSERT INTO sources ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", values
    )
    return new


def _writes(db: sqlite3.Connection) -> list[tuple[str, Callable[[], object]]]:
    """Every kind of row write a search reads, as a hand edit would make it."""
    claim, page = db.execute(
        "SELECT id, page_slug FROM claims WHERE status = 'active' AND text LIKE '%freedom%'"
    ).fetchone()
    text = db.execute("SELECT text FROM claims WHERE id = ?", (claim,)).fetchone()[0]
    other_page = db.execute("SELECT slug FROM pages WHERE slug <> ?", (page,)).fetchone()[0]
    row = db.execute("SELECT claim_id, idx FROM evidence_rows LIMIT 1").fetchone()
    new_claim = "c-" + "e" * 16
    x = db.execute

    def claim_insert() -> object:
        return x(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at) SELECT ?, page_slug, section, 99, 'Freedom of the new claim.', "
            "'active', trust, plan_id, created_at FROM claims WHERE id = ?",
            (new_claim, claim),
        )

    def source_keys() -> object:
        source = _other_source(db)  # a new source: its insert moves the token too
        return x("INSERT INTO source_keys (source_id) VALUES (?)", (source,))

    return [
        ("claim text", lambda: x("UPDATE claims SET text = ? WHERE id = ?", (text + " X.", claim))),
        ("claim trust", lambda: x("UPDATE claims SET trust = 'untrusted' WHERE id = ?", (claim,))),
        ("claim section", lambda: x("UPDATE claims SET section = 'S' WHERE id = ?", (claim,))),
        ("claim status", lambda: x("UPDATE claims SET status = 'retracted' WHERE id = ?", (claim,))),
        ("claim back", lambda: x("UPDATE claims SET status = 'active' WHERE id = ?", (claim,))),
        ("claim page", lambda: x("UPDATE claims SET page_slug = ? WHERE id = ?", (other_page, claim))),
        ("claim insert", claim_insert),
        ("claim delete", lambda: x("DELETE FROM claims WHERE id = ?", (new_claim,))),
        ("page title", lambda: x("UPDATE pages SET title = 'Freedom' WHERE slug = ?", (page,))),
        ("page summary", lambda: x("UPDATE pages SET summary = 'freedom' WHERE slug = ?", (page,))),
        ("page insert", lambda: x(
            "INSERT INTO pages SELECT 'freedom-two', 'Freedom two', summary, category, "
            "created_at, updated_at, plan_id FROM pages WHERE slug = ?", (page,))),
        ("page delete", lambda: x("DELETE FROM pages WHERE slug = 'freedom-two'")),
        ("link insert", lambda: x(
            "INSERT INTO links (src, dst, plan_id) VALUES (?, ?, 'p')", (other_page, page))),
        ("link update", lambda: x("UPDATE links SET plan_id = 'q' WHERE plan_id = 'p'")),
        ("link delete", lambda: x("DELETE FROM links WHERE plan_id = 'q'")),
        ("evidence location", lambda: x(
            "UPDATE evidence_rows SET location = 'line 0' WHERE claim_id = ? AND idx = ?",
            tuple(row))),
        ("evidence delete", lambda: x(
            "DELETE FROM evidence_rows WHERE claim_id = ? AND idx = ?", tuple(row))),
        ("source and key insert", source_keys),
        ("source key delete", lambda: x(
            "DELETE FROM source_keys WHERE source_id = ?", ("f" * 64,))),
        ("source name", lambda: x("UPDATE sources SET name = 'renamed.md' WHERE id = ?", ("f" * 64,))),
        ("source delete", lambda: x("DELETE FROM sources WHERE id = ?", ("f" * 64,))),
        ("index epoch", lambda: x("UPDATE search_epoch SET token = 'another'")),
        ("index log pruned", lambda: x("DELETE FROM search_changes")),
    ]  # fmt: skip


def test_every_write_a_search_reads_moves_the_version_and_the_answer_is_fresh(
    tmp_path: Path,
) -> None:
    root = tmp_path / "alpha"
    make_alpha(root)
    with lane(root) as (vault, cache, other):
        other.db.execute("PRAGMA foreign_keys = OFF")  # a hand edit, as crude as it gets
        for name, write in _writes(other.db):
            settled(vault, cache)  # kept: the next one is the cache's
            version = cache.version_of(vault.db)
            write()
            assert cache.version_of(vault.db) != version, name
            now = settled(vault, cache)
            assert now == answer(vault, None), name  # what a search gives now, not what it gave
        assert cache.version_of(vault.db)[0] == "search"  # the token was trusted throughout


def test_the_door_retracting_a_claim_empties_the_cache(alpha: Path) -> None:
    with lane(alpha) as (vault, cache, other):
        before = answer(vault, cache)
        claim = other.db.execute(
            "SELECT id FROM claims WHERE status = 'active' AND text LIKE '%freedom%'"
        ).fetchone()[0]
        assert claim in before.decode()
        plan = withdrawal_plan(other, [retract_claim_op(claim, "wrong")])
        proposal = inbox.propose(other, plan, "tester", "test")
        inbox.approve(other, proposal.plan_id, None, "tester")
        after = settled(vault, cache)
        assert claim not in after.decode() and after == answer(vault, None)


def test_the_answer_log_and_other_writes_leave_the_cache_and_a_rollback_shows_nothing(
    alpha: Path,
) -> None:
    with lane(alpha) as (vault, cache, other):
        before = settled(vault, cache)
        version = cache.version_of(vault.db)
        rows = _row_cache(vault.db)
        data = vault.db.execute("PRAGMA data_version").fetchone()[0]
        # the daemon's answers write their nonce and question; a claim's support verdict, a
        # source's trust choice: none of it is what a search reads
        svc.ask(other, AskRequest(question="What about freedom?"), None, "tester")
        other.db.execute("UPDATE claims SET support = 'checked'")
        other.db.execute("UPDATE sources SET trust_chosen = 'x'")
        assert vault.db.execute("PRAGMA data_version").fetchone()[0] != data  # commits landed
        assert cache.version_of(vault.db) == version
        assert answer(vault, cache) is before  # still the cache's
        assert _row_cache(vault.db) is rows
        # a write rolled back: never seen, the cache kept
        other.db.execute("BEGIN IMMEDIATE")
        other.db.execute("UPDATE claims SET text = 'Gone.' WHERE text LIKE '%freedom%'")
        other.db.execute("ROLLBACK")
        assert cache.version_of(vault.db) == version
        assert answer(vault, cache) is before and before == answer(vault, None)


@pytest.mark.parametrize("how", ["dropped", "altered", "table rebuilt"])
def test_a_trigger_gone_or_altered_falls_back_to_every_commit(tmp_path: Path, how: str) -> None:
    root = tmp_path / "alpha"
    make_alpha(root)
    with lane(root) as (vault, cache, other):
        db = other.db
        answer(vault, cache)
        assert cache.version_of(vault.db)[0] == "search"
        if how == "dropped":
            db.execute("DROP TRIGGER search_version_claim_update")
        elif how == "altered":  # the same name, a body that moves nothing
            db.executescript(
                "DROP TRIGGER search_version_claim_update;"
                "CREATE TRIGGER search_version_claim_update AFTER UPDATE OF text ON claim_rows "
                "BEGIN SELECT 1; END;"
            )
        else:  # a later migration that rebuilds a table loses its triggers
            db.executescript(
                "PRAGMA foreign_keys = OFF; BEGIN;"
                "CREATE TABLE links_new (src TEXT NOT NULL, dst TEXT NOT NULL, "
                "plan_id TEXT NOT NULL, PRIMARY KEY (src, dst));"
                "INSERT INTO links_new SELECT * FROM links; DROP TABLE links;"
                "ALTER TABLE links_new RENAME TO links; COMMIT;"
            )
        version = cache.version_of(vault.db)
        assert version[0] == "data" and not intact(vault.db)[1]
        svc.ask(other, AskRequest(question="What about freedom?"), None, "tester")
        assert cache.version_of(vault.db) != version  # any commit, as before m026
        before = settled(vault, cache)
        db.execute("UPDATE claims SET text = text || ' Y.' WHERE text LIKE '%freedom%'")
        after = settled(vault, cache)
        assert after != before and after == answer(vault, None)


def test_a_database_without_the_token_reads_every_commit(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE claims (id TEXT)")
    other_reader = SearchVersion()
    first = other_reader(db)
    assert first[0] == "data"
    db.execute("INSERT INTO claims VALUES ('x')")  # its own write: total_changes moves
    assert other_reader(db) != first
    path = tmp_path / "db.sqlite"
    writer = connect(path, tmp_path)
    reader = connect(path, tmp_path)
    try:
        writer.execute("CREATE TABLE notes (x)")
        read = SearchVersion()
        first = read(reader)
        writer.execute("INSERT INTO notes VALUES (1)")  # another connection's commit
        assert read(reader) != first
    finally:
        writer.close()
        reader.close()
