"""Plans: the closed operation schema (W1) and the nonce (W2)."""

from .schema import (
    OPERATION_KINDS,
    AddClaims,
    CarrySource,
    ClaimDraft,
    CreatePage,
    Evidence,
    LinkPages,
    Operation,
    Plan,
    RetractClaim,
    RetractSource,
    SupersedeClaim,
    UpdateContext,
    parse_plan,
    plan_json_schema,
)

__all__ = [
    "OPERATION_KINDS",
    "AddClaims",
    "CarrySource",
    "ClaimDraft",
    "CreatePage",
    "Evidence",
    "LinkPages",
    "Operation",
    "Plan",
    "RetractClaim",
    "RetractSource",
    "SupersedeClaim",
    "UpdateContext",
    "parse_plan",
    "plan_json_schema",
]
