"""``affidavit doctor``: re-derive everything that can be re-derived and report what disagrees.

Checks: every source's bytes re-hash to its id and its extracted text to its recorded hash; every
active claim's quotes are found again at their recorded offsets; every file under wiki/ equals what
the database renders (no drift, nothing missing, nothing unknown); the audit hash chain is intact;
every applied plan has its git commit and wiki/ has no uncommitted changes.
"""

from __future__ import annotations

import stat
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import AffidavitError
from .evidence import Verifier
from .sources.store import SourceStore
from .store.audit import verify_chain
from .store.gitrepo import PLAN_TRAILER
from .store.recovery import pending_journals
from .store.render import expected_files
from .vault import Vault


@dataclass(frozen=True)
class Finding:
    check: str  # sources | evidence | files | audit | git | journal
    subject: str
    message: str
    fix: str = ""


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "counts": self.counts,
            "findings": [asdict(f) for f in self.findings],
        }


def _check_sources(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    records = store.list()
    report.counts["sources"] = len(records)
    for record in records:
        for problem in store.check_integrity(record.id):
            report.findings.append(
                Finding(
                    "sources",
                    record.id,
                    problem,
                    "restore the original file from git (`git checkout -- sources/`)",
                )
            )
        for relpath in (record.original_file, record.text_file):
            path = vault.root / relpath
            if path.exists() and path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
                report.findings.append(
                    Finding("sources", record.id, f"{relpath} is writable", f"chmod a-w {relpath}")
                )


def _check_evidence(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    verifier = Verifier(store)
    rows = vault.db.execute(
        'SELECT e.claim_id, e.source_id, e.quote, e.start, e."end" FROM evidence e '
        "JOIN claims c ON c.id = e.claim_id WHERE c.status = 'active' ORDER BY e.claim_id, e.idx"
    ).fetchall()
    report.counts["quotes"] = len(rows)
    report.counts["claims"] = vault.db.execute(
        "SELECT count(*) FROM claims WHERE status = 'active'"
    ).fetchone()[0]
    for row in rows:
        try:
            check = verifier.check(row["source_id"], row["quote"])
        except AffidavitError as exc:
            report.findings.append(
                Finding(
                    "evidence",
                    row["claim_id"],
                    f"quote can't be checked: {exc}",
                    "restore the source files from git (`git checkout -- sources/`)",
                )
            )
            continue
        if not check.verified:
            report.findings.append(
                Finding(
                    "evidence",
                    row["claim_id"],
                    f"quote no longer verifies: {check.reason}",
                    "restore the source, or retract the claim",
                )
            )
        elif (check.start, check.end) != (row["start"], row["end"]):
            report.findings.append(
                Finding(
                    "evidence",
                    row["claim_id"],
                    f"quote found at {check.start}-{check.end}, recorded at "
                    f"{row['start']}-{row['end']}",
                    "restore the source file from git",
                )
            )


def _check_files(vault: Vault, report: DoctorReport) -> None:
    expected = expected_files(vault.db)
    report.counts["files"] = len(expected)
    for relpath, text in expected.items():
        path = vault.root / relpath
        if not path.exists():
            report.findings.append(
                Finding("files", relpath, "missing", "`git -C VAULT checkout -- wiki/` restores it")
            )
        elif path.read_bytes() != text.encode():
            report.findings.append(
                Finding(
                    "files",
                    relpath,
                    "differs from what the database renders (hand edit?)",
                    "`affidavit doctor --propose` turns the edit into a plan; "
                    "`git -C VAULT checkout -- wiki/` restores the rendered file",
                )
            )
    for path in sorted(vault.wiki_dir.rglob("*.md")):
        relpath = str(path.relative_to(vault.root))
        if any(part.startswith(".") for part in path.relative_to(vault.wiki_dir).parts):
            continue  # .obsidian/, .trash/ and other hidden folders belong to the editor
        if relpath not in expected:
            report.findings.append(
                Finding(
                    "files",
                    relpath,
                    "unknown file: no page in the database renders it",
                    "`affidavit doctor --propose` turns it into a plan, or delete it",
                )
            )


def _check_audit_and_git(vault: Vault, report: DoctorReport) -> None:
    for problem in verify_chain(vault.db):
        report.findings.append(
            Finding("audit", "audit log", problem, "restore the database from a backup")
        )
    report.counts["audit_entries"] = vault.db.execute("SELECT count(*) FROM audit").fetchone()[0]
    applied = {row[0] for row in vault.db.execute("SELECT id FROM plans WHERE status = 'applied'")}
    committed: set[str] = set()
    if vault.git.head() is not None:
        out = vault.git.run("log", f"--format=%(trailers:key={PLAN_TRAILER},valueonly)")
        committed = {line.strip() for line in out.splitlines() if line.strip()}
    for plan_id in sorted(applied - committed):
        report.findings.append(
            Finding("git", plan_id, "applied plan has no git commit", "commit wiki/ by hand")
        )
    report.counts["applied_plans"] = len(applied)
    audited = {
        row[0] for row in vault.db.execute("SELECT plan_id FROM audit WHERE action = 'applied'")
    }
    for plan_id in sorted(applied - audited):
        report.findings.append(
            Finding(
                "audit",
                plan_id,
                "applied plan has no 'applied' entry in the audit log (entries deleted?)",
                "restore the database from a backup",
            )
        )
    if not vault.git.is_clean(["wiki"]):
        report.findings.append(
            Finding(
                "git",
                "wiki/",
                "wiki/ has changes not committed to git",
                "see `git -C VAULT status wiki`",
            )
        )
    for name in pending_journals(vault):
        report.findings.append(
            Finding(
                "journal",
                name,
                "an apply journal was left behind",
                "re-open the vault to recover it",
            )
        )


def run_doctor(vault: Vault) -> DoctorReport:
    """Run every check and return the report (nothing is changed)."""
    report = DoctorReport()
    store = SourceStore(vault)
    _check_sources(vault, store, report)
    _check_evidence(vault, store, report)
    _check_files(vault, report)
    _check_audit_and_git(vault, report)
    return report
