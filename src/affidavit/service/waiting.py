"""What of a pending plan waits for a person, and why, one line each (W11).

Every surface that shows a pending plan — ``affidavit inbox`` and ``inbox show``, the web desk,
the API, the MCP ``propose_plan`` and ``plan_status`` replies — names, for each text that waits,
the words or the structure the host could not confirm, in one line, so a person decides in
seconds. The lines come from here (one rule, several doors): the gate's verdicts as the plan's
admission records them, and its remainder (the parts held back while the policy applied the
rest). A text that waits only because the whole plan does (``policy.auto_apply = "never"``, a
withdrawal, an agent's plan) is not listed: the plan's policy reason says that once.
"""

from __future__ import annotations

from ..gate.admission import Admission, Held, OpResult
from ..plan.schema import Plan
from .models import WaitingOut

SHOWN_CHARS = 80
"""At most this much of a waiting text is quoted in its line."""
WHY_CHARS = 300


def _short(text: str, limit: int = SHOWN_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _line(op: int, part: str, text: str, verdict: str, why: str) -> str:
    """The host's words first (where, the verdict, why), the proposer's text last: a text that
    imitates a verdict can't put words before the host's."""
    return f"op {op} {part}: {verdict} — {_short(why, WHY_CHARS)} — “{_short(text)}”"


def _claims(op: OpResult, only: tuple[int, ...] | None, applied: bool) -> list[WaitingOut]:
    out = []
    for claim in sorted((c for c in op.claims if not c.role), key=lambda c: c.index):
        if only is not None and claim.index not in only:
            continue
        if not claim.passes or not (claim.waits or only is not None):
            continue
        why = claim.waits or claim.support_reason or claim.reason or "approved with the rest"
        verdict = (
            "quarantined"
            if claim.status == "quarantined"
            else claim.support
            if claim.support == "uncertain"
            else "leans"
            if why.startswith("opens with")
            else claim.support or "waits"
        )
        part = f"claim {claim.index + 1}"
        out.append(
            WaitingOut(
                op=op.index + 1,
                part=part,
                text=claim.text,
                verdict=verdict,
                why=" ".join(why.split()),
                words=list(claim.unsupported),
                applied=applied,
                line=_line(op.index + 1, part, claim.text, verdict, why),
            )
        )
    return out


def _texts(op: OpResult, only: tuple[str, ...] | None, applied: bool) -> list[WaitingOut]:
    out = []
    for text in op.texts:
        if only is not None and text.what not in only:
            continue
        if not text.passes or not (text.waits or only is not None):
            continue
        verdict = "quarantined" if text.status == "quarantined" else text.support or "waits"
        why = text.reason or "the support check is uncertain"
        if text.host and not applied:
            why += f" (until a person approves it, the page shows the host's: “{text.host}”)"
        elif text.host:
            why += f" (the page shows the host's: “{text.host}”)"
        out.append(
            WaitingOut(
                op=op.index + 1,
                part=text.what,
                text=text.text,
                verdict=verdict,
                why=" ".join(why.split()),
                words=list(text.missing),
                applied=applied,
                line=_line(op.index + 1, text.what, text.text, verdict, why),
            )
        )
    return out


def waiting(
    plan: Plan, admission: Admission, held: dict[int, Held], done: set[int]
) -> list[WaitingOut]:
    """The texts of a pending plan that wait for a person, with why: the held parts of its
    applied operations, then, for the operations not applied yet, every claim and text that
    would wait while the policy applied the rest, and every operation that would wait whole."""
    out: list[WaitingOut] = []
    for op in sorted(admission.ops, key=lambda o: o.index):
        if not op.passes or not 0 <= op.index < len(plan.operations):
            continue
        if op.index in held:
            parts = held[op.index]
            out += _texts(op, parts.texts, applied=True)
            out += _claims(op, parts.claims, applied=True)
            continue
        if op.index in done:
            continue
        if op.waits:
            kind = plan.operations[op.index].op
            out.append(
                WaitingOut(
                    op=op.index + 1,
                    part="operation",
                    text=kind,
                    verdict="waits",
                    why=op.waits,
                    words=[],
                    applied=False,
                    line=f"op {op.index + 1} {kind}: waits whole — {op.waits}",
                )
            )
        out += _texts(op, None, applied=False)
        out += _claims(op, None, applied=False)
    return out
