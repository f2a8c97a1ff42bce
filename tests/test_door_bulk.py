"""The door's shortcuts at ingest scale, each against the path it replaces: a batch's new claims
added to ``claims_fts`` and logged in ``search_changes`` before it commits (migration
``m012_door_bulk_claims``) leave exactly what the row triggers left; the context spill reads its
entries once; a page's next position is read once per plan; a plan admitted inside the batch is
not parsed back from its admission column nor serialised again, and that column ends the same."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.ingest.pipeline import Ingestor
from affidavit.plan.stored import admission_text
from affidavit.providers.from_config import provider_from_config
from affidavit.store.apply import Batch
from affidavit.store.writer import Writer
from affidavit.vault import init_vault

from .conftest import SAMPLES, FakeClock

WORDS = ["government", "states", "peace", "the", "congress", "freedom", "war", "united", "nation"]


def _ingest(root: Path, docs: Path) -> dict[str, Any]:
    vault, _ = init_vault(root, clock=FakeClock())
    try:
        config = vault.config_path.read_text().replace("max_lines = 400", "max_lines = 20")
        vault.config_path.write_text(config)
        vault.close()
        from affidavit.vault import open_vault

        vault = open_vault(root, clock=FakeClock())
        provider = provider_from_config(vault.config, "extractive")
        Ingestor(vault, provider, apply_now=True, batch_plans=3).run([str(docs)], "trusted")
        db = vault.db
        db.execute("INSERT INTO claims_fts (claims_fts) VALUES ('integrity-check')")
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, claims_fts, 'instance')")
        state = {
            "files": {p.name: p.read_bytes() for p in sorted(vault.wiki_dir.glob("*.md"))},
            "fts": sorted(map(tuple, db.execute("SELECT term, doc, col, offset FROM temp.vocab"))),
            "hits": [
                [
                    tuple(row)
                    for row in db.execute(
                        "SELECT c.id, bm25(claims_fts) FROM claims_fts JOIN claims c "
                        "ON c.rowid = claims_fts.rowid WHERE claims_fts MATCH ? "
                        "ORDER BY bm25(claims_fts), c.id",
                        (word,),
                    )
                ]
                for word in WORDS
            ],
            "changes": Counter(map(tuple, db.execute("SELECT kind, key FROM search_changes"))),
            "last_change": db.execute("SELECT max(seq) FROM search_changes").fetchone()[0],
            "claims": db.execute("SELECT count(*) FROM claims").fetchone()[0],
            "positions": [
                tuple(row)
                for row in db.execute(
                    "SELECT page_slug, position, section, text FROM claims ORDER BY rowid"
                )
            ],
            "archived": db.execute(
                "SELECT count(*) FROM claims WHERE page_slug = 'context-archive'"
            ).fetchone()[0],
            "deferred": db.execute("SELECT count(*) FROM door_deferred").fetchone()[0],
            "plans": [  # plan ids differ with the nonces
                (status, admission_text(row, db).replace(plan_id, "<plan>"), selected)
                for row in db.execute(
                    "SELECT id, status, admission, admission_z, selected_ops, plan_json, plan_z "
                    "FROM plans "
                    "ORDER BY rowid"
                )
                for plan_id, status, selected in [(row[0], row[1], row[4])]
            ],
        }
        assert run_doctor(vault).clean
    finally:
        vault.close()
    return state


def _queried_position(self: Writer, page: str, position: int | None) -> int:
    return self._next_position(page) if position is None else position


def test_bulk_claim_indexing_leaves_what_the_row_triggers_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md"):
        paragraphs = (SAMPLES / "sotu" / name).read_text(encoding="utf-8").split("\n\n")
        third = len(paragraphs) // 3 + 1
        for part in range(3):  # nine sources: nine context entries, past a cap of 20 lines
            text = "\n\n".join(paragraphs[part * third : (part + 1) * third])
            (docs / f"{part}-{name}").write_text(text, encoding="utf-8")
    bulk = _ingest(tmp_path / "bulk", docs)
    with monkeypatch.context() as patch:  # every claim through the row triggers, as before
        patch.setattr(Batch, "_defer_claim_indexing", lambda self: None)
        patch.setattr(Batch, "_index_claims", lambda self: None)
        patch.setattr(Batch, "_fresh_verdicts", lambda self, plan_id: None)  # parsed back
        patch.setattr(Writer, "_position", _queried_position)  # asked for every claim
        rows = _ingest(tmp_path / "rows", docs)
    assert bulk["claims"] > 100 and bulk["archived"] > 0  # the cap of 20 lines spilled
    assert bulk["deferred"] == 0
    assert bulk["fts"] and any(bulk["hits"]) and len(bulk["plans"]) > 10
    assert bulk == rows


def test_other_inserts_still_go_through_the_row_triggers(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v", clock=FakeClock())
    try:
        db = vault.db
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
            "created_at) VALUES ('c-1', 'p', 's', 0, 'Zebras graze at dawn.', 'active', "
            "'trusted', 'x', 'now')"
        )
        hits = db.execute("SELECT rowid FROM claims_fts WHERE claims_fts MATCH 'zebra'")
        assert len(hits.fetchall()) == 1
        logged = db.execute("SELECT kind, key FROM search_changes").fetchall()
        assert [tuple(r) for r in logged] == [("claim", "c-1")]
    finally:
        vault.close()


def test_the_successor_lookup_of_the_context_spill_uses_an_index(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v", clock=FakeClock())
    try:
        plan = vault.db.execute(
            "EXPLAIN QUERY PLAN SELECT DISTINCT page_slug FROM claims "
            "WHERE superseded_by = ? AND page_slug != ''",
            ("c-1",),
        ).fetchall()
        assert any("claims_successor" in str(tuple(row)) for row in plan)
    finally:
        vault.close()


def test_a_savepoint_rolled_back_takes_the_bulk_rows_with_it(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    from affidavit.db import migrate

    migrate(db)
    db.execute("BEGIN")
    db.execute("SAVEPOINT nested")
    db.execute("INSERT INTO door_deferred (since) VALUES (0)")
    db.execute("ROLLBACK TO nested")
    db.execute("RELEASE nested")
    db.execute("COMMIT")
    assert db.execute("SELECT count(*) FROM door_deferred").fetchone()[0] == 0


@pytest.mark.parametrize("ending", ["commit", "empty", "rollback"])
def test_every_way_a_batch_ends_hands_claims_back_to_the_triggers(
    tmp_path: Path, ending: str
) -> None:
    """A batch defers its claims' indexing while open; committed (with or without plans) or
    rolled back, it leaves no ``door_deferred`` row, so a later insert is indexed by the
    triggers."""
    from .conftest import add_text, claim, make_plan

    vault, _ = init_vault(tmp_path / "v", clock=FakeClock())
    try:
        db = vault.db
        source = add_text(vault, "z.md", "Zebras graze at dawn on the plain.\n")
        batch = Batch(vault).open()
        assert db.execute("SELECT count(*) FROM door_deferred").fetchone()[0] == 1
        if ending == "commit":
            from affidavit.inbox import approve, propose

            plan = make_plan(
                vault,
                {
                    "op": "create_page",
                    "slug": "zebras",
                    "title": "Zebras",
                    "summary": "Zebras graze",
                    "claims": [claim("Zebras graze at dawn.", source, "Zebras graze at dawn")],
                },
            )
            assert approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t").claims
            assert batch.applied  # it joined the open batch
        batch.close(commit=ending != "rollback")
        assert db.execute("SELECT count(*) FROM door_deferred").fetchone()[0] == 0
        fts = "SELECT count(*) FROM claims_fts WHERE claims_fts MATCH ?"
        assert db.execute(fts, ("zebra",)).fetchone()[0] == (ending == "commit")
        logged = db.execute("SELECT count(*) FROM search_changes WHERE kind = 'claim'")
        assert logged.fetchone()[0] == (ending == "commit")
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at) VALUES ('c-1', 'p', 's', 0, 'Okapis browse at dusk.', "
            "'active', 'trusted', 'x', 'now')"
        )
        assert db.execute(fts, ("okapi",)).fetchone()[0] == 1
    finally:
        vault.close()
