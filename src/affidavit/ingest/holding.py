"""A new version's changed fact enters the wiki in the decision that retires the old one.

A re-ingest of an edited file proposes, for each claim whose words the edit replaced, its
supersession (or retraction) in the inbox (:mod:`.lineage`): it waits for a person. The model
reads the changed text too, and the claims it writes from it went into the chunk's plan — applied
by ``approve --all --yes`` (which leaves plans ending claims out) or at once under a trusting
policy — so for a while the wiki stated both the old fact and the new one, and ``ask`` cited
both ("two minutes" and "three minutes").

So a new version's chunk plan is cut before the gate: every claim that cites (in this version)
text that *replaced* words a live claim quotes is held out of it (:func:`hold_replacing`) and
handed to the lineage's proposal for that claim (:func:`successor_for`): the model's claim is the
``by`` of the ``supersede_claim`` that retires the old one, or, where the old words were replaced by
a different statement (a retraction), is added by the same plan. The new fact and the old one's
end are one decision. Claims citing inserted text (no claim's words replaced) are not held.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from ..evidence.verify import locate
from ..retract import LINEAGE_ORIGIN
from ..sources.sentences import SourceSentences
from ..storage.queries import Sql

__all__ = ["HELD", "Held", "hold_replacing", "proposed_spans", "successor_for"]

HELD = "held: restates words the new version replaced; its proposal in the inbox carries it"
"""The reason counted for each claim held (:attr:`.report.ChunkOutcome.reasons`)."""


@dataclass
class Held:
    """A claim held out of a new version's chunk plan for the lineage's proposal."""

    op: str
    """The operation it came in: ``add_claims``, ``create_page`` or ``update_context``."""
    page: str
    """The page the model put it on ('' for context.md)."""
    section: str
    claim: dict[str, Any]
    spans: tuple[tuple[int, int], ...]
    """Where it cites the new version (offsets in its text)."""
    used: bool = False

    def overlaps(self, span: tuple[int, int]) -> bool:
        lo, hi = span
        return any(s < hi and lo < e for s, e in self.spans)


def hold_replacing(
    plan: dict[str, Any],
    source_id: str,
    numbered: SourceSentences,
    replaced: Sequence[tuple[int, int]],
) -> tuple[dict[str, Any], list[Held]]:
    """``plan`` without its claims citing source ``source_id`` inside one of the ``replaced``
    spans of its text, and those claims. An ``add_claims`` or ``update_context`` left with no
    claims is left out; a ``create_page`` keeps its page; a ``supersede_claim`` is kept whole (it
    retires a claim in the same decision)."""
    ops = plan.get("operations")
    if not replaced or not isinstance(ops, list):
        return plan, []
    held: list[Held] = []
    out: list[Any] = []
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in ("add_claims", "create_page",
                                                             "update_context"):  # fmt: skip
            out.append(op)
            continue
        key = "entries" if op.get("op") == "update_context" else "claims"
        claims = op.get(key)
        if not isinstance(claims, list):
            out.append(op)
            continue
        kept = []
        for claim in claims:
            spans = _cited(claim, source_id, numbered, replaced)
            if any(s < hi and lo < e for s, e in spans for lo, hi in replaced):
                page = op.get("slug") if op.get("op") == "create_page" else op.get("page")
                held.append(
                    Held(
                        str(op.get("op")),
                        str(page or ""),
                        str(op.get("section") or ""),
                        claim,
                        tuple(spans),
                    )
                )
            else:
                kept.append(claim)
        if len(kept) == len(claims):
            out.append(op)
        elif kept or op.get("op") == "create_page":
            out.append({**op, key: kept})
    if not held:
        return plan, []
    return {**plan, "operations": out}, held


def successor_for(held: Sequence[Held], page: str, span: tuple[int, int] | None) -> Held | None:
    """The held claim that restates ``span`` of the new text for a claim of ``page``: one the
    model put on that page first, else any (the new fact goes where the old one was)."""
    if span is None:
        return None
    found = [h for h in held if h.overlaps(span)]
    return next((h for h in found if h.page == page), None) or next(iter(found), None)


def proposed_spans(
    db: Sql, source_id: str, short_id: str, numbered: SourceSentences
) -> list[tuple[int, int]]:
    """Where the pending lineage plans of version ``source_id`` cite it (the new claims of their
    supersessions, and those added beside a retraction). A re-ingest stopped after some of its
    chunks (a budget, a kill) proposed its changes then; the run that resumes it does not
    follow the version again, and holds back what its chunks' plans say of these spans: the
    pending proposals bring it, with the old claims' end."""
    out: list[tuple[int, int]] = []
    for (text,) in db.execute(
        "SELECT plan_json FROM plans WHERE status = 'pending' AND origin = ?",
        (f"{LINEAGE_ORIGIN}:{short_id}",),
    ):
        try:
            ops = json.loads(text).get("operations", [])
        except (ValueError, AttributeError):
            continue
        for op in ops if isinstance(ops, list) else []:
            if not isinstance(op, dict):
                continue
            claims = [op.get("by"), *(op.get("claims") or []), *(op.get("entries") or [])]
            for claim in claims:
                out += _cited(claim, source_id, numbered, ())
    return out


def _cited(
    claim: object,
    source_id: str,
    numbered: SourceSentences,
    replaced: Sequence[tuple[int, int]],
) -> list[tuple[int, int]]:
    """Where ``claim`` cites source ``source_id`` (its id or a prefix of 12+ hex digits): a
    sentence range's span; a free quote's first place in each ``replaced`` span it occurs in
    (words also found elsewhere count as citing the replacement), else in the whole text."""
    if not isinstance(claim, dict) or not isinstance(claim.get("evidence"), list):
        return []
    out = []
    for item in claim["evidence"]:
        if not isinstance(item, dict):
            continue
        source = item.get("source")
        if not (isinstance(source, str) and len(source) >= 12 and
                source_id.startswith(source.lower())):  # fmt: skip
            continue
        numbers = item.get("sentences")
        if numbers is None and item.get("sentence") is not None:
            numbers = [item["sentence"], item["sentence"]]
        if isinstance(numbers, list) and len(numbers) == 2:
            with suppress(IndexError, TypeError, ValueError):  # no such sentence: refused
                out.append(numbered.span(int(numbers[0]), int(numbers[1])))
            continue
        quote = item.get("quote")
        if isinstance(quote, str):
            text = numbered.text
            inside = [(lo, locate(text[lo:hi], quote)) for lo, hi in replaced]
            spans = [(lo + f[0], lo + f[1]) for lo, f in inside if f is not None]
            found = locate(text, quote) if not spans else None
            out += spans if spans else [found] if found is not None else []
    return out
