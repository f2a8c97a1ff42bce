"""Lint findings: what a check or a model found, the quotes that show it, and its status.

A finding's id is a fingerprint of its kind and what it is about (claims, pages, subject), so the
same problem found by two runs is one finding: the later run refreshes it, a dismissed finding
stays dismissed, and a check finding that a complete run no longer reports is resolved.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import AffidavitError, NotFoundError
from ..hashing import canonical_json, sha256_hex
from ..storage.queries import Sql, like_prefix
from ..store import audit

CheckKind = Literal[
    "broken_link",
    "orphan_page",
    "empty_page",
    "index_drift",
    "log_drift",
    "context_over_cap",
    "source_tampered",
    "evidence_unverified",
    "unsupported_claim",
    "unsupported_page_words",
    "file_drift",
    "stale_embedding",
    "plan_expiring",
]
"""Kinds of the deterministic checks (SPEC W9): found by re-deriving, never by a model."""
ModelKind = Literal["contradiction", "stale", "duplicate", "missing_page", "missing_link"]
"""Kinds a model (or the extractive engine) may propose; each must show verified quotes."""
FindingKind = CheckKind | ModelKind
ENDS_NOTHING: tuple[str, ...] = ("orphan_page", "missing_link")
"""Kinds whose fix only adds (a link): the only kinds ``findings approve --all --kind`` takes.
The fixes of the others (stale, duplicate, contradiction, evidence_unverified) supersede or
retract a claim, so each must be listed by id after it has been read."""
CHECK_KINDS: tuple[str, ...] = get_args(CheckKind)
MODEL_KINDS: tuple[str, ...] = get_args(ModelKind)
Severity = Literal["error", "warning", "info"]
Status = Literal["open", "dismissed", "resolved"]
STATUSES: tuple[Status, ...] = ("open", "dismissed", "resolved")


class FindingError(AffidavitError):
    """A finding can't be changed as asked (unknown status, already decided...)."""


class FindingQuote(BaseModel):
    """One quote a finding rests on, as the host found it again (or failed to)."""

    model_config = ConfigDict(extra="forbid")

    quote: str
    claim_id: str | None = None
    source_id: str | None = None
    verified: bool = False
    start: int | None = None
    end: int | None = None
    location: str = ""
    context: str = ""
    """The text around the quote in its source, for showing it in context."""
    reason: str = ""
    """Why it did not verify (empty when verified)."""


class Finding(BaseModel):
    """One problem. ``fix`` describes the plan that would fix it, when one can be generated."""

    model_config = ConfigDict(extra="forbid")

    kind: FindingKind
    severity: Severity = "warning"
    subject: str
    message: str
    quotes: list[FindingQuote] = Field(default_factory=list)
    claims: list[str] = Field(default_factory=list)
    pages: list[str] = Field(default_factory=list)
    fix: dict[str, Any] | None = None
    fix_hint: str = ""
    """What the user can do by hand (shown when no fix plan can be generated)."""
    why: dict[str, str] = Field(default_factory=dict)
    """Why it was raised, as data. A disagreement (stale, contradiction) of the extractive
    engine: ``subject`` (the words the two claims share that make them about one thing),
    ``fact`` (``number``, ``date``, ``name``, ``negation``, ``antonym``, or ``reworded`` for a
    newer source's restatement) and ``a`` / ``b`` (what each claim, in ``claims`` order, says).
    The message says the same in words. Not part of the fingerprint."""
    origin: Literal["", "check", "extractive", "model"] = ""
    """Who found it: a deterministic check, the extractive finder (which looks at the whole wiki
    every run, so what it no longer finds is resolved) or a language model (which sees a sample,
    so its findings stay open until dismissed or their claims change). Empty: by kind."""

    @model_validator(mode="after")
    def _origin(self) -> Finding:
        if not self.origin:
            self.origin = "model" if self.kind in MODEL_KINDS else "check"
        return self

    @property
    def fingerprint(self) -> str:
        body = [self.kind, self.subject, sorted(self.claims), sorted(self.pages)]
        return "f-" + sha256_hex(canonical_json(body))[:16]


class StoredFinding(BaseModel):
    """A finding as recorded in the database, with its id and status."""

    id: str
    finding: Finding
    status: Status
    first_seen: str
    last_seen: str
    decided_at: str | None = None
    decided_by: str | None = None
    note: str = ""
    plan_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.finding.model_dump(mode="json")
        data.update(
            id=self.id,
            origin=self.finding.origin,
            status=self.status,
            first_seen=self.first_seen,
            last_seen=self.last_seen,
            decided_at=self.decided_at,
            decided_by=self.decided_by,
            note=self.note,
            plan_id=self.plan_id,
        )
        return data


def _stored(row: Any) -> StoredFinding:
    finding = Finding(
        kind=row["kind"],
        severity=row["severity"],
        subject=row["subject"],
        message=row["message"],
        quotes=[FindingQuote(**q) for q in json.loads(row["quotes"])],
        claims=json.loads(row["claims"]),
        pages=json.loads(row["pages"]),
        fix=json.loads(row["fix"]) if row["fix"] else None,
        fix_hint=row["fix_hint"],
        why=json.loads(row["why"] or "{}"),
        origin=row["origin"],
    )
    return StoredFinding(
        id=row["id"],
        finding=finding,
        status=row["status"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
        decided_at=row["decided_at"],
        decided_by=row["decided_by"],
        note=row["note"],
        plan_id=row["plan_id"],
    )


class FindingStore:
    """Reads and writes ``findings`` and ``lint_runs``; callers hold the transaction. ``db``: a
    vault's SQLite connection, or a PostgreSQL vault's (:class:`~affidavit.storage.pg_sql.PgSql`)."""

    def __init__(self, db: Sql) -> None:
        self.db = db

    def start_run(self, at: str, trigger: str, provider: str) -> int:
        row = self.db.execute(
            "INSERT INTO lint_runs (started_at, trigger, provider) VALUES (?, ?, ?) RETURNING id",
            (at, trigger, provider),
        ).fetchone()
        return int(row[0])

    def finish_run(
        self, run: int, at: str, kept: int, dropped: int, detail: dict[str, Any]
    ) -> None:
        self.db.execute(
            "UPDATE lint_runs SET finished_at = ?, kept = ?, dropped = ?, detail = ? WHERE id = ?",
            (at, kept, dropped, canonical_json(detail), run),
        )

    def record(self, run: int, at: str, finding: Finding) -> tuple[str, bool]:
        """Store or refresh ``finding``; returns its id and whether it is new."""
        fid = finding.fingerprint
        quotes = json.dumps([q.model_dump(mode="json") for q in finding.quotes])
        fix = canonical_json(finding.fix) if finding.fix is not None else None
        row = self.db.execute("SELECT status FROM findings WHERE id = ?", (fid,)).fetchone()
        if row is None:
            self.db.execute(
                "INSERT INTO findings (id, kind, origin, severity, subject, message, quotes, "
                "claims, pages, fix, fix_hint, why, status, first_run, last_run, first_seen, "
                "last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?)",
                (
                    fid,
                    finding.kind,
                    finding.origin,
                    finding.severity,
                    finding.subject,
                    finding.message,
                    quotes,
                    json.dumps(finding.claims),
                    json.dumps(finding.pages),
                    fix,
                    finding.fix_hint,
                    canonical_json(finding.why),
                    run,
                    run,
                    at,
                    at,
                ),
            )
            return fid, True
        reopen = row["status"] == "resolved"
        self.db.execute(
            "UPDATE findings SET severity = ?, message = ?, quotes = ?, fix = ?, fix_hint = ?, "
            "why = ?, last_run = ?, last_seen = ?, status = CASE WHEN ? THEN 'open' ELSE status END, "
            "plan_id = CASE WHEN ? THEN NULL ELSE plan_id END WHERE id = ?",
            (
                finding.severity,
                finding.message,
                quotes,
                fix,
                finding.fix_hint,
                canonical_json(finding.why),
                run,
                at,
                reopen,
                reopen,
                fid,
            ),
        )
        return fid, reopen

    def resolve_unseen(self, run: int, at: str, origin: str) -> int:
        """Mark open findings of ``origin`` not seen in ``run`` as resolved; returns how many."""
        cur = self.db.execute(
            "UPDATE findings SET status = 'resolved', decided_at = ?, decided_by = 'lint' "
            "WHERE status = 'open' AND origin = ? AND last_run < ?",
            (at, origin, run),
        )
        return cur.rowcount

    def resolve_unseen_of(
        self, run: int, at: str, origin: str, kind: str, subjects: set[str] | None = None
    ) -> int:
        """Mark open findings of ``origin`` and ``kind`` not seen in ``run`` as resolved, only
        those about one of ``subjects`` when given (what an incremental run looked at again);
        returns how many."""
        only = "" if subjects is None else " AND subject IN (SELECT value FROM json_each(?))"
        args: list[Any] = [at, origin, kind, run]
        if subjects is not None:
            args.append(json.dumps(sorted(subjects)))
        cur = self.db.execute(
            "UPDATE findings SET status = 'resolved', decided_at = ?, decided_by = 'lint' "
            f"WHERE status = 'open' AND origin = ? AND kind = ? AND last_run < ?{only}",
            args,
        )
        return cur.rowcount

    def resolve_dead_claims(self, at: str) -> int:
        """Resolve open model findings about a claim that is no longer active."""
        rows = self.db.execute(
            "SELECT id, claims FROM findings WHERE status = 'open' AND origin != 'check'"
        ).fetchall()
        done = 0
        for row in rows:
            ids = json.loads(row["claims"])
            if not ids:
                continue
            marks = ",".join("?" * len(ids))
            live = self.db.execute(
                f"SELECT count(*) FROM claims WHERE status = 'active' AND id IN ({marks})", ids
            ).fetchone()[0]
            if live < len(ids):
                self.db.execute(
                    "UPDATE findings SET status = 'resolved', decided_at = ?, "
                    "decided_by = 'lint', note = 'a claim it is about is no longer active' "
                    "WHERE id = ?",
                    (at, row["id"]),
                )
                done += 1
        return done

    def list(
        self,
        status: tuple[str, ...] = ("open",),
        kinds: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[StoredFinding]:
        sql = f"SELECT * FROM findings WHERE status IN ({','.join('?' * len(status))})"
        args: list[Any] = list(status)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        sql += (
            " ORDER BY CASE severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, "
            "kind, subject, id"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_stored(row) for row in self.db.execute(sql, args)]

    def counts(self, status: tuple[str, ...] = ("open",)) -> dict[str, int]:
        """How many findings of ``status`` there are, by kind (sorted): what ``list`` would
        count, without reading the rows."""
        rows = self.db.execute(
            f"SELECT kind, count(*) FROM findings WHERE status IN ({','.join('?' * len(status))}) "
            "GROUP BY kind ORDER BY kind",
            status,
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def page(
        self,
        status: str = "open",
        kind: str = "",
        severity: str = "",
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[tuple[StoredFinding, ...], int, dict[str, int]]:
        """One page of the findings with ``status`` (and ``kind``, ``severity`` when given), in
        :meth:`list`'s order; the number that match; and how many of each kind have ``status``."""
        where, args = "status = ?", [status]
        if kind:
            where, args = where + " AND kind = ?", [*args, kind]
        if severity:
            where, args = where + " AND severity = ?", [*args, severity]
        total = int(
            self.db.execute(f"SELECT COUNT(*) FROM findings WHERE {where}", args).fetchone()[0]
        )
        rows = self.db.execute(
            f"SELECT * FROM findings WHERE {where} ORDER BY CASE severity WHEN 'error' THEN 0 "
            "WHEN 'warning' THEN 1 ELSE 2 END, kind, subject, id LIMIT ? OFFSET ?",
            [*args, max(1, limit), max(0, offset)],
        )
        kinds = {
            str(r[0]): int(r[1])
            for r in self.db.execute(
                "SELECT kind, COUNT(*) FROM findings WHERE status = ? GROUP BY kind ORDER BY kind",
                (status,),
            )
        }
        return tuple(_stored(row) for row in rows), total, kinds

    def resolve_id(self, ref: str) -> str:
        ref = ref.strip()
        rows = self.db.execute(  # a prefix, literally (like_prefix)
            "SELECT id FROM findings WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like_prefix(ref),)
        ).fetchall()
        if not rows:
            raise NotFoundError(f"no finding {ref!r}. `affidavit findings` lists them.")
        if len(rows) > 1:
            raise NotFoundError(f"finding id {ref!r} is ambiguous; give more characters.")
        return str(rows[0]["id"])

    def get(self, ref: str) -> StoredFinding:
        fid = self.resolve_id(ref)
        row = self.db.execute("SELECT * FROM findings WHERE id = ?", (fid,)).fetchone()
        return _stored(row)

    def decide(
        self, ref: str, status: Status, actor: str, at: str, note: str = ""
    ) -> StoredFinding:
        """Dismiss, resolve or reopen a finding, with an audit entry in the vault's hash chain
        (SQLite's or PostgreSQL's: the caller holds the transaction and the vault's writer lock,
        so both writes commit together and no other entry takes the same number)."""
        if status not in STATUSES:
            raise FindingError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        current = self.get(ref)
        self.db.execute(
            "UPDATE findings SET status = ?, decided_at = ?, decided_by = ?, note = ? WHERE id = ?",
            (status, at, actor, note, current.id),
        )
        audit.append(
            self.db,
            at,
            f"finding_{status}",
            current.plan_id,
            actor,
            {"finding": current.id, "kind": current.finding.kind, "note": note},
        )
        return self.get(current.id)

    def attach_plan(self, finding_id: str, plan_id: str) -> None:
        self.db.execute("UPDATE findings SET plan_id = ? WHERE id = ?", (plan_id, finding_id))


def bump_counter(db: Sql, name: str, by: int = 1) -> int:
    """Add ``by`` to a persistent counter and return its new value (callers hold the txn)."""
    db.execute(
        "INSERT INTO counters (name, value) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET value = counters.value + excluded.value",
        (name, by),
    )
    return int(db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0])


def reset_counter(db: Sql, name: str) -> None:
    db.execute(
        "INSERT INTO counters (name, value) VALUES (?, 0) "
        "ON CONFLICT(name) DO UPDATE SET value = 0",
        (name,),
    )
