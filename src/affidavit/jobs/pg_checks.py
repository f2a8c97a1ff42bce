"""The deterministic lint checks a PostgreSQL vault's lint job runs (SPEC W9): those that derive
from the database alone, through SQLite's own check functions (:mod:`affidavit.lint.checks_wiki`,
:mod:`affidavit.lint.checks_state`) over the vault's schema (:class:`~affidavit.storage.pg_sql.
PgSql`) — so a finding here is the finding a folder's lint gives for the same rows, with the same
fingerprint: ``broken_link`` (a row of ``links`` to a page that is not there), ``empty_page`` and
``plan_expiring``. ``orphan_page`` would run the same way but is left out for now: every page an
ingest job makes is an orphan until linked, and the findings screens and their tests are not
ready for them yet. The checks of a folder's files
(rendered pages, index, log, context, hand edits: the mirror's, ``affidavit mirror --check``), of
its stored files and vectors are a folder's; sources and quotes are re-checked by ``affidavit
doctor --database``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..clock import Clock
from ..config import Config
from ..lint.checks_state import check_plan_expiring
from ..lint.checks_wiki import check_broken_link, check_empty_page
from ..lint.findings import Finding

if TYPE_CHECKING:
    from ..lint.checks_context import CheckContext
    from ..storage.pg_sql import PgSql

PG_CHECKS = {
    "broken_link": check_broken_link,
    "empty_page": check_empty_page,
    "plan_expiring": check_plan_expiring,
}
"""The checks a lint job runs on PostgreSQL, by kind (in :data:`~affidavit.lint.findings.
CHECK_KINDS` order)."""


@dataclass
class _Settings:
    """What a check reads of ``ctx.vault``: its clock and its config."""

    clock: Clock
    config: Config


class PgCheckContext:
    """The part of :class:`~affidavit.lint.checks_context.CheckContext` the checks of
    :data:`PG_CHECKS` read, over one snapshot of a PostgreSQL vault (no files on this host)."""

    def __init__(self, db: PgSql, config: Config, clock: Clock) -> None:
        self.db = db
        self.vault = _Settings(clock, config)
        self.files: list[Any] = []  # the mirror's files are checked by `mirror --check`
        self.pages = {str(r[0]) for r in db.execute("SELECT slug FROM pages")}
        self.links = [
            (str(r[0]), str(r[1]))
            for r in db.execute("SELECT src, dst FROM links ORDER BY src, dst")
        ]

    def disk_text(self, relpath: str) -> str | None:
        return None


def run_pg_checks(db: PgSql, config: Config, clock: Clock) -> list[Finding]:
    """The findings of :data:`PG_CHECKS`, in check order; reads only."""
    ctx = cast("CheckContext", PgCheckContext(db, config, clock))
    return [finding for check in PG_CHECKS.values() for finding in check(ctx)]


__all__ = ["PG_CHECKS", "PgCheckContext", "run_pg_checks"]
