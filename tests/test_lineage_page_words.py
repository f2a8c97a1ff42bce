"""A page's words follow its facts (issue 27): a new version's supersession brings the page
summary that stated the old fact in other words, in the same plan (``ingest/summaries.py``);
what it can't derive, lint's ``unsupported_page_words`` finds after the decision."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.inbox import approve
from affidavit.ingest.pipeline import Ingestor
from affidavit.ingest.summaries import derived
from affidavit.lint.checks import run_checks
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import Vault

from .test_lineage_decision import NEW, OLD, TEA, _cli, _doctor_clean, _green, _pending, _plan

SAID = "Green tea steeps for two minutes at 80 degrees Celsius."


def _writer(request: ModelRequest) -> str:
    """An LLM writer's page: the claims in the source's words, the summary in its own."""
    task = request.task
    assert task is not None
    said = [OLD, "Black tea is steeped at 95 degrees Celsius for four minutes."]
    claims = [{"text": t, "evidence": [{"source": task.source_id, "quote": t}]} for t in said]
    return _plan(
        request,
        [{"op": "create_page", "slug": "tea", "title": "Tea notes", "summary": SAID,
          "claims": claims}],
    )  # fmt: skip


def _summary(vault: Vault) -> str:
    return str(vault.db.execute("SELECT summary FROM pages WHERE slug = 'tea'").fetchone()[0])


def _first(vault: Vault, note: Path) -> None:
    note.write_text(TEA)
    Ingestor(vault, ScriptedProvider([_writer]), apply_now=True).run([str(note)], "trusted")
    assert _summary(vault) == SAID and _green(vault) == {"two minutes"}


def test_the_supersession_brings_the_summary_in_other_words(vault: Vault, tmp_path: Path) -> None:
    note = tmp_path / "tea.md"
    _first(vault, note)
    note.write_text(TEA.replace(OLD, NEW))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    (plan,) = _pending(vault, "lineage:")
    ops = json.loads(
        vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()[0]
    )["operations"]
    words = [op for op in ops if op["op"] == "update_page"]
    assert words == [  # main: no such operation; the summary kept "two minutes"
        {
            "op": "update_page",
            "page": "tea",
            "summary": "Green tea steeps for three minutes at 80 degrees Celsius.",
            "reason": words[0]["reason"],
        }
    ]
    assert ops.index(words[0]) > [o["op"] for o in ops].index("supersede_claim")
    shown = _cli(vault, "inbox", "show", plan)
    assert f"summary on the page now: “{SAID}”" in shown
    assert _summary(vault) == SAID  # nothing before the decision
    approve(vault, plan, None, "person")
    assert _green(vault) == {"three minutes"}
    assert _summary(vault) == "Green tea steeps for three minutes at 80 degrees Celsius."
    assert SAID not in (vault.wiki_dir / "tea.md").read_text()  # front matter, first line
    assert SAID not in (vault.wiki_dir / "index.md").read_text()
    assert run_checks(vault, kinds=["unsupported_page_words"]) == []
    _doctor_clean(vault)


def test_a_retraction_leaves_the_summary_to_lint(vault: Vault, tmp_path: Path) -> None:
    """Nothing to derive from (the sentence is gone): no update_page in the plan; after the
    decision the summary states a fact no claim says, and lint finds it with a fix."""
    note = tmp_path / "tea.md"
    _first(vault, note)
    note.write_text(TEA.replace(OLD + "\n", ""))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    (plan,) = _pending(vault, "lineage:")
    ops = json.loads(
        vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()[0]
    )["operations"]
    assert "update_page" not in {op["op"] for op in ops}
    approve(vault, plan, None, "person")
    (finding,) = run_checks(vault, kinds=["unsupported_page_words"])
    assert finding.subject == "tea" and finding.fix is not None
    assert finding.fix["op"] == "update_page" and "two minutes" not in finding.fix["summary"]


def test_only_one_changed_stretch_found_once_is_derived() -> None:
    """What can be derived: one stretch changed, found once in the summary; anything else is
    left (the summary holds the stretch twice, or not at all, or the words moved)."""
    old, new = OLD, NEW
    assert derived(SAID, old, new) == "Green tea steeps for three minutes at 80 degrees Celsius."
    assert derived("Steep for two minutes, or two minutes at most.", old, new) is None
    assert derived("Steeping times for tea.", old, new) is None
    assert (
        derived(SAID, old, "Green tea is steeped at 70 degrees Celsius for three minutes.") is None
    )


def test_a_summary_restating_another_claim_is_left_alone(vault: Vault, tmp_path: Path) -> None:
    """The changed stretch ("two" → "five") stands in a summary that restates another claim
    of the page: that summary is not the changed claim's, and is not rewritten (a survey page
    summarised by Station 0 got Station 25's "dunes" → "marshes" before this rule)."""
    from affidavit.ingest.summaries import summary_op

    _first(vault, tmp_path / "tea.md")
    ids = {
        str(r[1])[:5]: str(r[0])
        for r in vault.db.execute("SELECT id, text FROM claims WHERE page_slug = 'tea'")
    }
    old, new = "Black tea is steeped for two minutes.", "Black tea is steeped for five minutes."
    assert summary_op(vault, "tea", ids["Black"], old, new, "changed") is None
    assert summary_op(vault, "tea", ids["Green"], old, new, "changed") is not None
