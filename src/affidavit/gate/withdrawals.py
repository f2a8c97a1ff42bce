"""Admission of the operations that take claims out of the wiki instead of adding them.

* ``supersede_claim`` with ``successor``: the successor already is in the wiki, so nothing new is
  quoted; its stored quotes are looked for again in their sources as they are now (evidence), those
  sources must be active and intact (provenance), sanitizer flags quarantine as usual, and its
  trust must reach the old claim's (trust, W7). Both claims' quotes are recorded for the reviewer.
  There is no near-duplicate test: the successor was checked when it entered.
* ``retract_claim``: the claim goes, with the syntheses that rest on it (``derived_from``).
* ``retract_source``: the blast radius (:mod:`affidavit.store.blast`) is recorded.
* ``update_context`` with ``mode: "replace"``: the context entries it replaces go, so it is a
  withdrawal too: their blast radius is recorded like a retraction's (:func:`context_replacement`).

An operation that names a claim an earlier operation of the same plan already ends (supersedes or
retracts) is rejected (consistency). The policy never applies these plans on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

from ..errors import AffidavitError
from ..plan.schema import RetractClaim, RetractSource, SupersedeClaim, UpdateContext
from ..store.blast import blast_radius, claim_radius
from .verdicts import QUARANTINED, REJECTED, ClaimResult, OpResult, QuoteResult

if TYPE_CHECKING:
    from .admission import _Gate

__all__ = [
    "context_replacement",
    "ends_claims",
    "restated",
    "retraction",
    "source_retraction",
    "succession",
]


def recheck(gate: _Gate, claim_id: str) -> list[QuoteResult]:
    """The stored quotes of a claim, looked for again in their sources as they are now."""
    out = []
    for source_id, quote in gate.wiki.claim_quotes(claim_id):
        try:
            out.append(gate.verifier.check(source_id, quote))
        except AffidavitError as exc:  # e.g. the stored text is gone: say so, don't fail
            out.append(QuoteResult(source_id, source_id, quote, False, None, None, str(exc)))
    return out


def _named(gate: _Gate, claim_id: str, index: int, role: str) -> ClaimResult:
    row = gate.wiki.claim(claim_id)
    assert row is not None  # the targets check found it
    return ClaimResult(
        index=index, text=row.text, trust=row.trust, role=role, evidence=recheck(gate, claim_id)
    )


def _retracted(gate: _Gate, source_id: str | None) -> bool:
    if source_id is None:
        return False
    return source_id in gate.retracting or gate.sources.get(source_id).status == "retracted"


def _ends(claim_id: str) -> str:
    return f"an earlier operation of this plan supersedes or retracts {claim_id}"


def succession(gate: _Gate, op: SupersedeClaim, result: OpResult) -> None:
    """``supersede_claim`` with ``successor``. Quotes of the successor from retracted sources
    don't count (they are recorded under ``detail.ignored``); at least one other must verify."""
    assert op.successor is not None
    old = _named(gate, op.claim, 0, "superseded")
    new = _named(gate, op.successor, 1, "successor")
    result.claims += [old, new]
    pages = {c: row.page_slug for c in (op.claim, op.successor) if (row := gate.wiki.claim(c))}
    ignored = [q for q in new.evidence if _retracted(gate, q.source_id)]
    new.evidence = [q for q in new.evidence if not _retracted(gate, q.source_id)]
    result.detail = {
        "claim": op.claim,
        "page": pages[op.claim],
        "successor": op.successor,
        "successor_page": pages[op.successor],
        "ignored": [asdict(q) for q in ignored],
    }
    bad = [q for q in new.evidence if not q.verified]
    if not new.evidence:
        new.decide(REJECTED, "evidence", "every quote of the successor is from a retracted source")
    elif bad:
        reasons = "; ".join(q.reason for q in bad)
        new.decide(REJECTED, "evidence", f"the successor's evidence no longer verifies: {reasons}")
    else:
        gate.provenance(new)
    if new.status != REJECTED:
        gate.sanitizer(new)
        gate.trust(new, op.claim)
    if new.status != REJECTED and {op.claim, op.successor} & gate.ended:
        ended = op.claim if op.claim in gate.ended else op.successor
        new.decide(REJECTED, "consistency", _ends(ended))
    if new.status == REJECTED:
        result.decide(REJECTED, new.check, new.reason)
        return
    gate.ended.add(op.claim)
    if new.status == QUARANTINED:
        result.decide(QUARANTINED, "sanitizer", new.reason)


def restated(
    gate: _Gate, op: SupersedeClaim, result: OpResult, same: Callable[[str, str], str | None]
) -> bool:
    """``supersede_claim`` with ``by`` whose new claim is already in the wiki: an active claim
    of the old claim's page says the same words (``same(page, text)`` finds it) and rests only
    on sources the new claim quotes — a new version's changed sentence, proposed by its
    lineage and written by the model's plan too, approved first. Then the operation is the
    succession by that claim (:func:`succession`; ``detail.successor``), not a refused
    duplicate that would leave the old words in the wiki. False (nothing done) otherwise."""
    assert op.by is not None
    row = gate.wiki.claim(op.claim)
    found = same(row.page_slug, op.by.text) if row is not None else None
    if found is None or found == op.claim:
        return False
    existing = gate.wiki.claim(found)
    quoted = [str(e.source) for e in op.by.evidence]
    cited = {source for source, _quote in gate.wiki.claim_quotes(found)}
    if existing is None or existing.status != "active" or not cited:
        return False
    if not all(any(s.startswith(q) or q.startswith(s) for q in quoted) for s in cited):
        return False
    succession(gate, op.model_copy(update={"successor": found, "by": None}), result)
    result.detail["restated"] = True
    return True


def retraction(gate: _Gate, op: RetractClaim, result: OpResult) -> None:
    """``retract_claim``: the claim goes, with the syntheses that rest on it."""
    result.claims.append(_named(gate, op.claim, 0, "retracted"))
    if op.claim in gate.ended:
        result.decide(REJECTED, "consistency", _ends(op.claim))
        return
    radius = claim_radius(gate.wiki, [op.claim], skip=gate.ended)
    result.detail = {"radius": radius.to_json()}
    gate.ended |= set(radius.goes)


def source_retraction(
    gate: _Gate, op: RetractSource, result: OpResult, plan_id: str, done: set[str]
) -> None:
    """``retract_source``: record the blast radius, counting what earlier operations of the same
    plan retract (``done``: their sources; ``gate.ended``: their claims) as gone already."""
    source_id = gate.sources.resolve(op.source)
    assert source_id is not None  # the targets check found it
    if source_id in done:
        result.decide(
            REJECTED, "consistency", f"source {source_id[:12]} is retracted earlier in this plan"
        )
        return
    radius = blast_radius(
        gate.wiki,
        source_id,
        exclude_plan=plan_id,
        also_retracted=done,
        skip=gate.ended,
    )
    done.add(source_id)
    result.detail = {"radius": radius.to_json()}
    gate.ended |= set(radius.goes)


def context_replacement(gate: _Gate, op: UpdateContext, result: OpResult) -> None:
    """``update_context`` with ``mode: "replace"`` retracts every live context entry (and what
    rests on them): record that blast radius, so the policy waits for a person, the inbox shows
    what goes and the door audits it as a retraction."""
    if op.mode != "replace":
        return
    current = [claim for claim in gate.wiki.active_claims("") if claim not in gate.ended]
    if not current:
        return
    radius = claim_radius(gate.wiki, current, skip=gate.ended)
    result.detail = {"radius": radius.to_json()}
    gate.ended |= set(radius.goes)


def ends_claims(kind: str, detail: dict[str, object]) -> bool:
    """Whether an admitted operation takes claims out of the wiki (a withdrawal)."""
    return kind in ("supersede_claim", "retract_claim", "retract_source") or bool(
        detail.get("radius")
    )
