"""What runs after an ingest job's chunks on a PostgreSQL vault, and the ``lint`` job there — the
services SQLite's ingest and lint run (:mod:`affidavit.lint.runner`, :mod:`affidavit.lint.fixes`:
the same pair search, quote gate, finding store and fix plans), on the vault's schema through
:class:`~affidavit.storage.pg_sql.PgSql`.

The pass after an ingest (:class:`PgAfterIngest`): the findings the job's new claims raise
against older ones (a fact a newer version of a source changed: ``stale``, with a
``supersede_claim`` proposal that waits for a person; or a ``contradiction``), the count of
sources ingested since the last lint, and the automatic lint when ``lint.every_ingests`` is
reached. Each job gets it exactly once: it is worked out on one snapshot of the vault
(``REPEATABLE READ``, no lock held while it classifies), then written in **one transaction under
the job's claim** (:func:`~affidavit.jobs.pg_ingest.check_claim`) together with the job's
``after_ingest`` row (pg009). A worker that lost its lease writes nothing; one killed mid-pass
commits nothing of it, and the next claim of the job does the pass; one whose pass committed
leaves the row, and a re-run reads the pass's result from it instead of proposing again.

The lint job also runs the deterministic checks that derive from the database alone
(:mod:`.pg_checks`: broken links, orphan and empty pages, expiring plans) and the missing-link
finder. What PostgreSQL's lint does not run (docs/team.md): the checks of a folder's files (the
mirror's), of sources, quotes and support (``affidavit doctor --database``'s), a language model's
findings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from ..agents import is_agent
from ..clock import Clock, iso, utc_now
from ..config import Config
from ..errors import AffidavitError, PlanValidationError
from ..hashing import canonical_json, sha256_hex
from ..lint.candidates import Search, classify_pairs, pair_work
from ..lint.findings import FindingStore, StoredFinding, bump_counter
from ..lint.fixes import FixReport, fix_batches, fix_plan
from ..lint.quotes import QuoteGate
from ..lint.runner import (
    INGEST_COUNTER,
    LintReport,
    config_thresholds,
    judge_changed_facts,
    judge_pairs,
    record_pair_run,
    record_supersessions,
)
from ..plan.schema import parse_plan
from ..retract import pending_claims
from ..storage import pg_served as rows
from ..storage.jobs import Claim
from ..storage.pg_sql import PgSql
from ..storage.postgres import LOCK_CLASS, Conn, _q, insert_plan
from ..storage.postgres_jobs import PostgresJobStore
from .pg_ingest import check_claim

if TYPE_CHECKING:
    from ..storage.postgres_gate import PgSources

NONCE_HOURS = 24
LINT_ORIGIN = "lint"


@dataclass
class Worked:
    """What a pass worked out on its snapshot, for its fenced transaction to write."""

    stale: list[Any] = field(default_factory=list)
    """The supersession pass's kept findings."""
    lint: tuple[list[Any], list[dict[str, Any]]] | None = None
    """The automatic lint's kept and dropped findings, when it was due on the snapshot."""


def propose_fix_plans(
    conn: Conn,
    db: PgSql,
    schema: str,
    findings: list[StoredFinding],
    *,
    actor: str,
    config: Config,
    clock: Clock = utc_now,
    keep: dict[str, str] | None = None,
) -> FixReport:
    """:func:`affidavit.lint.fixes.propose_fixes` on a PostgreSQL vault, in the caller's
    transaction (which holds the vault's lock): each batch of fixes a plan with a fresh nonce,
    through the one gate, left pending for a person (never applied by the policy), its findings
    pointing at it. ``keep`` names, per contradiction, the claim kept (as SQLite's)."""
    from ..evidence import Verifier
    from ..gate.admission import admit
    from ..storage.postgres_gate import PgReads, PgSources

    report = FixReport()
    taken = pending_claims(db)  # a new version's proposals (as SQLite's propose_fixes)

    def pending(plan_id: str) -> bool:
        row = db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
        return row is not None and row[0] == "pending"

    store = FindingStore(db)
    agent = is_agent(actor, LINT_ORIGIN)
    for batch in fix_batches(findings, taken, pending, report, keep):
        now = clock()
        nonce = rows.issue_nonce(conn, schema, "lint-fix", now, timedelta(hours=NONCE_HOURS))
        try:
            with conn.transaction():  # a savepoint: a refused plan leaves nothing
                plan = parse_plan(fix_plan(nonce, batch))
                plan_json = canonical_json(plan.to_json())
                plan_id = sha256_hex(plan_json)
                rows.use_nonce(conn, schema, plan.nonce, plan_id, now)
                sources = PgSources(conn, schema)
                admission = admit(
                    PgReads(conn, schema), config, sources, Verifier(sources), plan, plan_id,
                    agent=agent,
                )  # fmt: skip
                if not admission.admitted_ops:
                    why = "; ".join(f"op {o.index + 1}: {o.reason}" for o in admission.ops)
                    raise PlanValidationError(f"no operation passes the gate: {why}"[:500])
                insert_plan(
                    conn, schema, plan_id, author=actor, origin=LINT_ORIGIN,
                    plan_json=plan_json, created_at=iso(now),
                    expires_at=iso(now + timedelta(hours=config.expiry_hours)),
                )  # fmt: skip
                rows.set_admission(conn, schema, plan_id, admission.to_json())
        except AffidavitError as exc:
            for fid, _ in batch:
                report.skipped[fid] = f"the fix plan was refused: {exc}"
            report.messages.append(str(exc))
            continue
        report.plans.append(plan_id)
        report.messages.append(f"plan {plan_id[:12]} waits in the inbox for a person")
        for fid, _ in batch:
            store.attach_plan(fid, plan_id)
            report.fixed[fid] = plan_id
    return report


class PgPass:
    """The fenced reads and writes both passes share, for one job's ``claim``."""

    def __init__(
        self,
        jobs: PostgresJobStore,
        claim: Claim,
        *,
        requested_by: str,
        config: Config | None = None,
        clock: Clock = utc_now,
        lease_seconds: float = 30.0,
    ) -> None:
        self.jobs = jobs
        self.storage = jobs.storage
        self.claim = claim
        self.schema = f"v_{claim.vault}"
        self.config = config or Config()
        self.clock = clock
        self.lease_seconds = lease_seconds
        self.actor = requested_by  # the fix plans are the requester's: a token's, an agent's

    @contextmanager
    def _snapshot(self) -> Iterator[tuple[Conn, PgSql]]:
        """One read-only snapshot of the vault (what SQLite's pass reads under its lock)."""
        with self.storage._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield conn, PgSql(conn, self.schema)

    @contextmanager
    def _fenced(self) -> Iterator[tuple[Conn, PgSql]]:
        """A transaction under the job's claim and the vault's writer lock (the door's: two
        passes record one finding, or propose for one claim, one after the other)."""
        key, _ = self.storage._vault(self.claim.vault)
        with self.storage._tx() as conn:
            # the lock first, then the job's row, as the door's chunk writes take them
            conn.execute("SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, key))
            check_claim(self.jobs, self.claim, conn, self.lease_seconds)
            yield conn, PgSql(conn, self.schema)

    def _gate(self, conn: Conn, db: PgSql) -> QuoteGate:
        from ..evidence import Verifier
        from ..storage.postgres_gate import PgSources

        sources = PgSources(conn, self.schema)
        return QuoteGate(db, sources, Verifier(sources))

    def _search(self, db: PgSql, involving: set[str] | None) -> Search:
        work = pair_work(db, config_thresholds(self.config), involving)
        return Search(pairs=classify_pairs(work))

    def propose_fixes(self, conn: Conn, db: PgSql, findings: list[StoredFinding]) -> FixReport:
        """:func:`propose_fix_plans` in the caller's fenced transaction, as the requester."""
        return propose_fix_plans(
            conn, db, self.schema, findings, actor=self.actor, config=self.config, clock=self.clock
        )


class PgAfterIngest(PgPass):
    """The pass after one ``ingest_stored`` job's chunks, done once per job."""

    def done(self) -> dict[str, Any] | None:
        """The pass's result, when a claim of this job committed it already."""
        with self.storage._tx() as conn:
            return self._recorded(conn)

    def _recorded(self, conn: Conn) -> dict[str, Any] | None:
        row = conn.execute(
            _q("SELECT result FROM {s}.after_ingest WHERE job_id = %s", self.schema),
            (self.claim.job_id,),
        ).fetchone()
        return None if row is None else dict(json.loads(row["result"]))

    def _ingested(self, conn: Conn) -> tuple[list[str], int]:
        """The plans this job applied, whole or in part (over all its attempts), and how many
        sources it read."""
        found = conn.execute(
            _q("SELECT plan_id, source_id, outcome FROM {s}.ingested_chunks WHERE job_id = %s "
               "ORDER BY source_id, start", self.schema), (self.claim.job_id,),
        ).fetchall()  # fmt: skip
        plans = [  # a plan the policy applied in part (its remainder waits) wrote claims too
            str(r["plan_id"])
            for r in found
            if r["outcome"] in ("applied", "partial") and r["plan_id"]
        ]
        return plans, len({r["source_id"] for r in found})

    def _new_claims(self, db: PgSql, plans: list[str]) -> set[str]:
        if not plans:
            return set()
        found = db.execute(
            "SELECT id FROM claims WHERE status = 'active' AND plan_id = ANY(?)", (plans,)
        ).fetchall()
        return {str(r[0]) for r in found}

    def _due(self, db: PgSql, sources: int) -> bool:
        every = int(self.config.get("lint.every_ingests"))
        if sources <= 0 or every <= 0:
            return False
        row = db.execute("SELECT value FROM counters WHERE name = ?", (INGEST_COUNTER,)).fetchone()
        return (int(row[0]) if row is not None else 0) + sources >= every

    def run(self) -> dict[str, Any]:
        """Do the pass (or read what it did); its result."""
        known = self.done()
        if known is not None:
            return known
        with self._snapshot() as (conn, db):
            plans, sources = self._ingested(conn)
            new = self._new_claims(db, plans)
            if not self.config.get("ingest.propose_supersessions"):
                new = set()
            due = self._due(db, sources)
            worked = Worked()
            if new or due:
                # one search for both passes when the lint is due (as SQLite's ingest shares it)
                search = self._search(db, None if due else new)
                gate = self._gate(conn, db)
                if new:
                    worked.stale = judge_changed_facts(gate, search.involving(new))
                if due:  # a whole-wiki run: its missing links too, as SQLite's
                    from .pg_checks import pg_missing_links

                    worked.lint = judge_pairs(gate, [*search.found(), *pg_missing_links(db)])
        return self._write(worked, sources)

    def _write(self, worked: Worked, sources: int) -> dict[str, Any]:
        with self._fenced() as (conn, db):
            known = self._recorded(conn)  # another claim of the job did it meanwhile
            if known is not None:
                return known
            now = iso(self.clock())
            result: dict[str, Any] = {"sources": sources, "supersessions": None, "lint": None}
            if worked.stale:
                ids = record_supersessions(db, now, worked.stale)
                store = FindingStore(db)
                stored = [store.get(fid) for fid in ids]
                stale = [s for s in stored if s.finding.kind == "stale"]
                fixes = self.propose_fixes(conn, db, stale) if stale else None
                result["supersessions"] = {
                    "findings": ids,
                    "plans": fixes.plans if fixes else [],
                }
            every = int(self.config.get("lint.every_ingests"))
            count = bump_counter(db, INGEST_COUNTER, sources) if sources > 0 else 0
            if worked.lint is not None and every > 0 and count >= every:
                report = record_pair_run(db, now, "auto", *worked.lint)
                result["lint"] = {
                    "run": report.run,
                    "open": report.open,
                    "new": len(report.new),
                    "counts": report.counts(),
                }
            conn.execute(
                _q("INSERT INTO {s}.after_ingest (job_id, fence, done_at, result) "
                   "VALUES (%s, %s, %s, %s)", self.schema),
                (self.claim.job_id, self.claim.fence, now, canonical_json(result)),
            )  # fmt: skip
        return result


class PgLint(PgPass):
    """A ``lint`` job on a PostgreSQL vault: the extractive finder over every pair of active
    claims, the quote gate, the findings recorded as SQLite's lint records them (a run of
    trigger ``job``), and with ``propose`` their fix plans in the inbox."""

    def run(self, propose: bool) -> dict[str, Any]:
        from .pg_checks import PG_CHECKS, pg_missing_links, run_pg_checks

        with self._snapshot() as (conn, db):
            found = [*self._search(db, None).found(), *pg_missing_links(db)]
            gate = self._gate(conn, db)
            kept, dropped = judge_pairs(gate, found)  # the checks re-read what the gate read
            checked = run_pg_checks(db, self.config, self.clock, cast("PgSources", gate.store))
        with self._fenced() as (conn, db):
            now = iso(self.clock())
            report: LintReport = record_pair_run(db, now, "job", kept, dropped)
            store = FindingStore(db)  # the checks' findings in the same run, as a folder's lint
            for finding in checked:
                fid, new = store.record(report.run, now, finding)
                if new:
                    report.new.append(fid)
            for kind in PG_CHECKS:  # a check's finding it no longer sees is resolved
                report.resolved += store.resolve_unseen_of(report.run, now, "check", kind)
            report.open_counts = store.counts()
            if propose:
                report.fixes = self.propose_fixes(conn, db, store.list())
            report.findings = store.list()
        data = report.to_json()
        data["checks"] = list(PG_CHECKS)
        data["not_run"] = (
            "the checks of a folder's files (the mirror's: `affidavit mirror --check`), of "
            "vectors (none on PostgreSQL) and a model's findings do not run on PostgreSQL "
            "(docs/team.md)"
        )
        return data


__all__ = ["PgAfterIngest", "PgLint", "PgPass", "propose_fix_plans"]
