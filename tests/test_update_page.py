"""``update_page``: a page's new title or summary, judged against its active claims as
``create_page``'s are (issue 27: a page's words follow its facts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import PlanValidationError
from affidavit.inbox import approve, propose
from affidavit.plan.schema import parse_plan
from affidavit.retract import withdrawal_plan
from affidavit.vault import Vault

from .test_lineage_decision import _cli, _doctor_clean

TEA = """# Tea notes

Green tea is steeped at 80 degrees Celsius for three minutes.
Black tea is steeped at 95 degrees Celsius for four minutes.
"""


def _page(vault: Vault) -> tuple[str, str]:
    row = vault.db.execute("SELECT title, summary FROM pages WHERE slug = 'tea'").fetchone()
    return str(row[0]), str(row[1])


@pytest.fixture
def tea(vault: Vault, tmp_path: Path) -> Vault:
    """A page 'tea' with both claims, its summary in other words, stating an old fact."""
    from affidavit.sources.store import SourceStore

    note = tmp_path / "tea.md"
    note.write_text(TEA)
    record = SourceStore(vault).add_file(note, "trusted").record
    said = [
        "Green tea is steeped at 80 degrees Celsius for three minutes.",
        "Black tea is steeped at 95 degrees Celsius for four minutes.",
    ]
    claims = [{"text": t, "evidence": [{"source": record.id, "quote": t}]} for t in said]
    plan = withdrawal_plan(
        vault,
        [{"op": "create_page", "slug": "tea", "title": "Tea notes",
          "summary": "Green tea is steeped for three minutes.", "claims": claims}],
        purpose="test",
    )  # fmt: skip
    proposal = propose(vault, plan, "person", "test")
    if proposal.status == "pending":
        approve(vault, proposal.plan_id, None, "person")
    vault.db.execute("UPDATE pages SET summary = 'Green tea is steeped for two minutes.'")
    vault.db.commit()
    return vault


def _update(vault: Vault, **texts: Any) -> Any:
    op = {"op": "update_page", "page": "tea", "reason": "the summary states an old fact", **texts}
    return propose(vault, withdrawal_plan(vault, [op], purpose="test"), "person", "test")


def test_the_schema_wants_a_new_title_or_summary() -> None:
    op: dict[str, str] = {"op": "update_page", "page": "tea", "reason": "x" * 5}
    with pytest.raises(PlanValidationError):
        parse_plan({"nonce": "n" * 24, "operations": [op]})
    plan = parse_plan({"nonce": "n" * 24, "operations": [{**op, "summary": "New words."}]})
    assert plan.operations[0].op == "update_page"


def test_a_supported_summary_waits_for_a_person_then_goes_in(tea: Vault) -> None:
    """Judged against the page's claims; always waits; the inbox shows the old and new words;
    applied by the door, the audit names both; doctor clean."""
    proposal = _update(tea, summary="Green tea is steeped at 80 degrees Celsius for three minutes.")
    assert proposal.status == "pending"
    from affidavit.inbox import get_plan
    from affidavit.service.changes import does

    assert does(get_plan(tea, proposal.plan_id)) == "rewords tea"
    (verdict,) = proposal.admission.ops
    assert verdict.passes and verdict.detail["old"] == {
        "summary": "Green tea is steeped for two minutes."
    }
    shown = _cli(tea, "inbox", "show", proposal.plan_id)
    assert "summary on the page now: “Green tea is steeped for two minutes.”" in shown
    assert "summary: Green tea is steeped at 80 degrees Celsius for three minutes." in shown
    approve(tea, proposal.plan_id, None, "person")
    assert _page(tea) == (
        "Tea notes",
        "Green tea is steeped at 80 degrees Celsius for three minutes.",
    )
    page = (tea.wiki_dir / "tea.md").read_text()
    assert "three minutes" in page.split("\n## ")[0] and "two minutes" not in page
    audit = [
        json.loads(r[0])
        for r in tea.db.execute("SELECT detail FROM audit WHERE action = 'applied'")
    ]
    words = [op["page_words"] for a in audit for op in a.get("ops", []) if "page_words" in op]
    assert words[-1]["old"] == {"summary": "Green tea is steeped for two minutes."}
    _doctor_clean(tea)
    _cli(tea, "doctor")  # the change log's doctor too: the door wrote the page's new words


def test_an_update_page_smuggling_an_unsupported_summary_is_refused(tea: Vault) -> None:
    """The attacker's: a summary no claim of the page says, as create_page's would be."""
    proposal = _update(tea, summary="Green tea cures every illness within two minutes.")
    (verdict,) = proposal.admission.ops
    assert verdict.status == "rejected" and verdict.check == "support"
    assert _page(tea)[1] == "Green tea is steeped for two minutes."
    same = _update(tea, title="Tea notes: green tea is steeped for two minutes")
    assert same.admission.ops[0].status == "rejected"


def test_a_summary_only_an_ended_claim_says_is_refused(tea: Vault) -> None:
    """The claims an earlier operation of the plan ends don't count; those it adds do."""
    (green,) = [
        str(r[0]) for r in tea.db.execute("SELECT id FROM claims WHERE text LIKE 'Green tea%'")
    ]
    summary = "Green tea steeps for three minutes at 80 degrees Celsius."
    words = {"op": "update_page", "page": "tea", "summary": summary, "reason": "follows"}
    alone = propose(tea, withdrawal_plan(tea, [words], purpose="test"), "person", "test")
    assert alone.admission.ops[0].passes  # the green tea claim says it
    ops = [{"op": "retract_claim", "claim": green, "reason": "gone from the notes"}, words]
    proposal = propose(tea, withdrawal_plan(tea, ops, purpose="test"), "person", "test")
    assert proposal.admission.ops[1].status == "rejected"  # only the retracted claim said it


def test_no_such_page(tea: Vault) -> None:
    op = {"op": "update_page", "page": "coffee", "summary": "Coffee.", "reason": "x" * 5}
    proposal = propose(tea, withdrawal_plan(tea, [op], purpose="test"), "person", "test")
    assert proposal.admission.ops[0].status == "rejected"
