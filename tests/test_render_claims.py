"""A page's claims as the renderer reads them (two queries: claims with their evidence, then the
sources they cite) are exactly what the single three-way join gave, on random databases with
the odd rows a tampered vault can hold: claims without evidence, evidence whose source is gone,
ties in position, several statuses, evidence out of order."""

from __future__ import annotations

import random
import sqlite3
from itertools import groupby

from affidavit.db import migrate
from affidavit.store import render


def _joined(
    db: sqlite3.Connection, page: str, statuses: tuple[str, ...]
) -> dict[str, list[render._Claim]]:
    """The query ``render._claims`` replaced, verbatim."""
    marks = ",".join("?" * len(statuses))
    rows = db.execute(
        "SELECT c.id, c.section, c.text, c.status, c.superseded_by, e.source_id, e.quote, "
        'e.start, e."end", e.location, s.name, s.original_file, s.status, s.id '
        "FROM claims c LEFT JOIN evidence e ON e.claim_id = c.id "
        "LEFT JOIN sources s ON s.id = e.source_id "
        f"WHERE c.page_slug = ? AND c.status IN ({marks}) ORDER BY c.position, c.id, e.idx",
        (page, *statuses),
    ).fetchall()
    out: dict[str, list[render._Claim]] = {status: [] for status in statuses}
    for claim_id, group in groupby(rows, key=lambda r: r[0]):
        items = list(group)
        first = items[0]
        out[first[3]].append(
            render._Claim(
                claim_id,
                first[1],
                first[2],
                first[3],
                first[4],
                tuple(tuple(r[5:13]) for r in items if r[13] is not None),  # type: ignore[misc]
            )
        )
    return out


def _random_db(rng: random.Random) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.row_factory = sqlite3.Row
    migrate(db)
    sources = [f"{rng.getrandbits(256):064x}" for _ in range(rng.randint(1, 6))]
    for n, source in enumerate(sources):
        db.execute(
            "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
            "text_sha256, size_bytes, text_chars, trust, status, added_at, text_map) "
            "VALUES (?, 'o', ?, 'text/markdown', ?, 't', 'h', 1, 1, 'trusted', ?, 'now', '{}')",
            (source, f"doc {n}.md", f"sources/{source}.md", rng.choice(["active", "retracted"])),
        )
    gone = f"{rng.getrandbits(256):064x}"  # cited, never stored (or deleted)
    for n in range(rng.randint(0, 60)):
        claim_id = f"c-{rng.getrandbits(64):016x}"
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
            "created_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?, 'trusted', 'p', 'now', ?)",
            (
                claim_id,
                rng.choice(["p", "p", "q", ""]),
                rng.choice(["Intro", "Later", "*Odd* [x]"]),
                rng.randint(0, 20),  # ties in position are ordered by id
                f"Claim {n} says *this* and `that`.",
                rng.choice(["active", "active", "superseded", "retracted", "pending"]),
                rng.choice([None, "c-0000000000000001"]),
            ),
        )
        for idx in rng.sample(range(6), rng.randint(0, 4)):  # inserted out of order
            start = rng.randint(0, 500)
            cited = rng.choice([*sources, gone])  # stored as offsets: no text to quote here
            db.execute("INSERT OR IGNORE INTO source_keys (source_id) VALUES (?)", (cited,))
            db.execute(
                'INSERT INTO evidence_rows (claim_id, idx, source_key, start, "end", location, '
                "crc) VALUES (?, ?, (SELECT key FROM source_keys WHERE source_id = ?), ?, ?, ?, 0)",
                (claim_id, idx, cited, start, start + 9, f"line {rng.randint(1, 40)}"),
            )
    return db


def test_the_claims_of_a_page_are_what_the_join_gave() -> None:
    rng = random.Random(14)
    checked = 0
    for _ in range(150):
        db = _random_db(rng)
        db.execute("PRAGMA foreign_keys = OFF")
        for page in ("p", "q", "", "none"):
            for statuses in (render._LIVE_AND_PAST, ("active",), ("retracted", "superseded")):
                got = render._claims(db, page, statuses)
                assert got == _joined(db, page, statuses)
                checked += sum(len(claims) for claims in got.values())
    assert checked > 1000
