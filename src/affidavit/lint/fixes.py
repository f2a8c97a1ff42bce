"""Findings become proposals: fix plans that go to the inbox like any other plan.

Each open finding with a ``fix`` (supersede a stale claim by its newer version, merge a duplicate
into the claim it repeats, link two pages, retract a claim whose evidence is gone) contributes one
operation; operations are packed into plans of at most 20, so a user with hundreds of findings
approves them a plan at a time (or op by op with ``--ops``). A contradiction has no fix until the
user says which claim to keep. The plans pass the same gate as everything else: W7 still refuses
a less trusted claim superseding a more trusted one, and every plan waits for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..db import transaction
from ..errors import AffidavitError, ConflictError
from ..gate.verdicts import WITHDRAWALS
from ..inbox import get_plan, pending_ops, propose
from ..plan.nonce import issue_nonce
from ..plan.schema import MAX_OPERATIONS, Plan
from ..retract import claims_in_pending
from ..vault import Vault
from .findings import FindingStore, StoredFinding


@dataclass
class FixReport:
    plans: list[str] = field(default_factory=list)
    fixed: dict[str, str] = field(default_factory=dict)
    """finding id → plan id"""
    skipped: dict[str, str] = field(default_factory=dict)
    """finding id → why no fix was proposed"""
    messages: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "plans": self.plans,
            "fixed": self.fixed,
            "skipped": self.skipped,
            "messages": self.messages,
        }


def fix_for(stored: StoredFinding, keep: str | None = None) -> dict[str, Any] | None:
    """The operation that fixes ``stored``; for a contradiction, ``keep`` names the claim kept."""
    finding = stored.finding
    if finding.kind == "contradiction" and keep is not None:
        others = [c for c in finding.claims if c != keep]
        if keep not in finding.claims or len(others) != 1:
            raise ConflictError(
                f"--keep must be one of the claims of finding {stored.id}: "
                + ", ".join(finding.claims)
            )
        return {
            "op": "supersede_claim",
            "claim": others[0],
            "successor": keep,
            "reason": f"contradicted {keep}; the user kept {keep} (finding {stored.id})",
        }
    return dict(finding.fix) if finding.fix else None


Batch = list[tuple[str, dict[str, Any]]]
"""One fix plan's operations, each with the id of the finding it fixes."""


def fix_batches(
    findings: list[StoredFinding],
    taken: set[str],
    pending: Callable[[str], bool],
    report: FixReport,
    keep: dict[str, str] | None = None,
) -> list[Batch]:
    """The fix operations of ``findings`` (open ones without a pending fix plan, per
    ``pending(plan_id)``; none for a claim of ``taken``, which a pending proposal already
    changes), packed into plans: those that end claims apart from those that only add, at most
    :data:`MAX_OPERATIONS` each. Why a finding gets none goes to ``report.skipped``."""
    keep = keep or {}
    ops: Batch = []
    targets: set[tuple[str, str]] = {("claim", c) for c in taken}
    for stored in findings:
        if stored.status != "open":
            report.skipped[stored.id] = f"it is {stored.status}"
            continue
        if stored.plan_id and pending(stored.plan_id):
            report.skipped[stored.id] = f"fix plan {stored.plan_id[:12]} is already in the inbox"
            continue
        op = fix_for(stored, keep.get(stored.id))
        if op is None:
            report.skipped[stored.id] = stored.finding.fix_hint or "no automatic fix for this kind"
            continue
        target = (
            ("claim", str(op["claim"]))
            if "claim" in op
            else ("page", str(op["page"]))
            if op["op"] == "update_page"
            else ("link", f"{op['page']}>{op['to']}")
        )
        if target in targets:
            report.skipped[stored.id] = "another proposal already changes the same claim"
            continue
        targets.add(target)
        ops.append((stored.id, op))
    # fixes that end claims go in plans of their own, never mixed with ones that only add; a
    # page's new words (update_page) neither end nor only add: plans of their own too
    words = [(fid, op) for fid, op in ops if op["op"] == "update_page"]
    adds = [(fid, op) for fid, op in ops if op["op"] not in (*WITHDRAWALS, "update_page")]
    ends = [(fid, op) for fid, op in ops if op["op"] in WITHDRAWALS]
    return [
        group[start : start + MAX_OPERATIONS]
        for group in (adds, words, ends)
        for start in range(0, len(group), MAX_OPERATIONS)
    ]


def fix_plan(nonce: str, batch: Batch) -> dict[str, Any]:
    """The plan of one batch of fixes, fenced by ``nonce``."""
    kinds = sorted({str(op["op"]) for _, op in batch})
    return {
        "nonce": nonce,
        "summary": f"lint fixes for {len(batch)} finding(s): {', '.join(kinds)}"[:300],
        "operations": [op for _, op in batch],
    }


def propose_fixes(
    vault: Vault,
    findings: list[StoredFinding],
    actor: str,
    keep: dict[str, str] | None = None,
) -> FixReport:
    """Propose fix plans for ``findings`` (open ones without a pending fix plan)."""
    report = FixReport()
    # a claim a new version of its source already has a proposal for is not proposed twice
    batches = fix_batches(
        findings, claims_in_pending(vault), lambda plan: _pending(vault, plan), report, keep
    )
    store = FindingStore(vault.db)
    for batch in batches:
        plan = fix_plan(issue_nonce(vault.db, vault.clock, "lint-fix"), batch)
        try:
            proposal = propose(vault, plan, author=actor, origin="lint")
        except AffidavitError as exc:
            for fid, _ in batch:
                report.skipped[fid] = f"the fix plan was refused: {exc}"
            report.messages.append(str(exc))
            continue
        report.plans.append(proposal.plan_id)
        report.messages.append(proposal.message)
        with vault.write_lock(), transaction(vault.db):  # one commit, not one per finding
            for fid, _ in batch:
                store.attach_plan(fid, proposal.plan_id)
                report.fixed[fid] = proposal.plan_id
    return report


@dataclass(frozen=True)
class FixStep:
    """One pending fix operation to approve: the finding, its plan and operation (0-based), what
    it does in words, and whether it ends a claim (supersede, retract)."""

    finding: str
    plan_id: str
    op: int
    line: str
    ends: bool


def _target(op: dict[str, Any]) -> tuple[str, ...]:
    if "claim" in op:
        return ("claim", str(op["claim"]))
    if op.get("op") == "update_page":
        return ("page", str(op.get("page")))
    return ("link", str(op.get("page")), str(op.get("to")))


def _claim_text(vault: Vault, claim_id: str) -> str:
    row = vault.db.execute("SELECT text FROM claims WHERE id = ?", (claim_id,)).fetchone()
    return claim_line(claim_id, row[0] if row else None)


def claim_line(claim_id: str, text: str | None) -> str:
    """A claim as a fix's line names it: its id and, when it exists, its text."""
    return f"{claim_id} “{text}”" if text is not None else claim_id


def describe_fix(op: dict[str, Any], claim_text: Callable[[str], str]) -> str:
    """A fix operation in words; ``claim_text`` names a claim (:func:`claim_line`)."""
    kind = op["op"]
    if kind == "supersede_claim":
        by = op.get("successor") or "a new claim"
        return f"supersede {claim_text(op['claim'])} by {claim_text(str(by))}"
    if kind == "retract_claim":
        return f"retract {claim_text(op['claim'])}: {op.get('reason', '')}"
    if kind == "link_pages":
        return f"link {op['page']} → {op['to']}"
    if kind == "update_page":
        words = [f"{w} “{op[w]}”" for w in ("title", "summary") if op.get(w)]
        return f"give {op['page']} the {' and the '.join(words)}"
    return str(kind)


def fix_steps(vault: Vault, findings: list[StoredFinding]) -> list[FixStep]:
    """The pending fix operations of ``findings`` (each finding's own operation in its plan,
    not the other operations packed into the same plan)."""

    def pending(plan_id: str) -> tuple[Plan, list[int]] | None:
        if not _pending(vault, plan_id):
            return None
        record = get_plan(vault, plan_id)
        return record.plan, pending_ops(vault, record)

    return steps_of(findings, pending, lambda claim: _claim_text(vault, claim))


def steps_of(
    findings: list[StoredFinding],
    pending: Callable[[str], tuple[Plan, list[int]] | None],
    claim_text: Callable[[str], str],
) -> list[FixStep]:
    """:func:`fix_steps` over any store: ``pending`` gives a pending plan and its operations
    still to approve (0-based), or None when the plan is no longer pending."""
    steps: list[FixStep] = []
    for stored in findings:
        found = pending(stored.plan_id) if stored.plan_id else None
        if found is None:
            continue
        plan, ops = found
        fix = stored.finding.fix
        for index in ops:
            op = plan.operations[index].model_dump(mode="json", exclude_none=True)
            mine = (
                _target(op) == _target(dict(fix))
                if fix
                else op.get("claim") in stored.finding.claims
            )
            if mine:
                line = describe_fix(op, claim_text)
                steps.append(FixStep(stored.id, str(stored.plan_id), index, line,
                                     op["op"] in WITHDRAWALS))  # fmt: skip
                break
    return steps


def _pending(vault: Vault, plan_id: str) -> bool:
    row = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
    return row is not None and row[0] == "pending"
