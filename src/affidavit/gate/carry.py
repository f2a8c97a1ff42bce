"""Admission of ``carry_source``: claims follow their source to its newer version (issue 27).

One operation names every claim of an older version to carry; the gate checks them together, in
one batched lookup of their quotes in the newer version (one search of its suffix array, not one
gate pass per claim), so carrying costs what looking up the quotes costs. For each named claim:

* evidence — every quote it has from the older version is found verbatim (after the usual
  normalisation, W3) in the newer version; a claim with one quote gone is not carried (the
  host proposes its supersession or retraction instead, for a person);
* provenance — the newer version is active and intact, and it *is* a newer version of the same
  origin (the targets check: ``previous_id`` leads from it to the older one);
* sanitizer — no re-pointed quote overlaps a flag of the newer version (hidden text, planted
  instructions): such a claim is not carried;
* trust — the claim's trust, recomputed over its evidence, does not fall (W7);
* support (W11) is not asked again: the claim's words and the words it quotes are the same, so
  what the check judged of them holds.

The operation adds no claim and ends none; the policy applies a plan of carries alone without a
person (:data:`CARRY_POLICY`), except an agent's (W13). What it decided is ``detail``:
``carried`` (claim -> ``[[evidence idx, start, end], ...]`` in the newer version), ``trust``
(claims whose trust changes) and ``left`` (claim -> why it stays where it is).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from ..plan.schema import CarrySource
from ..store.blast import LIVE
from .verdicts import REJECTED, OpResult, trust_rank

if TYPE_CHECKING:
    from .admission import _Gate

__all__ = ["CARRY_POLICY", "carriage", "carry_target_problem"]

CARRY_POLICY = (
    "carry_source only re-points claims at the same words in a newer version of their source "
    "(nothing is added to or taken out of the wiki): the policy applies it without a person"
)


def carry_target_problem(gate: _Gate, n: int, op: CarrySource) -> str | None:
    """Why the operation can't apply at all (the targets check), or None."""
    old = gate.sources.resolve(op.source)
    new = gate.sources.resolve(op.to)
    if old is None:
        return f"op {n}: source {op.source} does not exist (or the prefix is ambiguous)"
    if new is None:
        return f"op {n}: source {op.to} does not exist (or the prefix is ambiguous)"
    if old not in gate.wiki.versions_before(new):
        return (
            f"op {n}: source {new[:12]} is not a newer version of the origin of {old[:12]}: "
            "claims are carried only along one origin's versions"
        )
    return None


def carriage(gate: _Gate, op: CarrySource, result: OpResult) -> None:
    """Decide which named claims move to the newer version (see the module doc)."""
    old = gate.sources.resolve(op.source)
    new = gate.sources.resolve(op.to)
    assert old is not None and new is not None  # the targets check found them
    problem = gate._source_problem(new)
    if problem:
        result.decide(REJECTED, "provenance", problem)
        return
    named = set(op.claims)
    left: dict[str, str] = {}
    status, rows = gate.wiki.carry_rows(old)
    evidence: dict[str, list[tuple[int, str, str]]] = {}
    for claim_id, idx, source_id, quote in rows:
        if claim_id in named:
            evidence.setdefault(claim_id, []).append((idx, source_id, quote))
    for claim_id in op.claims:
        if claim_id not in evidence:
            left[claim_id] = f"it has no evidence from {old[:12]}"
        elif status[claim_id][0] not in LIVE:
            left[claim_id] = f"it is {status[claim_id][0]}"
        elif claim_id in gate.ended:
            left[claim_id] = "an earlier operation of this plan ends it"
    todo = [c for c in op.claims if c not in left]
    pairs = [(new, quote) for c in todo for _, source_id, quote in evidence[c] if source_id == old]
    found = iter(gate.verifier.check_many(pairs) if pairs else [])
    flags = sorted((f.start, max(f.end, f.start + 1)) for f in gate.sources.flags(new))
    starts = [f[0] for f in flags]
    reach = max((f[1] - f[0] for f in flags), default=0)
    new_tier = gate._record(new).trust
    carried: dict[str, list[list[int]]] = {}
    trust: dict[str, str] = {}
    for claim_id in todo:
        spans: list[list[int]] = []
        tiers: list[str] = []
        why = ""
        for idx, source_id, _ in evidence[claim_id]:
            if source_id != old:
                tiers.append(gate._record(source_id).trust)
                continue
            check = next(found)
            if not check.verified or check.start is None or check.end is None:
                why = why or f"quote {idx + 1} is not in the newer version"
                continue
            if _flagged(flags, starts, reach, check.start, check.end):
                why = why or f"quote {idx + 1} stands in flagged text of the newer version"
            spans.append([idx, check.start, check.end])
            tiers.append(new_tier)
        if why:
            left[claim_id] = why
            continue
        now = min(tiers, key=trust_rank)
        if trust_rank(now) < trust_rank(status[claim_id][1]):
            left[claim_id] = f"the newer version is {new_tier}, the claim {status[claim_id][1]}"
            continue
        carried[claim_id] = spans
        if now != status[claim_id][1]:
            trust[claim_id] = now
    result.detail = {
        "source": old,
        "to": new,
        "carried": carried,
        **({"trust": trust} if trust else {}),
        **({"left": left} if left else {}),
    }
    if not carried:
        result.decide(
            REJECTED, "evidence", "no named claim's quotes are all found in the newer version"
        )


def _flagged(
    flags: list[tuple[int, int]], starts: list[int], reach: int, start: int, end: int
) -> bool:
    """Whether ``[start, end)`` overlaps a flag (sorted by start; ``reach``: the longest)."""
    i = bisect_left(starts, start - reach)
    while i < len(flags) and flags[i][0] < end:
        if flags[i][1] > start:
            return True
        i += 1
    return False
