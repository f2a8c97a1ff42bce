"""A PostgreSQL vault's lint findings as the daemon serves them (SQLite's ``…/lint`` routes): list
them, show one with its quotes (verified when the lint recorded it), decide one (dismiss, resolve,
reopen — the finding's row and its audit entry in one transaction under the vault's lock), and
propose the fix plans of chosen findings, which wait in the inbox for a person (never applied
here). The one :class:`~affidavit.lint.findings.FindingStore` over
:class:`~affidavit.storage.pg_sql.PgSql`: no second copy of its SQL."""

from __future__ import annotations

from ..clock import iso
from ..jobs.pg_after import propose_fix_plans
from ..lint.findings import FindingStore, Status, StoredFinding
from ..lint.fixes import FixReport
from ..storage.base import check_text
from ..storage.pg_sql import PgSql
from .pg_vaults import PgVault


class PgFindings:
    """The findings of one served PostgreSQL vault."""

    def __init__(self, vault: PgVault) -> None:
        self.vault = vault

    def find(
        self, status: tuple[str, ...], kinds: tuple[str, ...], limit: int
    ) -> list[StoredFinding]:
        """Findings of ``status`` (and ``kinds``), errors first, from one snapshot."""
        with self.vault._read() as conn:
            return FindingStore(PgSql(conn, self.vault.schema)).list(status, kinds, limit)

    def get(self, ref: str) -> StoredFinding:
        """One finding by id or unique id prefix."""
        with self.vault._read() as conn:
            return FindingStore(PgSql(conn, self.vault.schema)).get(check_text("finding", ref))

    def decide(self, ref: str, status: Status, actor: str, note: str) -> StoredFinding:
        """Dismiss (later lints keep it dismissed), resolve or reopen a finding; audited, both
        writes in the door's transaction under the vault's advisory lock."""
        check_text("finding", ref)
        check_text("note", note)
        with self.vault._locked() as conn:
            store = FindingStore(PgSql(conn, self.vault.schema))
            return store.decide(ref, status, actor, iso(self.vault.clock()), note)

    def propose_fixes(self, refs: list[str], keep: dict[str, str], actor: str) -> FixReport:
        """The fix plans of the findings ``refs`` (open ones without a pending fix plan), as
        ``actor``'s pending plans in the inbox; ``keep`` names, per contradiction, the claim
        kept. One transaction under the vault's lock: a plan and its findings' links together."""
        for ref in [*refs, *keep, *keep.values()]:
            check_text("finding", ref)
        with self.vault._locked() as conn:
            db = PgSql(conn, self.vault.schema)
            store = FindingStore(db)
            chosen = [store.get(ref) for ref in refs]
            kept = {store.resolve_id(ref): claim for ref, claim in keep.items()}
            return propose_fix_plans(
                conn, db, self.vault.schema, chosen, actor=actor, config=self.vault.config,
                clock=self.vault.clock, keep=kept,
            )  # fmt: skip


__all__ = ["PgFindings"]
