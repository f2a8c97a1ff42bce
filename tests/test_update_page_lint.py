"""Lint's ``unsupported_page_words``: a page's summary or title its active claims no longer say
(issue 27), found with the gate's rule and fixed by an ``update_page`` that waits for a person."""

from __future__ import annotations

from pathlib import Path

from affidavit.inbox import approve, propose
from affidavit.lint.checks import run_checks
from affidavit.lint.findings import Finding
from affidavit.retract import withdrawal_plan
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

from .test_lineage_decision import _cli, _doctor_clean

GREEN = "Green tea is steeped at 80 degrees Celsius for two minutes."
BLACK = "Black tea is steeped at 95 degrees Celsius for four minutes."


def _tea(vault: Vault, tmp_path: Path, summary: str, title: str = "Tea notes") -> dict[str, str]:
    note = tmp_path / "tea.md"
    note.write_text(f"# Tea notes\n\n{GREEN}\n{BLACK}\n")
    record = SourceStore(vault).add_file(note, "trusted").record
    claims = [{"text": t, "evidence": [{"source": record.id, "quote": t}]} for t in (GREEN, BLACK)]
    op = {"op": "create_page", "slug": "tea", "title": title, "summary": summary, "claims": claims}
    proposal = propose(vault, withdrawal_plan(vault, [op], purpose="test"), "person", "test")
    if proposal.status == "pending":
        approve(vault, proposal.plan_id, None, "person")
    return {str(r[1])[:5]: str(r[0]) for r in vault.db.execute("SELECT id, text FROM claims")}


def _retract(vault: Vault, claim: str) -> None:
    op = {"op": "retract_claim", "claim": claim, "reason": "gone from the notes"}
    proposal = propose(vault, withdrawal_plan(vault, [op], purpose="test"), "person", "test")
    approve(vault, proposal.plan_id, None, "person")


def _found(vault: Vault) -> list[Finding]:
    return run_checks(vault, kinds=["unsupported_page_words"])


def test_a_summary_in_other_words_stating_a_retracted_fact_is_found_and_fixed(
    vault: Vault, tmp_path: Path
) -> None:
    claims = _tea(vault, tmp_path, "Green tea steeps for two minutes at 80 degrees Celsius.")
    assert _found(vault) == []  # supported while the green tea claim stands
    _cli(vault, "lint")  # a checkpoint: the next run looks at what changed since
    _retract(vault, claims["Green"])
    assert "unsupported_page_words" in _cli(vault, "lint")  # the incremental run finds it
    (finding,) = _found(vault)  # main: no such check
    assert finding.subject == "tea" and "summary" in finding.message
    fix = finding.fix
    assert fix == {
        "op": "update_page",
        "page": "tea",
        "summary": BLACK,
        "reason": "its claims no longer say its summary",
    }
    out = _cli(vault, "lint", "--propose", "--full")
    assert "unsupported_page_words" in out
    (plan,) = [str(r[0]) for r in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'")]
    shown = _cli(vault, "inbox", "show", plan)
    assert "summary on the page now: “Green tea steeps for two minutes" in shown
    _cli(vault, "approve", plan)
    summary = vault.db.execute("SELECT summary FROM pages WHERE slug = 'tea'").fetchone()[0]
    assert summary == BLACK
    assert _found(vault) == []
    _doctor_clean(vault)


def test_a_title_no_claim_says_any_more(vault: Vault, tmp_path: Path) -> None:
    claims = _tea(
        vault, tmp_path, "Green tea and black tea steeping times.", "Two-minute green tea"
    )
    _retract(vault, claims["Green"])
    (finding,) = _found(vault)
    assert "title" in finding.message
    assert finding.fix is not None and finding.fix["title"] == "Tea notes"  # the source's heading


def test_words_the_claims_still_say_are_not_reported(vault: Vault, tmp_path: Path) -> None:
    """The other side: a summary the remaining claims support, and a page left untouched."""
    claims = _tea(vault, tmp_path, "Black tea is steeped at 95 degrees Celsius.")
    _retract(vault, claims["Green"])
    assert _found(vault) == []
