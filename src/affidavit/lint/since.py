"""Lint since its last run (issue 25): what changed since a checkpoint, so that the periodic lint
(``lint.every_ingests``) and ``affidavit lint`` cost what changed, not what the wiki holds;
``affidavit lint --full`` checks everything.

After every run (full or not) lint records a **checkpoint** in ``.affidavit/lint-checkpoint.json``
(0600), taken under the writer lock *before* the run reads anything: how far the change log
``doctor_changes`` had got (triggers log every row of claims, evidence, pages, links, sources,
plans, audit and context snapshots updated or deleted: migration ``m014_doctor_changes``), the
largest rowid of each of those tables, the database's schema version, the support check's version
and the stat (size, mtimes, inode, mode) of every file under ``wiki/`` and ``sources/``.

The next run reads from them its :class:`Scope`:

- **claims**: those inserted since or whose row or evidence was logged since; the active ones are
  the claims whose pairs the extractive finder looks at (through the claim-word index,
  :mod:`affidavit.lint.nearby`), and with the active claims citing a changed source, those whose
  quotes are found again and whose support is judged again (every active claim when the support
  check's version changed);
- **sources**: inserted or logged since, or one of whose files' stat changed: re-hashed;
- **files**: the files under ``wiki/`` rendered again and compared: the pages of the changed
  claims (not of the claims a re-ingest carried unchanged: :func:`settle`), pages inserted or
  logged since, the pages linking to or linked from those inserted or whose title or slug changed
  (``page_titles`` in the change log, ``m030_evidence_cited``: a page shows no more of its
  neighbours than their titles), both ends of the links inserted since, every file whose stat changed (or that appeared or went), and the
  generated files (index, log, context). A link row updated or deleted, a page deleted, a claim
  deleted (never done by the door) means every file.

The cheap checks that read a table rather than the wiki's text (links and orphans, empty pages,
vectors, expiring plans) run whole. No checkpoint, an unreadable one, or a schema changed since
(a migration) means a full run. The extractive finder's findings about pairs of claims that did
not change stay as the last run left them (a new claim can make a word too common for an old
pair to be looked at; ``--full`` looks at every pair again); a finding about a claim that is no
longer active is resolved either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..doctor import FileProblem, SourceProblem
from ..doctor_since import file_stats
from ..sources.store import SourceStore
from ..store.atomic import atomic_write
from ..store.paths import inside, page_relpath
from ..store.render import CONTEXT_ARCHIVE, GENERATED, render_path
from ..support import check_version, load_model
from ..vault import Vault

VERSION = 1
NAME = "lint-checkpoint.json"
TABLES = ("claims", "evidence", "pages", "links", "sources", "plans", "audit", "context_snapshots")
"""The tables whose rowids a checkpoint records (those ``doctor_changes`` logs)."""
ROWID_TABLES = tuple(t for t in TABLES if t != "evidence")
"""The tables a checkpoint records the largest rowid of: ``evidence`` is a view since
``m021_lean_evidence`` (no rowid); its rows come with a new claim, or are logged by a trigger."""
FULL_FILES_ON = ("links",)
"""Tables whose logged change (an update or delete: never done by the door) re-checks every file:
a deleted link's other end is not in the log."""


@dataclass
class LintPoint:
    """The state a lint run started from (see the module's docstring)."""

    change_seq: int = 0
    schema: int = 0
    rowids: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[int]] = field(default_factory=dict)
    support_check: str = ""
    settings: list[int] = field(default_factory=list)
    """The lint thresholds the run compared pairs with: when they change, a full run."""

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, **self.__dict__}

    @classmethod
    def from_json(cls, data: Any) -> LintPoint | None:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        try:
            point = cls(**{k: v for k, v in data.items() if k != "version"})
        except TypeError:
            return None
        ints = (point.change_seq, point.schema, *point.rowids.values())
        if not all(isinstance(n, int) for n in ints) or not isinstance(point.files, dict):
            return None
        if set(point.rowids) != set(ROWID_TABLES):
            return None
        return point


def take(vault: Vault) -> LintPoint:
    """The vault's state now, as a checkpoint records it (the caller holds the writer lock)."""
    db = vault.db
    change = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'doctor_changes'").fetchone()
    files = file_stats(vault.root, "wiki")
    files.update(file_stats(vault.root, "sources"))
    return LintPoint(
        change_seq=int(change[0]) if change else 0,
        schema=int(db.execute("PRAGMA schema_version").fetchone()[0]),
        rowids={
            t: int(db.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0])
            for t in ROWID_TABLES
        },
        files=files,
        support_check=check_version(load_model(vault.config)),
    )


def checkpoint_path(vault: Vault) -> Path:
    return vault.state_dir / NAME


def load(vault: Vault) -> LintPoint | None:
    try:
        data = json.loads(checkpoint_path(vault).read_bytes())
    except (OSError, ValueError):
        return None
    return LintPoint.from_json(data)


def save(vault: Vault, point: LintPoint) -> bool:
    """Record the checkpoint; False when it can't be (a vault another user owns is only read)."""
    try:
        if vault.state_dir.stat().st_uid != os.geteuid():
            return False
        data = json.dumps(point.to_json(), separators=(",", ":"), sort_keys=True).encode()
        atomic_write(checkpoint_path(vault), data, 0o600)
    except OSError:
        return False
    return True


def forget(vault: Vault) -> None:
    """Drop the checkpoint: the next run is a full one."""
    with contextlib.suppress(OSError):
        checkpoint_path(vault).unlink()


@dataclass
class Scope:
    """What an incremental run looks at again (see the module's docstring)."""

    claims: set[str] = field(default_factory=set)
    """Claims inserted or changed since the checkpoint (any status)."""
    checked_claims: set[str] | None = None
    """Active claims whose quotes and support are checked again (None: every one)."""
    sources: set[str] = field(default_factory=set)
    files: set[str] | None = None
    """Files under wiki/ rendered again and compared (None: every one)."""
    pages: set[str] = field(default_factory=set)
    """Pages inserted or changed since, and both ends of the links inserted since."""

    def to_json(self) -> dict[str, Any]:
        return {
            "claims": len(self.claims),
            "checked_claims": None if self.checked_claims is None else len(self.checked_claims),
            "sources": len(self.sources),
            "files": None if self.files is None else len(self.files),
        }


def _in_chunks(values: list[str], size: int = 500) -> list[list[str]]:
    return [values[n : n + size] for n in range(0, len(values), size)]


def scope_since(
    vault: Vault, old: LintPoint, now: LintPoint, settled: set[str] | None = None
) -> Scope | None:
    """What changed between ``old`` and ``now`` (both taken of ``vault``); None when only a full
    run can tell (the schema changed, or the change log went back). The pages of ``settled``
    claims (:func:`settle`) are not rendered again for them: a carry leaves a page's bytes as
    they were (its footnotes cite ``evidence_cited``); a page that changed otherwise is in the
    scope for that change (its row, another claim, its file's stat)."""
    db = vault.db
    if old.schema != now.schema or old.change_seq > now.change_seq:
        return None
    if any(old.rowids[t] > now.rowids[t] for t in ROWID_TABLES):
        return None
    logged: dict[str, set[str]] = {}
    for tbl, key in db.execute(
        "SELECT tbl, key FROM doctor_changes WHERE seq > ? AND seq <= ?",
        (old.change_seq, now.change_seq),
    ):
        logged.setdefault(str(tbl), set()).add(str(key))
    claims = set(logged.get("claims", ())) | set(logged.get("evidence", ()))
    pages: set[str] = set()
    touched: set[str] = set(logged.get("pages", ()))  # rows changed: their own files
    renamed: set[str] = set(logged.get("page_titles", ()))  # titles changed: their neighbours too
    sources = set(logged.get("sources", ()))
    full_files = any(logged.get(t) for t in FULL_FILES_ON)

    def since(table: str, columns: str) -> list[tuple[Any, ...]]:
        return db.execute(
            f"SELECT {columns} FROM {table} WHERE rowid > ? AND rowid <= ?",
            (old.rowids[table], now.rowids[table]),
        ).fetchall()

    for (cid,) in since("claims", "id"):
        claims.add(str(cid))
    for (slug,) in since("pages", "slug"):
        renamed.add(str(slug))
    linked: set[str] = set()
    for src, dst in since("links", "src, dst"):
        linked.update((str(src), str(dst)))
    pages |= linked
    for (sid,) in since("sources", "id"):
        sources.add(str(sid))

    # files whose stat changed, appeared or went
    changed_files = {
        p for p in now.files.keys() | old.files.keys() if now.files.get(p) != old.files.get(p)
    }
    wiki_files = {p for p in changed_files if p.startswith("wiki/")}
    source_files = {p for p in changed_files if p.startswith("sources/")}
    if source_files:
        marks = sorted(source_files)
        for part in _in_chunks(marks):
            q = ",".join("?" * len(part))
            for (sid,) in db.execute(
                f"SELECT id FROM sources WHERE original_file IN ({q}) OR text_file IN ({q})",
                [*part, *part],
            ):
                sources.add(str(sid))

    # the pages the changed claims are on; gone claims (never by the door) mean every file
    quiet = _existed(db, settled & claims, old.rowids["claims"]) if settled else set()
    known = len(quiet)
    for part in _in_chunks(sorted(claims - quiet)):
        q = ",".join("?" * len(part))
        for (slug,) in db.execute(f"SELECT page_slug FROM claims WHERE id IN ({q})", part):
            pages.add(str(slug))
            known += 1
    if known < len(claims):
        full_files = True
    for part in _in_chunks(sorted(touched | renamed)):
        q = ",".join("?" * len(part))
        found = db.execute(f"SELECT count(*) FROM pages WHERE slug IN ({q})", part).fetchone()[0]
        if found < len(part):
            full_files = True  # a page gone: the pages that linked to it are not known
    for part in _in_chunks(sorted(renamed)):  # a page's title shows in the pages it links
        q = ",".join("?" * len(part))
        for src, dst in db.execute(
            f"SELECT src, dst FROM links WHERE src IN ({q}) OR dst IN ({q})", [*part, *part]
        ):
            pages.update((str(src), str(dst)))
    renamed |= touched
    pages |= renamed

    checked: set[str] | None = None
    if old.support_check == now.support_check:
        checked = set()
        for part in _in_chunks(sorted(claims - quiet)):  # settle() takes the quiet ones out
            q = ",".join("?" * len(part))
            checked.update(
                str(r[0])
                for r in db.execute(
                    f"SELECT id FROM claims WHERE status = 'active' AND id IN ({q})", part
                )
            )
        for part in _in_chunks(sorted(sources)):
            q = ",".join("?" * len(part))
            checked.update(
                str(r[0])
                for r in db.execute(
                    f"SELECT DISTINCT c.id FROM evidence e JOIN claims c ON c.id = e.claim_id "
                    f"WHERE c.status = 'active' AND e.source_key IN "
                    f"(SELECT key FROM source_keys WHERE source_id IN ({q}))",
                    part,
                )
            )

    files: set[str] | None = None
    if not full_files:
        files = {f"wiki/{name}" for name in GENERATED} | wiki_files
        for slug in pages:
            if slug == "":
                continue  # context.md: generated, already in
            try:
                files.add(page_relpath(slug))
            except Exception:  # a forged slug renders nothing: every file, to be sure
                files = None
                break
        if files is not None and CONTEXT_ARCHIVE in pages:
            files.add(page_relpath(CONTEXT_ARCHIVE))
    return Scope(
        claims=claims, checked_claims=checked, sources=sources, files=files, pages=renamed | linked
    )


def claims_since(db: sqlite3.Connection, old: LintPoint) -> set[str]:
    """The claims :func:`scope_since` from ``old`` names (:attr:`Scope.claims`) as the database
    stands now: inserted past its largest rowid, or whose row or evidence was logged since."""
    claims = {
        str(r[0])
        for r in db.execute(
            "SELECT key FROM doctor_changes WHERE seq > ? AND tbl IN ('claims', 'evidence')",
            (old.change_seq,),
        )
    }
    claims.update(
        str(r[0])
        for r in db.execute("SELECT id FROM claims WHERE rowid > ?", (old.rowids["claims"],))
    )
    return claims


def settle(db: sqlite3.Connection, scope: Scope, settled: set[str], upto: int) -> Scope:
    """``scope`` without the claims of ``settled`` that existed at the checkpoint (``upto``: its
    largest ``claims`` rowid), in its pairs and its quote and support checks: claims a new
    version of their source carried this run (:mod:`affidavit.ingest.lineage`), whose words,
    page, trust and stated version are what the last run looked at — the carry re-found their
    quotes. A claim added since the checkpoint stays in scope: no run looked at it yet. Its
    page's file is not rendered again for it (:func:`scope_since`): the carry left it as it was."""
    known = _existed(db, settled & scope.claims, upto)
    if not known:
        return scope
    checked = None if scope.checked_claims is None else scope.checked_claims - known
    return replace(scope, claims=scope.claims - known, checked_claims=checked)


def _existed(db: sqlite3.Connection, claims: set[str], upto: int) -> set[str]:
    """Those of ``claims`` that existed at the checkpoint (``upto``: its largest rowid)."""
    known: set[str] = set()
    for part in _in_chunks(sorted(claims)):
        q = ",".join("?" * len(part))
        known.update(
            str(r[0])
            for r in db.execute(
                f"SELECT id FROM claims WHERE rowid <= ? AND id IN ({q})", [upto, *part]
            )
        )
    return known


# --- the checks' re-derivations, over a scope --------------------------------------------------


def scoped_expected(db: sqlite3.Connection, files: set[str]) -> dict[str, str]:
    """Those of ``files`` the database renders, as :func:`~affidavit.store.render.expected_files`
    renders them (the generated files always)."""
    out = {f"wiki/{name}": render_path(db, f"wiki/{name}") or "" for name in GENERATED}
    for relpath in sorted(files):
        if relpath in out or not _wiki_markdown(relpath):
            continue
        text = render_path(db, relpath)
        if text is not None:
            out[relpath] = text
    return out


def _wiki_markdown(relpath: str) -> bool:
    """A file :func:`~affidavit.doctor.file_problems` looks at: ``wiki/…/*.md`` outside hidden
    folders."""
    parts = relpath.split("/")
    return (
        parts[0] == "wiki"
        and relpath.endswith(".md")
        and not any(part.startswith(".") for part in parts[1:])
    )


def scoped_file_problems(
    vault: Vault, expected: dict[str, str], files: set[str]
) -> list[FileProblem]:
    """:func:`~affidavit.doctor.file_problems` over ``expected`` and the files of ``files``: a
    file there the database doesn't render is unknown."""
    problems = file_problems_of(vault, expected)
    for relpath in sorted(files):
        if relpath in expected or not _wiki_markdown(relpath):
            continue
        path = inside(vault.root, relpath, final_symlink_ok=True)
        if path.exists() or path.is_symlink():
            problems.append(FileProblem(relpath, "unknown"))
    return problems


def file_problems_of(vault: Vault, expected: dict[str, str]) -> list[FileProblem]:
    """The files of ``expected`` missing or different on disk."""
    problems: list[FileProblem] = []
    for relpath, text in expected.items():
        path = inside(vault.root, relpath, final_symlink_ok=True)  # W10: stays in the vault
        if not path.exists() and not path.is_symlink():
            problems.append(FileProblem(relpath, "missing", text))
        elif path.is_symlink() or path.read_bytes() != text.encode():
            problems.append(FileProblem(relpath, "differs", text))
    return problems


def scoped_source_problems(
    vault: Vault, store: SourceStore, sources: set[str]
) -> list[SourceProblem]:
    """:func:`~affidavit.doctor.source_problems` of the stored sources of ``sources``."""
    problems: list[SourceProblem] = []
    present = {
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM sources WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(sources)),),
        )
    }
    for record in sorted((store.get(s) for s in present), key=lambda r: (r.added_at, r.name, r.id)):
        problems += [SourceProblem(record.id, p, True) for p in store.check_integrity(record.id)]
        for relpath in (record.original_file, record.text_file):
            path = inside(vault.root, relpath, under="sources")
            if path.exists() and path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
                problems.append(SourceProblem(record.id, f"{relpath} is writable", False))
    return problems


def evidence_rows(db: sqlite3.Connection, claims: list[str]) -> list[tuple[Any, ...]]:
    """The evidence rows :func:`~affidavit.doctor.quote_problems` reads, of the active claims of
    ``claims``."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(
        'SELECT e.claim_id, c.page_slug, e.idx, e.source_id, e.quote, e.start, e."end", '
        "e.location FROM evidence e JOIN claims c ON c.id = e.claim_id "
        "WHERE +c.status = 'active' AND c.id IN (SELECT value FROM json_each(?)) "
        "ORDER BY e.claim_id, e.idx",
        (json.dumps(claims),),
    ).fetchall()
