"""Plans from outside and the inbox (SPEC W5): propose, list, approve (all or some), reject, expire.

A proposal goes through the gate at once. A plan whose schema, nonce or targets fail is refused
whole and nothing is recorded. Otherwise it is recorded with every verdict (unverified quotes kept
as ``verified: false``), reserves the slugs it creates, and either waits in the inbox until it is
approved, rejected or expires, or — when the policy allows — is applied at once through the door.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from .agents import agent_reservations, caller_of, charge, is_agent
from .clock import iso, parse_iso
from .db import transaction
from .errors import ConflictError, NotFoundError
from .gate.admission import Admission, Held, admit
from .gate.withdrawals import ends_claims
from .hashing import canonical_json, content_id, sha256_hex
from .plan.nonce import check_nonce, consume_nonce
from .plan.schema import CreatePage, Plan, parse_plan, remember_parsed
from .plan.stored import admission_text, compact, pack, plan_text
from .storage.queries import like_prefix
from .store import audit
from .store.apply import (
    ApplyResult,
    Approval,
    apply,
    apply_batch,
    gate_services,
    load_plan,
    open_batch,
)
from .store.batch import held_of
from .support.kept import keeping_in
from .vault import Vault


@dataclass
class Proposal:
    plan_id: str
    status: str  # pending | applied | partial (applied, some texts wait) | rejected
    message: str
    admission: Admission
    applied: ApplyResult | None = None
    new: bool = True


@dataclass(frozen=True)
class PlanRecord:
    id: str
    author: str
    origin: str
    status: str
    reason: str
    created_at: str
    expires_at: str
    decided_at: str | None
    decided_by: str | None
    plan: Plan
    admission: Admission

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "author": self.author,
            "origin": self.origin,
            "status": self.status,
            "reason": self.reason,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
            "plan": self.plan.to_json(),
            "admission": self.admission.to_json(),
        }


def plan_id_of(plan: Plan) -> str:
    return content_id(plan.to_json())


def propose(
    vault: Vault,
    raw: str | bytes | dict[str, Any],
    author: str,
    origin: str,
    *,
    hold: str = "",
) -> Proposal:
    """Put a plan through the gate and record it; apply it at once if the policy allows.

    ``hold`` (e.g. a reviewer's doubt) keeps the plan in the inbox whatever the policy says.
    An agent's plan (:func:`~affidavit.agents.proposer_of`, from ``author`` and ``origin``) is
    charged to its caller's quota first and is never applied by policy, whatever door it came
    through (W13); a person's plan may create a page an agent's pending plan reserved (the
    owner's work goes first: that agent's plan then fails its re-check at approval).
    """
    plan = parse_plan(raw)
    plan_json = canonical_json(plan.to_json())
    plan_id = sha256_hex(plan_json)  # plan_id_of(plan), from the text stored below
    remember_parsed(plan_json, plan)  # the door parses the text stored below: this plan
    existing = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan_id,)).fetchone()
    if existing is not None:
        record = get_plan(vault, plan_id)
        return Proposal(
            plan_id,
            record.status,
            f"plan {plan_id[:12]} was already proposed and is {record.status}; nothing changed",
            record.admission,
            new=False,
        )
    agent = is_agent(author, origin)
    if agent:  # before anything is spent on it: a refused call writes nothing
        charge(vault, caller_of(author), "propose_plan")
    expire_due(vault)
    with vault.write_lock():
        check_nonce(vault.db, vault.clock, plan.nonce, plan_id)
        store, verifier = gate_services(vault)
        with keeping_in(vault.state_dir):  # under the write lock: the vault is writable
            admission = admit(vault.db, vault.config, store, verifier, plan, plan_id, agent=agent)
        if hold:
            admission.needs_approval = True
            admission.policy_reason = hold
        now = vault.clock()
        passing = admission.admitted_ops
        status = "pending" if passing else "rejected"
        reason = "" if passing else "no operation passed the gate"
        with transaction(vault.db):
            texts = (plan_json, canonical_json(admission.to_json()))
            decided = status != "pending"  # rejected at once: stored compressed (plan/stored.py)
            vault.db.execute(
                "INSERT INTO plans (id, author, origin, plan_json, status, reason, admission, "
                "created_at, expires_at, plan_z, admission_z) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    plan_id,
                    author,
                    origin,
                    "" if decided else texts[0],
                    status,
                    reason,
                    "" if decided else texts[1],
                    iso(now),
                    iso(now + timedelta(hours=vault.config.expiry_hours)),
                    pack(texts[0]) if decided else None,
                    pack(texts[1], texts[0]) if decided else None,
                ),
            )
            consume_nonce(vault.db, plan.nonce, plan_id)
            squatted = {} if agent else agent_reservations(vault.db)
            for index in passing:
                op = plan.operations[index]
                if isinstance(op, CreatePage):
                    # a person's plan takes over a slug an agent's plan reserved (the gate let
                    # it: the owner's work goes first); any other reservation stays its holder's
                    vault.db.execute(
                        "INSERT INTO slug_reservations (slug, plan_id) VALUES (?, ?) "
                        "ON CONFLICT(slug) DO UPDATE SET plan_id = excluded.plan_id "
                        "WHERE slug_reservations.plan_id = ?",
                        (op.slug, plan_id, squatted.get(op.slug, "")),
                    )
            audit.append(
                vault.db,
                iso(now),
                "proposed" if passing else "rejected",
                plan_id,
                author,
                {"origin": origin, "counts": admission.counts, "ops": len(plan.operations)},
            )
        batch = open_batch(vault)
        if batch is not None and passing:  # admitted under the batch's lock: not again at apply
            batch.admitted(plan_id, admission)
    counts = admission.counts
    tally = (
        f"{counts['admitted']} claim(s) admitted, {counts['quarantined']} quarantined, "
        f"{counts['rejected']} rejected"
    )
    if not passing:
        return Proposal(plan_id, "rejected", f"plan {plan_id[:12]} rejected: {tally}", admission)
    if not admission.needs_approval:
        result = apply(vault, plan_id, None, Approval(actor="policy", kind="policy"))
        if result.pending_ops:
            return Proposal(
                plan_id,
                "partial",
                f"{result.message} ({tally}). {admission.policy_reason}: "
                f"`affidavit inbox show {plan_id[:12]}`.",
                admission,
                result,
            )
        return Proposal(plan_id, "applied", result.message + f" ({tally})", admission, result)
    return Proposal(
        plan_id,
        "pending",
        f"plan {plan_id[:12]} is in the inbox: {tally}. {admission.policy_reason}.",
        admission,
    )


def _record(row: Any, db: sqlite3.Connection) -> PlanRecord:
    return PlanRecord(
        id=row["id"],
        author=row["author"],
        origin=row["origin"],
        status=row["status"],
        reason=row["reason"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        decided_at=row["decided_at"],
        decided_by=row["decided_by"],
        plan=Plan.model_validate(json.loads(plan_text(row, db))),
        admission=Admission.from_json(json.loads(admission_text(row, db))),
    )


def resolve_plan_id(vault: Vault, ref: str) -> str:
    """The full id of the plan whose id is ``ref`` or starts with it (at least 4 characters)."""
    if len(ref) < 4:
        raise NotFoundError(f"plan id {ref!r} is too short; give at least 4 characters.")
    rows = vault.db.execute(
        "SELECT id FROM plans WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like_prefix(ref.lower()),)
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no plan {ref}. `affidavit inbox --all` lists every plan.")
    if len(rows) > 1:
        raise NotFoundError(f"plan id {ref} is ambiguous; give more characters.")
    return str(rows[0]["id"])


def get_plan(vault: Vault, ref: str) -> PlanRecord:
    return _record(load_plan(vault.db, resolve_plan_id(vault, ref)), vault.db)


def list_plans(vault: Vault, statuses: tuple[str, ...] = ("pending",)) -> list[PlanRecord]:
    expire_due(vault)
    marks = ",".join("?" * len(statuses))
    rows = vault.db.execute(
        f"SELECT * FROM plans WHERE status IN ({marks}) ORDER BY created_at, rowid", statuses
    ).fetchall()
    return [_record(r, vault.db) for r in rows]


def expire_due(vault: Vault) -> list[str]:
    """Mark pending plans past their expiry as expired and release their slugs."""
    now = iso(vault.clock())
    due = [
        r["id"]
        for r in vault.db.execute(
            "SELECT id FROM plans WHERE status = 'pending' AND expires_at <= ?", (now,)
        )
    ]
    if not due:
        return []
    with vault.write_lock(), transaction(vault.db):
        for plan_id in due:
            vault.db.execute(
                "UPDATE plans SET status = 'expired', decided_at = ?, decided_by = 'expiry' "
                "WHERE id = ? AND status = 'pending'",
                (now, plan_id),
            )
            vault.db.execute("DELETE FROM slug_reservations WHERE plan_id = ?", (plan_id,))
            compact(vault.db, plan_id)
            audit.append(vault.db, now, "expired", plan_id, "expiry", {})
    return due


def approve(vault: Vault, ref: str, ops: list[int] | None, actor: str) -> ApplyResult:
    """Approve all admitted operations of a pending plan, or only ``ops`` (1-based), and apply.
    The operations not selected stay pending (until the plan expires)."""
    return approve_many(vault, [ref], ops, actor)[0]


def approve_many(
    vault: Vault, refs: list[str], ops: list[int] | None, actor: str, *, sure_only: bool = False
) -> list[ApplyResult]:
    """Approve several pending plans at once: one batch through the door, in dependency order,
    all or nothing. ``ops`` (1-based) selects operations and needs exactly one plan.
    ``sure_only``: the texts that wait for a person stay (an approval given unseen)."""
    plan_ids = list(dict.fromkeys(resolve_plan_id(vault, ref) for ref in refs))
    if not plan_ids:
        raise ConflictError("name at least one plan to approve (`affidavit inbox` lists them).")
    selected = None if ops is None else [n - 1 for n in ops]
    if selected is not None:
        if len(plan_ids) != 1:
            raise ConflictError("--ops selects operations of one plan; give exactly one plan id.")
        record = get_plan(vault, plan_ids[0])
        count = len(record.plan.operations)
        wrong = [n for n in ops or [] if not 1 <= n <= count]
        if wrong:
            raise ConflictError(
                f"plan {plan_ids[0][:12]} has operations 1–{count}; there is no {wrong[0]}."
            )
    approval = Approval(actor=actor, kind="person", sure_only=sure_only)
    return apply_batch(vault, [(plan_id, selected) for plan_id in plan_ids], approval)


def pending_ops(vault: Vault, record: PlanRecord) -> list[int]:
    """The operations (0-based) of a pending plan that can still be approved: those not
    applied yet, and those applied in part whose rest waits for a person (:func:`held`)."""
    row = vault.db.execute("SELECT selected_ops FROM plans WHERE id = ?", (record.id,)).fetchone()
    done = set(json.loads(row[0] or "[]")) if row else set()
    rest = held(vault, record.id)
    return [i for i in record.admission.admitted_ops if i not in done or i in rest]


def applied_ops(vault: Vault, plan_id: str) -> list[int]:
    """The operations (0-based) of a plan applied so far, whole or in part."""
    row = vault.db.execute("SELECT selected_ops FROM plans WHERE id = ?", (plan_id,)).fetchone()
    return sorted(int(i) for i in json.loads(row[0] or "[]")) if row else []


def held(vault: Vault, plan_id: str) -> dict[int, Held]:
    """A plan's pending remainder: the parts of its applied operations that wait for a person
    (W11: the policy applied the rest)."""
    row = vault.db.execute("SELECT held FROM plans WHERE id = ?", (plan_id,)).fetchone()
    return held_of(row[0]) if row else {}


def withdrawals_of(record: PlanRecord, ops: list[int]) -> list[int]:
    """Which of ``ops`` take claims out of the wiki (supersede, retract, replace context)."""
    verdicts = {op.index: op for op in record.admission.ops}
    return [i for i in ops if i in verdicts and ends_claims(verdicts[i].kind, verdicts[i].detail)]


def reject(vault: Vault, ref: str, reason: str, actor: str) -> PlanRecord:
    """Reject a pending plan with a reason; its reserved slugs are released."""
    plan_id = resolve_plan_id(vault, ref)
    with vault.write_lock():
        row = load_plan(vault.db, plan_id)
        if row["status"] != "pending":
            raise ConflictError(
                f"plan {plan_id[:12]} is {row['status']}; only pending plans can be rejected."
            )
        now = iso(vault.clock())
        with transaction(vault.db):
            vault.db.execute(
                "UPDATE plans SET status = 'rejected', reason = ?, decided_at = ?, decided_by = ? "
                "WHERE id = ?",
                (reason, now, actor, plan_id),
            )
            vault.db.execute("DELETE FROM slug_reservations WHERE plan_id = ?", (plan_id,))
            compact(vault.db, plan_id)
            audit.append(vault.db, now, "rejected", plan_id, actor, {"reason": reason})
    return get_plan(vault, plan_id)


def age(vault: Vault, record: PlanRecord) -> tuple[timedelta, timedelta]:
    """How long ago the plan was proposed, and how long until it expires."""
    now = vault.clock()
    return now - parse_iso(record.created_at), parse_iso(record.expires_at) - now


ENDING_ROLES = ("retracted", "superseded")
"""A claim's role in an operation that ends it (``retract_claim``, ``supersede_claim``)."""


def claim_role(role: str, op_status: str, applied: bool, plan_status: str) -> str:
    """What a claim's role in a plan's operation says about it now, never a state it is not in
    yet: a claim a pending operation would retract is active until a person approves it.
    ``applied``: the operation was applied by an earlier partial approval."""
    if role not in ENDING_ROLES:
        return role
    if applied or (plan_status == "applied" and op_status != "rejected"):
        return f"{role} by this plan"
    if plan_status == "pending":
        return f"active; would be {role} if approved"
    return f"active; not {role}: the plan was {plan_status}"
