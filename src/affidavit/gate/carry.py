"""Admission of ``carry_source``: claims follow their source to its newer version (issue 27).

One operation names every claim of an older version to carry; the gate checks them together, in
one batched lookup of their quotes in the newer version (one search of its suffix array, not one
gate pass per claim), so carrying costs what looking up the quotes costs. For each named claim:

* evidence — every quote it has from the older version is found verbatim (after the usual
  normalisation, W3) in the newer version; a claim with one quote gone is not carried (the
  host proposes its supersession or retraction instead, for a person). A quote that lies in a
  stretch the two texts have byte for byte (:func:`affidavit.sources.stretches.same_stretches`)
  and is the older
  text's own words at its offsets is found there without a search: the same bytes at the
  shifted offsets (what an edit of a few sentences leaves of most quotes); the others are
  looked up as any quote is;
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

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from ..plan.schema import CarrySource
from ..sources.stretches import same_stretches
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
    evidence: dict[str, list[tuple[int, str, str, int, int]]] = {}
    for claim_id, idx, source_id, quote, start, end in rows:
        if claim_id in named:
            evidence.setdefault(claim_id, []).append((idx, source_id, quote, start, end))
    for claim_id in op.claims:
        if claim_id not in evidence:
            left[claim_id] = f"it has no evidence from {old[:12]}"
        elif status[claim_id][0] not in LIVE:
            left[claim_id] = f"it is {status[claim_id][0]}"
        elif claim_id in gate.ended:
            left[claim_id] = "an earlier operation of this plan ends it"
    todo = [c for c in op.claims if c not in left]
    old_text, new_text = gate.sources.text(old), gate.sources.text(new)
    same = same_stretches(old_text, new_text)
    spans_at: dict[tuple[str, int], tuple[int, int] | None] = {}
    pairs: list[tuple[str, str]] = []
    for claim_id in todo:
        for idx, source_id, quote, start, end in evidence[claim_id]:
            if source_id != old:
                continue
            moved = _shifted(same, old_text, quote, start, end)
            if moved is None:
                pairs.append((new, quote))
            spans_at[(claim_id, idx)] = moved
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
        for idx, source_id, _, _, _ in evidence[claim_id]:
            if source_id != old:
                tiers.append(gate._record(source_id).trust)
                continue
            span = spans_at[(claim_id, idx)]
            if span is None:
                check = next(found)
                if check.verified and check.start is not None and check.end is not None:
                    span = (check.start, check.end)
            if span is None:
                why = why or f"quote {idx + 1} is not in the newer version"
                continue
            if _flagged(flags, starts, reach, *span):
                why = why or f"quote {idx + 1} stands in flagged text of the newer version"
            spans.append([idx, *span])
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


def _shifted(
    same: list[tuple[int, int, int]], old_text: str, quote: str, start: int, end: int
) -> tuple[int, int] | None:
    """Where evidence ``[start, end)`` of the older text stands in the newer one when it lies in
    a stretch both have byte for byte and ``quote`` is the older text's words there (else None:
    the quote is looked up)."""
    i = bisect_right(same, (start, len(old_text) + 1, 0)) - 1
    if i < 0 or not (same[i][0] <= start < end <= same[i][1]) or old_text[start:end] != quote:
        return None
    return start + same[i][2], end + same[i][2]
