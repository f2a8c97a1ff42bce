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
from ..lint.fixes import FixReport, FixStep, claim_line, steps_of
from ..plan.schema import Plan, parse_plan
from ..storage import pg_served as rows
from ..storage.base import check_text
from ..storage.pg_sql import PgSql
from .models import ApproveResponse
from .pg_vaults import PgVault, plan_preview


class PgFindings:
    """The findings of one served PostgreSQL vault."""

    def __init__(self, vault: PgVault) -> None:
        self.vault = vault

    def find(
        self, status: tuple[str, ...], kinds: tuple[str, ...], limit: int | None
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
        return self.decide_many([ref], status, actor, note)[0]

    def decide_many(
        self, refs: list[str], status: Status, actor: str, note: str
    ) -> list[StoredFinding]:
        """:meth:`decide` for several findings in one transaction: all or none (as the CLI
        decides them on SQLite)."""
        for ref in refs:
            check_text("finding", ref)
        check_text("note", note)
        with self.vault._locked() as conn:
            store = FindingStore(PgSql(conn, self.vault.schema))
            now = iso(self.vault.clock())
            return [store.decide(ref, status, actor, now, note) for ref in refs]

    def fix_steps(self, chosen: list[StoredFinding]) -> list[FixStep]:
        """The pending fix operations of ``chosen`` (each finding's own operation in its fix
        plan), described as on SQLite (:func:`affidavit.lint.fixes.steps_of`), from one
        snapshot."""
        now = iso(self.vault.clock())
        with self.vault._read() as conn:

            def pending(plan_id: str) -> tuple[Plan, list[int]] | None:
                row = rows.plan_row(conn, self.vault.schema, plan_id)
                ops = [i - 1 for i in plan_preview(row, now).ops]  # none unless pending
                return (parse_plan(str(row["plan_json"])), ops) if ops else None

            def claim_text(claim_id: str) -> str:
                found = rows.claim_row(conn, self.vault.schema, claim_id)
                return claim_line(claim_id, str(found[0]["text"]) if found else None)

            return steps_of(chosen, pending, claim_text)

    def approve_steps(self, steps: list[FixStep], actor: str) -> list[ApproveResponse]:
        """Approve the fix operations ``steps`` name, each plan's operations together, every
        plan in one batch through the door (re-checked under the vault's lock, W5): all or
        nothing, as ``affidavit findings approve`` does on SQLite."""
        selections: dict[str, list[int]] = {}
        for step in steps:
            selections.setdefault(step.plan_id, []).append(step.op)
        return self.vault.apply_selections(list(selections.items()), actor)

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
