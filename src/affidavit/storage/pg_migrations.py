"""PostgreSQL's named migrations: the registry of vaults (schema ``affidavit``) and each vault's own
tables (schema ``v_<name>``), recorded by name in each schema's ``_migrations`` as SQLite's are
(:mod:`affidavit.db`). A table ported from SQLite keeps the name of the SQLite migration that made
it (``m001_initial``), with the columns the door reads and writes today; what only PostgreSQL needs
is named ``pgNNN_…`` (never an SQLite number). Never edit a released migration: add one.

``{s}`` in a script stands for the schema (quoted by psycopg's ``sql.Identifier``); no value is
ever formatted into SQL.
"""

from __future__ import annotations

REGISTRY: list[tuple[str, str]] = [
    (
        "pg001_vaults",
        """
        CREATE TABLE {s}.vaults (
            id BIGSERIAL PRIMARY KEY,      -- the vault's advisory-lock key
            name TEXT NOT NULL UNIQUE,     -- its schema is v_<name>
            owner TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """,
    ),
]
"""The schema ``affidavit``: which vaults this database holds."""

VAULT: list[tuple[str, str]] = [
    (
        "m001_initial",
        """
        CREATE TABLE {s}.plans (
            id TEXT PRIMARY KEY,
            author TEXT NOT NULL,
            origin TEXT NOT NULL,
            plan_json TEXT NOT NULL,
            status TEXT NOT NULL,          -- rejected | pending | applied | expired | refused
            reason TEXT NOT NULL DEFAULT '',
            admission TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            selected_ops TEXT
        );
        CREATE INDEX plans_status ON {s}.plans (status, expires_at);
        CREATE TABLE {s}.slug_reservations (
            slug TEXT PRIMARY KEY,
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id)
        );
        CREATE TABLE {s}.audit (
            seq BIGINT PRIMARY KEY,        -- 1, 2, 3... under the vault's lock: no gaps
            at TEXT NOT NULL,
            action TEXT NOT NULL,
            plan_id TEXT,
            actor TEXT NOT NULL,
            detail TEXT NOT NULL,          -- canonical JSON, hashed byte for byte (not jsonb)
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )
        """,
    ),
    (
        "pg001_batch_sequence",
        """
        CREATE TABLE {s}.batch_counter (
            one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
            last BIGINT NOT NULL           -- the last committed batch's number
        );
        INSERT INTO {s}.batch_counter (last) VALUES (0);
        CREATE TABLE {s}.batches (
            seq BIGINT PRIMARY KEY,        -- from batch_counter, in the batch's own transaction
            batch_id TEXT NOT NULL UNIQUE,
            plans TEXT NOT NULL,           -- JSON list of the plan ids, in order
            audit_upto BIGINT NOT NULL,    -- the audit seq of the batch's last entry
            sealed_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """,
    ),
    (
        "pg002_jobs",
        """
        CREATE TABLE {s}.jobs (
            n BIGSERIAL UNIQUE,            -- submission order (claims take the oldest first)
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
            payload TEXT NOT NULL,         -- JSON: the kind's typed payload
            requested_by TEXT NOT NULL,
            max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
            attempts INTEGER NOT NULL DEFAULT 0,
            fence BIGINT NOT NULL DEFAULT 0,   -- the fencing token: one more at every claim
            lease_token TEXT,              -- the current claim's secret; NULL when not running
            lease_owner TEXT,
            lease_expires_at TIMESTAMPTZ,  -- by the database's clock, whichever host claimed
            heartbeat_at TIMESTAMPTZ,
            progress_done BIGINT NOT NULL DEFAULT 0,
            progress_total BIGINT NOT NULL DEFAULT 0,
            progress_message TEXT NOT NULL DEFAULT '',
            result TEXT,                   -- JSON, when done
            error TEXT NOT NULL DEFAULT '',
            created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            started_at TIMESTAMPTZ,
            finished_at TIMESTAMPTZ,
            CHECK ((status = 'running') = (lease_token IS NOT NULL))
        );
        CREATE INDEX jobs_claimable ON {s}.jobs (status, n);
        CREATE TABLE {s}.job_events (
            seq BIGSERIAL PRIMARY KEY,
            job_id TEXT NOT NULL REFERENCES {s}.jobs (id),
            at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            type TEXT NOT NULL,
            data TEXT NOT NULL             -- JSON
        );
        CREATE INDEX job_events_job ON {s}.job_events (job_id, seq)
        """,
    ),
    (
        "pg003_content",
        """
        CREATE TABLE {s}.sources (
            id TEXT PRIMARY KEY CHECK (id ~ '^[0-9a-f]{{64}}$'),  -- SHA-256 of data
            origin TEXT NOT NULL,
            name TEXT NOT NULL,
            media_type TEXT NOT NULL,
            data BYTEA NOT NULL,           -- the original bytes
            text TEXT NOT NULL,            -- the extracted text quotes' offsets index
            text_sha256 TEXT NOT NULL,
            size_bytes BIGINT NOT NULL,
            text_chars BIGINT NOT NULL,
            trust TEXT NOT NULL CHECK (trust IN ('untrusted', 'semi-trusted', 'trusted')),
            status TEXT NOT NULL DEFAULT 'active',
            added_at TEXT NOT NULL,
            text_map TEXT NOT NULL DEFAULT '{{}}'  -- JSON: how text offsets map to the original
        );
        CREATE TABLE {s}.pages (
            slug TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            category TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id)
        );
        CREATE TABLE {s}.claims (
            id TEXT PRIMARY KEY,
            page_slug TEXT NOT NULL REFERENCES {s}.pages (slug),
            section TEXT NOT NULL,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL,          -- active | pending | quarantined | superseded | retracted
            trust TEXT NOT NULL,
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id),
            created_at TEXT NOT NULL,
            superseded_by TEXT,
            derived_from TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX claims_page ON {s}.claims (page_slug, position);
        CREATE TABLE {s}.evidence (
            claim_id TEXT NOT NULL REFERENCES {s}.claims (id),
            idx INTEGER NOT NULL,
            source_id TEXT NOT NULL REFERENCES {s}.sources (id),
            quote TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            location TEXT NOT NULL,
            PRIMARY KEY (claim_id, idx),
            CHECK (0 <= start AND start < "end")
        );
        CREATE INDEX evidence_source ON {s}.evidence (source_id)
        """,
    ),
    (
        "pg004_gate",
        """
        CREATE TABLE {s}.source_flags (     -- the sanitizer's findings, as SQLite's source_flags
            source_id TEXT NOT NULL REFERENCES {s}.sources (id),
            kind TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            detail TEXT NOT NULL
        );
        CREATE INDEX source_flags_source ON {s}.source_flags (source_id, start);
        CREATE TABLE {s}.links (           -- checked at commit: a plan may link before it creates
            src TEXT NOT NULL REFERENCES {s}.pages (slug) DEFERRABLE INITIALLY DEFERRED,
            dst TEXT NOT NULL REFERENCES {s}.pages (slug) DEFERRABLE INITIALLY DEFERRED,
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id),
            PRIMARY KEY (src, dst)
        );
        ALTER TABLE {s}.claims
            ADD COLUMN support TEXT NOT NULL DEFAULT '',        -- the gate's verdict (W11)
            ADD COLUMN support_check TEXT NOT NULL DEFAULT '',  -- the check that gave it
            ADD COLUMN n BIGSERIAL;   -- insertion order: a successor shares its claim's position
        CREATE INDEX claims_derived ON {s}.claims (status) WHERE derived_from != '[]';
        -- a plan may add claims to a page an operation after it creates (as on SQLite)
        ALTER TABLE {s}.claims ALTER CONSTRAINT claims_page_slug_fkey DEFERRABLE INITIALLY DEFERRED
        """,
    ),
    (
        "pg005_full_text",
        """
        ALTER TABLE {s}.claims ADD COLUMN tsv tsvector
            GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED;
        CREATE INDEX claims_tsv ON {s}.claims USING GIN (tsv);
        ALTER TABLE {s}.pages ADD COLUMN tsv tsvector
            GENERATED ALWAYS AS (to_tsvector('english'::regconfig, title || ' ' || summary)) STORED;
        CREATE INDEX pages_tsv ON {s}.pages USING GIN (tsv)
        """,
    ),
    (
        "pg006_context",
        """
        -- context entries are claims of page '' (as on SQLite): the key to pages is kept for
        -- every other claim through page_ref, which is NULL (never checked) for the context
        ALTER TABLE {s}.claims DROP CONSTRAINT claims_page_slug_fkey;
        ALTER TABLE {s}.claims ADD COLUMN page_ref TEXT
            GENERATED ALWAYS AS (NULLIF(page_slug, '')) STORED
            REFERENCES {s}.pages (slug) DEFERRABLE INITIALLY DEFERRED;
        -- a context entry moved to the archive page by the line cap: its place in the context
        -- before (the mirror renders context.md as it stood at each batch from it)
        ALTER TABLE {s}.claims ADD COLUMN archived_from INTEGER;
        -- the batch that wrote the row (a plan approved in parts writes in several batches):
        -- the door sets affidavit.batch for its transaction, the mirror tags rows by it
        ALTER TABLE {s}.pages ADD COLUMN batch_id TEXT
            DEFAULT current_setting('affidavit.batch', true);
        ALTER TABLE {s}.claims ADD COLUMN batch_id TEXT
            DEFAULT current_setting('affidavit.batch', true);
        ALTER TABLE {s}.links ADD COLUMN batch_id TEXT
            DEFAULT current_setting('affidavit.batch', true);
        -- a plan approved in parts: the operations decided so far (applied, in selected_ops,
        -- or refused by the gate at an approval); the others stay approvable until expiry
        ALTER TABLE {s}.plans ADD COLUMN decided_ops TEXT NOT NULL DEFAULT '[]';
        -- versions of a source (issue 27, as SQLite's m016_lineage): one origin key, versions
        -- 1, 2, 3... each naming the one it replaces; rows from before: no lineage ('')
        ALTER TABLE {s}.sources ADD COLUMN origin_key TEXT NOT NULL DEFAULT '',
            ADD COLUMN version INTEGER NOT NULL DEFAULT 1,
            ADD COLUMN previous_id TEXT REFERENCES {s}.sources (id);
        CREATE INDEX sources_origin ON {s}.sources (origin_key, version);
        -- an evidence row as it was before carry_source re-pointed it at a newer version, with
        -- the batch that did (the mirror renders each batch's evidence from it)
        CREATE TABLE {s}.evidence_carried (
            n BIGSERIAL PRIMARY KEY,
            batch_id TEXT DEFAULT current_setting('affidavit.batch', true),
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id),   -- the carrying plan
            claim_id TEXT NOT NULL REFERENCES {s}.claims (id),
            idx INTEGER NOT NULL,
            source_id TEXT NOT NULL REFERENCES {s}.sources (id),
            quote TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            location TEXT NOT NULL
        );
        CREATE INDEX evidence_carried_claim ON {s}.evidence_carried (claim_id, idx, n);
        CREATE TABLE {s}.context_snapshots (   -- wiki/context.md before each plan changed it
            id BIGSERIAL PRIMARY KEY,
            plan_id TEXT NOT NULL REFERENCES {s}.plans (id),
            created_at TEXT NOT NULL,
            content TEXT NOT NULL
        )
        """,
    ),
    (
        "pg007_served",
        """
        CREATE TABLE {s}.api_tokens (      -- bearer tokens of this vault (service/tokens.py)
            id TEXT PRIMARY KEY CHECK (id ~ '^[0-9a-f]{{12}}$'),
            secret_sha256 TEXT NOT NULL,   -- only the hash of the secret is kept
            role TEXT NOT NULL CHECK (role IN ('read', 'propose', 'approve')),
            label TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            revoked_at TEXT,
            revoked_by TEXT
        );
        CREATE TABLE {s}.nonces (          -- W2: issued by the host, used by one plan
            nonce TEXT PRIMARY KEY,
            purpose TEXT NOT NULL,
            issued_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_by TEXT
        );
        CREATE TABLE {s}.agent_calls (     -- W13's quotas: an agent's calls in the last hour
            actor TEXT NOT NULL,
            tool TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX agent_calls_actor ON {s}.agent_calls (actor, tool, at)
        """,
    ),
    (
        "pg008_ingest",
        """
        ALTER TABLE {s}.jobs ADD COLUMN cancel_requested_by TEXT;  -- a running job stops
        CREATE TABLE {s}.ingested_chunks (  -- an ingest job's checkpoints (jobs/pg_ingest.py)
            source_id TEXT NOT NULL REFERENCES {s}.sources (id),
            start BIGINT NOT NULL,
            "end" BIGINT NOT NULL,
            outcome TEXT NOT NULL,         -- started (nonce issued, model asked) or final
            nonce TEXT,
            plan_id TEXT REFERENCES {s}.plans (id),
            job_id TEXT NOT NULL REFERENCES {s}.jobs (id),
            fence BIGINT NOT NULL,         -- the claim that wrote it
            PRIMARY KEY (source_id, start)
        );
        CREATE INDEX ingested_chunks_job ON {s}.ingested_chunks (job_id)
        """,
    ),
    (
        "pg009_lint",
        """
        -- lint's runs and findings, as SQLite's (lint/findings.py reads and writes both)
        CREATE TABLE {s}.lint_runs (
            id BIGSERIAL PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            trigger TEXT NOT NULL,          -- manual | auto (after N ingests) | job | ingest
            provider TEXT NOT NULL,
            kept INTEGER NOT NULL DEFAULT 0,
            dropped INTEGER NOT NULL DEFAULT 0,
            detail TEXT NOT NULL DEFAULT '{{}}'
        );
        CREATE TABLE {s}.findings (
            id TEXT PRIMARY KEY,            -- fingerprint: kind + what it is about
            kind TEXT NOT NULL,
            origin TEXT NOT NULL,
            severity TEXT NOT NULL,
            subject TEXT NOT NULL,
            message TEXT NOT NULL,
            quotes TEXT NOT NULL DEFAULT '[]',
            claims TEXT NOT NULL DEFAULT '[]',
            pages TEXT NOT NULL DEFAULT '[]',
            fix TEXT,
            fix_hint TEXT NOT NULL DEFAULT '',
            why TEXT NOT NULL DEFAULT '{{}}',
            status TEXT NOT NULL,
            first_run BIGINT NOT NULL,
            last_run BIGINT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            note TEXT NOT NULL DEFAULT '',
            plan_id TEXT
        );
        CREATE INDEX findings_status ON {s}.findings (status, kind);
        CREATE TABLE {s}.counters (
            name TEXT PRIMARY KEY,          -- ingests_since_lint
            value BIGINT NOT NULL
        );
        -- the version or date a source states about itself (as SQLite's m020): lint orders
        -- releases of one document by it; rows from before state none
        ALTER TABLE {s}.sources ADD COLUMN stated TEXT NOT NULL DEFAULT '',
            ADD COLUMN stated_key TEXT NOT NULL DEFAULT '',
            ADD COLUMN stated_rank INTEGER NOT NULL DEFAULT 0;
        -- an ingest job's pass after its chunks (jobs/pg_after.py), done once: its findings,
        -- proposals and counter commit with this row, under the job's claim
        CREATE TABLE {s}.after_ingest (
            job_id TEXT PRIMARY KEY REFERENCES {s}.jobs (id),
            fence BIGINT NOT NULL,          -- the claim that did it
            done_at TEXT NOT NULL,
            result TEXT NOT NULL            -- JSON: what the pass found and proposed
        )
        """,
    ),
    (
        "pg010_ask",
        """
        CREATE TABLE {s}.questions (       -- each answer (SQLite's m001 questions): the ask log
            id BIGSERIAL PRIMARY KEY,
            at TEXT NOT NULL,
            question TEXT NOT NULL,
            min_trust TEXT NOT NULL,
            provider TEXT NOT NULL,
            retrieved TEXT NOT NULL,       -- JSON list of claim ids given to the answerer
            answer TEXT NOT NULL,          -- JSON: the checked answer's sentences
            verdict TEXT NOT NULL,         -- answered | not_in_wiki
            dropped INTEGER NOT NULL,      -- sentences dropped by the citation check
            prompt_tokens INTEGER NOT NULL,
            conversation TEXT
        );
        CREATE TABLE {s}.model_calls (     -- a model's calls (SQLite's model_calls)
            id BIGSERIAL PRIMARY KEY,
            job_id TEXT,
            at TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            purpose TEXT NOT NULL,         -- ask here
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL,
            outcome TEXT NOT NULL
        )
        """,
    ),
    (
        "pg011_stated_rank_bigint",
        """
        -- a stated release's rank is four groups of up to 4 digits (sources/stated.py): up to
        -- ~10^16, 64-bit as on SQLite; INTEGER refused "112.5" (1.1e14) and lost the source
        ALTER TABLE {s}.sources ALTER COLUMN stated_rank TYPE BIGINT
        """,
    ),
    (
        "pg012_held",
        """
        -- a plan the policy (or an approval given unseen) applied in part: the parts of its
        -- applied operations that wait for a person (W11), as SQLite's plans.held: JSON, by
        -- operation, its held claims and texts and the claims it wrote (gate.verdicts.Held)
        ALTER TABLE {s}.plans ADD COLUMN held TEXT NOT NULL DEFAULT '{{}}'
        """,
    ),
    (
        "pg013_plans_made",
        """
        -- the order plans were stored in, as SQLite's rowid: the inbox lists plans made in the
        -- same second (an ingest job's chunks) in the order they were made, not by their ids
        ALTER TABLE {s}.plans ADD COLUMN made BIGSERIAL
        """,
    ),
]
"""Each vault's schema."""
