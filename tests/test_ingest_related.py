"""Related pages (ingest/related.py): the FTS5 query may be computed ahead of time, same pages."""

from __future__ import annotations

import sqlite3

from affidavit.ingest.related import keywords, match_query, related_pages

PAGES = [
    ("panama-canal", "Panama Canal", "The canal joins the Atlantic and the Pacific."),
    ("tariff", "Tariff", "Duties on imports and the revenue they raise."),
    ("bank-of-england", "Bank of England", "The central bank; its discount rate and gold."),
    ("gold-standard", "Gold standard", "Currency redeemable in gold; the treasury's reserve."),
]


def database() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.execute("CREATE TABLE pages (slug TEXT PRIMARY KEY, title TEXT, summary TEXT)")
    db.execute(
        "CREATE VIRTUAL TABLE pages_fts USING fts5(title, summary, content='pages', "
        "content_rowid='rowid', tokenize='porter unicode61')"
    )
    for row in PAGES:
        db.execute("INSERT INTO pages VALUES (?, ?, ?)", row)
    db.execute("INSERT INTO pages_fts (pages_fts) VALUES ('rebuild')")
    return db


def test_a_query_computed_ahead_gives_the_same_pages() -> None:
    db = database()
    texts = [
        "The canal across the isthmus will join the Atlantic and the Pacific; the canal grows.",
        "Gold flowed to the Bank of England while the tariff raised revenue on imports.",
        "Of and the to.",
        "",
    ]
    for text in texts:
        query = match_query(text)
        assert query == " OR ".join(f'"{w}"' for w in keywords(text))
        for limit in (0, 1, 3, 12):
            assert related_pages(db, text, limit, query) == related_pages(db, text, limit)
    assert [p.slug for p in related_pages(db, texts[0], 2)] == ["panama-canal"]
    assert related_pages(db, texts[2], 5) == []
