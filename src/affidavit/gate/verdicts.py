"""What the gate decides, as recorded in a plan: verdicts per quote, claim and operation.

Stored as JSON in ``plans.admission`` and read back by the inbox and at approval; fields added later
have defaults, so admissions recorded before them still load.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from ..config import TRUST_TIERS
from ..evidence.verify import QuoteCheck
from ..support import UNCERTAIN

ADMITTED = "admitted"
QUARANTINED = "quarantined"
REJECTED = "rejected"


QuoteResult = QuoteCheck
"""A quote's verdict, as recorded in the plan (``verified: false`` ones included)."""


@dataclass
class ClaimResult:
    """The verdict on one claim of an operation."""

    index: int
    text: str
    status: str = ADMITTED  # admitted | quarantined | rejected
    check: str = ""  # the check that decided, when not plainly admitted
    reason: str = ""
    trust: str = ""
    evidence: list[QuoteResult] = field(default_factory=list)
    role: str = ""
    """'' for a claim the operation adds; for an existing claim the operation names, what it
    becomes: ``superseded`` or ``retracted``, or ``successor`` (the claim that replaces it)."""
    support: str = ""
    """The support check's verdict (W11): ``supported``, ``uncertain`` or ``unsupported``; ''
    when it did not run (an earlier check rejected the claim, or the record predates it)."""
    unsupported: list[str] = field(default_factory=list)
    """The words of the claim's text its quotes don't support (for uncertain and unsupported)."""
    support_reason: str = ""

    def decide(self, status: str, check: str, reason: str) -> None:
        self.status, self.check, self.reason = status, check, reason

    @property
    def passes(self) -> bool:
        return self.status in (ADMITTED, QUARANTINED)


@dataclass
class OpResult:
    """The verdict on one operation."""

    index: int
    kind: str
    status: str = ADMITTED
    check: str = ""
    reason: str = ""
    claims: list[ClaimResult] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    """What a supersession or retraction would do, for the reviewer: ``radius`` (a
    :class:`~affidavit.store.blast.BlastRadius` as JSON) for retractions; ``claim``,
    ``successor`` and their pages for a supersession by an existing claim."""
    uncertain: dict[str, list[str]] = field(default_factory=dict)
    """The operation's own texts ('title', 'summary', 'section heading') that the support check
    found only uncertainly supported by the quotes, with the words that lack support."""

    def decide(self, status: str, check: str, reason: str) -> None:
        self.status, self.check, self.reason = status, check, reason

    @property
    def passes(self) -> bool:
        return self.status in (ADMITTED, QUARANTINED)


WITHDRAWALS = ("supersede_claim", "retract_claim", "retract_source")
"""Operations that take claims out of the wiki; a plan with any of them always waits for a person."""


@dataclass
class Admission:
    """Everything the gate decided about a plan (or the selected part of it)."""

    plan_id: str
    selected: list[int]
    ops: list[OpResult]
    needs_approval: bool = True
    policy_reason: str = ""

    @property
    def admitted_ops(self) -> list[int]:
        return [op.index for op in self.ops if op.passes]

    @property
    def uncertain(self) -> bool:
        """Does any passing claim or page text rest only uncertainly on its quotes (W11)?"""
        return any(
            op.uncertain or any(c.support == UNCERTAIN for c in op.claims if c.passes)
            for op in self.ops
            if op.passes
        )

    @property
    def counts(self) -> dict[str, int]:
        out = {ADMITTED: 0, QUARANTINED: 0, REJECTED: 0}
        for op in self.ops:
            for claim in op.claims:
                if not claim.role:  # claims the plan adds, not the ones it names
                    out[claim.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        out = _plain(self)
        assert isinstance(out, dict)
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> Admission:
        ops = []
        for op in data["ops"]:
            claims = [
                ClaimResult(**{**c, "evidence": [QuoteResult(**q) for q in c["evidence"]]})
                for c in op["claims"]
            ]
            ops.append(OpResult(**{**op, "claims": claims}))
        return Admission(
            plan_id=data["plan_id"],
            selected=list(data["selected"]),
            ops=ops,
            needs_approval=bool(data["needs_approval"]),
            policy_reason=str(data["policy_reason"]),
        )


_FIELDS: dict[type, tuple[str, ...]] = {}
_ATOMS = (str, int, float, bool, type(None))
_ATOM_TYPES = frozenset(_ATOMS)


def _plain(value: Any) -> Any:
    """``dataclasses.asdict`` for verdicts, without its per-value ``deepcopy``: the same dicts,
    lists and tuples, with immutable values shared (a plan's admission is written twice). A
    field or item that is a plain atom is taken as it is, without a call."""
    if isinstance(value, _ATOMS):
        return value
    kind = type(value)
    names = _FIELDS.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        out = {}
        for name in names:
            item = getattr(value, name)
            out[name] = item if type(item) in _ATOM_TYPES else _plain(item)
        return out
    if isinstance(value, list):
        return [v if type(v) in _ATOM_TYPES else _plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return kind(_plain(v) for v in value)
    return copy.deepcopy(value)


def trust_rank(tier: str) -> int:
    return TRUST_TIERS.index(tier)
