"""What the gate decides, as recorded in a plan: verdicts per quote, claim and operation.

Stored as JSON in ``plans.admission`` and read back by the inbox and at approval; fields added later
have defaults, so admissions recorded before them still load.
"""

from __future__ import annotations

import copy
import re
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
    waits: str = ""
    """Why the claim waits for a person even when the policy applies the rest of its plan (W11,
    judged text by text): its support is uncertain, it quotes flagged text, or it leans on a claim
    before it that doesn't go in ("opens with 'It'…"); '' when it goes in with the rest."""
    section: str = ""
    """The section the host puts the claim in when its operation's heading is not written (the
    heading the claim's first quote stands under in its source, else the operation's default);
    '' when the heading is written."""

    def decide(self, status: str, check: str, reason: str) -> None:
        self.status, self.check, self.reason = status, check, reason

    @property
    def passes(self) -> bool:
        return self.status in (ADMITTED, QUARANTINED)

    @property
    def sure(self) -> bool:
        """Passes and goes in with the rest of its plan under the policy (nothing to wait for)."""
        return self.passes and not self.waits


PAGE_TEXTS = ("title", "summary", "section heading")
_CLAIM_ID = re.compile(r"c-[0-9a-f]{16}")
"""An operation's own texts, judged one by one like its claims (W11)."""


@dataclass
class TextResult:
    """The verdict on one of an operation's own texts: a page's ``title`` or ``summary``, or the
    ``section heading`` its claims go under. Judged like a claim, against the quotes of the
    page's (or the operation's) claims that go in; a text that is rejected, or that waits for a
    person while the rest of its plan is applied, is replaced on the page by :attr:`host`."""

    what: str  # title | summary | section heading
    text: str  # the proposer's
    status: str = ADMITTED  # admitted | quarantined | rejected
    check: str = ""
    reason: str = ""
    support: str = ""
    missing: list[str] = field(default_factory=list)
    host: str = ""
    """What the host writes instead, taken from the claims that go in (a title: the heading their
    source puts them under, else the first claim; a summary: the first claim; a heading: the
    first claim's own heading in its source); '' when this text is written as it is."""

    def decide(self, status: str, check: str, reason: str) -> None:
        self.status, self.check, self.reason = status, check, reason

    @property
    def passes(self) -> bool:
        return self.status in (ADMITTED, QUARANTINED)

    @property
    def waits(self) -> bool:
        """Passes, but only a person may put it on the page (uncertain, or quarantined)."""
        return self.passes and (self.support == UNCERTAIN or self.status == QUARANTINED)


@dataclass(frozen=True)
class Held:
    """The parts of an applied operation that wait for a person (its plan's pending remainder):
    claims by index, texts by name, and the ids of the claims the operation wrote when the rest
    went in (an approved heading moves them under it)."""

    claims: tuple[int, ...] = ()
    texts: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    heading: bool = True
    """Whether the operation's claims went in under its own heading (else the host's)."""

    def __bool__(self) -> bool:
        return bool(self.claims or self.texts)

    def to_json(self) -> dict[str, Any]:
        return {
            "claims": list(self.claims),
            "texts": list(self.texts),
            "written": list(self.written),
            "heading": self.heading,
        }

    @staticmethod
    def from_json(data: object) -> Held:
        """A stored remainder, read back from the vault (untrusted): anything malformed is
        refused, never guessed at."""
        if not isinstance(data, dict) or set(data) - {"claims", "texts", "written", "heading"}:
            raise ValueError(f"not a held remainder: {data!r}")
        claims, texts, written = (data.get(k, []) for k in ("claims", "texts", "written"))
        heading = data.get("heading", True)
        if not (
            isinstance(claims, list)
            and all(type(c) is int and 0 <= c < 1000 for c in claims)
            and isinstance(texts, list)
            and all(t in PAGE_TEXTS for t in texts)
            and isinstance(written, list)
            and all(isinstance(w, str) and _CLAIM_ID.fullmatch(w) for w in written)
            and isinstance(heading, bool)
        ):
            raise ValueError(f"not a held remainder: {data!r}")
        return Held(tuple(claims), tuple(texts), tuple(written), heading)


def held_parts(op: OpResult) -> Held:
    """What of ``op`` waits for a person when the policy applies the rest: its claims and texts
    that wait (uncertain, quarantined, or leaning on a claim that doesn't go in)."""
    return Held(
        tuple(c.index for c in op.claims if not c.role and c.passes and c.waits),
        tuple(t.what for t in op.texts if t.waits),
    )


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
    texts: list[TextResult] = field(default_factory=list)
    """The verdict on each of the operation's own texts (title, summary, section heading)."""
    waits: str = ""
    """Why the whole operation waits for a person even when the policy applies the rest of its
    plan (every claim of it waits; it extends a page whose creation waits); '' otherwise."""

    def decide(self, status: str, check: str, reason: str) -> None:
        self.status, self.check, self.reason = status, check, reason

    @property
    def passes(self) -> bool:
        return self.status in (ADMITTED, QUARANTINED)

    @property
    def sure(self) -> bool:
        """Passes, and the policy may apply its sure part (see :func:`held_parts`)."""
        return self.passes and not self.waits

    def text(self, what: str) -> TextResult | None:
        return next((t for t in self.texts if t.what == what), None)


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
    support_version: str = ""
    """The support check that judged it (:attr:`affidavit.support.SupportChecker.version`);
    recorded with each claim it admits, so doctor and lint can say what changed since."""
    agent: bool = False
    """Whether the plan is an agent's (W13): then it always waits for a person."""

    @property
    def admitted_ops(self) -> list[int]:
        return [op.index for op in self.ops if op.passes]

    @property
    def sure_ops(self) -> list[int]:
        """The passing operations the policy may apply (their sure part)."""
        return [op.index for op in self.ops if op.sure]

    @property
    def uncertain(self) -> bool:
        """Does any passing claim or page text rest only uncertainly on its quotes (W11)?"""
        return any(
            op.uncertain
            or any(t.waits for t in op.texts)
            or any(c.support == UNCERTAIN for c in op.claims if c.passes)
            for op in self.ops
            if op.passes
        )

    @property
    def waiting(self) -> bool:
        """Does any part of a passing operation wait for a person (:func:`held_parts`)?"""
        return any(op.waits or held_parts(op) for op in self.ops if op.passes)

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
            texts = [TextResult(**t) for t in op.get("texts", [])]
            ops.append(OpResult(**{**op, "claims": claims, "texts": texts}))
        return Admission(
            plan_id=data["plan_id"],
            selected=list(data["selected"]),
            ops=ops,
            needs_approval=bool(data["needs_approval"]),
            policy_reason=str(data["policy_reason"]),
            support_version=str(data.get("support_version", "")),
            agent=bool(data.get("agent", False)),
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
