"""The database, the vault's system of record: SQLite in WAL mode with named migrations.

Migrations are applied in order and recorded by name in ``_migrations`` (as sqlite-utils and llm do);
a migration is never edited once released, only followed by a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store.anchor import Anchor

Migration = Callable[[], str]
MIGRATIONS: list[tuple[str, Migration]] = []
DATA_STEPS: dict[str, Callable[[sqlite3.Connection], object]] = {}
"""What a migration does in Python after its SQL, in the same transaction (data conversions
that SQL alone can't do), by migration name."""
FOREIGN_KEYS_OFF: set[str] = set()
"""Migrations that replace a table other tables' foreign keys name (SQLite's way: a new table
filled, the old one dropped, the new one renamed), run with foreign key enforcement off; the
foreign keys must check as they did before (``PRAGMA foreign_key_check``) for the migration to
commit."""


def migration(func: Migration) -> Migration:
    """Register ``func`` (returning an SQL script) as the next named migration."""
    MIGRATIONS.append((func.__name__, func))
    return func


@migration
def m001_initial() -> str:
    return """
        CREATE TABLE sources (
            id TEXT PRIMARY KEY,            -- SHA-256 of the full original bytes
            origin TEXT NOT NULL,           -- absolute path or URL it came from
            name TEXT NOT NULL,             -- short display name (file name or URL path tail)
            media_type TEXT NOT NULL,
            original_file TEXT NOT NULL,    -- path relative to the vault, under sources/
            text_file TEXT NOT NULL,        -- extracted text, relative to the vault
            text_sha256 TEXT NOT NULL,
            size_bytes INTEGER NOT NULL,
            text_chars INTEGER NOT NULL,
            trust TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            added_at TEXT NOT NULL,
            text_map TEXT NOT NULL          -- JSON: how text offsets map back to the original
        );
        CREATE TABLE source_flags (
            source_id TEXT NOT NULL REFERENCES sources(id),
            kind TEXT NOT NULL,
            start INTEGER NOT NULL,         -- offsets into the extracted text
            "end" INTEGER NOT NULL,
            detail TEXT NOT NULL
        );
        CREATE INDEX source_flags_source ON source_flags(source_id, start);

        CREATE TABLE nonces (
            nonce TEXT PRIMARY KEY,
            purpose TEXT NOT NULL,
            issued_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_by TEXT                    -- plan id that consumed it
        );

        CREATE TABLE plans (
            id TEXT PRIMARY KEY,            -- content hash of the canonical plan JSON
            author TEXT NOT NULL,           -- who proposed it: a person, a model, the doctor
            origin TEXT NOT NULL,           -- e.g. 'propose:plan.json', 'doctor', 'ingest:<source>'
            plan_json TEXT NOT NULL,
            status TEXT NOT NULL,           -- rejected | pending | applied | expired | refused
            reason TEXT NOT NULL DEFAULT '',
            admission TEXT NOT NULL,        -- JSON: per-operation admission results
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            selected_ops TEXT               -- JSON list of applied operation indexes
        );
        CREATE INDEX plans_status ON plans(status, expires_at);

        CREATE TABLE slug_reservations (
            slug TEXT PRIMARY KEY,
            plan_id TEXT NOT NULL REFERENCES plans(id)
        );

        CREATE TABLE pages (
            slug TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            category TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            plan_id TEXT NOT NULL
        );

        CREATE TABLE claims (
            id TEXT PRIMARY KEY,
            page_slug TEXT NOT NULL,        -- '' for entries of wiki/context.md
            section TEXT NOT NULL,
            position INTEGER NOT NULL,      -- order within the page
            text TEXT NOT NULL,
            status TEXT NOT NULL,           -- active | pending | quarantined | superseded | retracted
            trust TEXT NOT NULL,
            plan_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            superseded_by TEXT,
            derived_from TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX claims_page ON claims(page_slug, position);

        CREATE TABLE evidence (
            claim_id TEXT NOT NULL REFERENCES claims(id),
            idx INTEGER NOT NULL,
            source_id TEXT NOT NULL REFERENCES sources(id),
            quote TEXT NOT NULL,
            start INTEGER NOT NULL,         -- offsets into the source's extracted text
            "end" INTEGER NOT NULL,
            location TEXT NOT NULL,         -- human-readable place in the original ("line 12")
            PRIMARY KEY (claim_id, idx)
        );
        CREATE INDEX evidence_source ON evidence(source_id);

        CREATE TABLE links (
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            plan_id TEXT NOT NULL,
            PRIMARY KEY (src, dst)
        );

        CREATE TABLE context_snapshots (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            plan_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            content TEXT NOT NULL           -- wiki/context.md as it was before the plan changed it
        );

        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            action TEXT NOT NULL,           -- applied | approved | rejected | proposed | expired ...
            plan_id TEXT,
            actor TEXT NOT NULL,
            detail TEXT NOT NULL,           -- canonical JSON
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
    """


@migration
def m002_ingest() -> str:
    return """
        CREATE VIRTUAL TABLE pages_fts USING fts5(
            title, summary, content='pages', content_rowid='rowid', tokenize='porter unicode61'
        );
        INSERT INTO pages_fts (rowid, title, summary) SELECT rowid, title, summary FROM pages;
        CREATE TRIGGER pages_fts_insert AFTER INSERT ON pages BEGIN
            INSERT INTO pages_fts (rowid, title, summary) VALUES (new.rowid, new.title, new.summary);
        END;
        CREATE TRIGGER pages_fts_delete AFTER DELETE ON pages BEGIN
            INSERT INTO pages_fts (pages_fts, rowid, title, summary)
            VALUES ('delete', old.rowid, old.title, old.summary);
        END;
        CREATE TRIGGER pages_fts_update AFTER UPDATE OF title, summary ON pages BEGIN
            INSERT INTO pages_fts (pages_fts, rowid, title, summary)
            VALUES ('delete', old.rowid, old.title, old.summary);
            INSERT INTO pages_fts (rowid, title, summary) VALUES (new.rowid, new.title, new.summary);
        END;

        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,             -- ingest | lint | reindex
            status TEXT NOT NULL,           -- running | done | failed
            created_at TEXT NOT NULL,
            finished_at TEXT,
            detail TEXT NOT NULL DEFAULT '{}'  -- JSON: arguments, then the result summary
        );

        CREATE TABLE model_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            job_id TEXT,
            at TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            purpose TEXT NOT NULL,          -- ingest | reask | review | ask
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL,
            outcome TEXT NOT NULL           -- ok | invalid: <why> | error: <why>
        );
        CREATE INDEX model_calls_job ON model_calls(job_id);

        CREATE TABLE ingested_chunks (
            source_id TEXT NOT NULL REFERENCES sources(id),
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            plan_id TEXT,                   -- the plan it produced, if any
            outcome TEXT NOT NULL,          -- proposed | applied | rejected | empty | failed
            job_id TEXT,
            PRIMARY KEY (source_id, start)
        );
    """


@migration
def m003_retrieval() -> str:
    return """
        CREATE VIRTUAL TABLE claims_fts USING fts5(
            text, content='claims', content_rowid='rowid', tokenize='porter unicode61'
        );
        INSERT INTO claims_fts (rowid, text) SELECT rowid, text FROM claims;
        CREATE TRIGGER claims_fts_insert AFTER INSERT ON claims BEGIN
            INSERT INTO claims_fts (rowid, text) VALUES (new.rowid, new.text);
        END;
        CREATE TRIGGER claims_fts_delete AFTER DELETE ON claims BEGIN
            INSERT INTO claims_fts (claims_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        END;
        CREATE TRIGGER claims_fts_update AFTER UPDATE OF text ON claims BEGIN
            INSERT INTO claims_fts (claims_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
            INSERT INTO claims_fts (rowid, text) VALUES (new.rowid, new.text);
        END;
        CREATE INDEX claims_status ON claims(status, trust);

        CREATE TABLE vectors (
            claim_id TEXT PRIMARY KEY REFERENCES claims(id),
            model TEXT NOT NULL,            -- embedding model name
            model_version TEXT NOT NULL,    -- its version (package version + file hash)
            text_sha256 TEXT NOT NULL,      -- hash of exactly the text that was embedded
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,           -- float32, little-endian, L2-normalised
            created_at TEXT NOT NULL
        );

        CREATE TABLE questions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            question TEXT NOT NULL,
            min_trust TEXT NOT NULL,
            provider TEXT NOT NULL,
            retrieved TEXT NOT NULL,        -- JSON list of claim ids given to the model
            answer TEXT NOT NULL,           -- JSON: the checked answer
            verdict TEXT NOT NULL,          -- answered | not_in_wiki | all_dropped
            dropped INTEGER NOT NULL,       -- sentences dropped by the citation check
            prompt_tokens INTEGER NOT NULL,
            conversation TEXT               -- chat session id, for follow-ups
        );
    """


@migration
def m004_lint() -> str:
    return """
        CREATE TABLE lint_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            trigger TEXT NOT NULL,          -- manual | auto (after N ingests) | job
            provider TEXT NOT NULL,         -- who proposed model findings ('' = checks only)
            kept INTEGER NOT NULL DEFAULT 0,
            dropped INTEGER NOT NULL DEFAULT 0,   -- model findings without enough verified quotes
            detail TEXT NOT NULL DEFAULT '{}'     -- JSON: counts per kind, the dropped findings
        );
        CREATE TABLE findings (
            id TEXT PRIMARY KEY,            -- fingerprint: kind + what it is about
            kind TEXT NOT NULL,
            origin TEXT NOT NULL,           -- check | extractive | model
            severity TEXT NOT NULL,         -- error | warning | info
            subject TEXT NOT NULL,
            message TEXT NOT NULL,
            quotes TEXT NOT NULL DEFAULT '[]',    -- JSON: verified quotes with claim/source ids
            claims TEXT NOT NULL DEFAULT '[]',
            pages TEXT NOT NULL DEFAULT '[]',
            fix TEXT,                       -- JSON: what a fix plan would do, if one is possible
            fix_hint TEXT NOT NULL DEFAULT '',  -- what the user can do by hand otherwise
            status TEXT NOT NULL,           -- open | dismissed | resolved
            first_run INTEGER NOT NULL,
            last_run INTEGER NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            note TEXT NOT NULL DEFAULT '',
            plan_id TEXT                    -- the fix plan proposed for it
        );
        CREATE INDEX findings_status ON findings(status, kind);
        CREATE TABLE counters (
            name TEXT PRIMARY KEY,          -- e.g. ingests_since_lint
            value INTEGER NOT NULL
        );
    """


@migration
def m005_job_queue() -> str:
    """The durable job queue: jobs gain a typed payload, progress, result, attempts, cancellation
    and a lease (owner, expiry, heartbeat); job_events feeds progress streams. Rows from before
    (ingest runs of the CLI) stay valid as ``queued = 0``."""
    return """
        ALTER TABLE jobs ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;  -- 1: a queue job
        ALTER TABLE jobs ADD COLUMN payload TEXT NOT NULL DEFAULT '{}'; -- JSON: the typed payload
        ALTER TABLE jobs ADD COLUMN requested_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE jobs ADD COLUMN progress_done INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN progress_total INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN progress_message TEXT NOT NULL DEFAULT '';
        ALTER TABLE jobs ADD COLUMN result TEXT;                        -- JSON, when done
        ALTER TABLE jobs ADD COLUMN error TEXT NOT NULL DEFAULT '';
        ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 3;
        ALTER TABLE jobs ADD COLUMN timeout_seconds INTEGER NOT NULL DEFAULT 0;  -- 0: none
        ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN cancelled_by TEXT;
        ALTER TABLE jobs ADD COLUMN started_at TEXT;
        ALTER TABLE jobs ADD COLUMN updated_at TEXT;
        ALTER TABLE jobs ADD COLUMN lease_owner TEXT;                   -- worker id
        ALTER TABLE jobs ADD COLUMN lease_token TEXT;                   -- one per claim
        ALTER TABLE jobs ADD COLUMN lease_host TEXT;
        ALTER TABLE jobs ADD COLUMN lease_pid INTEGER;
        ALTER TABLE jobs ADD COLUMN lease_expires_at REAL;              -- unix time
        ALTER TABLE jobs ADD COLUMN heartbeat_at REAL;                  -- unix time
        -- one running queue job per vault, whatever the number of workers and processes
        CREATE UNIQUE INDEX jobs_one_running ON jobs(queued) WHERE queued = 1 AND status = 'running';
        CREATE INDEX jobs_queue ON jobs(queued, status);

        CREATE TABLE job_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            job_id TEXT NOT NULL REFERENCES jobs(id),
            at TEXT NOT NULL,
            type TEXT NOT NULL,             -- submitted | started | progress | cancel_requested ...
            data TEXT NOT NULL DEFAULT '{}' -- JSON
        );
        CREATE INDEX job_events_job ON job_events(job_id, seq);

        -- the nonce of a chunk's model request, kept while the chunk is in flight ('started'):
        -- a resumed ingest finds the plan that consumed it instead of asking again
        ALTER TABLE ingested_chunks ADD COLUMN nonce TEXT;
    """


@migration
def m006_daemon() -> str:
    return """
        CREATE TABLE api_tokens (
            id TEXT PRIMARY KEY,            -- public id, shown in lists and logs (never the secret)
            secret_sha256 TEXT NOT NULL,    -- SHA-256 of the secret; the secret itself is not kept
            role TEXT NOT NULL CHECK (role IN ('read', 'propose', 'approve')),
            label TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            revoked_at TEXT,
            revoked_by TEXT
        );
    """


@migration
def m007_link_index() -> str:
    # Each page's "Linked from" list reads links by destination; at 100k claims this index took
    # rendering every page from 4.7 s to 2.8 s.
    return "CREATE INDEX IF NOT EXISTS links_dst ON links(dst, src);"


@migration
def m008_search_changes() -> str:
    # The search index (retrieval/tantivy_index.py) lives outside the database; these triggers log
    # every change it must follow, in the same transaction as the change, so the index can tell
    # exactly how far behind it is and catch up (a crash between commit and index update included).
    # The epoch names this database's history: an index built from another one is rebuilt.
    return """
        CREATE TABLE search_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,             -- claim | page
            key TEXT NOT NULL               -- claim id or page slug
        );
        CREATE TABLE search_epoch (token TEXT NOT NULL);
        INSERT INTO search_epoch (token) VALUES (lower(hex(randomblob(16))));
        CREATE TRIGGER search_claims_insert AFTER INSERT ON claims BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('claim', new.id);
        END;
        CREATE TRIGGER search_claims_update
        AFTER UPDATE OF id, text, status, trust, page_slug ON claims BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('claim', new.id);
            INSERT INTO search_changes (kind, key) SELECT 'claim', old.id WHERE old.id <> new.id;
        END;
        CREATE TRIGGER search_claims_delete AFTER DELETE ON claims BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('claim', old.id);
        END;
        CREATE TRIGGER search_pages_insert AFTER INSERT ON pages BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('page', new.slug);
        END;
        CREATE TRIGGER search_pages_update AFTER UPDATE OF slug, title, summary ON pages BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('page', new.slug);
            INSERT INTO search_changes (kind, key) SELECT 'page', old.slug WHERE old.slug <> new.slug;
        END;
        CREATE TRIGGER search_pages_delete AFTER DELETE ON pages BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('page', old.slug);
        END
    """


def connect(path: Path, base: Path | Anchor | None = None) -> sqlite3.Connection:
    """Open the database with the settings every connection needs (WAL, foreign keys, timeouts)
    and the SQL function ``evidence_span`` reading the texts of the vault at ``base`` (by
    default the folder above the database's: ``<vault>/.affidavit/db.sqlite``)."""
    from .evidence.spans import register

    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    register(db, path.parent.parent if base is None else base)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA busy_timeout=30000")
    return db


@migration
def m009_finding_why() -> str:
    """Why a finding was raised, as data: for a disagreement, the subject the two claims share
    and the fact each states differently (``{"subject", "fact", "a", "b"}``)."""
    return "ALTER TABLE findings ADD COLUMN why TEXT NOT NULL DEFAULT '{}'"


@migration
def m010_agent_calls() -> str:
    """The calls agents made of the MCP tools that write (``propose_plan``, ``add_source``), by
    caller, so each caller's quota per hour holds across connections, processes and restarts
    (:mod:`affidavit.agents`). Rows older than the window are pruned as calls come."""
    return (
        "CREATE TABLE agent_calls (actor TEXT NOT NULL, tool TEXT NOT NULL, at TEXT NOT NULL);\n"
        "CREATE INDEX agent_calls_actor ON agent_calls(actor, tool, at)"
    )


@migration
def m011_source_trust_chosen() -> str:
    """The tier a person chose with ``--trust`` when adding a source (``''``: none was chosen,
    the trust rules or ``sources.default_trust`` gave it, or it was added before this was
    recorded). Doctor compares a source's tier with this choice, else with its rule's."""
    return "ALTER TABLE sources ADD COLUMN trust_chosen TEXT NOT NULL DEFAULT ''"


@migration
def m012_door_bulk_claims() -> str:
    """What the door needs at 60k claims. A partial index on ``claims.superseded_by`` (moving a
    context entry to the archive looks up the pages whose superseded claims point at it: a full
    scan of ``claims`` per entry). And ``door_deferred``: while it holds a row (a batch of the
    door open, inside its transaction) a new claim is added to ``claims_fts`` and logged in
    ``search_changes`` not by the row triggers but before the batch commits, in one statement
    each for every claim after rowid ``since`` (:meth:`affidavit.store.apply.Batch._index_claims`;
    until issue 14's second round, at the end of each plan): an FTS5 table flushes its pending
    terms to a new segment at every statement savepoint, which an insert with triggers opens,
    so the row trigger cost 30–70 µs a claim. Any other insert (no row in ``door_deferred``) is
    indexed and logged by the triggers as before."""
    return """
        CREATE INDEX claims_successor ON claims(superseded_by) WHERE superseded_by IS NOT NULL;
        CREATE TABLE door_deferred (since INTEGER NOT NULL);
        DROP TRIGGER claims_fts_insert;
        CREATE TRIGGER claims_fts_insert AFTER INSERT ON claims
        WHEN NOT EXISTS (SELECT 1 FROM door_deferred) BEGIN
            INSERT INTO claims_fts (rowid, text) VALUES (new.rowid, new.text);
        END;
        DROP TRIGGER search_claims_insert;
        CREATE TRIGGER search_claims_insert AFTER INSERT ON claims
        WHEN NOT EXISTS (SELECT 1 FROM door_deferred) BEGIN
            INSERT INTO search_changes (kind, key) VALUES ('claim', new.id);
        END
    """


@migration
def m013_plans_compressed() -> str:
    """A decided plan's text and admission, and each snapshot of context.md, zlib-compressed
    (:mod:`affidavit.plan.stored`): the text columns of applied, rejected and expired plans were
    half the database, the snapshots a fourteenth. Existing decided
    plans are compressed by the data step below; the pages they leave free are reused by later
    writes (``affidavit doctor --stats`` shows them)."""
    return """
        ALTER TABLE plans ADD COLUMN plan_z BLOB;
        ALTER TABLE plans ADD COLUMN admission_z BLOB;
        ALTER TABLE context_snapshots ADD COLUMN content_z BLOB
    """


def _compress_decided_plans(db: sqlite3.Connection) -> None:
    from .plan.stored import compact_all, compact_snapshots

    compact_all(db)
    compact_snapshots(db)


DATA_STEPS["m013_plans_compressed"] = _compress_decided_plans


@migration
def m014_doctor_changes() -> str:
    """What ``affidavit doctor`` checks again when it checks what changed since its last clean
    check (:mod:`affidavit.doctor_since`): every row of these tables updated or deleted, logged by
    triggers inside the writing transaction (a row inserted since is found by its rowid, past the
    largest the checkpoint recorded). Whoever edits a row with SQL fires them too."""
    return """
        CREATE TABLE doctor_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            tbl TEXT NOT NULL,
            key TEXT
        );
        CREATE TRIGGER doctor_claims_update AFTER UPDATE ON claims BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('claims', old.id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('claims', new.id);
        END;
        CREATE TRIGGER doctor_claims_delete AFTER DELETE ON claims BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('claims', old.id);
        END;
        CREATE TRIGGER doctor_evidence_update AFTER UPDATE ON evidence BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', new.claim_id);
        END;
        CREATE TRIGGER doctor_evidence_delete AFTER DELETE ON evidence BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('evidence', old.claim_id);
        END;
        CREATE TRIGGER doctor_pages_update AFTER UPDATE ON pages BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('pages', old.slug);
            INSERT INTO doctor_changes (tbl, key) VALUES ('pages', new.slug);
        END;
        CREATE TRIGGER doctor_pages_delete AFTER DELETE ON pages BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('pages', old.slug);
        END;
        CREATE TRIGGER doctor_links_update AFTER UPDATE ON links BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('links', old.src);
            INSERT INTO doctor_changes (tbl, key) VALUES ('links', new.src);
        END;
        CREATE TRIGGER doctor_links_delete AFTER DELETE ON links BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('links', old.src);
        END;
        CREATE TRIGGER doctor_sources_update AFTER UPDATE ON sources BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('sources', old.id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('sources', new.id);
        END;
        CREATE TRIGGER doctor_sources_delete AFTER DELETE ON sources BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('sources', old.id);
        END;
        CREATE TRIGGER doctor_plans_update AFTER UPDATE ON plans BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('plans', old.id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('plans', new.id);
        END;
        CREATE TRIGGER doctor_plans_delete AFTER DELETE ON plans BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('plans', old.id);
        END;
        CREATE TRIGGER doctor_audit_update AFTER UPDATE ON audit BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('audit', old.seq);
            INSERT INTO doctor_changes (tbl, key) VALUES ('audit', new.seq);
        END;
        CREATE TRIGGER doctor_audit_delete AFTER DELETE ON audit BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('audit', old.seq);
        END;
        CREATE TRIGGER doctor_context_snapshots_update AFTER UPDATE ON context_snapshots BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('context_snapshots', old.id);
            INSERT INTO doctor_changes (tbl, key) VALUES ('context_snapshots', new.id);
        END;
        CREATE TRIGGER doctor_context_snapshots_delete AFTER DELETE ON context_snapshots BEGIN
            INSERT INTO doctor_changes (tbl, key) VALUES ('context_snapshots', old.id);
        END;
        INSERT INTO doctor_changes (tbl, key) VALUES ('start', NULL)
    """


@migration
def m015_text_by_text() -> str:
    """Issue 22, judged text by text (W11). ``plans.held``: the parts of a plan's applied
    operations that wait for a person (its pending remainder) — ``{"<op index>": {"claims":
    [claim indexes], "texts": ["title" | "summary" | "section heading"], "written": [ids of the
    claims the operation wrote]}}``. ``claims.support`` and ``claims.support_check``: the support
    verdict a claim was admitted with (``supported``, ``uncertain``: a person approved it) and the
    check that gave it (:func:`affidavit.support.check_version`), so doctor and lint can report
    what changed since; ``''`` for claims written before this was recorded."""
    return """
        ALTER TABLE plans ADD COLUMN held TEXT NOT NULL DEFAULT '{}';
        ALTER TABLE claims ADD COLUMN support TEXT NOT NULL DEFAULT '';
        ALTER TABLE claims ADD COLUMN support_check TEXT NOT NULL DEFAULT ''
    """


@migration
def m016_lineage() -> str:
    """Issue 27 item 1: versions of a source. ``origin_key``: the normalised origin
        (:func:`affidavit.sources.lineage.origin_key`: a file's absolute path, a URL without its
        fragment or default port), shared by every version of one document; ``version``: 1 for the
        first bytes seen from it, then 2, 3…; ``previous_id``: the version it replaces (NULL for the
        first). Rows from before get their origin's key, and rows of one key versions in the order
    they were stored (the data step)."""
    return """
        ALTER TABLE sources ADD COLUMN origin_key TEXT NOT NULL DEFAULT '';
        ALTER TABLE sources ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE sources ADD COLUMN previous_id TEXT;
        CREATE INDEX sources_origin ON sources(origin_key, version)
    """


def _origin_keys(db: sqlite3.Connection) -> None:
    from .sources.lineage import origin_key

    # sources stored from one origin before versions were recorded: versions in the order they
    # were stored (the same path or URL with other bytes is the document as it changed)
    rows = db.execute("SELECT id, origin FROM sources ORDER BY added_at, rowid").fetchall()
    last: dict[str, tuple[str, int]] = {}
    for source_id, origin in rows:
        key = origin_key(origin)
        previous, version = last.get(key, (None, 0))
        db.execute(
            "UPDATE sources SET origin_key = ?, version = ?, previous_id = ? WHERE id = ?",
            (key, version + 1, previous, source_id),
        )
        last[key] = (source_id, version + 1)


DATA_STEPS["m016_lineage"] = _origin_keys


@migration
def m017_claim_words() -> str:
    """Issue 25: each claim's words as the extractive finder reads them
    (:func:`affidavit.lint.reading.read_claim`), by the claim's rowid, so the supersession pass
    after an ingest finds the claims that share a new claim's rare words without reading the
    wiki (:mod:`affidavit.lint.nearby`). Filled when read, past ``claim_words_state.upto`` (the
    largest rowid indexed; ``claim``: that row's id, so a renumbering is noticed and the index
    rebuilt): a claim's text never changes once written."""
    return """
        CREATE TABLE claim_words (
            word TEXT NOT NULL,
            claim INTEGER NOT NULL,
            PRIMARY KEY (word, claim)
        ) WITHOUT ROWID;
        CREATE TABLE claim_words_state (upto INTEGER NOT NULL, claim TEXT NOT NULL)
    """


@migration
def m020_stated_versions() -> str:
    """Issue 24 item 3 / 27: the version or date a source states about itself
    (:func:`affidavit.sources.stated.stated_of`): ``stated`` as stated ("3.2", "2024-05-01"),
    ``stated_key`` the document it is a release of (``stated:KIND:NAME|TITLE``, "" when it states
    none) and ``stated_rank`` its order among that document's releases. Sources stored before
    state nothing (lint orders them by their origin's versions alone) until stored again.

    Issue 27 (a re-ingest costs what changed): ``claims_derived`` indexes the few claims derived
    from others, so the blast radius of each withdrawn claim
    (:func:`affidavit.store.blast.derived_closure`) reads them, not every claim of the wiki."""
    return """
        ALTER TABLE sources ADD COLUMN stated TEXT NOT NULL DEFAULT '';
        ALTER TABLE sources ADD COLUMN stated_key TEXT NOT NULL DEFAULT '';
        ALTER TABLE sources ADD COLUMN stated_rank INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX claims_derived ON claims(page_slug, position, id) WHERE derived_from != '[]'
    """


# Issue 25's migrations that slim the database and the version of what search reads (db_lean:
# m021…m023, m026…m029; db_claims: m032) and issue 27 item 2's m024 (db_watches: the folders the daemon
# follows), registered here; then every migration in the order of its number, whichever module
# registered it.
from . import db_cited, db_claims, db_lean, db_watches  # noqa: E402, F401

MIGRATIONS.sort(key=lambda named: named[0])


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet recorded; returns the names applied now. A connection
    opened without :func:`connect` (an in-memory database) gets functions that read no text."""
    from .evidence.spans import ensure_functions

    ensure_functions(db)
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name, func in MIGRATIONS:
        if name in done:
            continue
        script = func()
        step = DATA_STEPS.get(name)
        enforced = db.execute("PRAGMA foreign_keys").fetchone()[0]
        if name in FOREIGN_KEYS_OFF:
            db.execute("PRAGMA foreign_keys=OFF")  # outside a transaction, or it does nothing
        try:
            db.executescript(f"BEGIN IMMEDIATE;\n{script};")
            if step is not None:
                step(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, datetime('now'))", (name,)
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.execute(f"PRAGMA foreign_keys={'ON' if enforced else 'OFF'}")
        applied.append(name)
    return applied


@contextmanager
def read_snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction (WAL: a consistent snapshot), unless the caller already has one."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error.

    Inside a transaction already open on ``db`` (the door's batch, :mod:`affidavit.store.apply`)
    it is a savepoint instead: undone alone on error, committed with the enclosing transaction."""
    if db.in_transaction:
        db.execute("SAVEPOINT nested")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK TO nested")
            db.execute("RELEASE nested")
            raise
        db.execute("RELEASE nested")
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
