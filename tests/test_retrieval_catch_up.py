"""The search index's catch-up (one JSON statement for the rows, one term-set delete) leaves the
index as the row-by-row replacement it replaced did: the same segments holding the same live
documents, so every search finds the same documents with the same scores."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from affidavit.db import connect, read_snapshot
from affidavit.retrieval import tantivy_index
from affidavit.retrieval.tantivy_index import SearchIndex, db_position
from affidavit.vault import Vault

WORDS = [
    "river",
    "harbour",
    "bridge",
    "tower",
    "castle",
    "railway",
    "canal",
    "market",
    "council",
    "treaty",
    "bishop",
]
TIERS = ("trusted", "semi-trusted", "untrusted")
ODD = ["", "", "", "", "\x00x", "😀", "\"'\\", "\u2028é", "\t"]


def _reference_catch_up(index: SearchIndex, db: sqlite3.Connection) -> None:
    """The catch-up as it was: ``SELECT DISTINCT`` over the log, then per run of 500 keys a
    delete per key, an ``IN`` query and a document per row."""
    with index.lock, read_snapshot(db):
        index._open()
        have, want = index._stored_position(), db_position(db)
        assert have is not None and want is not None and have.epoch == want.epoch
        changes = db.execute(
            "SELECT DISTINCT kind, key FROM search_changes WHERE seq > ? AND seq <= ?",
            (have.seq, want.seq),
        ).fetchall()
        writer = index._writer(tantivy_index.WRITER_HEAP, 1)
        for kind in ("claim", "page"):
            keys = [str(key) for k, key in changes if k == kind]
            for start in range(0, len(keys), 500):
                run = keys[start : start + 500]
                marks = ",".join("?" * len(run))
                if kind == "claim":
                    for key in run:
                        writer.delete_documents_by_term("key", "c:" + key)
                    rows = db.execute(
                        "SELECT id, text, trust, page_slug FROM claims "
                        f"WHERE id IN ({marks}) AND status = 'active'",
                        run,
                    ).fetchall()
                    for row in rows:
                        writer.add_document(tantivy_index._claim_doc(*row))
                else:
                    for key in run:
                        writer.delete_documents_by_term("key", "p:" + key)
                    rows = db.execute(
                        f"SELECT slug, title, summary FROM pages WHERE slug IN ({marks})", run
                    ).fetchall()
                    for row in rows:
                        writer.add_document(tantivy_index._page_doc(*row))
        index._commit(writer, want)


def _documents(index: SearchIndex) -> list[list[str]]:
    """Every segment's live documents (their keys), the segments sorted. Neither the order of
    the segments in a searcher (by their random ids) nor that of a merged segment's documents
    (its parts in that order) is the same twice, whichever code wrote the index."""
    searcher = index.index.searcher()
    hits = searcher.search(tantivy_index._tv().Query.all_query(), 1_000_000).hits
    segments: dict[int, list[str]] = {}
    for _, address in hits:
        segments.setdefault(address.segment_ord, []).append(str(searcher.doc(address)["key"][0]))
    return sorted(sorted(keys) for keys in segments.values())


def _text(rng: random.Random) -> str:
    # few words: many claims score alike, so ties at a search's cut-off are common
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) + "."


def _change(db: sqlite3.Connection, rng: random.Random, serial: list[int], runs: int) -> None:
    """Insert, edit, retract and delete claims and pages, as the door and people do."""
    for _ in range(runs):
        roll = rng.random()
        claims = [r[0] for r in db.execute("SELECT id FROM claims")]
        pages = [r[0] for r in db.execute("SELECT slug FROM pages")]
        serial[0] += 1
        if roll < 0.12 or not pages:
            slug = f"page-{serial[0]:05d}" + rng.choice(ODD)
            db.execute(
                "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, "
                "plan_id) VALUES (?, ?, ?, 'topic', 't', 't', 'p')",
                (slug, _text(rng), _text(rng)),
            )
        elif roll < 0.72 or not claims:
            # ids in no particular order, like the door's; some with what a tampered vault holds
            cid = f"{rng.getrandbits(64):016x}" + rng.choice(ODD)
            db.execute(
                "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES (?, ?, 's', ?, ?, 'active', ?, 'p', 't')",
                (cid, rng.choice(pages), serial[0], _text(rng), rng.choice(TIERS)),
            )
        elif roll < 0.80:
            db.execute("UPDATE claims SET text = ? WHERE id = ?", (_text(rng), rng.choice(claims)))
        elif roll < 0.86:
            status = rng.choice(["retracted", "superseded", "active"])
            db.execute("UPDATE claims SET status = ? WHERE id = ?", (status, rng.choice(claims)))
        elif roll < 0.90:
            db.execute("DELETE FROM claims WHERE id = ?", (rng.choice(claims),))
        elif roll < 0.95:
            db.execute(
                "UPDATE pages SET title = ?, summary = ? WHERE slug = ?",
                (_text(rng), _text(rng), rng.choice(pages)),
            )
        else:
            slug = rng.choice(pages)
            db.execute("DELETE FROM claims WHERE page_slug = ?", (slug,))
            db.execute("DELETE FROM pages WHERE slug = ?", (slug,))


def _searches(index: SearchIndex, rng: random.Random) -> list[Any]:
    """Every hit with its score; of a search cut short, the scores (which of two equal hits
    makes the cut follows the documents' addresses: see :func:`_documents`)."""
    answers: list[Any] = []
    for _ in range(30):
        terms = rng.sample(WORDS, rng.randint(1, 3))
        tiers = tuple(rng.sample(TIERS, rng.randint(1, 3)))
        answers += [index.claims(terms, tiers, 100_000), index.pages(terms, 100_000)]
        limit = rng.choice([1, 3, 10, 50])
        answers.append([score for _, score in index.claims(terms, tiers, limit)])
    return answers


def test_catch_up_leaves_the_index_as_the_row_by_row_replacement_did(vault: Vault) -> None:
    tantivy_index.wait_for_refresh(60)
    database = Path(vault.state_dir / "db.sqlite")
    db = connect(database)
    new = SearchIndex(vault.state_dir / "new-index")
    old = SearchIndex(vault.state_dir / "old-index")
    rng = random.Random(14)
    serial = [0]
    try:
        _change(db, rng, serial, 40)
        new.rebuild(db)  # both start from the same full build (two threads build it: copied)
        shutil.copytree(new.path, old.path)
        assert _documents(new) == _documents(old._open() and old)
        for step in range(25):
            # over 500 changes: the old code's several runs of keys
            _change(db, rng, serial, rng.choice([1, 5, 40, 700 if step % 6 == 0 else 120]))
            assert new.catch_up(db) == db_position(db)
            _reference_catch_up(old, db)
            assert _documents(new) == _documents(old), step
            assert new.index.searcher().num_docs == old.index.searcher().num_docs
            assert new.index.searcher().num_segments == old.index.searcher().num_segments
            seed = rng.getrandbits(32)
            assert _searches(new, random.Random(seed)) == _searches(old, random.Random(seed))
        want = {"c:" + r[0] for r in db.execute("SELECT id FROM claims WHERE status = 'active'")}
        want |= {"p:" + r[0] for r in db.execute("SELECT slug FROM pages")}
        held = [key for keys in _documents(new) for key in keys]
        assert sorted(held) == sorted(want | {tantivy_index.META_KEY})  # each once
        rebuilt = SearchIndex(vault.state_dir / "rebuilt-index")  # `affidavit reindex`
        rebuilt.rebuild(db)
        assert sorted(k for keys in _documents(rebuilt) for k in keys) == sorted(held)
    finally:
        db.close()
