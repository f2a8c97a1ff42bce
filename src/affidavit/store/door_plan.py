"""What one plan's part of a batch is and leaves (:mod:`.apply` runs the batch): who approved it
(:class:`Approval`), what the caller is told (:class:`ApplyResult`), the gate run again on its
selection (:func:`readmit`), its row, reservations and audit entry (:func:`record`), and the commit
message naming every plan of the batch (:func:`batch_message`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import AdmissionError, ConflictError
from ..evidence import Verifier
from ..gate.admission import Admission, Held, admit
from ..hashing import canonical_json, sha256_hex
from ..plan.stored import compact
from ..sources.store import SourceStore
from ..support.kept import keeping_in
from ..vault import Vault
from . import audit
from .batch import Prepared, creates, held_json
from .blast import BlastRadius
from .gitrepo import BATCH_TRAILER, PLAN_TRAILER
from .parts import Parts, left, merged
from .writer import Writer


@dataclass(frozen=True)
class Approval:
    """Who let a plan through: a person, the configured policy, or the doctor.

    ``sure_only``: the approval takes only what needs no person — the policy's always does, and
    ``ingest --yes`` says yes before anything is shown — so texts that wait for a person (W11:
    uncertain, or leaning on one that waits) stay held as the plan's pending remainder
    (:mod:`.parts`). A person approving a plan by id takes its uncertain texts too."""

    actor: str
    kind: str = "person"  # person | policy
    sure_only: bool = False

    def __post_init__(self) -> None:
        if self.kind == "policy":
            object.__setattr__(self, "sure_only", True)


@dataclass
class ApplyResult:
    plan_id: str
    applied: bool
    message: str
    ops: list[int] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    commit: str | None = None  # set when the batch commits
    admission: Admission | None = None
    superseded: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    pending_ops: list[int] = field(default_factory=list)  # left for a later approval


def commit_message(plan_id: str, summary: list[dict[str, object]], approval: Approval) -> str:
    return batch_message([(plan_id, summary, approval)], "")


def batch_message(
    plans: Sequence[tuple[str, list[dict[str, object]], Approval]], batch_id: str
) -> str:
    """The commit message of a batch: what each plan did, who approved, then one
    ``Affidavit-Plan`` trailer per plan and the ``Affidavit-Batch`` trailer recovery looks for."""
    lines: list[str] = []
    if len(plans) == 1:
        plan_id, summary, _ = plans[0]
        kinds = ", ".join(f"{s['kind']}" for s in summary)
        lines = [f"Apply plan {plan_id[:12]}: {kinds}"[:120], ""]
        lines += [f"{int(str(s['index'])) + 1}. {s['kind']}: {s['title']}" for s in summary]
    else:
        ops = sum(len(summary) for _, summary, _ in plans)
        lines = [f"Apply {len(plans)} plans: {ops} operation(s)", ""]
        for plan_id, summary, _ in plans:
            lines.append(f"Plan {plan_id[:12]}:")
            lines += [f"  {int(str(s['index'])) + 1}. {s['kind']}: {s['title']}" for s in summary]
    lines.append("")
    approvals = dict.fromkeys(approval for _, _, approval in plans)
    lines += [f"Approved by {a.actor} ({a.kind})." for a in approvals]
    lines.append("")
    lines += [f"{PLAN_TRAILER}: {plan_id}" for plan_id, _, _ in plans]
    if batch_id:
        lines.append(f"{BATCH_TRAILER}: {batch_id}")
    return "\n".join(lines) + "\n"


def readmit(vault: Vault, store: SourceStore, verifier: Verifier, item: Prepared) -> Admission:
    """Re-run the gate on the selected operations against the wiki as it is now (inside the
    batch's transaction, so earlier plans of the batch count)."""
    plan_id = item.plan_id
    try:
        with keeping_in(vault.state_dir):  # the parses of its proposal's check (W5 re-check)
            admission = admit(
                vault.db,
                vault.config,
                store,
                verifier,
                item.plan,
                plan_id,
                item.selection,
                applying=True,
                remainder=item.remainder,
                agent=item.agent,
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
    refuse_grown_retractions(plan_id, item.stored, admission)
    return admission


def refuse_grown_retractions(plan_id: str, stored: Admission, now: Admission) -> None:
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


def name_batch(db: sqlite3.Connection, batch: list[Prepared]) -> str:
    """Names the batch in its journal, audit entries and commit: derived from the audit chain's
    head and the selections, so a replay after a crash computes the same one."""
    last = db.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    body = [last[0] if last else audit.GENESIS, [[p.plan_id, p.selection] for p in batch]]
    return "b-" + sha256_hex(canonical_json(body))[:16]


def _in_order(admission: Admission) -> bool:
    """Whether the operations' verdicts are in index order, as :func:`.parts.merged` puts them."""
    indexes = [op.index for op in admission.ops]
    return indexes == sorted(indexes)


def record(
    vault: Vault,
    item: Prepared,
    admission: Admission,
    parts: Parts,
    writer: Writer,
    summary: list[dict[str, object]],
    approval: Approval,
    batch_id: str,
) -> tuple[list[int], dict[int, Held]]:
    """The plan's row, reservations and audit entry after its part of the batch; returns the
    operations still pending (a partial approval leaves the others approvable until expiry,
    and what waits for a person stays as the plan's remainder) and that remainder."""
    db, now, plan_id = vault.db, writer.now, item.plan_id
    done, held, remaining = left(item, admission, parts, writer.claims_by_op, writer.headings)
    if admission is item.stored and _in_order(admission):
        # the verdicts the gate gave inside the batch, stored and applied as they are: the
        # column already holds their canonical JSON (what merged() would serialise again)
        stored = item.stored_json
    else:
        stored = canonical_json(merged(item.stored, admission, parts.remainder).to_json())
    if remaining:
        db.execute(
            "UPDATE plans SET selected_ops = ?, held = ?, admission = ? WHERE id = ?",
            (json.dumps(done), held_json(held), stored, plan_id),
        )
        for slug in creates(item.plan, list(parts.ops)):
            db.execute(
                "DELETE FROM slug_reservations WHERE plan_id = ? AND slug = ?", (plan_id, slug)
            )
    else:
        db.execute(
            "UPDATE plans SET status = 'applied', decided_at = ?, decided_by = ?, "
            "selected_ops = ?, held = '{}', admission = ? WHERE id = ?",
            (now, approval.actor, json.dumps(done), stored, plan_id),
        )
        db.execute("DELETE FROM slug_reservations WHERE plan_id = ?", (plan_id,))
        compact(db, plan_id, writer.claim_ids)  # decided: texts packed (plan/stored.py)
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
    return remaining, held
