"""Issue 27 item 1's migration: where a carried claim's page cites its quote (m030).

It registers with :func:`affidavit.db.migration` when :mod:`affidavit.db` imports this module;
a migration is never edited once released.
"""

from __future__ import annotations

from .db import migration


@migration
def m030_evidence_cited() -> str:
    """Issue 27 item 1: ``evidence_cited``, the place a page's footnote cites for evidence a
    ``carry_source`` re-pointed at a newer version of its source — the version the quote was
    verified in when the claim was written, at its offsets then (that version's bytes are
    immutable and still hold the quote). ``evidence_rows`` follows the newest version (what
    lint, ask, the desk and the blast radius read); the footnote keeps naming the first, so a
    re-ingest leaves the pages of the claims it carried byte for byte as they were, and renders,
    commits and lints only what changed. A row is written once, by the first carry of the
    evidence (later carries keep it); ``crc`` is the span's CRC-32, so offsets edited here read
    as unreadable, as in ``evidence_rows``; ``affidavit doctor`` re-derives every row from the
    audit log (:mod:`affidavit.store.replay`). Changes are logged for the doctor and lint as
    ``evidence_rows``' are. And ``page_titles`` in the change log: a page whose title or slug
    changed, the one change of a page row its linked pages show (lint renders those again; a
    page whose row changed otherwise — its date, as every write to it does — is rendered alone)."""
    return """
        CREATE TABLE evidence_cited (
            claim_id TEXT NOT NULL REFERENCES claims(id),
            idx INTEGER NOT NULL,
            source_key INTEGER NOT NULL REFERENCES source_keys(key),
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            location TEXT NOT NULL,
            crc INTEGER NOT NULL,
            PRIMARY KEY (claim_id, idx)
        ) WITHOUT ROWID;
        CREATE TRIGGER doctor_cited_insert AFTER INSERT ON evidence_cited
        WHEN NOT EXISTS (SELECT 1 FROM door_deferred) BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
        END;
        CREATE TRIGGER doctor_cited_update AFTER UPDATE ON evidence_cited BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
        END;
        CREATE TRIGGER doctor_cited_delete AFTER DELETE ON evidence_cited BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
        END;
        CREATE TRIGGER doctor_page_titles AFTER UPDATE OF slug, title ON pages BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('page_titles', old.slug);
            INSERT INTO doctor_changes (tbl, key) VALUES ('page_titles', new.slug);
        END
    """


@migration
def m031_evidence_logged_once() -> str:
    """Issue 27 item 1 (carry30): an update of an ``evidence_rows`` row is logged in the change
    log once when its claim stays the same — as every update does but a hand edit moving a quote
    to another claim. The carry re-points one row per carried quote; the trigger logged each
    twice (old and new claim id, the same claim), and the automatic lint after a re-ingest read
    both (~13,700 entries at 40 speeches). The doctor and lint read the log as a set of keys:
    what they see is the same."""
    return """
        DROP TRIGGER doctor_evidence_update;
        CREATE TRIGGER doctor_evidence_update AFTER UPDATE ON evidence_rows BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
            INSERT INTO doctor_changes (tbl, key)
            SELECT 'evidence', new.claim_id WHERE new.claim_id IS NOT old.claim_id;
        END
    """
