"""Retractions and supersessions proposed from outside the model: plans, blast radius, wording.

``affidavit sources retract ID`` shows the blast radius of retracting a source
(:func:`affidavit.store.blast.blast_radius`) and proposes one ``retract_source`` plan to the inbox;
nothing leaves the wiki until a person approves it (the policy never applies a withdrawal on its
own), and approval refuses if the radius grew in the meantime. Lint fix plans build their
``supersede_claim`` / ``retract_claim`` operations with :func:`supersede_op` and
:func:`retract_claim_op` and propose them with :func:`withdrawal_plan`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ConflictError
from .inbox import Proposal, propose
from .plan.nonce import issue_nonce
from .sources.store import SourceStore
from .store.blast import BlastRadius, ClaimImpact, blast_radius
from .vault import Vault

if TYPE_CHECKING:
    from .storage.queries import Sql

__all__ = [
    "LINEAGE_ORIGIN",
    "SourceRetraction",
    "claims_in_pending",
    "describe_radius",
    "pending_claims",
    "propose_source_retraction",
    "retract_claim_op",
    "retract_source_op",
    "supersede_op",
    "withdrawal_plan",
]


LINEAGE_ORIGIN = "lineage"
"""Plans the host proposes when a source's origin changes (``lineage:…``, :mod:`affidavit.ingest.
lineage`)."""


def claims_in_pending(vault: Vault, origin_prefix: str = LINEAGE_ORIGIN) -> set[str]:
    """Claims that a pending plan whose origin is ``origin_prefix`` or starts with it and a colon
    supersedes or retracts (so no second proposal names them)."""
    return pending_claims(vault.db, origin_prefix)


def pending_claims(db: Sql, origin_prefix: str = LINEAGE_ORIGIN) -> set[str]:
    """:func:`claims_in_pending` on ``db`` (a vault's, of either backend)."""
    out: set[str] = set()
    for (text,) in db.execute(
        "SELECT plan_json FROM plans WHERE status = 'pending' AND (origin = ? OR origin LIKE ?)",
        (origin_prefix, origin_prefix + ":%"),
    ):
        try:
            plan = json.loads(text)
        except ValueError:
            continue
        for op in plan.get("operations", []) if isinstance(plan, dict) else []:
            if isinstance(op, dict) and isinstance(op.get("claim"), str):
                out.add(op["claim"])
    return out


def supersede_op(claim: str, successor: str, reason: str) -> dict[str, Any]:
    """``supersede_claim`` by an existing claim: ``claim`` goes to history, ``successor`` stays."""
    return {"op": "supersede_claim", "claim": claim, "successor": successor, "reason": reason}


def retract_claim_op(claim: str, reason: str) -> dict[str, Any]:
    """``retract_claim``: the claim and the syntheses resting on it leave the wiki."""
    return {"op": "retract_claim", "claim": claim, "reason": reason}


def retract_source_op(source: str, reason: str) -> dict[str, Any]:
    """``retract_source``: see :func:`affidavit.store.blast.blast_radius` for what it takes."""
    return {"op": "retract_source", "source": source, "reason": reason}


def withdrawal_plan(
    vault: Vault, operations: list[dict[str, Any]], summary: str = "", purpose: str = "retract"
) -> dict[str, Any]:
    """A plan around ``operations`` with a fresh nonce from this vault, ready for
    :func:`affidavit.inbox.propose`."""
    nonce = issue_nonce(vault.db, vault.clock, purpose)
    return {"nonce": nonce, "summary": summary[:300], "operations": operations}


@dataclass
class SourceRetraction:
    """What ``sources retract`` found and did: the radius now, and the proposal (None on a dry
    run)."""

    source: str
    radius: BlastRadius
    proposal: Proposal | None = None

    def to_json(self) -> dict[str, Any]:
        proposal = self.proposal
        return {
            "source": self.source,
            "radius": self.radius.to_json(),
            "dry_run": proposal is None,
            "plan_id": proposal.plan_id if proposal else None,
            "status": proposal.status if proposal else None,
            "message": proposal.message if proposal else "dry run: nothing proposed",
            "approve": f"affidavit approve {proposal.plan_id[:12]}" if proposal else None,
        }


def propose_source_retraction(
    vault: Vault, ref: str, reason: str, author: str, *, dry_run: bool = False
) -> SourceRetraction:
    """Compute the blast radius of retracting source ``ref`` (an id or unique prefix) and,
    unless ``dry_run``, propose the ``retract_source`` plan; it waits in the inbox."""
    record = SourceStore(vault).get(ref)
    if record.status != "active":
        raise ConflictError(
            f"source {record.short_id} ({record.name}) is {record.status} already; "
            "nothing to retract."
        )
    radius = blast_radius(vault.db, record.id)
    if dry_run:
        return SourceRetraction(record.id, radius)
    plan = withdrawal_plan(
        vault,
        [retract_source_op(record.id, reason)],
        f"Retract source {record.name} ({record.short_id}): {reason}",
    )
    proposal = propose(vault, plan, author, f"sources retract:{record.short_id}")
    return SourceRetraction(record.id, radius, proposal)


def _claim_line(claim: ClaimImpact, extra: str = "") -> str:
    page = claim.page or "(context)"
    text = claim.text if len(claim.text) <= 80 else claim.text[:79] + "…"
    return f"    {claim.id}  {page}{extra}  {text}"


def describe_radius(radius: BlastRadius) -> list[str]:
    """The blast radius in words, one line per claim, page and plan (for the CLI and the inbox)."""
    what = (
        f"source {radius.source[:12]} ({radius.source_name})" if radius.source else "these claims"
    )
    lines = [f"Retracting {what} would:"]
    if radius.source:
        lines.append(f"  retract {len(radius.retracted)} claim(s) whose only evidence it is:")
    else:
        lines.append(f"  retract {len(radius.retracted)} claim(s):")
    lines += [_claim_line(c) for c in radius.retracted]
    if radius.kept:
        lines.append(
            f"  keep {len(radius.kept)} claim(s) that have other evidence, trust recomputed:"
        )
        for kept in radius.kept:
            text = kept.text if len(kept.text) <= 60 else kept.text[:59] + "…"
            lines.append(
                f"    {kept.id}  {kept.page or '(context)'}  {kept.trust} → {kept.new_trust}  {text}"
            )
    if radius.derived:
        lines.append(
            f"  retract {len(radius.derived)} derived claim(s) (saved answers, syntheses) "
            "resting on them:"
        )
        lines += [_claim_line(c, f"  (rests on {', '.join(c.rests_on)})") for c in radius.derived]
    if radius.empty_pages:
        lines.append(
            f"  leave {len(radius.empty_pages)} page(s) with no active claim: "
            + ", ".join(radius.empty_pages)
        )
    if radius.open_plans:
        lines.append(
            f"  {len(radius.open_plans)} pending plan(s) cite it and will fail at approval:"
        )
        lines += [
            f"    {p.id[:12]}  {p.quotes} quote(s)  {p.author} / {p.origin}"
            for p in radius.open_plans
        ]
    return lines
