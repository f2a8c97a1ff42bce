"""What ``affidavit findings`` reads and does on a vault's lint findings: a vault folder's
(:class:`FolderFindings`: its database, inbox and door in this process) or, with ``--database URL
--vault NAME``, a vault of a PostgreSQL database's (:class:`DatabaseFindings`: the services the
daemon runs there, :class:`~affidavit.service.pg_findings.PgFindings`). The commands print both
the same way."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

import click

from ..agents import local_actor
from ._common import opened_vault
from .database import chosen, database_vault

if TYPE_CHECKING:
    from ..lint.findings import Status, StoredFinding
    from ..lint.fixes import FixReport, FixStep
    from ..service.pg_findings import PgFindings
    from ..vault import Vault

Approved = tuple[str, bool, str]
"""An approved fix plan: its id, whether anything was applied, and what (the door's words)."""


def finding_actor() -> str:
    """Who decides, proposes and approves from the CLI: the local user as the kernel knows this
    process, as a person."""
    return f"person:{local_actor()}"


class FindingBook(Protocol):
    def list(
        self, status: tuple[str, ...], kinds: tuple[str, ...]
    ) -> builtins.list[StoredFinding]: ...
    def get(self, ref: str) -> StoredFinding: ...
    def decide(
        self, refs: tuple[str, ...], status: Status, note: str
    ) -> builtins.list[StoredFinding]: ...
    def propose(self, chosen: builtins.list[StoredFinding], keep: dict[str, str]) -> FixReport: ...
    def steps(self, chosen: builtins.list[StoredFinding]) -> builtins.list[FixStep]: ...
    def approve(self, steps: builtins.list[FixStep]) -> builtins.list[Approved]: ...


class FolderFindings:
    """A vault folder's findings (SQLite), in this process."""

    def __init__(self, vault: Vault) -> None:
        from ..lint.findings import FindingStore

        self.vault = vault
        self.store = FindingStore(vault.db)

    def list(self, status: tuple[str, ...], kinds: tuple[str, ...]) -> builtins.list[StoredFinding]:
        return self.store.list(status=status, kinds=kinds)

    def get(self, ref: str) -> StoredFinding:
        return self.store.get(ref)

    def decide(
        self, refs: tuple[str, ...], status: Status, note: str
    ) -> builtins.list[StoredFinding]:
        from ..clock import iso
        from ..db import transaction

        with self.vault.write_lock(), transaction(self.vault.db):
            now = iso(self.vault.clock())
            return [self.store.decide(ref, status, finding_actor(), now, note) for ref in refs]

    def propose(self, chosen: builtins.list[StoredFinding], keep: dict[str, str]) -> FixReport:
        from ..lint.fixes import propose_fixes

        return propose_fixes(self.vault, chosen, finding_actor(), keep)

    def steps(self, chosen: builtins.list[StoredFinding]) -> builtins.list[FixStep]:
        from ..lint.fixes import fix_steps

        return fix_steps(self.vault, chosen)

    def approve(self, steps: builtins.list[FixStep]) -> builtins.list[Approved]:
        from ..store.apply import Approval, apply_batch

        selections: dict[str, list[int]] = {}
        for step in steps:
            selections.setdefault(step.plan_id, []).append(step.op)
        done = apply_batch(
            self.vault, list(selections.items()), Approval(finding_actor(), "person")
        )
        return [(r.plan_id, r.applied, r.message) for r in done]


class DatabaseFindings:
    """A PostgreSQL vault's findings, through the daemon's services there (the door under the
    vault's advisory lock for every write), with the database's credentials."""

    def __init__(self, findings: PgFindings) -> None:
        self.findings = findings

    def list(self, status: tuple[str, ...], kinds: tuple[str, ...]) -> builtins.list[StoredFinding]:
        return self.findings.find(status, kinds, None)

    def get(self, ref: str) -> StoredFinding:
        return self.findings.get(ref)

    def decide(
        self, refs: tuple[str, ...], status: Status, note: str
    ) -> builtins.list[StoredFinding]:
        return self.findings.decide_many(list(refs), status, finding_actor(), note)

    def propose(self, chosen: builtins.list[StoredFinding], keep: dict[str, str]) -> FixReport:
        return self.findings.propose_fixes([f.id for f in chosen], keep, finding_actor())

    def steps(self, chosen: builtins.list[StoredFinding]) -> builtins.list[FixStep]:
        return self.findings.fix_steps(chosen)

    def approve(self, steps: builtins.list[FixStep]) -> builtins.list[Approved]:
        done = self.findings.approve_steps(steps, finding_actor())
        return [(r.plan_id, r.applied, r.message) for r in done]


@contextmanager
def finding_book(
    ctx: click.Context, db_url: str | None, db_vault: str | None
) -> Iterator[FindingBook]:
    """The findings of ``--vault NAME`` of the database ``--database URL`` (given to this
    command or to ``affidavit findings`` before it), else of the vault folder."""
    db_url, db_vault = chosen(ctx, db_url, db_vault)
    if db_vault is None:
        with opened_vault(ctx) as vault:
            yield FolderFindings(vault)
        return
    from ..service.pg_findings import PgFindings

    with database_vault(db_url, db_vault) as pg:
        yield DatabaseFindings(PgFindings(pg))


__all__ = ["DatabaseFindings", "FindingBook", "FolderFindings", "finding_actor", "finding_book"]
