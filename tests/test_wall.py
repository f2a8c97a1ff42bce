"""W1/W2 at the door: every malformed plan is refused whole and nothing at all is written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from affidavit.errors import AdmissionError, PlanValidationError
from affidavit.inbox import propose
from affidavit.plan.schema import parse_plan
from affidavit.vault import Vault

from .conftest import add_text, claim, fresh_nonce, make_plan, snapshot

TEXT = (
    "# Lighthouses\n\nThe Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres "
    "south of Rame Head.\nThe present tower was designed by James Douglass and lit in 1882.\n"
)
QUOTE = "The present tower was designed by James Douglass"


@pytest.fixture
def source(vault: Vault) -> str:
    return add_text(vault, "lighthouses.md", TEXT)


def good_page(source: str, slug: str = "eddystone") -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": "Eddystone Lighthouse",
        "summary": "The Eddystone Lighthouse stands on the Eddystone Rocks",
        "claims": [claim("James Douglass designed the present tower.", source, QUOTE)],
    }


def bad_plans(vault: Vault, source: str) -> dict[str, Any]:
    page = good_page(source)
    n = fresh_nonce(vault)
    return {
        "unknown operation": {"nonce": n, "operations": [page, {"op": "delete_page", "slug": "x"}]},
        "write to sources": {"nonce": n, "operations": [{"op": "write_file", "path": "sources/x"}]},
        "extra field": {"nonce": n, "operations": [{**page, "path": "wiki/x.md"}]},
        "extra envelope field": {"nonce": n, "operations": [page], "admin": True},
        "slug with ..": {"nonce": n, "operations": [{**page, "slug": ".."}]},
        "slug with path": {"nonce": n, "operations": [{**page, "slug": "../sources/abc"}]},
        "slug with slash": {"nonce": n, "operations": [{**page, "slug": "a/b"}]},
        "uppercase slug": {"nonce": n, "operations": [{**page, "slug": "Eddystone"}]},
        "cyrillic look-alike slug": {"nonce": n, "operations": [{**page, "slug": "еddystone"}]},
        "fullwidth slug": {"nonce": n, "operations": [{**page, "slug": "ｅddystone"}]},
        "65-character slug": {"nonce": n, "operations": [{**page, "slug": "a" * 65}]},
        "reserved slug": {"nonce": n, "operations": [{**page, "slug": "index"}]},
        "21 operations": {
            "nonce": n,
            "operations": [good_page(source, f"p{i}") for i in range(21)],
        },
        "10,000 operations": {
            "nonce": n,
            "operations": [{"op": "link_pages", "page": "a", "to": "b"}] * 10_000,
        },
        "no operations": {"nonce": n, "operations": []},
        "link to a missing page": {
            "nonce": n,
            "operations": [page, {"op": "link_pages", "page": "eddystone", "to": "nowhere"}],
        },
        "claims on a missing page": {
            "nonce": n,
            "operations": [{"op": "add_claims", "page": "nowhere", "claims": page["claims"]}],
        },
        "supersede a missing claim": {
            "nonce": n,
            "operations": [
                {
                    "op": "supersede_claim",
                    "claim": "c-0123456789abcdef",
                    "by": page["claims"][0],
                    "reason": "newer",
                }
            ],
        },
        "missing nonce": {"operations": [page]},
        "wrong nonce": {"nonce": "x" * 24, "operations": [page]},
        "short nonce": {"nonce": "abc", "operations": [page]},
        "quote of 7 characters": {
            "nonce": n,
            "operations": [{**page, "claims": [claim("A claim.", source, "The pre")]}],
        },
        "quote of 301 characters": {
            "nonce": n,
            "operations": [{**page, "claims": [claim("A claim.", source, "x" * 301)]}],
        },
        "six quotes": {
            "nonce": n,
            "operations": [{**page, "claims": [claim("A claim.", source, *[QUOTE] * 6)]}],
        },
        "no evidence": {
            "nonce": n,
            "operations": [{**page, "claims": [{"text": "A claim.", "evidence": []}]}],
        },
        "newline in title": {"nonce": n, "operations": [{**page, "title": "a\nb"}]},
        "number instead of string": {"nonce": n, "operations": [{**page, "title": 5}]},
        "same page twice": {"nonce": n, "operations": [page, page]},
        "bare array": [page],
    }


def test_every_malformed_plan_is_refused_whole(vault: Vault, source: str) -> None:
    cases = bad_plans(vault, source)
    before = snapshot(vault)
    for name, plan in cases.items():
        with pytest.raises((PlanValidationError, AdmissionError)):
            propose(vault, plan, "tester", f"test:{name}")
        assert snapshot(vault) == before, f"{name} wrote something"
    # JSON lines and non-JSON text are refused too.
    for text in (
        "\n".join(json.dumps(p) for p in cases.values() if isinstance(p, dict))[:5000],
        "not json",
        "",
        "null",
        "[]",
    ):
        with pytest.raises(PlanValidationError):
            propose(vault, text, "tester", "test:text")
        assert snapshot(vault) == before


def test_nonce_is_single_use(vault: Vault, source: str) -> None:
    nonce = fresh_nonce(vault)
    propose(vault, make_plan(vault, good_page(source), nonce=nonce), "tester", "t")
    before = snapshot(vault)
    with pytest.raises(PlanValidationError, match="already used"):
        propose(vault, make_plan(vault, good_page(source, "other"), nonce=nonce), "tester", "t")
    assert snapshot(vault) == before


def test_expired_nonce_is_refused(vault: Vault, source: str, clock: Any) -> None:
    nonce = fresh_nonce(vault)
    clock.advance(hours=25)
    with pytest.raises(PlanValidationError, match="expired"):
        propose(vault, make_plan(vault, good_page(source), nonce=nonce), "tester", "t")


def test_valid_plan_is_accepted(vault: Vault, source: str) -> None:
    proposal = propose(vault, make_plan(vault, good_page(source)), "tester", "t")
    assert proposal.status == "pending"
    assert proposal.admission.counts == {"admitted": 1, "quarantined": 0, "rejected": 0}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = [
    "op",
    "slug",
    "title",
    "summary",
    "claims",
    "page",
    "to",
    "nonce",
    "operations",
    "text",
    "evidence",
    "source",
    "quote",
    "section",
    "mode",
    "entries",
    "claim",
    "by",
    "reason",
    "path",
]


@st.composite
def mutated_plans(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """Start from a valid plan and change a few things at random."""
    plan = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        target: Any = plan
        path = draw(st.lists(st.sampled_from([*KEYS, 0, 1]), max_size=4))
        for key in path:
            if (
                isinstance(target, dict) and key in target and isinstance(target[key], (dict, list))
            ) or (
                isinstance(target, list)
                and isinstance(key, int)
                and key < len(target)
                and isinstance(target[key], (dict, list))
            ):
                target = target[key]
        if isinstance(target, dict):
            key = draw(st.sampled_from(KEYS))
            if draw(st.booleans()) and key in target:
                del target[key]
            else:
                target[key] = draw(
                    JSON | st.sampled_from(["create_page", "add_claims", "a-b", "x" * 70])
                )
        elif isinstance(target, list) and target:
            target[draw(st.integers(0, len(target) - 1))] = draw(JSON)
    return plan


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_json_never_writes_unless_valid(
    vault: Vault, source: str, data: st.DataObject
) -> None:
    base = make_plan(
        vault,
        good_page(source),
        {"op": "link_pages", "page": "eddystone", "to": "eddystone-2"},
        good_page(source, "eddystone-2"),
    )
    raw = data.draw(JSON | mutated_plans(base))
    before = snapshot(vault)
    try:
        parse_plan(raw)
        valid = True
    except PlanValidationError:
        valid = False
    try:
        propose(vault, raw, "fuzzer", "hypothesis")
    except (PlanValidationError, AdmissionError):
        assert snapshot(vault) == before
        return
    assert valid, "an invalid plan was accepted"
