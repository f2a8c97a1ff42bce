"""``affidavit doctor --database URL --vault NAME``: the checks of :mod:`affidavit.doctor` on a
vault of a PostgreSQL database, re-derived from the database alone.

On one consistent snapshot of the vault (``REPEATABLE READ``, read only: a batch committed
meanwhile is not half seen) it checks that

- every source's bytes re-hash to its id and its text to ``text_sha256`` (sources);
- every active claim's quotes are found again at their recorded offsets (evidence), through the
  verifier the gate uses (:func:`affidavit.doctor.quote_row_problems`);
- every active claim's text is still supported by its quotes under the current support check
  (W11, :func:`affidavit.support.audit.rejudge`, as on SQLite);
- the audit hash chain is intact, and the batches are 1..n without a gap, each one the plans of
  its "applied" audit entries, every applied plan in exactly one batch, the batch counter at the
  last batch (the door's exactly-once record);
- with ``--mirror DIR``, the folder is the vault's mirror (:func:`affidavit.mirror.run.check`).

What SQLite's doctor also does and this one does not: comparing a vault folder's wiki/ and git
(a database vault's files are its mirror's: ``--mirror``), replaying every applied plan
(:mod:`affidavit.store.replay` reads SQLite's packed plans), and the search index and privacy
checks (a daemon's index is rebuilt from the batch sequence).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .doctor import DoctorReport, Finding, QuoteProblem, SourceProblem, quote_row_problems
from .errors import AffidavitError

if TYPE_CHECKING:
    from .config import Config
    from .evidence import Verifier
    from .storage.postgres import Conn, PostgresStorage
    from .storage.postgres_gate import PgSources

_EVIDENCE = (
    'SELECT e.claim_id, c.page_slug, e.idx, e.source_id, e.quote, e.start, e."end", '
    "e.location FROM evidence e JOIN claims c ON c.id = e.claim_id "
    "WHERE c.status = 'active' ORDER BY e.claim_id, e.idx"
)


def run_pg_doctor(
    storage: PostgresStorage, vault: str, config: Config, mirror: Path | None = None
) -> DoctorReport:
    """Every check above on vault ``vault``; findings name what disagrees and the fix."""
    from .evidence import Verifier
    from .storage.pg_sql import PgSql
    from .storage.postgres_gate import PgSources

    report = DoctorReport()
    _, schema = storage._vault(vault)
    with storage._tx() as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        db = PgSql(conn, schema)
        sources = PgSources(conn, schema)
        _check_sources(db, sources, report)
        count, quotes = pg_quote_problems(db, Verifier(sources))
        report.counts["quotes"] = count
        for q in quotes:
            report.findings.append(
                Finding(
                    "evidence",
                    f"claim {q.claim_id[:12]} quote {q.idx}",
                    q.reason,
                    "restore the database from a backup (`pg_restore`): a stored row was altered",
                )
            )
        _check_support(db, sources, config, report)
        _check_audit(db, report)
        _check_batches(conn, schema, report)
    if not any(f.check in ("audit", "batches") for f in report.findings):
        _check_batch_records(storage, vault, report)
    if mirror is not None:
        _check_mirror(storage, vault, mirror, report)
    return report


def pg_source_problems(db: Any, sources: PgSources) -> tuple[int, list[SourceProblem]]:
    """:func:`affidavit.doctor.source_problems` on a PostgreSQL vault (``db`` its
    :class:`~affidavit.storage.pg_sql.PgSql`): every source's bytes re-hashed to its id and its
    text to ``text_sha256``; how many sources there are and the problems (all ``tampered``: a
    row has no file mode to be writable), by source id. Doctor's sources check and lint's
    ``source_tampered`` (:mod:`affidavit.jobs.pg_checks`) both read it."""
    ids = [str(r[0]) for r in db.execute("SELECT id FROM sources ORDER BY id").fetchall()]
    problems = [
        SourceProblem(source_id, message, True)
        for source_id in ids
        for message in sources.check_integrity(source_id)
    ]
    return len(ids), problems


def pg_quote_problems(db: Any, verifier: Verifier) -> tuple[int, list[QuoteProblem]]:
    """:func:`affidavit.doctor.quote_problems` on a PostgreSQL vault: every quote of every
    active claim found again at its recorded offsets (doctor's evidence check and lint's
    ``evidence_unverified``)."""
    return quote_row_problems(verifier, db.execute(_EVIDENCE).fetchall())


def _check_sources(db: Any, sources: PgSources, report: DoctorReport) -> None:
    report.counts["sources"], problems = pg_source_problems(db, sources)
    for problem in problems:
        report.findings.append(
            Finding(
                "sources",
                problem.source_id[:12],
                problem.message,
                "restore the source's row from a backup (`pg_restore`); the claims citing "
                "it are refused by the gate until then",
            )
        )


def _check_support(db: Any, sources: Any, config: Config, report: DoctorReport) -> None:
    from .support import UNSUPPORTED, SupportChecker, load_model
    from .support.audit import rejudge

    try:
        found = rejudge(db, sources, SupportChecker(load_model(config)))
    except AffidavitError as exc:
        report.findings.append(Finding("support", "check", str(exc), "see the message"))
        return
    report.counts["claims_support_checked"] = found.checked
    report.counts["claims_uncertain"] = sum(p.verdict != UNSUPPORTED for p in found.problems)
    for p in found.problems:
        if p.verdict == UNSUPPORTED:
            report.findings.append(
                Finding(
                    "support",
                    f"claim {p.claim_id[:12]}",
                    f"{p.text!r} is not supported by its quotes: {p.reason}",
                    "retract it or supersede it with a claim its quotes support (a plan through "
                    "`affidavit propose --database URL --vault NAME`)",
                )
            )
    report.notes += [f"support: {line}" for line in found.lines()]


def _check_audit(db: Any, report: DoctorReport) -> None:
    from .store.audit import verify_chain

    report.counts["audit_entries"] = int(db.execute("SELECT count(*) FROM audit").fetchone()[0])
    for problem in verify_chain(cast(Any, db)):
        report.findings.append(
            Finding("audit", "chain", problem, "restore the database from a backup (`pg_restore`)")
        )


def _check_batches(conn: Conn, schema: str, report: DoctorReport) -> None:
    """The door's exactly-once record: batches 1..n, the counter at n, each applied plan in one
    batch and each batch's plans applied."""
    from .storage.postgres import _q

    fix = "restore the database from a backup (`pg_restore`)"
    seqs = [int(r["seq"]) for r in conn.execute(_q("SELECT seq FROM {s}.batches ORDER BY seq",
                                                     schema)).fetchall()]  # fmt: skip
    report.counts["batches"] = len(seqs)
    for n, seq in enumerate(seqs, start=1):
        if seq != n:
            report.findings.append(
                Finding("batches", f"batch {n}", f"missing from the sequence (next is {seq})", fix)
            )
            break
    row = conn.execute(_q("SELECT last FROM {s}.batch_counter", schema)).fetchone()
    last = int(row["last"]) if row is not None else -1
    if last != (seqs[-1] if seqs else 0):
        report.findings.append(
            Finding(
                "batches",
                "counter",
                f"the batch counter is at {last}, the last batch is {seqs[-1] if seqs else 0}",
                fix,
            )
        )
    in_batches: Counter[str] = Counter()
    for r in conn.execute(_q("SELECT plans FROM {s}.batches", schema)).fetchall():
        in_batches.update(str(p) for p in json.loads(r["plans"]))
    applied = {
        str(r["id"])
        for r in conn.execute(
            _q("SELECT id FROM {s}.plans WHERE status = 'applied'", schema)
        ).fetchall()
    }
    for plan_id, times in sorted(in_batches.items()):
        if times > 1:
            report.findings.append(
                Finding(
                    "batches", f"plan {plan_id[:12]}", f"in {times} batches (applied twice)", fix
                )
            )
        if plan_id not in applied:
            report.findings.append(
                Finding("batches", f"plan {plan_id[:12]}", "in a batch but not applied", fix)
            )
    for plan_id in sorted(applied - set(in_batches)):
        report.findings.append(
            Finding("batches", f"plan {plan_id[:12]}", "applied but in no batch", fix)
        )


def _check_batch_records(storage: PostgresStorage, vault: str, report: DoctorReport) -> None:
    """Each batch the plans of its own "applied" audit entries, in order (what the mirror and
    every daemon's index follow)."""
    from .errors import IntegrityError

    try:
        storage.batches(vault)
    except IntegrityError as exc:
        report.findings.append(
            Finding("batches", "audit", str(exc), "restore the database from a backup")
        )


def _check_mirror(storage: PostgresStorage, vault: str, folder: Path, report: DoctorReport) -> None:
    from .mirror.run import check

    found = check(storage, vault, folder)
    report.counts["mirror_batch"] = found.mirror_batch
    for problem in found.problems:
        if " by hand (kept;" in problem:
            fix = (
                f"keep it by proposing it through the vault (`affidavit propose --database URL "
                f"--vault {vault}`), or drop it with `git -C {folder} checkout -- .`"
            )
        else:
            fix = f"`affidavit mirror --database URL --vault {vault} {folder}` brings it up to date"
        report.findings.append(Finding("mirror", str(folder), problem, fix))


__all__ = ["pg_quote_problems", "pg_source_problems", "run_pg_doctor"]
