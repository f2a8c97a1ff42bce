"""What the door writes of a plan in one apply, and what of it is left (W11, judged text by text).

A person's approval writes the selected operations whole (their passing claims and texts, with
the host's text for a rejected title, summary or heading). An approval that takes only what
needs no person — the policy, ``ingest --yes`` — writes each operation's *sure* part: the claims
and texts that don't wait (:func:`~affidavit.gate.verdicts.held_parts`), with the host's text
for a title, summary or heading that waits. What waits stays with the plan as its pending
remainder (``plans.held``): the plan stays ``pending`` until a person approves the rest (W5's
re-check then admits only those parts, against the wiki as it is) or rejects it, or it expires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..gate.admission import Admission, Held, OpResult
from ..gate.verdicts import held_parts
from .batch import Prepared


@dataclass(frozen=True)
class Parts:
    """What the door writes of one plan now."""

    ops: tuple[int, ...]
    """The operations written now: whole, their sure part, or their held part."""
    held: Mapping[int, Held] = field(default_factory=dict)
    """Parts of those operations left waiting for a person (an approval that takes only what
    needs no person)."""
    remainder: Mapping[int, Held] = field(default_factory=dict)
    """Operations that complete an earlier apply: only these parts of them are written."""


def choose(item: Prepared, admission: Admission) -> Parts:
    """What to write of ``item`` under ``admission`` (the gate's verdicts now)."""
    passing = set(admission.admitted_ops)
    remainder = {i: h for i, h in item.remainder.items() if i in passing}
    if not item.sure_only:
        return Parts(tuple(admission.admitted_ops), {}, remainder)
    sure = [op for op in admission.ops if op.sure and op.index not in item.held]
    held = {op.index: parts for op in sure if (parts := held_parts(op))}
    return Parts(tuple(op.index for op in sure), held, {})


def merged(stored: Admission, now: Admission, remainder: Mapping[int, Held]) -> Admission:
    """The plan's stored verdicts with those of the operations just re-admitted replaced — for an
    operation completing an earlier apply, only its held claims and texts."""
    fresh = {op.index: op for op in now.ops}
    ops: list[OpResult] = []
    for op in stored.ops:
        new = fresh.pop(op.index, None)
        if new is None:
            ops.append(op)
        elif op.index in remainder:
            ops.append(_merge_op(op, new))
        else:
            ops.append(new)
    ops += fresh.values()
    return replace(stored, ops=sorted(ops, key=lambda op: op.index))


def _merge_op(old: OpResult, new: OpResult) -> OpResult:
    claims = {c.index: c for c in old.claims if not c.role}
    claims.update({c.index: c for c in new.claims if not c.role})
    texts = {t.what: t for t in old.texts}
    texts.update({t.what: t for t in new.texts})
    uncertain = {k: v for k, v in old.uncertain.items() if k not in texts or texts[k].waits}
    uncertain.update(new.uncertain)
    return replace(
        old,
        claims=[c for c in old.claims if c.role] + [claims[k] for k in sorted(claims)],
        texts=list(texts.values()),
        uncertain=uncertain,
    )


def left(
    item: Prepared,
    admission: Admission,
    parts: Parts,
    written: Mapping[int, list[str]],
    headings: Mapping[int, bool],
) -> tuple[list[int], dict[int, Held], list[int]]:
    """After writing ``parts``: the operations applied (whole or in part), the plan's remainder
    (held parts, with the ids of the claims their operation wrote), and the operations still
    pending (not applied yet, or with a remainder)."""
    failing = set(item.selection) - set(admission.admitted_ops)  # decided: not left pending
    done = sorted({*item.done, *parts.ops})
    held = {i: h for i, h in item.held.items() if i not in parts.ops and i not in failing and h}
    for i, h in parts.held.items():
        held[i] = Held(h.claims, h.texts, tuple(written.get(i, [])), headings.get(i, True))
    remaining = [
        i for i in item.stored.admitted_ops if i not in failing and (i not in done or i in held)
    ]
    return done, held, remaining
