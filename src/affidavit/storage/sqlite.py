"""The storage contract over today's SQLite vault, unchanged: its migrations (:mod:`affidavit.db`),
its single-writer lock (:meth:`Vault.write_lock`), its transactions (``BEGIN IMMEDIATE``) and its
audit log (:mod:`affidavit.store.audit`). Nothing here adds a table or changes what the door
writes: a batch's number is derived from the audit log the door already keeps (the n-th distinct
``batch`` among the "applied" entries), gap-free because SQLite has one writer at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import db as dbmod
from ..errors import ConflictError, IntegrityError
from ..store import audit as auditlog
from ..vault import Vault
from .base import (
    AuditEntry,
    BatchRecord,
    PlanRow,
    check_batch_id,
    check_text,
    group_batches,
    recheck,
)
from .content import (
    ClaimRecord,
    PageRecord,
    SourceRecord,
    claim_records,
    page_record,
    verified_bytes,
    verified_text,
)


class SQLiteDoor:
    """The door's step on SQLite: the caller holds the vault's lock and an open transaction."""

    def __init__(self, vault: Vault, batch_id: str) -> None:
        self.vault = vault
        self.batch_id = check_batch_id(batch_id)
        self.applied: list[str] = []
        self.sealed: int | None = None
        self._base = int(vault.db.execute("SELECT coalesce(max(seq), 0) FROM audit").fetchone()[0])

    def plan(self, plan_id: str) -> PlanRow | None:
        row = self.vault.db.execute(
            "SELECT id, author, origin, status, expires_at FROM plans WHERE id = ?", (plan_id,)
        ).fetchone()
        return None if row is None else PlanRow(*map(str, row))

    def mark_applied(
        self, plan_id: str, *, now: str, actor: str, detail: Mapping[str, Any]
    ) -> AuditEntry:
        if self.sealed is not None:
            raise ConflictError(f"batch {self.batch_id} is sealed; open a new one.")
        recheck(self.plan(plan_id), plan_id, now)
        db = self.vault.db
        db.execute(
            "UPDATE plans SET status = 'applied', decided_at = ?, decided_by = ? WHERE id = ?",
            (check_text("time", now), check_text("actor", actor), plan_id),
        )
        db.execute("DELETE FROM slug_reservations WHERE plan_id = ?", (plan_id,))
        auditlog.append(db, now, "applied", plan_id, actor, {**detail, "batch": self.batch_id})
        self.applied.append(plan_id)
        row = db.execute("SELECT * FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        return AuditEntry.of(row)

    def seal(self) -> int:
        if self.sealed is not None:
            return self.sealed
        if not self.applied:
            raise ConflictError("a batch that applied no plan has no number; apply a plan first.")
        if _first_entry(self.vault, self.batch_id, self._base) is not None:
            raise ConflictError(f"batch {self.batch_id} is already recorded; use a new batch id.")
        self.sealed = _batches_upto(self.vault, self._base) + 1
        return self.sealed


def _first_entry(vault: Vault, batch_id: str, upto: int | None = None) -> int | None:
    """The audit seq of the batch's first "applied" entry (recovery's test of a commit)."""
    row = vault.db.execute(
        "SELECT min(seq) FROM audit WHERE action = 'applied' "
        "AND json_extract(detail, '$.batch') = ? AND seq <= ?",
        (batch_id, upto if upto is not None else 2**62),
    ).fetchone()
    return None if row[0] is None else int(row[0])


def _batches_upto(vault: Vault, seq: int) -> int:
    """How many batches have "applied" entries at or before audit entry ``seq`` (an entry
    from before batches counts as a batch of its own)."""
    row = vault.db.execute(
        "SELECT count(DISTINCT json_extract(detail, '$.batch')) "
        "+ count(*) FILTER (WHERE json_extract(detail, '$.batch') IS NULL) "
        "FROM audit WHERE action = 'applied' AND seq <= ?",
        (seq,),
    ).fetchone()
    return int(row[0])


class SQLiteStorage:
    """One SQLite vault as a :class:`~affidavit.storage.base.Storage` named ``name``."""

    backend = "sqlite"

    def __init__(self, vault: Vault, name: str = "default", *, owned: bool = False) -> None:
        self.vault = vault
        self.name = name
        self._owned = owned

    @classmethod
    def open(cls, root: Path, name: str = "default") -> SQLiteStorage:
        from ..vault import open_vault

        return cls(open_vault(root), name, owned=True)

    def _check(self, vault: str) -> None:
        if vault != self.name:
            raise ConflictError(
                f"this SQLite database holds one vault, {self.name!r}, not {vault!r}; "
                "several vaults in one database need PostgreSQL (docs/storage.md)."
            )

    def migrate(self) -> list[str]:
        return dbmod.migrate(self.vault.db)

    def create_vault(self, name: str, owner: str) -> None:
        self._check(name)

    def vaults(self) -> list[str]:
        return [self.name]

    def propose(
        self,
        vault: str,
        plan_id: str,
        *,
        author: str,
        origin: str,
        plan_json: str,
        created_at: str,
        expires_at: str,
    ) -> None:
        self._check(vault)
        values = (plan_id, author, origin, plan_json, created_at, expires_at)
        names = ("plan id", "author", "origin", "plan", "created_at", "expires_at")
        for field, value in zip(names, values, strict=True):
            check_text(field, value)
        with self.vault.write_lock(), dbmod.transaction(self.vault.db) as db:
            db.execute(
                "INSERT INTO plans (id, author, origin, plan_json, status, admission, "
                "created_at, expires_at) VALUES (?, ?, ?, ?, 'pending', '{}', ?, ?)",
                values,
            )

    def plan(self, vault: str, plan_id: str) -> PlanRow | None:
        self._check(vault)
        row = self.vault.db.execute(
            "SELECT id, author, origin, status, expires_at FROM plans WHERE id = ?", (plan_id,)
        ).fetchone()
        return None if row is None else PlanRow(*map(str, row))

    @contextmanager
    def door(self, vault: str, batch_id: str) -> Iterator[SQLiteDoor]:
        self._check(vault)
        with self.vault.write_lock(), dbmod.transaction(self.vault.db):
            door = SQLiteDoor(self.vault, batch_id)
            yield door
            if door.applied and door.sealed is None:
                door.seal()

    def committed(self, vault: str, batch_id: str) -> int | None:
        self._check(vault)
        first = _first_entry(self.vault, batch_id)
        return None if first is None else _batches_upto(self.vault, first)

    def audit(self, vault: str) -> list[AuditEntry]:
        self._check(vault)
        rows = self.vault.db.execute("SELECT * FROM audit ORDER BY seq").fetchall()
        return [AuditEntry.of(row) for row in rows]

    def batches(self, vault: str, after: int = 0) -> list[BatchRecord]:
        self._check(vault)
        with dbmod.read_snapshot(self.vault.db):
            rows = self.vault.db.execute(
                "SELECT * FROM audit WHERE action = 'applied' ORDER BY seq"
            ).fetchall()
        groups = group_batches([AuditEntry.of(row) for row in rows])
        return [
            BatchRecord(seq, batch_id, tuple(entries))
            for seq, (batch_id, entries) in enumerate(groups, 1)
            if seq > after
        ]

    def verify_audit(self, vault: str) -> list[str]:
        self._check(vault)
        return auditlog.verify_chain(self.vault.db)

    # --- the wiki's content, read (written by today's door, store/apply.py) -------------------

    def _source_row(self, source_id: str) -> Any:
        row = self.vault.db.execute(
            "SELECT * FROM sources WHERE id = ?", (check_text("source id", source_id),)
        ).fetchone()
        if row is None:
            raise ConflictError(f"no source {source_id[:12]} in this vault; add it first.")
        return row

    def _file(self, source_id: str, relpath: str) -> bytes:
        from ..store.paths import read_inside

        try:  # a path from the database: W10
            return read_inside(self.vault.base, relpath, under="sources")
        except FileNotFoundError:
            raise IntegrityError(
                f"source {source_id[:12]}'s file {relpath} is missing; run `affidavit doctor`."
            ) from None

    def source(self, vault: str, source_id: str) -> SourceRecord:
        self._check(vault)
        row = self._source_row(source_id)
        return SourceRecord(
            str(row["id"]), str(row["origin"]), str(row["name"]), str(row["media_type"]),
            str(row["trust"]), str(row["status"]), str(row["added_at"]), int(row["size_bytes"]),
            int(row["text_chars"]),
        )  # fmt: skip

    def source_bytes(self, vault: str, source_id: str) -> bytes:
        """The source's original bytes (its file under sources/), re-hashed against its id."""
        self._check(vault)
        row = self._source_row(source_id)
        return verified_bytes(str(row["id"]), self._file(str(row["id"]), row["original_file"]))

    def source_text(self, vault: str, source_id: str) -> str:
        """The source's extracted text, re-hashed against ``text_sha256`` (and its bytes first,
        as on PostgreSQL)."""
        self.source_bytes(vault, source_id)
        row = self._source_row(source_id)
        data = self._file(str(row["id"]), row["text_file"])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")  # fails the hash below, naming the source
        return verified_text(str(row["id"]), text, str(row["text_sha256"]))

    def page(self, vault: str, slug: str) -> PageRecord | None:
        """The page with its claims in order and their evidence, every quote checked against
        its source's (re-hashed) text at its offsets; None when there is no such page."""
        self._check(vault)
        db = self.vault.db
        with dbmod.read_snapshot(db):
            page = db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()
            if page is None:
                return None
            claims = db.execute(
                "SELECT * FROM claims WHERE page_slug = ? ORDER BY position", (slug,)
            ).fetchall()
            evidence = db.execute(
                'SELECT e.claim_id, e.idx, e.source_id, e.quote, e.start, e."end", e.location '
                "FROM evidence e JOIN claims c ON c.id = e.claim_id WHERE c.page_slug = ? "
                "ORDER BY e.claim_id, e.idx",
                (slug,),
            ).fetchall()
        texts: dict[str, str] = {}

        def text_of(source_id: str) -> str:
            if source_id not in texts:
                texts[source_id] = self.source_text(vault, source_id)
            return texts[source_id]

        return page_record(page, claims, evidence, text_of)

    def context(self, vault: str) -> tuple[ClaimRecord, ...]:
        """The context's active entries in order, with their evidence, checked as a page's."""
        self._check(vault)
        db = self.vault.db
        with dbmod.read_snapshot(db):
            claims = db.execute(
                "SELECT * FROM claims WHERE page_slug = '' AND status = 'active' "
                "ORDER BY position, rowid"
            ).fetchall()
            evidence = db.execute(
                'SELECT e.claim_id, e.idx, e.source_id, e.quote, e.start, e."end", e.location '
                "FROM evidence e JOIN claims c ON c.id = e.claim_id "
                "WHERE c.page_slug = '' AND c.status = 'active' ORDER BY e.claim_id, e.idx"
            ).fetchall()
        texts: dict[str, str] = {}

        def text_of(source_id: str) -> str:
            if source_id not in texts:
                texts[source_id] = self.source_text(vault, source_id)
            return texts[source_id]

        return claim_records(claims, evidence, text_of)

    def context_snapshots(self, vault: str) -> list[tuple[str, str]]:
        """Every stored ``context.md`` (W6) as (plan id, content), oldest first."""
        from ..plan.snapshots import all_texts

        self._check(vault)
        return all_texts(self.vault.db)

    def close(self) -> None:
        if self._owned:
            self.vault.close()
