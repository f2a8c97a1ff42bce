"""The pairs a few claims are part of, through the claim-word index (:mod:`affidavit.lint.nearby`),
are the full search's: the same pairs in the same order, the same findings — on random wikis in a
real SQLite file (words shared by more and fewer than ``MAX_BUCKET`` claims, superseded claims,
claims without evidence or citing no known source, context entries repeating a page claim's
quote, linked and similarly titled pages, ties in creation time) and after the wiki changes."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from affidavit.db import connect, migrate
from affidavit.lint.candidates import (
    Subjects,
    Thresholds,
    find_candidates,
    load_claims,
    related_pairs,
    search_pairs,
)
from affidavit.lint.nearby import index_claims, nearby_pairs, pairs_involving, search_involving
from affidavit.lint.postings import every_posting
from affidavit.store.render import CONTEXT_ARCHIVE

COMMON = ["tax", "tariff", "army", "navy", "Congress", "trade", "bank", "war", "peace"]
RARE = [f"word{n}" for n in range(40)] + ["1812", "1,200", "3.50", "two", "May", "Spain"]
NEG = ["not", "never"]
TITLES = ["State", "Union", "war", "bank", "Texas", "treaty", "gold", "of", "the", "Spain"]


def _db(path: Path) -> sqlite3.Connection:
    db = connect(path)
    migrate(db)
    # a source's "text" here says which source and offset it is (these sources have no files)
    db.create_function("evidence_span", 5, _span)
    return db


QUOTES: dict[tuple[str, int, int], str] = {}
"""Quotes a test gives by (source, start, end); any other reads "quote SOURCE START"."""


def _span(text_file: str | None, _sha: str, begin: int, end: int, _crc: int) -> str | None:
    if text_file is None:
        return None
    return QUOTES.get((text_file, begin, end), f"quote {text_file} {begin}")


def _fill(db: sqlite3.Connection, rnd: random.Random, claims: int, start: int = 0) -> list[str]:
    """Random sources, pages, links, claims and evidence; returns the new claims' ids."""
    sources = [r[0] for r in db.execute("SELECT id FROM sources")]
    for n in range(rnd.randint(1, 4)):
        sid = f"s{start}-{n}"
        db.execute(
            "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
            "text_sha256, size_bytes, text_chars, trust, added_at, text_map, origin_key, "
            "version) VALUES (?, '', '', 'text/plain', '', ?, '', 0, 0, ?, ?, '{}', ?, ?)",
            (
                sid,
                sid,
                rnd.choice(["trusted", "untrusted"]),
                f"2026-0{rnd.randint(1, 9)}",
                rnd.choice(["", "doc-a", "doc-b"]),
                rnd.randint(1, 3),
            ),  # versions of one document
        )
        sources.append(sid)
    pages = [r[0] for r in db.execute("SELECT slug FROM pages")]
    for n in range(rnd.randint(0, 6)):
        slug = f"p{start}-{n}"
        title = " ".join(rnd.choice(TITLES) for _ in range(rnd.randint(0, 5)))
        db.execute(
            "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, plan_id)"
            " VALUES (?, ?, '', '', '', '', '')",
            (slug, title),
        )
        pages.append(slug)
    slugs = [*pages, "", CONTEXT_ARCHIVE, "nopage"]
    for _ in range(rnd.randint(0, 6)):
        db.execute(
            "INSERT OR IGNORE INTO links (src, dst, plan_id) VALUES (?, ?, '')",
            (rnd.choice(slugs), rnd.choice(slugs)),
        )
    spans = [tuple(r) for r in db.execute('SELECT source_id, start, "end" FROM evidence LIMIT 200')]
    ids: list[str] = []
    for n in range(claims):
        cid = f"c-{start:03d}-{n:04d}"
        words = [rnd.choice(COMMON) for _ in range(rnd.randint(0, 4))]
        words += [rnd.choice(RARE) for _ in range(rnd.randint(1, 5))]
        words += [rnd.choice(NEG)] if rnd.random() < 0.2 else []
        rnd.shuffle(words)
        page = rnd.choice(slugs)
        status = "active" if rnd.random() < 0.85 else rnd.choice(["superseded", "pending"])
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at) VALUES (?, ?, '', ?, ?, ?, ?, '', ?)",
            (cid, page, n, " ".join(words), status, rnd.choice(["trusted", "untrusted"]),
             f"2026-{rnd.randint(1, 3)}"),
        )  # fmt: skip
        ids.append(cid)
        kind = rnd.random()
        if kind < 0.05:
            continue  # no evidence at all
        for idx in range(rnd.randint(1, 2)):
            if page in ("", CONTEXT_ARCHIVE) and spans and rnd.random() < 0.6:
                source, begin, end = rnd.choice(spans)  # a page claim's quote again
            else:
                source = rnd.choice(sources) if kind > 0.1 else "unknown-source"
                begin = rnd.randint(0, 50)
                end = begin + rnd.randint(1, 20)
            if source == "unknown-source":  # no row in sources: past the view's checks
                db.execute("INSERT OR IGNORE INTO source_keys (source_id) VALUES (?)", (source,))
                db.execute(
                    'INSERT INTO evidence_rows (claim_id, idx, source_key, start, "end", '
                    "location, crc) SELECT ?, ?, key, ?, ?, '', 0 FROM source_keys "
                    "WHERE source_id = ?",
                    (cid, idx, begin, end, source),
                )
            else:
                db.execute(
                    'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", '
                    "location) VALUES (?, ?, ?, ?, ?, ?, '')",
                    (cid, idx, source, f"quote {source} {begin}", begin, end),
                )
            spans.append((source, begin, end))
    return ids


def _full_pairs(db: sqlite3.Connection, involving: set[str]) -> list[tuple[str, str]]:
    claims = load_claims(db)
    indexes = {n for n, c in enumerate(claims) if c.id in involving}
    return [
        (claims[i].id, claims[j].id) for i, j in related_pairs(claims, Subjects.load(db), indexes)
    ]


def _findings(search: list[tuple[str, str, object]]) -> list[tuple[str, str, str]]:
    return [(a, b, c.finding.model_dump_json()) for a, b, c in search]  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(6))
def test_pairs_and_findings_as_the_full_search(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    raw = sqlite3.connect(tmp_path / "w.sqlite")  # no foreign keys: evidence of unknown sources
    raw.close()
    db = _db(tmp_path / "w.sqlite")
    db.execute("PRAGMA foreign_keys=OFF")
    compared = 0
    for step in range(4):
        new = _fill(db, rnd, rnd.randint(20, 160), start=step)
        if step and rnd.random() < 0.5:  # the wiki changes: some claims superseded
            db.execute("UPDATE claims SET status = 'superseded' WHERE rowid % 7 = ?", (step,))
        for asked in (set(new), set(rnd.sample(new, min(5, len(new)))), {"c-none"}):
            pairs, _ = pairs_involving(db, asked)
            assert [(a.id, b.id) for a, b in pairs] == _full_pairs(db, asked)
            compared += len(pairs)
            nearby = nearby_pairs(db, asked, Thresholds())
            full = search_pairs(db, Thresholds(), involving=asked)
            assert _findings(nearby.pairs) == _findings(full.pairs)
    assert compared > 100  # the wikis do pair claims


def test_words_shared_by_more_claims_than_a_bucket_holds(tmp_path: Path) -> None:
    """A word in 60 claims pairs them; in 61 it pairs none (too common), through the index as
    in the full search."""
    db = _db(tmp_path / "w.sqlite")
    db.execute(
        "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
        "text_sha256, size_bytes, text_chars, trust, added_at, text_map) "
        "VALUES ('s', '', '', 'text/plain', '', 's', '', 0, 0, 'trusted', '2026', '{}')"
    )
    for n in range(61):
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at) VALUES (?, 'p', '', ?, ?, 'active', 'trusted', '', '2026')",
            (f"c{n:03d}", n, f"the zebra count was {n}"),
        )
        db.execute(
            'INSERT INTO evidence (claim_id, idx, source_id, start, "end", location) '
            "VALUES (?, 0, 's', ?, ?, '')",
            (f"c{n:03d}", n * 10, n * 10 + 5),
        )
    sixty = {f"c{n:03d}" for n in range(60)}
    db.execute("UPDATE claims SET status = 'superseded' WHERE id = 'c060'")
    pairs, _ = pairs_involving(db, {"c000"})
    assert len(pairs) == 59 and _full_pairs(db, {"c000"}) == [(a.id, b.id) for a, b in pairs]
    db.execute("UPDATE claims SET status = 'active' WHERE id = 'c060'")
    assert pairs_involving(db, {"c000"})[0] == [] == _full_pairs(db, sixty)


def test_index_catches_up_and_rebuilds_when_rows_move(tmp_path: Path) -> None:
    rnd = random.Random(3)
    db = _db(tmp_path / "w.sqlite")
    db.execute("PRAGMA foreign_keys=OFF")
    _fill(db, rnd, 50)
    assert index_claims(db) == 50
    assert index_claims(db) == 0  # nothing new: nothing read, nothing written
    new = _fill(db, rnd, 30, start=1)
    assert index_claims(db) == 30
    words = sum(1 for _ in every_posting(db))
    # a renumbering (what VACUUM may do to rowids): the row the index ended on holds another claim
    db.execute("UPDATE claims SET rowid = rowid + 1000 WHERE rowid = 80")
    db.execute("UPDATE claims SET rowid = 80 WHERE rowid = 1")
    assert index_claims(db) == 80
    assert sum(1 for _ in every_posting(db)) == words
    assert [(a.id, b.id) for a, b in pairs_involving(db, set(new))[0]] == _full_pairs(db, set(new))


def test_find_candidates_with_involving_reads_through_the_index(tmp_path: Path) -> None:
    """The supersession pass's call: the same findings whichever way it searches."""
    rnd = random.Random(5)
    db = _db(tmp_path / "w.sqlite")
    db.execute("PRAGMA foreign_keys=OFF")
    _fill(db, rnd, 400)
    new = set(_fill(db, rnd, 30, start=1))
    via_index = find_candidates(db, involving=new)
    full = search_pairs(db, involving=new).involving(new)
    assert [c.finding for c in via_index] == [c.finding for c in full]
    assert any(True for _ in every_posting(db))
    many = set(_fill(db, rnd, 300, start=2))  # a large share of the wiki: the full read
    assert search_involving(db, many).pairs == search_pairs(db, involving=many).pairs


def test_a_later_version_of_the_same_document_is_stale_through_the_index(tmp_path: Path) -> None:
    """A changed number cited from version 2 of a document supersedes the claim citing version
    1 (lint takes "newer" from the sources' versions): the index's search reads the versions too."""
    db = _db(tmp_path / "w.sqlite")
    for sid, version in (("v1", 1), ("v2", 2)):
        db.execute(
            "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
            "text_sha256, size_bytes, text_chars, trust, added_at, text_map, origin_key, "
            "version) VALUES (?, '', '', 'text/plain', '', ?, '', 0, 0, 'trusted', '2026', "
            "'{}', 'report.md', ?)",
            (sid, sid, version),
        )
    texts = {
        "c-old": ("v1", "The Brooklyn Bridge toll was raised to 40 cents in 1890."),
        "c-new": ("v2", "The Brooklyn Bridge toll was raised to 45 cents in 1890."),
    }
    for n, (cid, (source, text)) in enumerate(texts.items()):
        QUOTES[(source, 0, 50)] = text
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at) VALUES (?, 'bridge', '', ?, ?, 'active', 'trusted', '', '2026')",
            (cid, n, text),
        )
        db.execute(
            'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
            "VALUES (?, 0, ?, ?, 0, 50, '')",
            (cid, source, text),
        )
    found = nearby_pairs(db, {"c-new"}).pairs
    assert [c.finding.kind for _, _, c in found] == ["stale"]
    assert found[0][2].finding.subject == "c-old"
    assert _findings(found) == _findings(search_pairs(db, involving={"c-new"}).pairs)
