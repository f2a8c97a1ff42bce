"""Migration ``m026``: a version of what search reads, moved only by a write search can see.

The daemon keeps its searches' answers per version of the database (issue 25 item 4,
:class:`~affidavit.server.registry.SearchCache`). ``PRAGMA data_version`` moves with every commit,
the daemon's own answer log (a commit per 32 answers or per second) included, so a daemon that
answered questions steadily kept next to nothing. ``search_version`` holds one random token that a
trigger draws anew, in the writing transaction, on every row written to what a search reads:
claims (their text, page, section, status, trust), pages (slug, title, summary), links, the
evidence's rows and source keys, sources (id, name, text file and its hash), the search index's
epoch, and the pruning of its change log (``affidavit reindex``). Triggers, not the door: every
writer moves it the same way (the door, retract, carry, a later migration, a hand edit in the
``sqlite3`` shell), a rolled-back write leaves it as it was, and a write anywhere else (nonces,
questions, plans, the audit log) leaves it alone. A random token rather than a counter: a copy of
the database restored under a running daemon can't bring back a number it has already seen with
other contents. :mod:`affidavit.retrieval.search_version` reads it, and checks these triggers are
intact first (any other schema change, a dropped trigger: it falls back to ``data_version``).
"""

from __future__ import annotations

from .db import migration


@migration
def m026_search_version() -> str:
    return """
        CREATE TABLE search_version (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            token INTEGER NOT NULL
        );
        INSERT INTO search_version (id, token) VALUES (0, random());
        CREATE TRIGGER search_version_claim_insert AFTER INSERT ON claims BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_claim_update
        AFTER UPDATE OF id, page_slug, section, text, status, trust ON claims BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_claim_delete AFTER DELETE ON claims BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_page_insert AFTER INSERT ON pages BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_page_update
        AFTER UPDATE OF slug, title, summary ON pages BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_page_delete AFTER DELETE ON pages BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_link_insert AFTER INSERT ON links BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_link_update AFTER UPDATE ON links BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_link_delete AFTER DELETE ON links BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_evidence_insert AFTER INSERT ON evidence_rows BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_evidence_update AFTER UPDATE ON evidence_rows BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_evidence_delete AFTER DELETE ON evidence_rows BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_key_insert AFTER INSERT ON source_keys BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_key_update AFTER UPDATE ON source_keys BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_key_delete AFTER DELETE ON source_keys BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_insert AFTER INSERT ON sources BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_update
        AFTER UPDATE OF id, name, text_file, text_sha256 ON sources BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_source_delete AFTER DELETE ON sources BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_epoch_insert AFTER INSERT ON search_epoch BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_epoch_update AFTER UPDATE ON search_epoch BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_epoch_delete AFTER DELETE ON search_epoch BEGIN
            UPDATE search_version SET token = random();
        END;
        CREATE TRIGGER search_version_change_delete AFTER DELETE ON search_changes BEGIN
            UPDATE search_version SET token = random();
        END
    """
