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
]
"""Each vault's schema."""
