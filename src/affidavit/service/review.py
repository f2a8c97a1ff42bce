"""Service functions the web review desk needs beyond the API's: read-only views, no rules.

The desk (``affidavit.web``) decides nothing: approving, rejecting and proposing go through
:mod:`affidavit.service.vaults` like every API route. What lives here only *reads* a vault to show
a person what they decide on: a source's stored text around recorded offsets, a page's git
history, the audit chain's verdict, and a fingerprint of a plan's reviewable state so that a
decision made on an old screen can be refused ("changed since you opened it").
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from .. import inbox
from ..clock import iso
from ..db import transaction
from ..errors import ConflictError, IntegrityError, NotFoundError
from ..lint.findings import FindingStore, Status, StoredFinding
from ..lint.fixes import propose_fixes
from ..plan.schema import SLUG_PATTERN
from ..retract import SourceRetraction, describe_radius, propose_source_retraction
from ..sources.extract import location
from ..sources.store import SourceRecord, SourceStore
from ..store.audit import verify_chain
from ..vault import Vault

EXCERPT_CHARS = 600
"""How much stored text a source view shows either side of a span."""


@dataclass(frozen=True)
class Excerpt:
    """A span of a source's stored text with what surrounds it: ``before`` + ``span`` + ``after``."""

    source_id: str
    source_name: str
    trust: str
    location: str
    start: int
    end: int
    before: str
    span: str
    after: str
    cut_before: bool
    cut_after: bool


def excerpt(vault: Vault, source_ref: str, start: int, end: int) -> Excerpt:
    """The stored text of a source at ``start:end`` with :data:`EXCERPT_CHARS` either side."""
    store = SourceStore(vault)
    record = store.get(source_ref)
    return cut(record, store.text(record.id), start, end)


def cut(record: SourceRecord, text: str, start: int, end: int) -> Excerpt:
    """``text`` (the stored text of ``record``) at ``start:end`` with what surrounds it."""
    if not 0 <= start <= end <= len(text):
        raise NotFoundError(
            f"source {record.id[:12]} has {len(text)} characters; there is no span {start}–{end}."
        )
    left, right = max(0, start - EXCERPT_CHARS), min(len(text), end + EXCERPT_CHARS)
    return Excerpt(
        source_id=record.id,
        source_name=record.name,
        trust=record.trust,
        location=location(text, record.text_map, start),
        start=start,
        end=end,
        before=text[left:start],
        span=text[start:end],
        after=text[end:right],
        cut_before=left > 0,
        cut_after=right < len(text),
    )


def plan_fingerprint(vault: Vault, ref: str) -> str:
    """A digest of everything that decides what approving a plan would do now: its status, its
    expiry and which of its operations are still pending. A screen records it when it shows the
    plan; a decision sent with another fingerprint was made on a plan that changed since."""
    record = inbox.get_plan(vault, ref)
    pending = inbox.pending_ops(vault, record) if record.status == "pending" else []
    state = [record.id, record.status, record.expires_at, pending]
    return hashlib.sha256(json.dumps(state).encode()).hexdigest()[:24]


class StaleScreen(ConflictError):
    """A decision taken on a screen that showed a plan in another state than it is in now (the
    only refusal a desk may title "changed since you opened it")."""


def check_unchanged(vault: Vault, ref: str, seen: str) -> None:
    """Refuse a decision taken on a screen that showed the plan in another state."""
    record = inbox.get_plan(vault, ref)
    inbox.expire_due(vault)
    record = inbox.get_plan(vault, record.id)
    if record.status != "pending":
        raise StaleScreen(
            f"plan {record.id[:12]} changed since you opened it: it is now {record.status}. "
            "Reload the inbox; nothing was written."
        )
    if plan_fingerprint(vault, record.id) != seen:
        raise StaleScreen(
            f"plan {record.id[:12]} changed since you opened it (some of its operations were "
            "decided elsewhere). Reload it and decide again; nothing was written."
        )


@dataclass(frozen=True)
class Commit:
    sha: str
    at: str
    subject: str


def page_history(vault: Vault, slug: str, limit: int = 50) -> list[Commit]:
    """The git log of a page's file, newest first."""
    if vault.db.execute("SELECT 1 FROM pages WHERE slug = ?", (slug,)).fetchone() is None:
        raise NotFoundError(f"no page {slug!r}.")
    if vault.read_only:  # W10: no git in a vault this process only reads
        return []
    if re.fullmatch(SLUG_PATTERN, slug) is None:  # a row read back from the vault: untrusted
        raise IntegrityError(f"page slug {slug!r} in the database is not a valid slug.")
    out = vault.git.run(
        "log", f"-n{limit}", "--format=%H%x1f%cI%x1f%s", "--", f"wiki/{slug}.md", check=False
    )
    commits = []
    for line in out.splitlines():
        parts = line.split("\x1f")
        if len(parts) == 3:
            commits.append(Commit(sha=parts[0], at=parts[1], subject=parts[2]))
    return commits


def audit_verdict(vault: Vault) -> list[str]:
    """The audit chain's problems, walked from its first entry; empty when intact."""
    return verify_chain(vault.db)


# --- lint findings and source retraction: the same calls as the API's routes and the CLI ----------


def list_findings(vault: Vault, status: Status = "open", limit: int = 200) -> list[StoredFinding]:
    return FindingStore(vault.db).list((status,), (), limit)


def findings_page(
    vault: Vault, status: Status, kind: str, severity: str, offset: int, limit: int
) -> tuple[tuple[StoredFinding, ...], int, dict[str, int]]:
    """A page of findings by status, kind and severity: the rows, how many match, the kinds."""
    return FindingStore(vault.db).page(status, kind, severity, offset, limit)


def audit_newest(
    vault: Vault, before: int | None, limit: int
) -> tuple[list[dict[str, object]], int | None]:
    """Audit entries newest first: those before ``before`` (every one when None), and the
    ``before`` of the next (older) page, None on the last."""
    rows = vault.db.execute(
        "SELECT seq, at, action, plan_id, actor, hash FROM audit WHERE seq < ? "
        "ORDER BY seq DESC LIMIT ?",
        (before if before is not None else 2**62, limit + 1),
    ).fetchall()
    entries = [
        dict(zip(("seq", "at", "action", "plan_id", "actor", "hash"), r, strict=True))
        for r in rows[:limit]
    ]
    older = int(rows[limit - 1][0]) if len(rows) > limit else None
    return entries, older


def decide_finding(
    vault: Vault, ref: str, status: Status, actor: str, note: str = ""
) -> StoredFinding:
    """Dismiss, resolve or reopen a finding (audited), as ``POST …/lint/findings/{id}/decision``."""
    store = FindingStore(vault.db)
    with vault.write_lock(), transaction(vault.db):
        return store.decide(ref, status, actor, iso(vault.clock()), note)


def propose_finding_fix(vault: Vault, ref: str, actor: str) -> tuple[list[str], str]:
    """Propose the fix plan of one finding (it waits in the inbox): the plan ids, or why none."""
    store = FindingStore(vault.db)
    finding = store.get(ref)
    report = propose_fixes(vault, [finding], actor, {})
    return report.plans, report.skipped.get(finding.id, "")


def source_retraction(
    vault: Vault, ref: str, reason: str, actor: str, *, dry_run: bool
) -> tuple[SourceRetraction, list[str]]:
    """The blast radius of retracting a source, in words, and (unless ``dry_run``) the proposed
    ``retract_source`` plan — exactly ``affidavit sources retract``."""
    done = propose_source_retraction(vault, ref, reason, actor, dry_run=dry_run)
    return done, describe_radius(done.radius)


__all__ = [
    "Commit",
    "Excerpt",
    "StaleScreen",
    "audit_newest",
    "audit_verdict",
    "check_unchanged",
    "decide_finding",
    "excerpt",
    "findings_page",
    "list_findings",
    "page_history",
    "plan_fingerprint",
    "propose_finding_fix",
    "source_retraction",
]
