"""The claim-word index's postings packed in chunks (:mod:`affidavit.lint.postings`, migration
``m028_word_postings``): what goes in reads back in order, across chunk boundaries and appends,
counted in ``words.n``; a chunk cut inside a varint or postings out of order are refused."""

from __future__ import annotations

import itertools
import random
import sqlite3
from pathlib import Path

import pytest

from affidavit.db import connect, migrate
from affidavit.lint import postings
from affidavit.lint.postings import CHUNK, append, claims_of, decode, encode, every_posting


def _db(tmp_path: Path) -> sqlite3.Connection:
    db = connect(tmp_path / "w.sqlite")
    migrate(db)
    return db


def test_varints_round_trip() -> None:
    rnd = random.Random(1)
    claims = sorted(rnd.sample(range(1, 10**7), 500))
    gaps = [b - a for a, b in itertools.pairwise(claims)]
    assert decode(claims[0], encode(gaps)) == claims
    assert decode(7, b"") == [7]
    assert len(encode([1, 127, 128, 16383, 16384])) == 1 + 1 + 2 + 2 + 3


def test_a_cut_chunk_or_a_gap_that_does_not_ascend_is_refused() -> None:
    with pytest.raises(ValueError):
        decode(1, encode([300])[:1])  # the varint's last byte missing
    with pytest.raises(ValueError):
        encode([3, 0])
    with pytest.raises(ValueError):
        encode([-2])


def test_appends_read_back_in_order_across_chunks(tmp_path: Path) -> None:
    db = _db(tmp_path)
    db.executemany("INSERT INTO words (word) VALUES (?)", [("tax",), ("war",)])
    ids = dict(db.execute("SELECT word, id FROM words").fetchall())
    rnd = random.Random(2)
    held: dict[str, list[int]] = {"tax": [], "war": []}
    top = 0
    for _ in range(12):  # appends of every size, chunks filled and started
        batch = sorted(rnd.sample(range(top + 1, top + 1000), rnd.randint(1, 2 * CHUNK)))
        top = batch[-1]
        word = rnd.choice(["tax", "war"])
        append(db, {ids[word]: batch})
        held[word] += batch
    append(db, {ids["tax"]: held["tax"][-3:]})  # held already: skipped, not counted
    for word, claims in held.items():
        assert list(claims_of(db, word)) == claims
        (n,) = db.execute("SELECT n FROM words WHERE word = ?", (word,)).fetchone()
        assert n == len(claims)
    sizes = [int(r[0]) for r in db.execute("SELECT n FROM word_postings")]
    assert max(sizes) <= CHUNK and sum(sizes) == sum(map(len, held.values()))
    assert sorted(every_posting(db)) == sorted(
        (ids[w], c) for w, claims in held.items() for c in claims
    )
    assert list(claims_of(db, "peace")) == []


def test_a_reader_that_stops_early_reads_what_it_needs(tmp_path: Path) -> None:
    db = _db(tmp_path)
    db.execute("INSERT INTO words (word) VALUES ('tax')")
    append(db, {1: list(range(1, 5 * CHUNK))})
    reader = claims_of(db, "tax")
    assert [next(reader) for _ in range(3)] == [1, 2, 3]
    reader.close()  # its cursor with it
    db.execute("DELETE FROM word_postings")  # nothing holds the table


def test_postings_are_smaller_than_rows(tmp_path: Path) -> None:
    """What the change is for: a posting costs a byte or so, not a row."""
    rnd = random.Random(3)
    claims = sorted(rnd.sample(range(1, 60_000), 5_000))
    assert len(encode(b - a for a, b in itertools.pairwise(claims))) < 2 * len(claims)
    assert postings.CHUNK >= 64
