"""The compact schema a small model decodes under: sized to its reply budget, and still a plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from affidavit.ingest.pipeline import Ingestor
from affidavit.plan.compact import (
    CHARS_PER_TOKEN,
    LADDER,
    compact_plan_schema,
    worst_case_chars,
)
from affidavit.plan.schema import parse_plan
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

NONCE = "n" * 24
SOURCE = "0123456789ab"


def longest_reply(schema: dict[str, Any]) -> dict[str, Any]:
    """A reply that fills every bound of a compact schema: its longest create_page plan."""
    defs = schema["$defs"]
    page = defs["CreatePage"]["properties"]
    claim = defs["ClaimDraft"]["properties"]
    sentence = max(defs["Evidence"]["properties"]["sentence"]["enum"])
    one = {
        "text": "w" * claim["text"]["maxLength"],
        "evidence": [{"source": SOURCE, "sentence": sentence}] * claim["evidence"]["maxItems"],
    }
    ops = [
        {
            "op": "create_page",
            "slug": f"{n}" + "a" * (page["slug"]["maxLength"] - 1),
            "title": "T" * page["title"]["maxLength"],
            "summary": "S" * page["summary"]["maxLength"],
            "claims": [one] * page["claims"]["maxItems"],
        }
        for n in range(schema["properties"]["operations"]["maxItems"])
    ]
    return {"nonce": NONCE, "operations": ops}


@pytest.mark.parametrize("rung", range(len(LADDER)))
def test_the_longest_compact_reply_is_a_valid_plan_within_its_bound(rung: int) -> None:
    schema = compact_plan_schema(NONCE, [SOURCE], [], sentences=(1, 240), limits=LADDER[rung])
    reply = longest_reply(schema)
    text = json.dumps(reply, separators=(", ", ": "))  # one space after each separator
    assert len(text) <= worst_case_chars(schema)  # the bound really bounds
    plan = parse_plan(reply)  # every compact plan is a plan of the full schema
    assert len(plan.operations) == LADDER[rung].operations


def test_the_ladder_steps_down_and_each_rung_is_bounded() -> None:
    sizes = [
        worst_case_chars(compact_plan_schema(NONCE, [SOURCE], ["p"], sentences=(1, 99), limits=r))
        for r in LADDER
    ]
    assert all(size < float("inf") for size in sizes)
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)


@pytest.mark.parametrize("budget", [160, 240, 320, 400, 2048])
def test_a_reply_budget_gets_a_schema_whose_longest_reply_fits(budget: int) -> None:
    schema = compact_plan_schema(NONCE, [SOURCE], [], sentences=(1, 99), budget_tokens=budget)
    smallest = compact_plan_schema(NONCE, [SOURCE], [], sentences=(1, 99), limits=LADDER[-1])
    assert (
        worst_case_chars(schema) <= budget * CHARS_PER_TOKEN
        or schema == smallest  # nothing smaller exists
    )
    if budget >= 2048:
        assert schema == compact_plan_schema(NONCE, [SOURCE], [], sentences=(1, 99))


def test_unbounded_schemas_are_infinite() -> None:
    assert worst_case_chars({"type": "string"}) == float("inf")
    assert worst_case_chars({"type": "array", "items": {"type": "boolean"}}) == float("inf")


def test_optional_fields_a_small_model_would_pay_for_are_not_offered() -> None:
    schema = compact_plan_schema(NONCE, [SOURCE], ["p"], sentences=(1, 9))
    defs = schema["$defs"]
    assert "summary" not in schema["properties"]
    assert {"category", "section"}.isdisjoint(defs["CreatePage"]["properties"])
    assert "section" not in defs["AddClaims"]["properties"]
    # append only: a replace would withdraw every entry of the overview
    assert "mode" not in defs["UpdateContext"]["properties"]
    with pytest.raises(Exception):  # noqa: B017 - the full schema still rejects what it always did
        parse_plan({"nonce": NONCE, "operations": [{"op": "create_page", "slug": "A b"}]})


def test_a_small_provider_is_offered_a_short_source_id_the_gate_resolves(
    vault: Vault, tmp_path: Path
) -> None:
    doc = tmp_path / "tower.md"
    doc.write_text("# Tower\n\nThe present tower was designed by James Douglass in 1882.\n")

    def reply(request: ModelRequest) -> str:
        schema = request.schema or {}
        (short,) = schema["$defs"]["Evidence"]["properties"]["source"]["enum"]
        assert len(short) == 12  # a prefix, not the 64-hex id
        assert worst_case_chars(schema) <= request.max_tokens * CHARS_PER_TOKEN
        plan = {
            "nonce": request.task.nonce if request.task else "",
            "operations": [
                {
                    "op": "create_page",
                    "slug": "tower",
                    "title": "Tower",
                    "summary": "The present tower was designed by James Douglass in 1882.",
                    "claims": [
                        {
                            "text": "The present tower was designed by James Douglass in 1882.",
                            "evidence": [{"source": short, "sentence": 1}],
                        }
                    ],
                }
            ],
        }
        return json.dumps(plan)

    provider = ScriptedProvider([reply])
    provider.context_length = 4096  # a small model: it gets the compact schema
    text = vault.config_path.read_text()
    vault.config_path.write_text(
        text.replace("max_output_tokens = 2048", "max_output_tokens = 300")
    )
    from affidavit.vault import open_vault

    v = open_vault(vault.root, clock=vault.clock)
    report = Ingestor(v, provider, apply_now=True).run([str(doc)], "trusted")
    assert not report.failed and report.calls == 1
    (source_id,) = [row[0] for row in v.db.execute("SELECT DISTINCT source_id FROM evidence")]
    assert len(source_id) == 64 and SourceStore(v).resolve(source_id[:12]) == source_id
    assert "James Douglass" in (v.wiki_dir / "tower.md").read_text()
    v.close()
