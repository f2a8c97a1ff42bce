"""Issue 27 item 2's migration: the folders the daemon follows for a vault (m024).

It registers with :func:`affidavit.db.migration` when :mod:`affidavit.db` imports this module,
after issue 25's, so ``MIGRATIONS`` keeps its order; a migration is never edited once released.
"""

from __future__ import annotations

from .db import migration


@migration
def m024_watches() -> str:
    """Issue 27 item 2: ``watches``, the folders a daemon serving this vault follows
    (:mod:`affidavit.watch.registered`, ``affidavit watch add``): ``folder`` resolved when it was
    added (a later symbolic link in its path refuses the watch), ``status`` ``watching`` or
    ``refused`` (``error`` says why and how to fix it), the trust tier and provider of its
    ingests, who added it, and the last job it queued."""
    return """
        CREATE TABLE watches (
            id TEXT PRIMARY KEY,
            folder TEXT NOT NULL UNIQUE,
            trust TEXT CHECK (trust IN ('untrusted', 'semi-trusted', 'trusted')),
            model TEXT,
            status TEXT NOT NULL DEFAULT 'watching' CHECK (status IN ('watching', 'refused')),
            error TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            last_job TEXT,
            last_queued_at TEXT
        )
    """
