"""``affidavit doctor``: re-derive everything that can be re-derived and report what disagrees.

Checks: every source's bytes re-hash to its id and its extracted text to its recorded hash; every
active claim's quotes are found again at their recorded offsets, and its text is still supported
by them (the support check, W11); every file under wiki/ equals what
the database renders (no drift, nothing missing, nothing unknown); the audit hash chain is intact;
every applied plan has its git commit and wiki/ has no uncommitted changes, no untracked file
and no symlink; every claim and evidence row is what the applied plans the audit chain covers
produce (:mod:`affidavit.store.replay`).

The re-derivations (:func:`source_problems`, :func:`quote_problems`, :func:`file_problems`) are
shared with ``affidavit lint`` (:mod:`affidavit.lint.checks`), which reports the same disagreements
as findings.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .config import TRUST_TIERS
from .errors import AffidavitError
from .evidence import Verifier, normalize_quote
from .evidence.spans import UNREADABLE
from .privacy import exposures, shared_gid
from .sources.store import SourceStore
from .sources.trust import trust_for
from .store.audit import verify_chain
from .store.gitrepo import PLAN_TRAILER
from .store.paths import inside
from .store.recovery import journal_problem, pending_journals
from .store.render import expected_files
from .store.replay import claim_problems
from .support import SUPPORTED, UNCERTAIN, UNSUPPORTED, SupportChecker, load_model
from .support.audit import rejudge
from .support.kept import keeping_in
from .vault import CONFIG_NAME, Vault


@dataclass(frozen=True)
class Finding:
    check: str  # sources | evidence | support | files | claims | trust | audit | git | journal |
    # search | privacy
    subject: str
    message: str
    fix: str = ""


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What a person should know that needn't be wrong (it leaves the report clean)."""

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "counts": self.counts,
            "findings": [asdict(f) for f in self.findings],
            "notes": self.notes,
        }


# --- shared re-derivations ----------------------------------------------------------------------


@dataclass(frozen=True)
class SourceProblem:
    """A stored source file that is missing, altered (``tampered``) or writable."""

    source_id: str
    message: str
    tampered: bool
    """True when bytes are missing or no longer match their hash; False when only writable."""


def source_problems(vault: Vault, store: SourceStore) -> tuple[int, list[SourceProblem]]:
    """Re-hash every stored source's original and extracted text; returns how many sources there
    are and the problems found, by source in the store's order."""
    records = store.list()
    problems: list[SourceProblem] = []
    for record in records:
        problems += [SourceProblem(record.id, p, True) for p in store.check_integrity(record.id)]
        for relpath in (record.original_file, record.text_file):
            path = inside(vault.root, relpath, under="sources")
            if path.exists() and path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
                problems.append(SourceProblem(record.id, f"{relpath} is writable", False))
    return len(records), problems


QuoteProblemKind = Literal["unreadable", "not_found", "moved"]


@dataclass(frozen=True)
class QuoteProblem:
    """One piece of evidence of an active claim that doesn't hold any more.

    ``kind`` is ``unreadable`` (the source's text can't be read), ``not_found`` (the quote is not
    in the source) or ``moved`` (found, but not at the recorded offsets: ``found`` says where).
    """

    claim_id: str
    page: str
    """The claim's page slug ('' for an entry of context.md)."""
    idx: int
    source_id: str
    quote: str
    start: int
    end: int
    location: str
    kind: QuoteProblemKind
    reason: str
    found: tuple[int, int] | None = None


def quote_problems(
    vault: Vault, verifier: Verifier, rows: Iterable[Any] | None = None
) -> tuple[int, list[QuoteProblem]]:
    """Find every quote of every active claim again, in bulk (one ``check_many`` per source).

    ``rows`` are evidence rows (claim_id, page_slug, idx, source_id, quote, start, end, location)
    when the caller already has them. Returns how many quotes were checked and the problems, in
    claim id then evidence order.
    """
    if rows is None:
        cursor = vault.db.cursor()
        cursor.row_factory = None  # plain tuples: several times cheaper for bulk reads
        rows = cursor.execute(
            'SELECT e.claim_id, c.page_slug, e.idx, e.source_id, e.quote, e.start, e."end", '
            "e.location FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE c.status = 'active' ORDER BY e.claim_id, e.idx"
        ).fetchall()
    return quote_row_problems(verifier, rows, _legacy_quotes(vault))


def quote_row_problems(
    verifier: Verifier, rows: Iterable[Any], legacy: dict[tuple[str, int], str] | None = None
) -> tuple[int, list[QuoteProblem]]:
    """:func:`quote_problems` over evidence rows read by the caller, of either backend (a
    PostgreSQL vault's through ``affidavit doctor --database``); ``legacy`` the quotes m021 kept."""
    by_source: dict[str, list[tuple[Any, ...]]] = {}
    count = 0
    problems: list[QuoteProblem] = []
    legacy = legacy or {}
    for row in rows:
        count += 1
        old = legacy.get((row[0], row[2]))
        if old is not None:
            stored = (*tuple(row)[:4], old, *tuple(row)[5:])
            problems.append(_quote_problem(stored, "not_found", _LEGACY.format(s=row[3][:12])))
            continue
        if row[4] is None or row[4] == UNREADABLE:  # no text, or not the span written
            unreadable = (*tuple(row)[:4], "", *tuple(row)[5:])
            problems.append(_quote_problem(unreadable, "unreadable", _NO_SPAN.format(s=row[3])))
            continue
        by_source.setdefault(row[3], []).append(tuple(row))
    for source_id, group in by_source.items():
        try:
            checks = verifier.check_many((source_id, row[4]) for row in group)
        except AffidavitError as exc:
            problems += [_quote_problem(row, "unreadable", str(exc)) for row in group]
            continue
        for row, check in zip(group, checks, strict=True):
            if not check.verified:
                problems.append(_quote_problem(row, "not_found", check.reason))
            elif (check.start, check.end) != (row[5], row[6]):
                assert check.start is not None and check.end is not None
                where = (check.start, check.end)
                cut = _cut_at_recorded(verifier, row)
                if cut:
                    problems.append(_quote_problem(row, "not_found", cut, where))
                else:
                    problems.append(_quote_problem(row, "moved", "", where))
    problems.sort(key=lambda p: (p.claim_id, p.idx))
    return count, problems


_NO_SPAN = (
    "the source's words at the evidence's offsets can't be shown: the text of source {s} is "
    "missing or altered (its SHA-256 is not the one recorded), or the offsets were edited since "
    "the evidence was written (the span's CRC-32 is not the one recorded); quotes are computed "
    "from the text since migration m021_lean_evidence"
)
_LEGACY = (
    "the quote stored before migration m021_lean_evidence is not the words of source {s} at "
    "its recorded offsets (it is kept in evidence_legacy; the wiki shows the source's words)"
)


def _legacy_quotes(vault: Vault) -> dict[tuple[str, int], str]:
    """The quotes m021 found unlike their source's span (normally none)."""
    try:
        rows = vault.db.execute("SELECT claim_id, idx, quote FROM evidence_legacy").fetchall()
    except sqlite3.OperationalError:  # a database from before m021
        return {}
    return {(str(r[0]), int(r[1])): str(r[2]) for r in rows}


def _cut_at_recorded(verifier: Verifier, row: tuple[Any, ...]) -> str:
    """Why the passage at a row's recorded offsets no longer counts though the source is intact:
    it still reads as the quote there but cuts a word (admitted before W3 required word
    boundaries). '' when the text at the recorded offsets changed (a real move)."""
    _, _, _, source_id, quote, start, end, _ = row
    normalized = verifier.normalized(source_id)
    if not 0 <= start <= end <= len(normalized.original):
        return ""
    if normalize_quote(normalized.original[start:end]) != normalize_quote(quote):
        return ""
    return (
        f"the quote recorded at chars {start}–{end} of source {source_id[:12]} cuts a word or "
        "number there: a quote must start and end on word boundaries of the source"
    )


def _quote_problem(
    row: tuple[Any, ...], kind: QuoteProblemKind, reason: str, found: tuple[int, int] | None = None
) -> QuoteProblem:
    claim_id, page, idx, source_id, quote, start, end, location = row
    if kind == "moved" and found is not None:
        reason = f"quote found at {found[0]}-{found[1]}, recorded at {start}-{end}"
    elif found is not None:
        reason += f" (it is found whole at chars {found[0]}–{found[1]})"
    return QuoteProblem(
        claim_id, page, idx, source_id, quote, start, end, location, kind, reason, found
    )


FileProblemKind = Literal["missing", "differs", "unknown"]


@dataclass(frozen=True)
class FileProblem:
    """A file under wiki/ that is ``missing``, ``differs`` from its rendering, or is ``unknown``
    (no page renders it). ``text`` is the rendered text (empty for unknown files)."""

    path: str
    kind: FileProblemKind
    text: str = ""


def file_problems(vault: Vault, expected: dict[str, str] | None = None) -> list[FileProblem]:
    """Compare every file under wiki/ with what the database renders (``expected_files``, or the
    ``expected`` the caller already rendered). Hidden folders (.obsidian/, .trash/) are skipped."""
    if expected is None:
        expected = expected_files(vault.db)
    problems: list[FileProblem] = []
    for relpath, text in expected.items():
        path = inside(vault.root, relpath, final_symlink_ok=True)  # W10: stays in the vault
        if not path.exists() and not path.is_symlink():
            problems.append(FileProblem(relpath, "missing", text))
        elif path.is_symlink() or path.read_bytes() != text.encode():
            problems.append(FileProblem(relpath, "differs", text))
    for path in sorted(vault.wiki_dir.rglob("*.md")):
        relpath = str(path.relative_to(vault.root))
        if any(part.startswith(".") for part in path.relative_to(vault.wiki_dir).parts):
            continue  # .obsidian/, .trash/ and other hidden folders belong to the editor
        if relpath not in expected:
            problems.append(FileProblem(relpath, "unknown"))
    return problems


# --- the doctor's report ------------------------------------------------------------------------

_RESTORE_SOURCES = "restore the source files from git (`git checkout -- sources/`)"


def _check_sources(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    report.counts["sources"], problems = source_problems(vault, store)
    for problem in problems:
        fix = (
            "restore the original file from git (`git checkout -- sources/`)"
            if problem.tampered
            else f"chmod a-w {problem.message.removesuffix(' is writable')}"
        )
        report.findings.append(Finding("sources", problem.source_id, problem.message, fix))
    for record in store.list():
        missing = store.uncommitted(record)
        if missing:
            report.findings.append(
                Finding(
                    "sources",
                    record.id,
                    f"{', '.join(missing)} not committed to git (an add was interrupted before "
                    "its commit)",
                    f"add it again (`affidavit sources add {record.origin}`): the stored copy "
                    "is committed then",
                )
            )


def _check_evidence(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    report.counts["quotes"], problems = quote_problems(vault, Verifier(store))
    report.counts["claims"] = vault.db.execute(
        "SELECT count(*) FROM claims WHERE status = 'active'"
    ).fetchone()[0]
    for problem in problems:
        if problem.kind == "unreadable":
            message, fix = f"quote can't be checked: {problem.reason}", _RESTORE_SOURCES
        elif problem.kind == "not_found":
            message = (
                f"quote “{problem.quote}” from source {problem.source_id[:12]} no longer "
                f"verifies: {problem.reason}"
            )
            fix = (
                "restore the source if it changed; otherwise supersede the claim with a quote of "
                "whole words from the source, or retract it"
            )
        else:
            message, fix = problem.reason, "restore the source file from git"
        report.findings.append(Finding("evidence", problem.claim_id, message, fix))


_FILE_MESSAGES: dict[FileProblemKind, tuple[str, str]] = {
    "missing": ("missing", "`git -C VAULT checkout -- wiki/` restores it"),
    "differs": (
        "differs from what the database renders (hand edit?)",
        "`affidavit doctor --propose` turns the edit into a plan; "
        "`git -C VAULT checkout -- wiki/` restores the rendered file",
    ),
    "unknown": (
        "unknown file: no page in the database renders it",
        "`affidavit doctor --propose` turns it into a plan, or delete it",
    ),
}


def _check_support(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    """The support check (W11) again over every active claim, under the current rules:
    unsupported ones are findings; uncertain ones are counted (a person approved them, or —
    when they were admitted as supported — noted: no person read them); and what changed since
    each claim was admitted is noted (:func:`~affidavit.support.audit.rejudge`)."""
    with keeping_in(None if vault.read_only else vault.state_dir):
        found = rejudge(vault.db, store, SupportChecker(load_model(vault.config)))
    problems = found.problems
    report.counts["claims_uncertain"] = sum(p.verdict != UNSUPPORTED for p in problems)
    report.counts["claims_support_changed"] = sum(found.changed.values())
    report.counts["claims_older_check"] = found.older
    for problem in problems:
        if problem.verdict == UNSUPPORTED:
            since = (
                f" (admitted as {problem.was} under {problem.was_check or 'an older check'})"
                if problem.was
                else ""
            )
            report.findings.append(
                Finding(
                    "support",
                    problem.claim_id,
                    f"the claim says what its quotes don't: {problem.reason}{since}",
                    "retract it (`affidavit lint` proposes it as unsupported_claim), or "
                    "supersede it with a claim its quotes support",
                )
            )
    unread = [p for p in problems if p.was == SUPPORTED and p.verdict == UNCERTAIN]
    if unread:
        shown = ", ".join(p.claim_id for p in unread[:5]) + (" …" if len(unread) > 5 else "")
        report.notes.append(
            f"support: {len(unread)} claim(s) admitted as supported are only uncertain under the "
            f"current check, and no person has read them ({shown}): `affidavit lint` lists them "
            "as unsupported_claim warnings"
        )
    report.notes += [f"support: {line}" for line in found.lines()]


def _check_files(vault: Vault, report: DoctorReport) -> None:
    expected = expected_files(vault.db)
    report.counts["files"] = len(expected)
    for problem in file_problems(vault, expected):
        message, fix = _FILE_MESSAGES[problem.kind]
        report.findings.append(Finding("files", problem.path, message, fix))


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
        refused = journal_problem(vault, name)
        report.findings.append(
            Finding(
                "journal",
                name,
                f"recovery refuses this apply journal: {refused}"
                if refused
                else "an apply journal was left behind",
                f"it was not written by Affidavit: inspect and delete .affidavit/journal/{name}"
                if refused
                else "re-open the vault to recover it",
            )
        )


def _check_claims(vault: Vault, store: SourceStore, report: DoctorReport) -> None:
    """Claims and evidence re-derived from the applied plans the audit chain covers."""
    report.counts["rederived_claims"], problems = claim_problems(vault.db, Verifier(store), store)
    for problem in problems:
        report.findings.append(
            Finding(
                "claims",
                problem.claim_id,
                problem.message,
                "the database was changed outside the door: restore it from a backup (or git "
                "history of wiki/ shows what the claims were)",
            )
        )


def _check_trust(vault: Vault, report: DoctorReport) -> None:
    """Every claim's trust re-derived from its evidence (SPEC W7: the weakest tier of the sources
    it rests on, a retracted source no longer counted), and every source's tier set beside what
    ``trust.rules`` give its origin today (only a tier above it is worth a word).

    A claim whose recorded tier differs was changed outside the door (a trusted tier on untrusted
    evidence lets it supersede trusted claims and reach answers asked at the trusted tier, W7): a
    finding. A source whose tier is above the one chosen with ``--trust`` when it was added
    (``sources.trust_chosen``) or, when none was chosen, above its rule's, is reported as a note,
    not a finding: a rule edited since explains it as well as a changed row does, and the person
    is the one who knows."""
    rows = vault.db.execute(
        "SELECT c.id, c.trust, s.trust, s.status FROM claims c "
        "JOIN evidence e ON e.claim_id = c.id JOIN sources s ON s.id = e.source_id "
        "WHERE c.status IN ('active', 'quarantined', 'pending') ORDER BY c.id"
    ).fetchall()
    recorded: dict[str, str] = {}
    live: dict[str, list[str]] = {}
    for claim_id, claim_trust, source_trust, source_status in rows:
        recorded[claim_id] = claim_trust
        if source_status != "retracted":
            live.setdefault(claim_id, []).append(source_trust)
    checked = 0
    for claim_id, tier in recorded.items():
        tiers = live.get(claim_id)
        if not tiers:
            continue  # rests only on retracted sources: the evidence check reports it
        checked += 1
        expected = min(tiers, key=_tier_rank)
        if tier != expected:
            report.findings.append(
                Finding(
                    "trust",
                    claim_id,
                    f"claim {claim_id[:12]} is recorded as {tier} but rests on {expected} "
                    "evidence (its trust is the weakest tier of its sources)",
                    "the database was changed outside the door: restore it from a backup",
                )
            )
    report.counts["trust_rederived_claims"] = checked
    rules, default = vault.config.trust_rules, vault.config.default_trust
    for source_id, origin, tier, chosen in vault.db.execute(
        "SELECT id, origin, trust, trust_chosen FROM sources WHERE status != 'retracted' "
        "ORDER BY id"
    ):
        if chosen:
            if _tier_rank(tier) > _tier_rank(chosen):
                report.notes.append(
                    f"source {source_id[:12]} ({origin}) is {tier}; it was added with --trust "
                    f"{chosen} (a changed row: `affidavit sources show` it, and retract and "
                    "re-add it to change its tier)"
                )
            continue
        decision = trust_for(origin, rules, default)
        if _tier_rank(tier) > _tier_rank(decision.tier):  # a lower tier is always safe
            by = f"rule {decision.rule!r}" if decision.rule else "sources.default_trust"
            report.notes.append(
                f"source {source_id[:12]} ({origin}) is {tier}; {by} gives {decision.tier} "
                "today (a rule changed since, set by --trust before Affidavit recorded that, or a "
                "changed row: `affidavit sources show` it, and retract and re-add it to change "
                "its tier)"
            )


def _tier_rank(tier: str) -> int:
    return TRUST_TIERS.index(tier) if tier in TRUST_TIERS else -1  # unknown: weaker than any


def _check_wiki_tree(vault: Vault, report: DoctorReport) -> None:
    """Symlinks under wiki/ (the door writes only regular files) and files git doesn't track
    (no plan committed them)."""
    for path in sorted(vault.wiki_dir.rglob("*")):
        if path.is_symlink():
            relpath = str(path.relative_to(vault.root))
            report.findings.append(
                Finding(
                    "files",
                    relpath,
                    f"is a symlink (to {os.readlink(path)}); Affidavit writes only regular files",
                    f"remove it (`rm {relpath}` in the vault)",
                )
            )
    for relpath in vault.git.untracked("wiki"):
        parts = relpath.split("/")[1:]
        if any(part.startswith(".") for part in parts[:-1]):
            continue  # .obsidian/, .trash/: the editor's
        report.findings.append(
            Finding(
                "git",
                relpath,
                "untracked file under wiki/: no applied plan wrote it",
                "delete it, or make it a page with `affidavit doctor --propose`",
            )
        )


def _check_privacy(vault: Vault, report: DoctorReport) -> None:
    """Files of the vault another user could read (W10: private stays private): through its
    folders and their own modes; the vault's shared group, if any, only outside .affidavit/
    and .git/."""
    try:
        allowed = shared_gid(str(vault.config.get("privacy.shared_group")))
    except AffidavitError as exc:
        report.findings.append(
            Finding("privacy", CONFIG_NAME, str(exc), "fix privacy.shared_group")
        )
        allowed = None
    for seen in exposures(vault.root, allowed):
        where = seen.gate or "the vault's folder"
        report.findings.append(
            Finding(
                "privacy",
                seen.gate or ".",
                f"{seen.count} file(s) are readable by {seen.who} ({where} is mode "
                f"{seen.mode:04o}), e.g. {', '.join(seen.examples)}",
                f"`{seen.fix}`",
            )
        )


def run_doctor(vault: Vault) -> DoctorReport:
    """Run every check and return the report (nothing is changed)."""
    report = DoctorReport()
    store = SourceStore(vault)
    _check_privacy(vault, report)
    _check_sources(vault, store, report)
    _check_evidence(vault, store, report)
    _check_support(vault, store, report)
    _check_files(vault, report)
    _check_wiki_tree(vault, report)
    _check_claims(vault, store, report)
    _check_trust(vault, report)
    _check_audit_and_git(vault, report)
    _check_search_index(vault, report)
    return report


def _check_search_index(vault: Vault, report: DoctorReport) -> None:
    """The search index reflects the database (derived: ``affidavit reindex`` rebuilds it)."""
    from .retrieval.tantivy_index import index_problems

    for message in index_problems(vault.db):
        report.findings.append(Finding("search", "search index", message, "affidavit reindex"))
