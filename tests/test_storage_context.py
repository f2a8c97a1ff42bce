"""The context (``wiki/context.md``) through the door on both backends (issue 26): an
``update_context`` plan is admitted by the same gate on SQLite and on PostgreSQL (its entries are
claims of page ``''`` on both), a ``replace`` is a withdrawal that waits for a person, every
change snapshots the context as it was (W6), and past the line cap the oldest entries move to the
archive page instead of being cut. Attacker entries — a quote its source doesn't have, a number
the quote doesn't say, a planted instruction — are rejected or held the same way on both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.config import Config
from affidavit.storage import SQLiteStorage

from .test_storage_gate import (
    BRIDGE,
    CLEAN,
    LONG,
    NOW,
    OPENED,
    PLANTED,
    PgWiki,
    SqliteWiki,
    page,
    says,
)

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker


class SqliteContext(SqliteWiki):
    def __init__(self, root: Path, auto_apply: str, max_lines: int) -> None:
        super().__init__(root, auto_apply)
        text = self.vault.config_path.read_text("utf-8")
        self.vault.config_path.write_text(text + f"[context]\nmax_lines = {max_lines}\n", "utf-8")
        from affidavit.vault import open_vault

        from .conftest import FakeClock

        self.vault.close()
        self.vault = open_vault(root, clock=FakeClock())
        self.storage = SQLiteStorage(self.vault)

    def context(self) -> list[tuple[str, str]]:
        return [(c.text, c.trust) for c in self.storage.context("default")]

    def snapshots(self) -> list[str]:
        return [content for _, content in self.storage.context_snapshots("default")]


class PgContext(PgWiki):
    def __init__(self, url: str, name: str, auto_apply: str, max_lines: int) -> None:
        super().__init__(url, name, auto_apply)
        self.config = Config({"policy.auto_apply": auto_apply, "context.max_lines": max_lines})

    def context(self) -> list[tuple[str, str]]:
        return [(c.text, c.trust) for c in self.storage.context(self.name)]

    def snapshots(self) -> list[str]:
        return [content for _, content in self.storage.context_snapshots(self.name)]


@pytest.fixture(params=["sqlite", "postgresql"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made: list[Any] = []

    def build(auto_apply: str = "trusted", max_lines: int = 400) -> Any:
        if request.param == "sqlite":
            wiki: Any = SqliteContext(tmp_path / f"v{len(made)}", auto_apply, max_lines)
        else:
            name = f"ctx_{request.node.name.split('[')[0][-30:]}_{len(made)}"
            wiki = PgContext(request.getfixturevalue("pg_url"), name, auto_apply, max_lines)
        made.append(wiki)
        return wiki

    yield build
    for wiki in made:
        wiki.close()


def context(*entries: dict[str, Any], mode: str = "append") -> dict[str, Any]:
    return {"op": "update_context", "mode": mode, "entries": list(entries)}


OPENED_CLAIM = "The bridge opened in 1932."


def test_context_entries_go_in_and_each_change_is_snapshotted(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    first = wiki.submit([context(says(OPENED_CLAIM, source, OPENED))])
    assert wiki.status(first) == "applied"  # trusted, appended: the policy applies it
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]
    second = wiki.submit([context(says(LONG, source, LONG))])
    assert wiki.status(second) == "applied"
    assert wiki.context() == [(OPENED_CLAIM, "trusted"), (LONG, "trusted")]
    before_first, before_second = wiki.snapshots()
    assert "1932" not in before_first and "# Context" in before_first
    assert "The bridge opened in 1932" in before_second and LONG not in before_second


def test_a_replacement_waits_for_a_person_and_retracts_the_old_entries(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    wiki.submit([context(says(OPENED_CLAIM, source, OPENED))])
    plan = wiki.submit([context(says(LONG, source, LONG), mode="replace")])
    assert wiki.status(plan) == "pending"  # it takes entries out: a person decides
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]
    wiki.approve(plan)
    assert wiki.context() == [(LONG, "trusted")]
    assert "The bridge opened in 1932" in wiki.snapshots()[-1]


def test_an_entry_whose_quote_is_not_in_its_source_is_rejected_alone(make: Any) -> None:
    wiki = make("never")
    source = wiki.add(CLEAN, "trusted")
    forged = says("The bridge opened in 1931.", source, "The bridge opened in 1931")
    plan = wiki.submit([context(says(OPENED_CLAIM, source, OPENED), forged)])
    wiki.approve(plan)
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]
    assert wiki.verdicts(plan) == [("admitted", ""), ("rejected", "evidence")]
    only = wiki.submit([context(forged)])
    assert only.startswith("refused:")
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]


def test_an_entry_its_quote_does_not_support_is_rejected(make: Any) -> None:
    wiki = make("never")
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit([context(says(OPENED_CLAIM, source, OPENED),
                                says("The bridge opened in 1950.", source, OPENED))])  # fmt: skip
    wiki.approve(plan)
    assert wiki.verdicts(plan) == [("admitted", ""), ("rejected", "support")]
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]


def test_an_entry_quoting_a_planted_instruction_is_quarantined_and_waits(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(BRIDGE, "trusted")
    plan = wiki.submit([context(says(PLANTED, source, PLANTED))])
    assert wiki.status(plan) == "pending" and wiki.context() == []
    wiki.approve(plan)
    assert wiki.verdicts(plan) == [("quarantined", "sanitizer")]
    assert wiki.context() == [(PLANTED, "trusted")]


def test_past_the_line_cap_the_oldest_entries_move_to_the_archive_page(make: Any) -> None:
    wiki = make("trusted", max_lines=20)
    source = wiki.add(" ".join(f"Crate {i} holds {i + 3} apples." for i in range(12)), "trusted")
    texts = [f"Crate {i} holds {i + 3} apples." for i in range(10)]
    for text in texts:
        assert wiki.status(wiki.submit([context(says(text, source, text[:-1]))])) == "applied"
    kept = [t for t, _ in wiki.context()]
    archived = [t for t, _ in wiki.claims("context-archive")]
    assert kept and archived and archived + kept == texts  # oldest first, nothing cut
    assert len(wiki.snapshots()) == len(texts)


def test_a_retracted_context_entry_leaves_the_context(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    wiki.submit([context(says(OPENED_CLAIM, source, OPENED), says(LONG, source, LONG))])
    entry = (wiki.storage.context(getattr(wiki, "name", "default")))[0].id
    plan = wiki.submit([{"op": "retract_claim", "claim": entry, "reason": "misread"}])
    wiki.approve(plan)
    assert wiki.context() == [(LONG, "trusted")]


def test_a_page_claim_and_a_context_entry_of_one_plan(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit([page("bridge", says(OPENED_CLAIM, source, OPENED)),
                        context(says(LONG, source, LONG))])  # fmt: skip
    assert wiki.status(plan) == "applied"
    assert wiki.claims("bridge") == [(OPENED_CLAIM, "trusted")]
    assert wiki.context() == [(LONG, "trusted")]


def test_pg006_keeps_the_key_to_pages_for_every_claim_but_the_contexts(pg_url: str) -> None:
    """pg006 replaces claims' foreign key to pages (which refused page '') by one through a
    generated column that is NULL for the context alone: a vault migrated with rows keeps them,
    and a claim of a page that doesn't exist is still refused at commit."""
    import psycopg
    from psycopg import sql
    from psycopg.rows import dict_row

    from affidavit.storage.pg_migrations import VAULT
    from affidavit.storage.postgres import _apply_migrations

    old = [m for m in VAULT if m[0] != "pg006_context"]
    with psycopg.connect(pg_url, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("DROP SCHEMA IF EXISTS v_old CASCADE")  # a schema no vault registers
        with conn.transaction():
            _apply_migrations(conn, "v_old", old)
            conn.execute(
                "INSERT INTO v_old.plans (id, author, origin, plan_json, status, admission, "
                "created_at, expires_at) VALUES ('p', 'ann', 'cli', '{}', 'applied', '{}', 'x', 'y')"
            )
            conn.execute(
                "INSERT INTO v_old.pages (slug, title, summary, category, created_at, updated_at, "
                "plan_id) VALUES ('bridge', 't', 's', 'c', 'x', 'x', 'p')"
            )
            conn.execute(
                "INSERT INTO v_old.claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES ('c-1', 'bridge', 's', 0, 't', 'active', 'trusted', "
                "'p', 'x')"
            )
        with conn.transaction():
            assert _apply_migrations(conn, "v_old", VAULT) == ["v_old.pg006_context"]
        row = conn.execute("SELECT page_ref, batch_id FROM v_old.claims").fetchone()
        assert row == {"page_ref": "bridge", "batch_id": None}

        def claim(cid: str, page: str) -> None:
            with conn.transaction():
                conn.execute(
                    sql.SQL(
                        "INSERT INTO v_old.claims (id, page_slug, section, position, text, status, "
                        "trust, plan_id, created_at) VALUES (%s, %s, 's', 1, 't', 'active', "
                        "'trusted', 'p', 'x')"
                    ),
                    (cid, page),
                )

        claim("c-2", "")  # a context entry: no page to point at
        for missing in ("nowhere", " ", "Bridge"):
            with pytest.raises(psycopg.errors.ForeignKeyViolation):
                claim(f"c-{missing}", missing)
        with pytest.raises(psycopg.errors.ForeignKeyViolation), conn.transaction():
            conn.execute("UPDATE v_old.claims SET page_slug = 'nowhere' WHERE id = 'c-1'")
        with pytest.raises(psycopg.errors.ForeignKeyViolation), conn.transaction():
            conn.execute("DELETE FROM v_old.pages WHERE slug = 'bridge'")
        with pytest.raises(psycopg.errors.GeneratedAlways), conn.transaction():
            conn.execute("UPDATE v_old.claims SET page_ref = NULL WHERE id = 'c-1'")


def test_an_agents_context_entry_waits_for_a_person(make: Any) -> None:
    """W13: the policy never applies an agent's plan, not even a trusted context entry."""
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit([context(says(OPENED_CLAIM, source, OPENED))], "token:ab12", "api")
    assert wiki.status(plan) == "pending" and wiki.context() == []
    wiki.approve(plan)
    assert wiki.context() == [(OPENED_CLAIM, "trusted")]


def test_on_postgresql_appliers_on_their_own_pools_grow_one_context(pg_url: str) -> None:
    """Four appliers, each on its own pool, append context entries past the line cap at once:
    the vault's lock orders them, so no entry is lost or cut, positions don't collide, and the
    archive page is made once."""
    from concurrent.futures import ThreadPoolExecutor

    from affidavit.storage import open_storage

    wiki = PgContext(pg_url, "ctx_race", "trusted", 20)
    text = " ".join(f"Crate {i} holds {i + 3} apples." for i in range(40))
    source = wiki.add(text, "trusted")

    def run(n: int) -> None:
        storage = open_storage(pg_url)
        try:
            for k in range(5):
                i = n * 5 + k
                plan_id = f"race-{i}"
                entry = says(
                    f"Crate {i} holds {i + 3} apples.", source, f"Crate {i} holds {i + 3} apples"
                )
                storage.propose(
                    wiki.name, plan_id, author="ann", origin="cli",
                    plan_json=json.dumps({"nonce": f"nonce-{plan_id}-0123456789abcdef",
                                          "operations": [context(entry)]}),
                    created_at=NOW, expires_at="2099-01-01T00:00:00Z",
                )  # fmt: skip
                with storage.door(wiki.name, f"b-{plan_id}") as door:
                    door.apply_plan(plan_id, now=NOW, actor="ann", config=wiki.config)
        finally:
            storage.close()

    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(run, range(4)))
        kept = wiki.storage.context(wiki.name)
        archive = wiki.storage.page(wiki.name, "context-archive")
        assert archive is not None and kept
        every = [c.text for c in archive.claims] + [c.text for c in kept]
        assert sorted(every) == sorted(f"Crate {i} holds {i + 3} apples." for i in range(20))
        assert [c.position for c in archive.claims] == list(range(len(archive.claims)))
        assert len({c.position for c in kept}) == len(kept)
        assert [r.seq for r in wiki.storage.batches(wiki.name)] == list(range(1, 21))
    finally:
        wiki.close()
