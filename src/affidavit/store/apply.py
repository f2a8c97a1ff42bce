"""The one door (SPEC W4, W6): :func:`apply` is the only code that writes the wiki.

An apply is all or nothing across database, markdown and git. Several plans approved together
are one batch (:func:`apply_batch`), applied in dependency order as one such unit:

1. inside one SQLite transaction, the gate re-admits each plan's selected operations against the
   wiki as the earlier plans of the batch left it;
2. that transaction writes pages, claims, links, context, the plan's status and the audit
   entry, and the affected files are rendered from inside that transaction;
3. the new files are written to unique temp files and fsynced;
4. a journal naming every file and its temp file is written and fsynced;
5. the transaction commits (the commit point);
6. temp files are renamed over the old ones and the directory fsynced;
7. one git commit of exactly the files written records the batch, with an ``Affidavit-Plan``
   trailer per plan and an ``Affidavit-Batch`` trailer;
8. the journal is removed.

A crash before 5 rolls back (the temp files are deleted); a crash after 5 rolls forward (files are
re-rendered from the database, which is deterministic, and the commit is made if HEAD lacks it).
See :mod:`affidavit.store.recovery`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..clock import iso
from ..errors import AdmissionError, ConflictError
from ..evidence import Verifier
from ..gate.admission import ADMITTED, QUARANTINED, Admission, ClaimResult, admit
from ..hashing import canonical_json, sha256_hex
from ..plan.schema import (
    AddClaims,
    ClaimDraft,
    CreatePage,
    LinkPages,
    Plan,
    RetractClaim,
    RetractSource,
    SupersedeClaim,
    UpdateContext,
)
from ..retrieval.tantivy_index import refresh_search_index
from ..sources.extract import location
from ..sources.store import SourceStore
from ..vault import Vault
from . import audit
from .atomic import atomic_write, fsync_dir, write_temp
from .batch import Prepared, creates, dependency_order, numbers, prepare
from .batch import load_plan as load_plan  # re-exported: where callers have found it
from .blast import LIVE, BlastRadius, blast_radius, claim_radius
from .gitrepo import BATCH_TRAILER, PLAN_TRAILER
from .paths import inside, page_relpath
from .render import CONTEXT_ARCHIVE, expected_files, render_context, render_path

Step = Callable[[str], None]
APPLY_STEPS = (
    "admitted",
    "db_written",
    "temp_files",
    "journal",
    "db_commit",
    "renamed",
    "git_commit",
    "done",
)
"""The points of an apply, in order; tests kill the process at each one in turn."""


@dataclass(frozen=True)
class Approval:
    """Who let a plan through: a person, the configured policy, or the doctor."""

    actor: str
    kind: str = "person"  # person | policy


@dataclass
class ApplyResult:
    plan_id: str
    applied: bool
    message: str
    ops: list[int] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    commit: str | None = None
    admission: Admission | None = None
    superseded: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    pending_ops: list[int] = field(default_factory=list)  # left for a later approval


def gate_services(vault: Vault) -> tuple[SourceStore, Verifier]:
    """The source store and quote verifier the gate reads through."""
    store = SourceStore(vault)
    return store, Verifier(store)


def claim_id(page: str, draft: ClaimDraft, salt: str = "") -> str:
    """A claim's id, derived from where it lives and what it says and quotes, so the same sources
    give the same ids in any vault. ``salt`` (the plan id) separates a re-added claim from an
    identical one retracted or superseded earlier."""
    body = [page, draft.text, [e.id_parts() for e in draft.evidence], salt]
    return "c-" + sha256_hex(canonical_json(body))[:16]


def _noop(_: str) -> None:
    return None


class _Writer:
    """Writes the admitted part of a plan into the database, inside the caller's transaction."""

    def __init__(self, vault: Vault, store: SourceStore, plan_id: str, now: str) -> None:
        self.db = vault.db
        self.vault = vault
        self.store = store
        self.plan_id = plan_id
        self.now = now
        self.touched: set[str] = set()
        self.claim_ids: list[str] = []
        self.superseded: list[str] = []
        self.retracted: list[str] = []
        self.context_changed = False

    def _next_position(self, page: str) -> int:
        row = self.db.execute(
            "SELECT coalesce(max(position), -1) + 1 FROM claims WHERE page_slug = ?", (page,)
        ).fetchone()
        return int(row[0])

    def insert_claim(
        self,
        op_index: int,
        result: ClaimResult,
        draft: ClaimDraft,
        page: str,
        section: str,
        position: int | None = None,
    ) -> str:
        cid = claim_id(page, draft)
        if self.db.execute("SELECT 1 FROM claims WHERE id = ?", (cid,)).fetchone():
            cid = claim_id(page, draft, salt=f"{self.plan_id}/{op_index}/{result.index}")
        pos = self._next_position(page) if position is None else position
        self.db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
            "created_at, derived_from) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            (
                cid,
                page,
                section,
                pos,
                draft.text,
                result.trust,
                self.plan_id,
                self.now,
                json.dumps(list(draft.derived_from)),
            ),
        )
        for idx, quote in enumerate(result.evidence):
            assert quote.source_id and quote.start is not None and quote.end is not None
            record = self.store.get(quote.source_id)
            text = self.store.text(quote.source_id)
            where = location(text, record.text_map, quote.start)
            # The source's own words at the verified offsets, never the proposer's string (W3).
            span = text[quote.start : quote.end]
            self.db.execute(
                'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cid, idx, quote.source_id, span, quote.start, quote.end, where),
            )
        self.claim_ids.append(cid)
        if page:
            self.touched.add(page)
        else:
            self.context_changed = True
        return cid

    def _touch_page(self, slug: str) -> None:
        self.db.execute("UPDATE pages SET updated_at = ? WHERE slug = ?", (self.now, slug))
        self.touched.add(slug)

    def write(self, plan: Plan, admission: Admission) -> list[dict[str, object]]:
        """Apply every passing operation; returns a summary per operation for log and audit."""
        summary: list[dict[str, object]] = []
        for result in admission.ops:
            if result.status not in (ADMITTED, QUARANTINED):
                continue
            op = plan.operations[result.index]
            added = [c for c in result.claims if not c.role]  # not the claims it names
            passing = [(c, d) for c, d in zip(added, _drafts(op), strict=True) if c.passes]
            title = ""
            if isinstance(op, CreatePage):
                self.db.execute(
                    "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, "
                    "plan_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (op.slug, op.title, op.summary, op.category, self.now, self.now, self.plan_id),
                )
                self.touched.add(op.slug)
                for claim, draft in passing:
                    self.insert_claim(result.index, claim, draft, op.slug, op.section)
                title = op.title
            elif isinstance(op, AddClaims):
                for claim, draft in passing:
                    self.insert_claim(result.index, claim, draft, op.page, op.section)
                self._touch_page(op.page)
                title = f"{op.page} (+{len(passing)} claims)"
            elif isinstance(op, LinkPages):
                self.db.execute(
                    "INSERT INTO links (src, dst, plan_id) VALUES (?, ?, ?)",
                    (op.page, op.to, self.plan_id),
                )
                self._touch_page(op.page)
                self.touched.add(op.to)
                title = f"{op.page} → {op.to}"
            elif isinstance(op, UpdateContext):
                if "radius" in result.detail:  # replace: the gate recorded what goes
                    radius = BlastRadius.from_json(result.detail["radius"])
                    self._retract(result.index, op.op, "replaced by a new context", radius)
                for claim, draft in passing:
                    self.insert_claim(result.index, claim, draft, "", "Context")
                self.context_changed = True
                title = f"context ({op.mode}, {len(passing)} entries)"
            elif isinstance(op, SupersedeClaim) and op.successor is not None:
                self._end(op.claim, "superseded", op.successor)
                title = f"{op.claim} → {op.successor}"
            elif isinstance(op, RetractClaim):
                radius = claim_radius(self.db, [op.claim])
                self._retract(result.index, op.op, op.reason, radius)
                title = f"{op.claim}: {_retracted(radius)}"
            elif isinstance(op, RetractSource):
                title = self._retract_source(result.index, op)
            elif isinstance(op, SupersedeClaim):
                old = self.db.execute(
                    "SELECT page_slug, section, position FROM claims WHERE id = ?", (op.claim,)
                ).fetchone()
                claim, draft = passing[0]
                new = self.insert_claim(
                    result.index, claim, draft, old["page_slug"], old["section"], old["position"]
                )
                self._end(op.claim, "superseded", new)
                title = f"{op.claim} → {new}"
            summary.append({"index": result.index, "kind": op.op, "title": title})
        return summary

    def _touch(self, page: str) -> None:
        if page:
            self._touch_page(page)
        else:
            self.context_changed = True

    def _end(self, claim: str, status: str, successor: str | None = None) -> None:
        """Take one claim out of the wiki: ``superseded`` (by ``successor``) or ``retracted``."""
        row = self.db.execute("SELECT page_slug FROM claims WHERE id = ?", (claim,)).fetchone()
        marks = ",".join("?" * len(LIVE))
        self.db.execute(
            f"UPDATE claims SET status = ?, superseded_by = coalesce(?, superseded_by) "
            f"WHERE id = ? AND status IN ({marks})",
            (status, successor, claim, *LIVE),
        )
        (self.superseded if status == "superseded" else self.retracted).append(claim)
        self._touch(row["page_slug"])

    def _retract(self, index: int, kind: str, reason: str, radius: BlastRadius) -> None:
        """Retract what ``radius`` says goes, with an audit entry giving each claim's reason
        (the rendered "Retracted" list reads it from there)."""
        why: dict[str, str] = {}
        for claim in radius.retracted:
            why[claim.id] = (
                f"source {radius.source[:12]} retracted: {reason}" if radius.source else reason
            )
        for claim in radius.derived:
            why[claim.id] = f"rests on retracted claim {claim.rests_on[0]}"
        for claim_id in why:
            self._end(claim_id, "retracted")
        detail = {
            "op": index,
            "kind": kind,
            "reason": reason,
            "source": radius.source or None,
            "claims": why,
            "counts": radius.counts,
        }
        audit.append(self.db, self.now, "retracted", self.plan_id, "door", detail)

    def _retract_source(self, index: int, op: RetractSource) -> str:
        source_id = self.store.resolve(op.source)
        assert source_id is not None  # the gate found it
        radius = blast_radius(self.db, source_id, exclude_plan=self.plan_id)
        self.db.execute("UPDATE sources SET status = 'retracted' WHERE id = ?", (source_id,))
        for kept in radius.kept:
            self.db.execute("UPDATE claims SET trust = ? WHERE id = ?", (kept.new_trust, kept.id))
        for page in radius.pages:
            self._touch(page)
        self._retract(index, op.op, op.reason, radius)
        return (
            f"source {radius.source_name} ({source_id[:12]}): {_retracted(radius)}, "
            f"{len(radius.kept)} kept with other evidence"
        )

    def spill_context(self, cap: int) -> None:
        """Move the oldest context entries to the archive page until context.md fits its cap."""
        while render_context(self.db).count("\n") > cap:
            oldest = self.db.execute(
                "SELECT id FROM claims WHERE page_slug = '' AND status = 'active' "
                "ORDER BY position, id LIMIT 1"
            ).fetchone()
            if oldest is None:
                return
            exists = self.db.execute(
                "SELECT 1 FROM pages WHERE slug = ?", (CONTEXT_ARCHIVE,)
            ).fetchone()
            if not exists:
                self.db.execute(
                    "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, "
                    "plan_id) VALUES (?, 'Context archive', ?, 'meta', ?, ?, ?)",
                    (
                        CONTEXT_ARCHIVE,
                        "Overview entries moved out of context.md to keep it under its line cap.",
                        self.now,
                        self.now,
                        self.plan_id,
                    ),
                )
            self.db.execute(
                "UPDATE claims SET page_slug = ?, section = 'Archived context', position = ? "
                "WHERE id = ?",
                (CONTEXT_ARCHIVE, self._next_position(CONTEXT_ARCHIVE), oldest["id"]),
            )
            self._touch_page(CONTEXT_ARCHIVE)
            # pages whose superseded claims link to it link to its new page
            for (page,) in self.db.execute(
                "SELECT DISTINCT page_slug FROM claims WHERE superseded_by = ? AND page_slug != ''",
                (oldest["id"],),
            ).fetchall():
                self._touch_page(page)


def _retracted(radius: BlastRadius) -> str:
    return f"{len(radius.retracted)} claim(s) retracted, {len(radius.derived)} derived"


def _drafts(op: object) -> list[ClaimDraft]:
    if isinstance(op, (CreatePage, AddClaims)):
        return list(op.claims)
    if isinstance(op, UpdateContext):
        return list(op.entries)
    if isinstance(op, SupersedeClaim):
        return [op.by] if op.by is not None else []
    return []


def commit_message(plan_id: str, summary: list[dict[str, object]], approval: Approval) -> str:
    return batch_message([(plan_id, summary)], approval, "")


def batch_message(
    plans: list[tuple[str, list[dict[str, object]]]], approval: Approval, batch_id: str
) -> str:
    """The commit message of a batch: what each plan did, then one ``Affidavit-Plan`` trailer per
    plan and the ``Affidavit-Batch`` trailer recovery looks for."""
    lines: list[str] = []
    if len(plans) == 1:
        plan_id, summary = plans[0]
        kinds = ", ".join(f"{s['kind']}" for s in summary)
        lines = [f"Apply plan {plan_id[:12]}: {kinds}"[:120], ""]
        lines += [f"{int(str(s['index'])) + 1}. {s['kind']}: {s['title']}" for s in summary]
    else:
        ops = sum(len(summary) for _, summary in plans)
        lines = [f"Apply {len(plans)} plans: {ops} operation(s)", ""]
        for plan_id, summary in plans:
            lines.append(f"Plan {plan_id[:12]}:")
            lines += [f"  {int(str(s['index'])) + 1}. {s['kind']}: {s['title']}" for s in summary]
    lines += ["", f"Approved by {approval.actor} ({approval.kind}).", ""]
    lines += [f"{PLAN_TRAILER}: {plan_id}" for plan_id, _ in plans]
    if batch_id:
        lines.append(f"{BATCH_TRAILER}: {batch_id}")
    return "\n".join(lines) + "\n"


def apply(
    vault: Vault,
    plan_id: str,
    selected_ops: list[int] | None,
    approval: Approval,
    *,
    step: Step | None = None,
) -> ApplyResult:
    """Apply the ``selected_ops`` (0-based; default: every admitted one not applied yet) of a
    recorded plan: a batch of one (:func:`apply_batch`).

    This is the only function that writes pages, claims, links, context and wiki files.
    Applying a plan that is already applied is a no-op.
    """
    return apply_batch(vault, [(plan_id, selected_ops)], approval, step=step)[0]


def apply_batch(
    vault: Vault,
    items: Sequence[tuple[str, list[int] | None]],
    approval: Approval,
    *,
    step: Step | None = None,
) -> list[ApplyResult]:
    """Apply several recorded plans as one unit (SPEC W6): one journal, one transaction, one
    commit naming every plan. Plans are applied in dependency order (one that extends a page
    another creates goes after it); if any of them no longer passes, nothing is applied.
    Returns one result per item, in the order given."""
    step = step or _noop
    with vault.write_lock():
        results: dict[str, ApplyResult] = {}
        batch: list[Prepared] = []
        for plan_id, ops in items:
            if plan_id in results or any(p.plan_id == plan_id for p in batch):
                continue
            prepared = prepare(vault, plan_id, ops)
            if prepared is None:
                results[plan_id] = ApplyResult(
                    plan_id, False, f"plan {plan_id[:12]} is already applied; nothing to do"
                )
            else:
                batch.append(prepared)
        if batch:
            for result in _write_and_commit(vault, dependency_order(vault, batch), approval, step):
                results[result.plan_id] = result
        return [results[plan_id] for plan_id, _ in items]


def _readmit(vault: Vault, store: SourceStore, verifier: Verifier, item: Prepared) -> Admission:
    """Re-run the gate on the selected operations against the wiki as it is now (inside the
    batch's transaction, so earlier plans of the batch count)."""
    plan_id = item.plan_id
    try:
        admission = admit(
            vault.db,
            vault.config,
            store,
            verifier,
            item.plan,
            plan_id,
            item.selection,
            applying=True,
        )
    except AdmissionError as exc:
        raise ConflictError(
            f"plan {plan_id[:12]} no longer fits the wiki: {exc} "
            f"Reject it (`affidavit reject {plan_id[:12]} --reason ...`) and propose anew."
        ) from exc
    if not admission.admitted_ops:
        why = "; ".join(f"op {op.index + 1}: {op.reason}" for op in admission.ops)
        raise ConflictError(
            f"nothing in the selected operations of plan {plan_id[:12]} passes the gate now: {why}"
        )
    _refuse_grown_retractions(plan_id, item.stored, admission)
    return admission


def _refuse_grown_retractions(plan_id: str, stored: Admission, now: Admission) -> None:
    """W5 for retractions: the person approved the blast radius the inbox showed. If, against the
    current wiki, a retraction would take out claims it didn't then, refuse; a smaller radius
    (claims gone some other way meanwhile) is fine and is what gets recorded."""
    shown_then: set[str] = set()  # over the whole plan: a subset may move a claim between ops
    for op in stored.ops:
        if "radius" in op.detail:
            shown_then.update(BlastRadius.from_json(op.detail["radius"]).goes)
    grown = [
        claim
        for op in now.ops
        if "radius" in op.detail
        for claim in BlastRadius.from_json(op.detail["radius"]).goes
        if claim not in shown_then
    ]
    if grown:
        shown = ", ".join(grown[:5]) + (f" and {len(grown) - 5} more" if len(grown) > 5 else "")
        raise ConflictError(
            f"plan {plan_id[:12]} would now retract {len(grown)} claim(s) it didn't when it was "
            f"proposed ({shown}): the wiki changed. Reject it (`affidavit reject {plan_id[:12]} "
            "--reason changed`) and propose the retraction again to review the new blast radius."
        )


def _batch_id(db: sqlite3.Connection, batch: list[Prepared]) -> str:
    """Names the batch in its journal, audit entries and commit: derived from the audit chain's
    head and the selections, so a replay after a crash computes the same one."""
    last = db.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    body = [last[0] if last else audit.GENESIS, [[p.plan_id, p.selection] for p in batch]]
    return "b-" + sha256_hex(canonical_json(body))[:16]


def _merged(stored: Admission, now: Admission) -> Admission:
    """The plan's stored verdicts with those of the operations just re-admitted replaced."""
    fresh = {op.index: op for op in now.ops}
    ops = [fresh.pop(op.index, op) for op in stored.ops] + list(fresh.values())
    return replace(stored, ops=sorted(ops, key=lambda op: op.index))


def _record(
    vault: Vault,
    item: Prepared,
    admission: Admission,
    writer: _Writer,
    summary: list[dict[str, object]],
    approval: Approval,
    batch_id: str,
) -> list[int]:
    """The plan's row, reservations and audit entry after its part of the batch; returns the
    operations still pending (a partial approval leaves the others approvable until expiry)."""
    db, now, plan_id = vault.db, writer.now, item.plan_id
    done = sorted({*item.done, *admission.admitted_ops})
    closed = {*done, *item.selection}  # selected but failing now: decided, not left pending
    remaining = [i for i in item.stored.admitted_ops if i not in closed]
    merged = canonical_json(_merged(item.stored, admission).to_json())
    if remaining:
        db.execute(
            "UPDATE plans SET selected_ops = ?, admission = ? WHERE id = ?",
            (json.dumps(done), merged, plan_id),
        )
        for slug in creates(item.plan, item.selection):
            db.execute(
                "DELETE FROM slug_reservations WHERE plan_id = ? AND slug = ?", (plan_id, slug)
            )
    else:
        db.execute(
            "UPDATE plans SET status = 'applied', decided_at = ?, decided_by = ?, "
            "selected_ops = ?, admission = ? WHERE id = ?",
            (now, approval.actor, json.dumps(done), merged, plan_id),
        )
        db.execute("DELETE FROM slug_reservations WHERE plan_id = ?", (plan_id,))
    audit.append(
        db,
        now,
        "applied",
        plan_id,
        approval.actor,
        {
            "ops": summary,
            "claims": writer.claim_ids,
            "approval": approval.kind,
            "batch": batch_id,
            **({"pending_ops": remaining} if remaining else {}),
            **({"superseded": writer.superseded} if writer.superseded else {}),
            **({"retracted": writer.retracted} if writer.retracted else {}),
        },
    )
    return remaining


def _write_and_commit(
    vault: Vault, batch: list[Prepared], approval: Approval, step: Step
) -> list[ApplyResult]:
    db = vault.db
    now = iso(vault.clock())
    store, verifier = gate_services(vault)
    batch_id = _batch_id(db, batch)
    journal_path = vault.journal_dir / f"{batch_id}.json"
    temps: list[tuple[Path, Path]] = []
    done: list[tuple[Prepared, Admission, _Writer, list[dict[str, object]], list[int]]] = []
    db.execute("BEGIN IMMEDIATE")
    try:
        for item in batch:
            admission = _readmit(vault, store, verifier, item)
            if not done:
                step("admitted")
            writer = _Writer(vault, store, item.plan_id, now)
            ops = item.plan.operations
            if any(isinstance(ops[i], UpdateContext) for i in admission.admitted_ops):
                db.execute(
                    "INSERT INTO context_snapshots (plan_id, created_at, content) VALUES (?, ?, ?)",
                    (item.plan_id, now, render_context(db)),
                )
            summary = writer.write(item.plan, admission)
            writer.spill_context(vault.config.context_max_lines)
            remaining = _record(vault, item, admission, writer, summary, approval, batch_id)
            done.append((item, admission, writer, summary, remaining))
        step("db_written")
        paths = ["wiki/index.md", "wiki/log.md"]
        if any(w.context_changed for _, _, w, _, _ in done):
            paths.append("wiki/context.md")
        touched = {slug for _, _, w, _, _ in done for slug in w.touched}
        paths += [page_relpath(slug) for slug in sorted(touched)]
        _refuse_hand_edits(vault, [item.plan_id for item in batch], paths)
        rendered = {p: render_path(db, p) for p in paths}
        message = batch_message(
            [(item.plan_id, summary) for item, _, _, summary, _ in done], approval, batch_id
        )
        for relpath, text in rendered.items():
            assert text is not None
            final = inside(vault.root, relpath)  # no symlinked wiki/ or page: stays in the vault
            temps.append((final, write_temp(final, text.encode())))
        fsync_dir(vault.wiki_dir)
        step("temp_files")
        journal = {
            "batch": batch_id,
            "plans": [item.plan_id for item in batch],
            "message": message,
            "files": [
                {
                    "path": str(final.relative_to(vault.root)),
                    "temp": str(temp.relative_to(vault.root)),
                }
                for final, temp in temps
            ],
        }
        atomic_write(journal_path, canonical_json(journal).encode(), mode=0o600)
        step("journal")
    except BaseException:
        db.execute("ROLLBACK")
        for _, temp in temps:
            temp.unlink(missing_ok=True)
        journal_path.unlink(missing_ok=True)
        raise
    db.execute("COMMIT")
    step("db_commit")
    for final, temp in temps:
        os.replace(temp, final)
    fsync_dir(vault.wiki_dir)
    step("renamed")
    commit = vault.git.commit(message, paths)
    step("git_commit")
    journal_path.unlink()
    fsync_dir(vault.journal_dir)
    step("done")
    refresh_search_index(db)  # derived, self-healing: a crash before this is caught up later
    return [
        ApplyResult(
            item.plan_id,
            True,
            f"applied plan {item.plan_id[:12]}: {len(admission.admitted_ops)} operation(s), "
            f"{len(writer.claim_ids)} claim(s)"
            + (f", {len(writer.superseded)} superseded" if writer.superseded else "")
            + (f", {len(writer.retracted)} retracted" if writer.retracted else "")
            + (
                f"; operation(s) {numbers(remaining)} still pending "
                f"(`affidavit approve {item.plan_id[:12]} --ops {numbers(remaining)}`)"
                if remaining
                else ""
            ),
            ops=admission.admitted_ops,
            claims=writer.claim_ids,
            commit=commit,
            admission=admission,
            superseded=writer.superseded,
            retracted=writer.retracted,
            pending_ops=remaining,
        )
        for item, admission, writer, _, remaining in done
    ]


GENERATED_ONLY = ("wiki/index.md", "wiki/log.md")
"""Files with no content of their own: regenerated whatever is on disk."""


def _refuse_hand_edits(vault: Vault, plan_ids: list[str], paths: list[str]) -> None:
    """Never overwrite a hand edit silently: a page or context.md that differs from its committed
    render blocks the apply, unless a plan of the batch is the doctor's proposal for that file."""
    adopted = set()
    for plan_id in plan_ids:
        origin = vault.db.execute("SELECT origin FROM plans WHERE id = ?", (plan_id,)).fetchone()
        if origin and origin[0].startswith("doctor:"):
            adopted.add(origin[0].removeprefix("doctor:"))
    edited = [
        p
        for p in vault.git.changed([p for p in paths if p not in GENERATED_ONLY])
        if p not in adopted
    ]
    if edited:
        raise ConflictError(
            f"{', '.join(edited)} was edited by hand and this plan would overwrite it. Turn the "
            "edit into a plan with `affidavit doctor --propose`, or drop it with "
            f"`git checkout -- {' '.join(edited)}` (in the vault), then approve again."
        )


def render_all_files(vault: Vault) -> list[str]:
    """Write every wiki file as the database renders it (used by init and repair); returns the
    paths that changed."""
    changed = []
    for relpath, text in expected_files(vault.db).items():
        path = inside(vault.root, relpath)
        data = text.encode()
        if not path.exists() or path.read_bytes() != data:
            atomic_write(path, data)
            changed.append(relpath)
    return changed
