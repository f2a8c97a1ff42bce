"""``affidavit doctor`` by default: what changed since the last clean check, proved by the audit
chain and by fingerprints of every row and file; ``--full`` re-derives everything.

After every clean run (full or not) doctor records a **checkpoint** in
``.affidavit/doctor-checkpoint.json`` (0600): the audit chain's last entry and a digest of every
entry up to it; how far the change log ``doctor_changes`` had got (triggers log every row of
claims, evidence, pages, links, sources, plans, audit and context snapshots that is updated or
deleted, by whatever writes it: migration ``m014_doctor_changes``) and a digest of the schema's
triggers; the largest rowid of each of those tables (a row inserted since has a larger one); the
size, mtime, ctime, inode and mode of every file under ``wiki/`` and ``sources/``, of git's index,
and git's HEAD. "Changed" never depends on a clock: a file whose stat differs in any way is read
again, a logged or new row is checked again.

The next run (:func:`run_doctor_since`) then checks:

- the audit chain: entries up to the checkpoint unchanged (one digest), every later entry
  chained from the checkpoint's hash;
- the change log is whole (no entry removed past the checkpoint, its triggers as they were);
- every row logged or inserted since must be explained by what the chain
  recorded since — a claim created by a plan applied since, or named by one (superseded,
  retracted), a page or source such a plan names; a plan row changed only by an entry naming it.
  Anything else was changed outside the door: a finding. A claim, page, plan or source that
  disappeared is a finding too;
- the changed and new claims again in full: quotes re-found at their offsets, the support check,
  trust from their sources; every plan applied since hashes to its id and has its git commit;
  and every claim's support again when the support check's version changed since (W11: the
  rules changed, so "what changed since admission" is reported over the whole wiki);
- every source whose files' stat changed (or that is new) re-hashed; every file of ``wiki/`` whose
  stat changed, or that a changed row renders, compared with its rendering; files added or gone;
- git: HEAD descends from the checkpoint's, every plan applied since has its commit, wiki/ clean
  and without untracked files (asked of git only when a file of wiki/, git's index or HEAD
  changed), no apply journal left; the search index reflects the database;
- privacy, always (a mode changes without a row or a byte changing): no file of the vault another
  user could read.

No checkpoint (or an unreadable one), or a schema changed since (a migration, or a trigger
dropped and made again: ``PRAGMA schema_version`` moved), means a full run. An attacker who can rewrite
``.affidavit/`` can rewrite the checkpoint with it — as they could rewrite the whole audit chain,
which has no secret either; ``--full`` replays every applied plan and re-hashes every source
whatever the checkpoint says.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .doctor import (
    DoctorReport,
    Finding,
    _check_privacy,
    _check_search_index,
    _check_support,
    _tier_rank,
    quote_problems,
    run_doctor,
)
from .evidence import Verifier
from .sources.store import SourceStore
from .store.atomic import atomic_write
from .store.audit import GENESIS, entry_hash
from .store.gitrepo import PLAN_TRAILER
from .store.paths import inside
from .store.recovery import pending_journals
from .store.render import GENERATED, render_path
from .support import UNSUPPORTED, SupportChecker, check_version, load_model
from .support.audit import support_problems
from .support.kept import keeping_in
from .vault import Vault

VERSION = 2
NAME = "doctor-checkpoint.json"
_OUTSIDE = (
    "the database was changed outside the door since the last clean check: restore it from a "
    "backup, then run `affidavit doctor --full`"
)
TABLES = ("claims", "evidence", "pages", "links", "sources", "plans", "audit", "context_snapshots")
"""The tables whose changes the log records (``m014_doctor_changes``)."""
ROWID_TABLES = tuple(t for t in TABLES if t != "evidence")
"""The tables a checkpoint records the largest rowid of: ``evidence`` is a view since
``m021_lean_evidence`` (no rowid); its rows come with a new claim, or are logged by a trigger."""
_KEYS = {
    "claims": "id",
    "evidence": "claim_id",
    "pages": "slug",
    "links": "src",
    "sources": "id",
    "plans": "id",
    "audit": "seq",
    "context_snapshots": "id",
}
_AUDIT_UPTO = (
    "SELECT json_group_array(json_array(seq, at, action, plan_id, actor, detail, prev_hash, "
    "hash)) FROM (SELECT * FROM audit WHERE seq <= ? ORDER BY seq)"
)


def _digest(text: str | bytes | None) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else (text or b"")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_stats(root: Path, folder: str) -> dict[str, list[int]]:
    """Every file under ``root/folder`` (a symlink by its own stat): relative path -> [size,
    mtime_ns, ctime_ns, inode, type and mode]."""
    out: dict[str, list[int]] = {}
    for directory, dirs, files in os.walk(root / folder, followlinks=False):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(directory, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, root)] = _stat(info)
    return out


def _stat(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode]


@dataclass
class Checkpoint:
    audit_seq: int = 0
    audit_hash: str = GENESIS
    audit_digest: str = ""
    change_seq: int = 0
    triggers: str = ""
    schema: int = 0
    rowids: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[int]] = field(default_factory=dict)
    git_index: list[int] = field(default_factory=list)
    head: str | None = None
    support_check: str = ""
    """The support check's version (W11): when it changes, every claim is judged again."""

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, **self.__dict__}

    @classmethod
    def from_json(cls, data: Any) -> Checkpoint | None:
        """The checkpoint in ``data``; None when it is not one this version wrote."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        try:
            point = cls(**{k: v for k, v in data.items() if k != "version"})
        except TypeError:
            return None
        ints = (point.audit_seq, point.change_seq, *point.rowids.values())
        if not all(isinstance(n, int) for n in ints) or not isinstance(point.files, dict):
            return None
        return point


def _triggers(vault: Vault) -> str:
    rows = vault.db.execute(
        "SELECT rowid, name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY rowid"
    ).fetchall()
    return _digest(json.dumps([list(r) for r in rows]))


def _git_index(vault: Vault) -> list[int]:
    try:
        return _stat(os.lstat(vault.root / ".git" / "index"))
    except OSError:
        return []


def take(vault: Vault) -> Checkpoint:
    """The vault's state now, as a checkpoint records it."""
    db = vault.db
    last = db.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    seq, digest = (int(last[0]), str(last[1])) if last else (0, GENESIS)
    change = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'doctor_changes'").fetchone()
    files = file_stats(vault.root, "wiki")
    files.update(file_stats(vault.root, "sources"))
    return Checkpoint(
        audit_seq=seq,
        audit_hash=digest,
        audit_digest=_digest(db.execute(_AUDIT_UPTO, (seq,)).fetchone()[0]),
        change_seq=int(change[0]) if change else 0,
        triggers=_triggers(vault),
        schema=int(db.execute("PRAGMA schema_version").fetchone()[0]),
        rowids={
            t: int(db.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0])
            for t in ROWID_TABLES
        },
        files=files,
        git_index=_git_index(vault),
        head=vault.git.head(),
        support_check=check_version(load_model(vault.config)),
    )


def checkpoint_path(vault: Vault) -> Path:
    return vault.state_dir / NAME


def load(vault: Vault) -> Checkpoint | None:
    path = checkpoint_path(vault)
    try:
        if path.is_symlink() or path.stat().st_size > 64 * 1024 * 1024:
            return None
        return Checkpoint.from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def save(vault: Vault, point: Checkpoint) -> bool:
    """Record the checkpoint; False when it can't be: a vault another user owns is only read
    (nothing runs for it with more authority than its owner has), a read-only one likewise."""
    try:
        if vault.state_dir.stat().st_uid != os.geteuid():
            return False
        data = json.dumps(point.to_json(), separators=(",", ":"), sort_keys=True).encode()
        atomic_write(checkpoint_path(vault), data, 0o600)
    except OSError:
        return False
    return True


def run_full(vault: Vault) -> DoctorReport:
    """Every check (:func:`affidavit.doctor.run_doctor`); a clean result becomes the checkpoint."""
    point = take(vault)  # before the checks: nothing written meanwhile is taken as checked
    report = run_doctor(vault)
    report.counts["mode_full"] = 1
    if report.clean:
        save(vault, point)
    return report


@dataclass
class _Since:
    """What changed since the checkpoint, by table: keys logged or inserted."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    new: dict[str, set[str]] = field(default_factory=dict)

    def changed(self, table: str) -> set[str]:
        return self.keys.get(table, set()) | self.new.get(table, set())


def run_doctor_since(vault: Vault) -> DoctorReport:
    """The checks of what changed since the last clean check (module docstring); a full run when
    there is no checkpoint."""
    old = load(vault)
    if old is None:
        return run_full(vault)
    now = take(vault)
    if now.schema != old.schema:  # a migration since (or a trigger dropped and made again)
        report = run_full(vault)
        report.notes.append(
            "the database's schema changed since the last clean check: everything was checked"
        )
        return report
    report = DoctorReport()
    report.counts["mode_since_checkpoint"] = old.audit_seq
    _check_privacy(vault, report)  # modes change without any row or content changing: always
    store = SourceStore(vault)
    since = _log_since(vault, old, now, report)
    named, new_plans = _audit_since(vault, old, now, report)
    _rows_since(vault, since, named, new_plans, report)
    _check_claims(vault, store, sorted(since.changed("claims") | since.changed("evidence")), report)
    if now.support_check != old.support_check:  # new rules: the whole wiki judged again
        report.findings = [f for f in report.findings if f.check != "support"]
        _check_support(vault, store, report)
        report.notes.append(
            "the support check changed since the last clean check: every claim was judged again"
        )
    _check_sources(vault, store, old, now, since, report)
    _check_files(vault, old, now, since, report)
    _check_git(vault, old, now, new_plans, report)
    _check_search_index(vault, report)
    if report.clean:
        save(vault, now)
    return report


def _log_since(vault: Vault, old: Checkpoint, now: Checkpoint, report: DoctorReport) -> _Since:
    """The keys the change log holds since the checkpoint, and the rows inserted since; the log
    itself checked whole."""
    db = vault.db
    problems = []
    if now.triggers != old.triggers:
        problems.append("the triggers that log changes were altered")
    if now.change_seq < old.change_seq:
        problems.append("the change log was reset")
    count = db.execute(
        "SELECT count(*), coalesce(max(seq), 0) FROM doctor_changes WHERE seq > ?",
        (old.change_seq,),
    ).fetchone()
    if count[0] != now.change_seq - old.change_seq or (count[0] and count[1] != now.change_seq):
        problems.append("entries of the change log were removed")
    for problem in problems:
        report.findings.append(Finding("audit", "change log", problem, _OUTSIDE))
    since = _Since()
    for table, key in db.execute(
        "SELECT tbl, key FROM doctor_changes WHERE seq > ?", (old.change_seq,)
    ):
        since.keys.setdefault(str(table), set()).add(str(key))
    for table in ROWID_TABLES:
        if now.rowids.get(table, 0) < old.rowids.get(table, 0):
            since.keys.setdefault(table, set()).add("")  # rows went: the log names them
        rows = db.execute(
            f"SELECT {_KEYS[table]} FROM {table} WHERE rowid > ?", (old.rowids.get(table, 0),)
        )
        since.new[table] = {str(r[0]) for r in rows}
    report.counts["rows_changed_since"] = sum(len(v) for v in since.keys.values())
    report.counts["rows_added_since"] = sum(len(v) for v in since.new.values())
    return since


def _audit_since(
    vault: Vault, old: Checkpoint, now: Checkpoint, report: DoctorReport
) -> tuple[str, set[str]]:
    """Check the chain against the checkpoint; return the text of every entry since (and of the
    plans they name) — what a changed row must be named in — and the plans applied since."""
    db = vault.db
    entries = db.execute(
        "SELECT * FROM audit WHERE seq > ? ORDER BY seq", (old.audit_seq,)
    ).fetchall()
    report.counts["audit_entries_since"] = len(entries)
    upto = _digest(db.execute(_AUDIT_UPTO, (old.audit_seq,)).fetchone()[0])
    if upto != old.audit_digest:
        report.findings.append(
            Finding(
                "audit",
                "audit log",
                f"entries up to {old.audit_seq} changed since the last clean check",
                "restore the database from a backup",
            )
        )
    prev, expected = old.audit_hash, old.audit_seq + 1
    texts: list[str] = []
    plan_ids: set[str] = set()
    new_plans: set[str] = set()
    for row in entries:
        if row["seq"] != expected or row["prev_hash"] != prev:
            report.findings.append(
                Finding(
                    "audit",
                    "audit log",
                    f"audit entry {row['seq']} does not follow the chain",
                    "restore the database from a backup",
                )
            )
        digest = entry_hash(
            row["seq"],
            row["at"],
            row["action"],
            row["plan_id"],
            row["actor"],
            row["detail"],
            row["prev_hash"],
        )
        if digest != row["hash"]:
            report.findings.append(
                Finding(
                    "audit",
                    "audit log",
                    f"audit entry {row['seq']} was altered (its hash no longer matches)",
                    "restore the database from a backup",
                )
            )
        prev, expected = row["hash"], row["seq"] + 1
        texts.append(str(row["detail"]))
        if row["plan_id"]:
            plan_ids.add(str(row["plan_id"]))
            if row["action"] == "applied":
                new_plans.add(str(row["plan_id"]))
    from .hashing import sha256_hex
    from .plan.stored import plan_text

    for plan_id in sorted(plan_ids):
        row = db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        if row is None:
            if plan_id in new_plans:
                report.findings.append(
                    Finding(
                        "claims",
                        plan_id,
                        "the audit log names an applied plan the database lacks",
                        _OUTSIDE,
                    )
                )
            continue
        try:
            text = plan_text(row, db)
        except Exception:  # an unreadable compressed column: reported below as not hashing
            text = ""
        if plan_id in new_plans and sha256_hex(text) != plan_id:
            report.findings.append(
                Finding(
                    "claims",
                    plan_id,
                    "the stored text of this applied plan no longer hashes to its id",
                    _OUTSIDE,
                )
            )
        texts.append(text)
    report.counts["plans_applied_since"] = len(new_plans)
    return "\n".join([*texts, *sorted(plan_ids)]), new_plans


def _rows_since(
    vault: Vault, since: _Since, named: str, new_plans: set[str], report: DoctorReport
) -> None:
    """Every row logged or inserted since the checkpoint explained by what the chain recorded
    since: a claim (or its evidence) created by a plan applied since or named by one, a page, link
    or source such a plan names (a new source is re-hashed below), a plan row named by an entry
    since (a new one is a proposal). Audit rows are only ever inserted; context snapshots only
    by a plan applied since."""
    db = vault.db
    claims = sorted(since.changed("claims") | since.changed("evidence"))
    plan_of = {
        str(r[0]): str(r[1])
        for r in db.execute(
            "SELECT id, plan_id FROM claims WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(claims),),
        )
    }
    unexplained: list[tuple[str, str, str]] = []
    for table, keys in (("claims", claims),):
        for key in keys:
            if key not in plan_of:
                unexplained.append((table, key, "is gone, or has evidence without a claim"))
            elif plan_of[key] not in new_plans and key not in named:
                unexplained.append((table, key, "changed"))
    for table in ("pages", "links"):
        for key in sorted(since.changed(table)):
            if not new_plans or key not in named:
                unexplained.append((table, key, "changed"))
    for key in sorted(since.keys.get("sources", set()) - since.new.get("sources", set())):
        if key not in named:
            unexplained.append(("sources", key, "changed"))
    for key in sorted(since.keys.get("plans", set()) - since.new.get("plans", set())):
        if key not in named:
            unexplained.append(("plans", key, "changed"))
    for key in sorted(since.keys.get("audit", set())):
        unexplained.append(("audit", key, "changed"))
    snapshots = since.keys.get("context_snapshots", set())
    if snapshots or (since.new.get("context_snapshots") and not new_plans):
        unexplained.append(("context_snapshots", "context", "changed"))
    for table, key, what in unexplained:
        report.findings.append(
            Finding(
                "audit" if table == "audit" else "claims",
                key or table,
                f"a row of {table} {what} since the last clean check, and nothing the audit log "
                "recorded since explains it",
                _OUTSIDE,
            )
        )


def _check_claims(
    vault: Vault, store: SourceStore, claim_ids: list[str], report: DoctorReport
) -> None:
    """The changed and new claims again: quotes, support, trust."""
    report.counts["claims_rechecked"] = len(claim_ids)
    if not claim_ids:
        return
    ids = json.dumps(claim_ids)
    cursor = vault.db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        'SELECT e.claim_id, c.page_slug, e.idx, e.source_id, e.quote, e.start, e."end", '
        "e.location FROM evidence e JOIN claims c ON c.id = e.claim_id "
        "WHERE c.status = 'active' AND c.id IN (SELECT value FROM json_each(?)) "
        "ORDER BY e.claim_id, e.idx",
        (ids,),
    ).fetchall()
    _, problems = quote_problems(vault, Verifier(store), rows)
    for problem in problems:
        report.findings.append(
            Finding(
                "evidence",
                problem.claim_id,
                f"quote no longer verifies: {problem.reason}",
                "restore the source, or supersede or retract the claim",
            )
        )
    with keeping_in(None if vault.read_only else vault.state_dir):
        _, unsupported = support_problems(
            vault.db, store, SupportChecker(load_model(vault.config)), claim_ids
        )
    for item in unsupported:
        if item.verdict == UNSUPPORTED:
            report.findings.append(
                Finding(
                    "support",
                    item.claim_id,
                    f"the claim says what its quotes don't: {item.reason}",
                    "retract it, or supersede it with a claim its quotes support",
                )
            )
    tiers: dict[str, tuple[str, list[str]]] = {}
    for claim_id, claim_tier, source_tier, source_status in vault.db.execute(
        "SELECT c.id, c.trust, s.trust, s.status FROM claims c "
        "JOIN evidence e ON e.claim_id = c.id JOIN sources s ON s.id = e.source_id "
        "WHERE c.status IN ('active', 'quarantined', 'pending') "
        "AND c.id IN (SELECT value FROM json_each(?))",
        (ids,),
    ):
        entry = tiers.setdefault(claim_id, (claim_tier, []))
        if source_status != "retracted":
            entry[1].append(source_tier)
    for claim_id, (tier, live) in sorted(tiers.items()):
        if live and tier != min(live, key=_tier_rank):
            report.findings.append(
                Finding(
                    "trust",
                    claim_id,
                    f"claim {claim_id[:12]} is recorded as {tier} but rests on {min(live, key=_tier_rank)} evidence",
                    _OUTSIDE,
                )
            )


def _source_files(vault: Vault) -> dict[str, tuple[str, str]]:
    return {
        str(r[0]): (str(r[1]), str(r[2]))
        for r in vault.db.execute("SELECT id, original_file, text_file FROM sources")
    }


def _check_sources(
    vault: Vault,
    store: SourceStore,
    old: Checkpoint,
    now: Checkpoint,
    since: _Since,
    report: DoctorReport,
) -> None:
    """Re-hash every source that is new, whose row changed, or whose files' stat changed in any
    way (a file replaced keeps neither its inode nor its ctime, whatever mtime it is given)."""
    files = _source_files(vault)
    recheck = since.changed("sources") | {
        sid
        for sid, paths in files.items()
        if any(p not in now.files or old.files.get(p) != now.files.get(p) for p in paths)
    }
    report.counts["sources_rehashed"] = len(recheck & set(files))
    for sid in sorted(recheck & set(files)):
        for message in store.check_integrity(sid):
            report.findings.append(
                Finding(
                    "sources",
                    sid,
                    message,
                    "restore the original file from git (`git checkout -- sources/`)",
                )
            )
        for rel in files[sid]:
            path = inside(vault.root, rel, under="sources")
            writable = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
            if path.exists() and path.stat().st_mode & writable:
                report.findings.append(
                    Finding("sources", sid, f"{rel} is writable", f"chmod a-w {rel}")
                )


def _check_files(
    vault: Vault, old: Checkpoint, now: Checkpoint, since: _Since, report: DoctorReport
) -> None:
    """Every file of wiki/ whose stat changed, that appeared or went, or that a changed row
    renders, compared with its rendering."""
    db = vault.db
    wiki = {p for p in now.files if p.startswith("wiki/")}
    before = {p for p in old.files if p.startswith("wiki/")}
    paths = {p for p in wiki | before if old.files.get(p) != now.files.get(p)}
    pages = set(since.changed("pages")) | set(since.changed("links"))
    claims = sorted(since.changed("claims") | since.changed("evidence"))
    if claims:
        pages |= {
            str(r[0])
            for r in db.execute(
                "SELECT DISTINCT page_slug FROM claims "
                "WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(claims),),
            )
        }
    if since.changed("links"):  # a link renders on both of its pages
        pages |= {
            str(r[0])
            for r in db.execute(
                "SELECT dst FROM links WHERE src IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(since.changed("links"))),),
            )
        }
    paths |= {f"wiki/{slug}.md" for slug in pages if slug}
    if paths or claims or since.keys or any(since.new.values()):
        paths |= {f"wiki/{name}" for name in GENERATED}
    report.counts["files_rechecked"] = len(paths)
    for rel in sorted(paths):
        if any(part.startswith(".") for part in rel.split("/")[1:]) or not rel.endswith(".md"):
            continue  # the editor's hidden folders; what isn't a page is git's question
        expected = render_path(db, rel)
        path = inside(vault.root, rel, final_symlink_ok=True)
        exists = path.exists() or path.is_symlink()
        if expected is None:
            if exists:
                report.findings.append(
                    Finding(
                        "files",
                        rel,
                        "unknown file: no page in the database renders it",
                        "`affidavit doctor --propose` turns it into a plan, or delete it",
                    )
                )
        elif not exists:
            report.findings.append(
                Finding("files", rel, "missing", "`git -C VAULT checkout -- wiki/` restores it")
            )
        elif path.is_symlink() or path.read_bytes() != expected.encode():
            report.findings.append(
                Finding(
                    "files",
                    rel,
                    "differs from what the database renders (hand edit?)",
                    "`affidavit doctor --propose` turns the edit into a plan",
                )
            )


def _check_git(
    vault: Vault, old: Checkpoint, now: Checkpoint, new_plans: set[str], report: DoctorReport
) -> None:
    import pygit2

    repo = vault.git.repository()
    head = vault.git.head()
    committed: set[str] = set()
    if head is not None and head != old.head:
        tip = pygit2.Oid(hex=head)
        try:
            ok = old.head is None or repo.descendant_of(tip, pygit2.Oid(hex=old.head))
        except (ValueError, KeyError, pygit2.GitError):
            ok = False
        if not ok:
            report.findings.append(
                Finding(
                    "git",
                    "HEAD",
                    "git history was rewritten since the last clean check (HEAD no longer "
                    "descends from it)",
                    "run `affidavit doctor --full`",
                )
            )
        else:
            walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
            if old.head is not None:
                walker.hide(pygit2.Oid(hex=old.head))
            for commit in walker:
                for line in commit.message.splitlines():
                    if line.startswith(PLAN_TRAILER + ":"):
                        committed.add(line.split(":", 1)[1].strip())
    for plan_id in sorted(new_plans - committed):
        report.findings.append(
            Finding("git", plan_id, "applied plan has no git commit", "commit wiki/ by hand")
        )
    wiki_now = {p: v for p, v in now.files.items() if p.startswith("wiki/")}
    wiki_then = {p: v for p, v in old.files.items() if p.startswith("wiki/")}
    if wiki_now == wiki_then and now.git_index == old.git_index and head == old.head:
        report.counts["git_status_skipped"] = 1  # git's answer can't have changed: it was clean
    elif not vault.git.is_clean(["wiki"]):
        report.findings.append(
            Finding(
                "git",
                "wiki/",
                "wiki/ has changes not committed to git",
                "see `git -C VAULT status wiki`",
            )
        )
    for relpath in [] if report.counts.get("git_status_skipped") else vault.git.untracked("wiki"):
        if any(part.startswith(".") for part in relpath.split("/")[1:-1]):
            continue
        report.findings.append(
            Finding(
                "git",
                relpath,
                "untracked file under wiki/: no applied plan wrote it",
                "delete it, or make it a page with `affidavit doctor --propose`",
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


__all__ = ["Checkpoint", "load", "run_doctor_since", "run_full", "save", "take"]
