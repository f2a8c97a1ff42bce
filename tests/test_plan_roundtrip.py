"""A plan's canonical JSON (what the inbox stores) validates back to an equal plan, so the door may
take the plan the inbox noted for that text instead of validating the text again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from affidavit.errors import PlanValidationError
from affidavit.hashing import canonical_json
from affidavit.plan import schema
from affidavit.plan.schema import MAX_PLAN_BYTES, Plan, parse_plan, remember_parsed

TEXTS = ["The tariff rose.", "Gold left the Bank é ☃.", "x" * 600, "A\u00a0b c", "  spaced  "]
QUOTES = ["the tariff rose in 1890", "gold left the bank", "q" * 300, "eight ch"]
SOURCE = "0123456789abcdef"
CLAIM = "c-0123456789abcdef"


def _evidence(rng: random.Random) -> dict[str, Any]:
    kind = rng.randrange(4)
    out: dict[str, Any] = {"source": SOURCE[: rng.choice([12, 16])]}
    if kind in (0, 2, 3):
        out["quote"] = rng.choice(QUOTES)
    if kind == 2:
        out["sentence"] = rng.randint(1, 50)
    if kind == 3:
        first = rng.randint(1, 50)
        out["sentences"] = [first, first + rng.randrange(3)]
    if kind == 1:
        out["sentence"] = rng.randint(1, 9)
    return out


def _claim(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {
        "text": rng.choice(TEXTS),
        "evidence": [_evidence(rng) for _ in range(rng.randint(1, 5))],
    }
    if rng.random() < 0.3:
        out["derived_from"] = [CLAIM] * rng.randint(0, 2)
    return out


def _op(rng: random.Random, n: int) -> dict[str, Any]:
    kind = rng.randrange(7)
    claims = [_claim(rng) for _ in range(rng.randint(0, 4))]
    if kind == 0:
        op: dict[str, Any] = {
            "op": "create_page",
            "slug": f"page-{n}",
            "title": rng.choice(TEXTS)[:120],
            "summary": rng.choice(TEXTS)[:300],
            "claims": claims,
        }
        for key, value in (("category", "people"), ("section", "Early life")):
            if rng.random() < 0.5:
                op[key] = value
        return op
    if kind == 1:
        op = {"op": "add_claims", "page": "tariff", "claims": claims or [_claim(rng)]}
        if rng.random() < 0.5:
            op["section"] = "Later"
        return op
    if kind == 2:
        return {"op": "link_pages", "page": "tariff", "to": f"page-{n}"}
    if kind == 3:
        op = {"op": "update_context", "entries": claims or [_claim(rng)]}
        if rng.random() < 0.5:
            op["mode"] = rng.choice(["append", "replace"])
        return op
    if kind == 4:
        op = {"op": "supersede_claim", "claim": CLAIM, "reason": "newer figures"}
        if rng.random() < 0.5:
            op["by"] = _claim(rng)
        else:
            op["successor"] = "c-fedcba9876543210"
        return op
    if kind == 5:
        return {"op": "retract_claim", "claim": CLAIM, "reason": "wrong"}
    return {"op": "retract_source", "source": SOURCE, "reason": "forged"}


def test_a_plans_canonical_json_validates_back_to_the_same_plan() -> None:
    rng = random.Random(14)
    checked = 0
    for n in range(3000):
        raw: dict[str, Any] = {
            "nonce": "n" * rng.choice([16, 40]),
            "operations": [_op(rng, k) for k in range(rng.randint(1, 6))],
        }
        if rng.random() < 0.5:
            raw["summary"] = rng.choice(TEXTS)[:300]
        try:
            plan = parse_plan(raw)
        except PlanValidationError:
            continue
        text = canonical_json(plan.to_json())
        schema._PARSED.clear()
        again = parse_plan(text)
        assert again == plan, n
        assert canonical_json(again.to_json()) == text
        remember_parsed(text, plan)
        assert parse_plan(text) is plan
        checked += 1
    assert checked > 1500


def test_a_text_too_long_to_parse_is_not_taken_from_what_was_noted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = Plan.model_validate(
        {
            "nonce": "n" * 16,
            "operations": [{"op": "retract_claim", "claim": CLAIM, "reason": "café"}],
        }
    )
    text = canonical_json(plan.to_json())
    monkeypatch.setattr(schema, "MAX_PLAN_BYTES", len(text.encode()) - 1)
    schema._PARSED.clear()
    remember_parsed(text, plan)
    with pytest.raises(PlanValidationError, match="the limit is"):
        parse_plan(text)
    assert MAX_PLAN_BYTES == 512_000
