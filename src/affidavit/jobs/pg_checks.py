"""The deterministic lint checks a PostgreSQL vault's lint job runs (SPEC W9): those that derive
from the database alone, through SQLite's own check functions (:mod:`affidavit.lint.checks_wiki`,
:mod:`affidavit.lint.checks_state`) over the vault's schema (:class:`~affidavit.storage.pg_sql.
PgSql`) — so a finding here is the finding a folder's lint gives for the same rows, with the same
fingerprint: ``broken_link`` (a row of ``links`` to a page that is not there), ``orphan_page`` (a
page no other page links to, with a ``link_pages`` fix when it links to one), ``empty_page``,
``source_tampered`` (a source row whose bytes or text no longer hash to what it records),
``evidence_unverified`` (an active claim's quote not found again at its recorded offsets, with a
``retract_claim`` fix when its source is intact), ``unsupported_claim`` (an active claim its
quotes don't support under the current support check, fix ``retract_claim``) and
``plan_expiring``. The three in the middle re-derive through ``affidavit doctor --database``'s
own reads (:func:`~affidavit.doctor_pg.pg_source_problems`,
:func:`~affidavit.doctor_pg.pg_quote_problems`, :func:`~affidavit.support.audit.rejudge`), so
lint and doctor never disagree about them. And the extractive finder's missing links (:func:`pg_missing_links`: SQLite's
:func:`~affidavit.lint.candidates.missing_links` with PostgreSQL's full text leading it).

Not here, and why (docs/team.md): the checks of a folder's files — ``index_drift``, ``log_drift``,
``file_drift`` (a PostgreSQL vault has no folder: its mirror's are ``affidavit mirror --check``'s)
and ``context_over_cap`` (the rendered context.md is the mirror's; the door archives past the cap
as it applies); ``stale_embedding`` (no vectors on PostgreSQL yet).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from ..clock import Clock
from ..config import Config
from ..lint.candidates import Candidate, first_by_page, missing_links
from ..lint.checks_state import (
    check_evidence_unverified,
    check_plan_expiring,
    check_source_tampered,
)
from ..lint.checks_support import check_unsupported_claim
from ..lint.checks_wiki import check_broken_link, check_empty_page, check_orphan_page
from ..lint.findings import Finding
from ..store.render import CONTEXT_ARCHIVE

if TYPE_CHECKING:
    import sqlite3

    from ..doctor import QuoteProblem, SourceProblem
    from ..lint.checks_context import CheckContext
    from ..storage.pg_sql import PgSql
    from ..storage.postgres_gate import PgSources

PG_CHECKS = {
    "broken_link": check_broken_link,
    "orphan_page": check_orphan_page,
    "empty_page": check_empty_page,
    "source_tampered": check_source_tampered,
    "evidence_unverified": check_evidence_unverified,
    "unsupported_claim": check_unsupported_claim,
    "plan_expiring": check_plan_expiring,
}
"""The checks a lint job runs on PostgreSQL, by kind (in :data:`~affidavit.lint.findings.
CHECK_KINDS` order)."""


@dataclass
class _Settings:
    """What a check reads of ``ctx.vault``: its clock and its config; read only, with no state
    folder (the support check keeps no parses for a PostgreSQL vault, as its door keeps none)."""

    clock: Clock
    config: Config
    read_only: bool = True
    state_dir: None = None


class PgCheckContext:
    """The part of :class:`~affidavit.lint.checks_context.CheckContext` the checks of
    :data:`PG_CHECKS` read, over one snapshot of a PostgreSQL vault (no files on this host):
    ``sources``, ``tampered`` and ``quotes`` are ``doctor --database``'s re-derivations, each
    computed once per run on first use."""

    restore_from = "from a backup (`pg_restore`)"
    moved = (  # the source's row is intact (else source_tampered): the evidence row was edited
        "the evidence row's offsets were changed",
        "the quote is still in its intact source at other offsets: the evidence row was altered; "
        "restore the database from a backup (`pg_restore`)",
    )
    checked_claims = None  # every active claim (a job's lint is always a whole-vault run)

    def __init__(self, db: PgSql, config: Config, clock: Clock, store: PgSources) -> None:
        from ..evidence import Verifier

        self.db = db
        self.store = store
        self.verifier = Verifier(store)
        self.vault = _Settings(clock, config)
        self.files: list[Any] = []  # the mirror's files are checked by `mirror --check`
        self.pages = {str(r[0]) for r in db.execute("SELECT slug FROM pages")}
        self.links = [
            (str(r[0]), str(r[1]))
            for r in db.execute("SELECT src, dst FROM links ORDER BY src, dst")
        ]

    @cached_property
    def sources(self) -> list[SourceProblem]:
        from ..doctor_pg import pg_source_problems

        return pg_source_problems(self.db, self.store)[1]

    @cached_property
    def tampered(self) -> set[str]:
        return {p.source_id for p in self.sources if p.tampered}

    @cached_property
    def quotes(self) -> list[QuoteProblem]:
        from ..doctor_pg import pg_quote_problems

        return pg_quote_problems(self.db, self.verifier)[1]

    def tampered_source(self, source_id: str) -> tuple[int, str]:
        """How many active claims cite a tampered source, and how to restore it."""
        row = self.db.execute(
            "SELECT count(DISTINCT c.id) FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE e.source_id = ? AND c.status = 'active'",
            (source_id,),
        ).fetchone()
        hint = (
            f"restore the source's row from a backup (`pg_restore`): a stored row was altered; "
            f"the gate refuses the claims citing source {source_id[:12]} until then "
            "(`affidavit doctor --database URL --vault NAME` checks the whole vault)"
        )
        return int(row[0]), hint

    def disk_text(self, relpath: str) -> str | None:
        return None


def run_pg_checks(
    db: PgSql, config: Config, clock: Clock, sources: PgSources | None = None
) -> list[Finding]:
    """The findings of :data:`PG_CHECKS`, in check order; reads only. ``sources``: the vault's
    sources in ``db``'s transaction (left out, read there: ``db``'s search path is the vault's
    schema)."""
    if sources is None:
        from ..storage.postgres_gate import PgSources

        schema = str(db.execute("SELECT current_schema()").fetchone()[0])
        sources = PgSources(db.conn, schema)
    ctx = cast("CheckContext", PgCheckContext(db, config, clock, sources))
    return [finding for check in PG_CHECKS.values() for finding in check(ctx)]


def pg_first_mentions(
    db: Any, phrase: str, pattern: re.Pattern[str], slug: str
) -> dict[str, tuple[str, str, str]] | None:
    """SQLite's ``_first_mentions`` on a PostgreSQL vault: the claims whose text holds the
    title's words as a phrase by PostgreSQL's full text (``claims.tsv``, pg005: the English
    stemmer, its stopwords left out of the phrase) lead; each page's first whose quote
    ``pattern`` finds, as on SQLite (:func:`~affidavit.lint.candidates.first_by_page`)."""
    rows = db.execute(
        "SELECT c.page_slug, c.position, c.id, e.idx, e.source_id, e.quote FROM claims c "
        "JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.tsv @@ phraseto_tsquery('english'::regconfig, ?) AND c.status = 'active' "
        "AND c.page_slug NOT IN (?, '', ?)",
        (phrase.strip('"'), slug, CONTEXT_ARCHIVE),
    )
    return first_by_page(rows, pattern)


def pg_missing_links(db: PgSql) -> list[Candidate]:
    """Every missing link of the vault: a claim naming another page's title, quoted from its
    source, on a page that doesn't link to it (SQLite's finder and findings, fingerprints and
    ``link_pages`` fixes included)."""
    return missing_links(cast("sqlite3.Connection", db), mentions=pg_first_mentions)


__all__ = ["PG_CHECKS", "PgCheckContext", "pg_first_mentions", "pg_missing_links", "run_pg_checks"]
