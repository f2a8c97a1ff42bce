"""Issue 25's migrations that slim the database (m021…m023, m027, m028): evidence as offsets, words
by integer, decided plans' admissions packed, word counts, context snapshots as deltas, plans packed
against their claims, the claim-word index's postings packed; and m029, what index.md and
context.md's head were last rendered from (the door's cost, issue 25 item 1).

They register with :func:`affidavit.db.migration` when :mod:`affidavit.db` imports this module,
after its own m001…m020, so ``MIGRATIONS`` keeps their order; a migration is never edited once
released, only followed by a new one.
"""

from __future__ import annotations

import sqlite3

from .db import DATA_STEPS, migration


@migration
def m021_lean_evidence() -> str:
    """Issue 25 item 5: evidence as offsets, the quote computed. ``evidence_rows`` (WITHOUT
    ROWID) keeps a claim's evidence by an integer source key (``source_keys``: source id ->
    key) and its offsets, no quote text; the ``evidence`` view gives every reader the columns of
    before, its ``quote`` the source's own words at the offsets, computed by the SQL function
    ``evidence_span`` (:mod:`affidavit.evidence.spans`, registered on every connection the code
    opens; a bare ``sqlite3`` connection lacks it); when the source's text can't be had (its
    file missing or altered) or the span is not the one written (``crc``: its CRC-32, so
    offsets edited in ``evidence_rows`` show), the quote reads
    :data:`affidavit.evidence.spans.UNREADABLE`, never other words, and doctor reports it. ``INSTEAD OF`` triggers keep every writer
    working: an insert or update names its source by id (a key is made for a new one) and may
    give a quote, which must then be exactly the source's span at the offsets (else the write
    is refused: a quote never differs from its source's words). The quotes stored before are
    compared with the spans by the data step: any that differs (never written by the door) is
    kept in ``evidence_legacy`` for ``affidavit doctor`` to report. The doctor's change log
    follows ``evidence_rows`` (inserts outside a door batch logged too: the view has no rowid
    for a checkpoint to compare)."""
    return """
        DROP TRIGGER doctor_evidence_update;
        DROP TRIGGER doctor_evidence_delete;
        ALTER TABLE evidence RENAME TO evidence_old;
        CREATE TABLE source_keys (
            key INTEGER PRIMARY KEY,
            source_id TEXT NOT NULL UNIQUE REFERENCES sources(id)
        );
        INSERT INTO source_keys (source_id) SELECT id FROM sources ORDER BY rowid;
        CREATE TABLE evidence_rows (
            claim_id TEXT NOT NULL REFERENCES claims(id),
            idx INTEGER NOT NULL,
            source_key INTEGER NOT NULL REFERENCES source_keys(key),
            start INTEGER NOT NULL,         -- offsets into the source's extracted text
            "end" INTEGER NOT NULL,
            location TEXT NOT NULL,         -- human-readable place in the original ("line 12")
            crc INTEGER NOT NULL,           -- CRC-32 of the span's UTF-8 when it was written
            PRIMARY KEY (claim_id, idx)
        ) WITHOUT ROWID;
        CREATE INDEX evidence_rows_source ON evidence_rows(source_key);
        INSERT INTO evidence_rows (claim_id, idx, source_key, start, "end", location, crc)
        SELECT e.claim_id, e.idx, k.key, e.start, e."end", e.location, evidence_crc(e.quote)
        FROM evidence_old e JOIN source_keys k ON k.source_id = e.source_id;
        CREATE TABLE evidence_legacy (
            claim_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            quote TEXT NOT NULL,            -- the quote stored before m021, unlike the span
            PRIMARY KEY (claim_id, idx)
        ) WITHOUT ROWID;
        -- one table in FROM (the rest in scalar subqueries): SQLite flattens such a view into
        -- the right side of a LEFT JOIN; a view that joins is materialized whole there
        CREATE VIEW evidence AS
        SELECT r.claim_id AS claim_id, r.idx AS idx,
               (SELECT k.source_id FROM source_keys k WHERE k.key = r.source_key) AS source_id,
               coalesce((SELECT evidence_span(s.text_file, s.text_sha256, r.start, r."end", r.crc)
                         FROM source_keys k JOIN sources s ON s.id = k.source_id
                         WHERE k.key = r.source_key),
                        '[evidence can''t be shown: its source or offsets changed; run affidavit doctor]')
               AS quote,
               r.start AS start, r."end" AS "end", r.location AS location,
               r.source_key AS source_key
        FROM evidence_rows r;
        CREATE TRIGGER evidence_insert INSTEAD OF INSERT ON evidence BEGIN
            INSERT OR IGNORE INTO source_keys (source_id) VALUES (new.source_id);
            SELECT RAISE(ABORT, 'evidence quote differs from the source''s words at its offsets')
            FROM sources s WHERE s.id = new.source_id AND new.quote IS NOT NULL
            AND new.quote IS NOT evidence_span(s.text_file, s.text_sha256, new.start, new."end", NULL);
            SELECT RAISE(ABORT, 'the source''s text can''t be read at the evidence''s offsets: run affidavit doctor')
            WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = new.source_id
            AND evidence_span(s.text_file, s.text_sha256, new.start, new."end", NULL) IS NOT NULL);
            INSERT INTO evidence_rows (claim_id, idx, source_key, start, "end", location, crc)
            SELECT new.claim_id, new.idx,
                   (SELECT key FROM source_keys WHERE source_id = new.source_id),
                   new.start, new."end", new.location,
                   evidence_crc(evidence_span(s.text_file, s.text_sha256, new.start, new."end", NULL))
            FROM sources s WHERE s.id = new.source_id;
        END;
        CREATE TRIGGER evidence_update INSTEAD OF UPDATE ON evidence BEGIN
            INSERT OR IGNORE INTO source_keys (source_id) VALUES (new.source_id);
            SELECT RAISE(ABORT, 'evidence quote differs from the source''s words at its offsets')
            FROM sources s WHERE s.id = new.source_id AND new.quote IS NOT old.quote
            AND new.quote IS NOT evidence_span(s.text_file, s.text_sha256, new.start, new."end", NULL);
            UPDATE evidence_rows SET claim_id = new.claim_id, idx = new.idx,
                source_key = (SELECT key FROM source_keys WHERE source_id = new.source_id),
                start = new.start, "end" = new."end", location = new.location,
                crc = CASE WHEN new.source_id IS old.source_id AND new.start IS old.start
                           AND new."end" IS old."end" THEN crc
                      ELSE (SELECT evidence_crc(evidence_span(s.text_file, s.text_sha256,
                                                              new.start, new."end", NULL))
                            FROM sources s WHERE s.id = new.source_id) END
            WHERE claim_id = old.claim_id AND idx = old.idx;
        END;
        CREATE TRIGGER evidence_delete INSTEAD OF DELETE ON evidence BEGIN
            DELETE FROM evidence_rows WHERE claim_id = old.claim_id AND idx = old.idx;
        END;
        CREATE TRIGGER doctor_evidence_insert AFTER INSERT ON evidence_rows
        WHEN NOT EXISTS (SELECT 1 FROM door_deferred) BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
        END;
        CREATE TRIGGER doctor_evidence_update AFTER UPDATE ON evidence_rows BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
        END;
        CREATE TRIGGER doctor_evidence_delete AFTER DELETE ON evidence_rows BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
        END
    """


def _keep_differing_quotes(db: sqlite3.Connection) -> None:
    """Compare every stored quote with the span the view now computes; keep those that differ
    (a source text missing or altered included) in ``evidence_legacy``; drop the old table."""
    db.execute(
        "INSERT INTO evidence_legacy (claim_id, idx, quote) "
        "SELECT o.claim_id, o.idx, o.quote FROM evidence_old o JOIN evidence e "
        "ON e.claim_id = o.claim_id AND e.idx = o.idx WHERE e.quote IS NOT o.quote"
    )
    db.execute("DROP TABLE evidence_old")


DATA_STEPS["m021_lean_evidence"] = _keep_differing_quotes


@migration
def m021b_lean_words_and_admissions() -> str:
    """Issue 25 item 5, the next biggest tables. ``claim_words`` (m017) names each word by an
    integer (``words``: word -> id) instead of repeating its text in every posting, half the
    table's size. A decided plan's admission is packed with its plan's text as zlib's preset
    dictionary (:func:`affidavit.plan.stored.pack`), half the size of it packed alone; the data
    step repacks those stored before. Nothing is pruned: both texts read back whole."""
    return """
        CREATE TABLE words (id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE);
        INSERT INTO words (word) SELECT DISTINCT word FROM claim_words ORDER BY word;
        ALTER TABLE claim_words RENAME TO claim_words_old;
        CREATE TABLE claim_words (
            word INTEGER NOT NULL,          -- words.id
            claim INTEGER NOT NULL,         -- claims.rowid
            PRIMARY KEY (word, claim)
        ) WITHOUT ROWID;
        INSERT INTO claim_words (word, claim)
        SELECT w.id, o.claim FROM claim_words_old o JOIN words w ON w.word = o.word;
        DROP TABLE claim_words_old
    """


def _repack_admissions(db: sqlite3.Connection) -> None:
    from .plan.stored import repack_admissions

    repack_admissions(db)


DATA_STEPS["m021b_lean_words_and_admissions"] = _repack_admissions


@migration
def m022_word_counts() -> str:
    """Issue 25 item 1: ``words.n``, how many claims ``claim_words`` holds each word for (any
    status), kept by a trigger on every posting inserted, so the supersession pass knows how
    common a word is without reading its postings (:mod:`affidavit.lint.nearby`)."""
    return """
        ALTER TABLE words ADD COLUMN n INTEGER NOT NULL DEFAULT 0;
        UPDATE words SET n = (SELECT count(*) FROM claim_words c WHERE c.word = words.id);
        CREATE TRIGGER claim_words_count AFTER INSERT ON claim_words BEGIN
            UPDATE words SET n = n + 1 WHERE id = new.word;
        END
    """


@migration
def m023_context_deltas() -> str:
    """Issue 25 item 5: ``context_snapshots`` as keyframes and line deltas
    (:mod:`affidavit.plan.snapshots`): ``base`` names the snapshot a row is a delta of (NULL:
    stored whole). The data step re-encodes the snapshots stored whole before, each read back
    through its chain and compared."""
    return "ALTER TABLE context_snapshots ADD COLUMN base INTEGER"


def _rechain_snapshots(db: sqlite3.Connection) -> None:
    from .plan.snapshots import rechain

    rechain(db)


DATA_STEPS["m023_context_deltas"] = _rechain_snapshots

# m026 (the version of what search reads, issue 25 item 4) is registered here, between m023 and
# m027, so MIGRATIONS stays in the order of its numbers.
from . import db_search  # noqa: E402, F401


@migration
def m027_plans_packed_with_claims() -> str:
    """Issue 25 item 5: a decided plan's text packed with the texts of the claims it created as
    zlib's preset dictionary (:func:`affidavit.plan.stored.pack_plan`), ``packed_with`` naming
    their rowids (ranges ``a-b,c``). The data step repacks every plan packed alone, reading the
    claims once in plan order; each is read back and compared. Lossless: the plan's text reads
    back byte for byte and must hash to its id."""
    return "ALTER TABLE plans ADD COLUMN packed_with TEXT NOT NULL DEFAULT ''"


def _pack_plans_with_claims(db: sqlite3.Connection) -> None:
    from .plan.stored import repack_against_claims

    repack_against_claims(db)


DATA_STEPS["m027_plans_packed_with_claims"] = _pack_plans_with_claims


@migration
def m029_catalog_version() -> str:
    """Issue 25 item 1: ``catalog`` (one row) counts the changes to what ``index.md`` and
    context.md's head read — pages inserted or deleted, their slug, title, summary or category
    updated, links inserted, updated or deleted — and keeps the version each was last rendered
    at (:mod:`affidavit.store.catalog`), so an apply that only adds claims renders neither."""
    bump = "BEGIN UPDATE catalog SET version = version + 1; END"
    return f"""
        CREATE TABLE catalog (
            version INTEGER NOT NULL,
            index_version INTEGER NOT NULL,     -- -1: not rendered since the migration
            index_sha256 TEXT NOT NULL,
            head_version INTEGER NOT NULL,
            head TEXT NOT NULL                  -- JSON: context.md's head lines, its renderer
        );
        INSERT INTO catalog VALUES (0, -1, '', -1, '{{}}');
        CREATE TRIGGER catalog_page_insert AFTER INSERT ON pages {bump};
        CREATE TRIGGER catalog_page_delete AFTER DELETE ON pages {bump};
        CREATE TRIGGER catalog_page_update AFTER UPDATE OF slug, title, summary, category
            ON pages {bump};
        CREATE TRIGGER catalog_link_insert AFTER INSERT ON links {bump};
        CREATE TRIGGER catalog_link_delete AFTER DELETE ON links {bump};
        CREATE TRIGGER catalog_link_update AFTER UPDATE ON links {bump}
    """


@migration
def m028_word_postings() -> str:
    """Issue 25 item 5: the claim-word index's postings packed (:mod:`affidavit.lint.postings`):
    ``word_postings`` holds each word's claims in chunks, gaps as varints, instead of a row per
    (word, claim) in ``claim_words``. The data step moves every posting, in order, and drops
    ``claim_words`` (its counting trigger with it: the indexer counts in ``words.n``)."""
    return """
        CREATE TABLE word_postings (
            word INTEGER NOT NULL,          -- words.id
            first INTEGER NOT NULL,         -- the chunk's first claim (claims.rowid)
            last INTEGER NOT NULL,          -- its last claim
            n INTEGER NOT NULL,             -- claims in the chunk
            gaps BLOB NOT NULL,             -- the others: LEB128 gaps from the claim before
            PRIMARY KEY (word, first)
        ) WITHOUT ROWID
    """


def _move_postings(db: sqlite3.Connection) -> None:
    from .lint.postings import pack_rows

    rows = db.cursor()
    rows.row_factory = None
    pack_rows(db, rows.execute("SELECT word, claim FROM claim_words ORDER BY word, claim"))
    rows.close()
    db.execute("DROP TABLE claim_words")


DATA_STEPS["m028_word_postings"] = _move_postings
