"""Cited claims a pending plan would retire: an answer that cites a claim while a plan waits to
supersede or retract it (a new version of its source changed the fact, lint found it stale, a
person proposed to withdraw it) says so, with the plan to review — the answer is the wiki as
it stands, and a reader must not take a fact under review for settled."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

RETIRING = ("supersede_claim", "retract_claim")
"""The operations that take a claim out of the wiki by its id."""


@dataclass(frozen=True)
class PendingChange:
    """``plan`` (pending, from ``origin``) would ``op`` the cited ``claim``."""

    claim: str
    plan: str
    op: str
    origin: str

    def to_json(self) -> dict[str, str]:
        return {"claim": self.claim, "plan": self.plan, "op": self.op, "origin": self.origin}


class PendingPlans(Protocol):
    def pending_plans(self) -> list[tuple[str, str, str]]:
        """The pending plans not yet expired that may retire a claim (their JSON names
        ``supersede_claim`` or ``retract_claim``): ``(id, origin, plan JSON)``, oldest first."""
        ...


def pending_changes(wiki: PendingPlans, claim_ids: list[str]) -> list[PendingChange]:
    """The pending plans' operations that would supersede or retract one of ``claim_ids``, in
    the order of the claims, then of the plans."""
    wanted = set(claim_ids)
    if not wanted:
        return []
    found: list[PendingChange] = []
    for plan_id, origin, text in wiki.pending_plans():
        if not any(claim in text for claim in wanted):  # most plans name none: no parse
            continue
        try:
            plan = json.loads(text)
        except ValueError:
            continue
        operations = plan.get("operations") if isinstance(plan, dict) else None
        for op in operations if isinstance(operations, list) else []:
            if not isinstance(op, dict) or op.get("op") not in RETIRING:
                continue
            claim = op.get("claim")
            if isinstance(claim, str) and claim in wanted:
                found.append(PendingChange(claim, plan_id, str(op["op"]), origin))
    order = {claim: n for n, claim in enumerate(claim_ids)}
    return sorted(found, key=lambda change: order[change.claim])


def describe(change: PendingChange, footnote: int | None = None) -> str:
    """One change in words: which plan, what it would do (to the claim of ``footnote``), where
    it came from."""
    verb = "supersede" if change.op == "supersede_claim" else "retract"
    what = f"the claim of [^{footnote}] (`{change.claim}`)" if footnote else f"`{change.claim}`"
    why = (
        "a new version of its source changed it"
        if change.origin.startswith("lineage:")
        else f"from {change.origin}"
    )
    return f"plan {change.plan[:12]} would {verb} {what} ({why}); review it in the inbox"


__all__ = ["RETIRING", "PendingChange", "PendingPlans", "describe", "pending_changes"]
