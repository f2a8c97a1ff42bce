"""A re-ingest never states both facts (issue 27 item 1): a version that changes a fact gets its
new fact into the wiki only in the decision that retires the old one.

Found by a walk: a note file ingested and approved, "two minutes" edited to "three minutes", the
file ingested again; ``approve --all --yes`` applied the chunk's plan with the new fact (it ends
nothing) and left out the lineage's supersede proposal (it ends claims): the wiki stated both,
and ``ask`` cited both. Under a trusting policy (``ingest --yes``) the chunk's plan applied at
once, with the same result. The model's claims from replaced words are now held out of the
chunk's plan and carried by the proposal that retires the old claim (``ingest/holding.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.inbox import approve
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.store.apply import gate_services
from affidavit.store.replay import claim_problems
from affidavit.vault import Vault

TEA = """# Tea notes

Green tea is steeped at 80 degrees Celsius for two minutes.
Black tea is steeped at 95 degrees Celsius for four minutes.
Oolong tea is steeped at 90 degrees Celsius for three minutes.
"""
OLD = "Green tea is steeped at 80 degrees Celsius for two minutes."
NEW = "Green tea is steeped at 80 degrees Celsius for three minutes."


def _cli(vault: Vault, *args: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _active(vault: Vault, like: str) -> list[str]:
    return [
        str(r[0])
        for r in vault.db.execute(
            "SELECT text FROM claims WHERE status = 'active' AND text LIKE ?", (like,)
        )
    ]


def _green(vault: Vault) -> set[str]:
    """What the wiki's active claims say green tea's steeping time is."""
    out = set()
    for text in _active(vault, "%reen%"):
        out |= {w for w in ("two minutes", "three minutes", "one minute") if w in text}
    return out


def _pending(vault: Vault, prefix: str) -> list[str]:
    return [
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM plans WHERE status = 'pending' AND origin LIKE ? ORDER BY rowid",
            (prefix + "%",),
        )
    ]


def _doctor_clean(vault: Vault) -> None:
    store, verifier = gate_services(vault)
    _, problems = claim_problems(vault.db, verifier, store)
    assert problems == []


def test_approve_all_yes_after_an_edit_never_states_both_facts(
    vault: Vault, tmp_path: Path
) -> None:
    """The CLI path a user takes: ingest, approve --all --yes, edit, ingest, approve --all
    --yes, ask; then the supersession approved by id."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    _cli(vault, "ingest", str(folder))
    _cli(vault, "approve", "--all", "--yes")
    assert _green(vault) == {"two minutes"}
    note.write_text(TEA.replace("two minutes", "three minutes"))
    _cli(vault, "ingest", str(note))
    out = _cli(vault, "approve", "--all", "--yes")
    assert _green(vault) == {"two minutes"}, out  # main: both
    answer = _cli(vault, "ask", "How long is green tea steeped?")
    assert "two minutes" in answer and "80 degrees Celsius for three" not in answer  # main: both
    (lineage,) = _pending(vault, "lineage:")
    shown = _cli(vault, "inbox", "show", lineage)
    assert "three minutes" in shown and "supersede_claim" in shown
    _cli(vault, "approve", lineage)  # one decision: the old fact out, the new one in
    assert _green(vault) == {"three minutes"}
    answer = _cli(vault, "ask", "How long is green tea steeped?")
    assert "three minutes" in answer and "two minutes" not in answer
    assert _pending(vault, "") == []
    _doctor_clean(vault)


def test_a_trusting_policy_applies_nothing_of_the_changed_fact(
    vault: Vault, tmp_path: Path
) -> None:
    """``ingest --yes --trust trusted``: the chunk's plan is applied at once, the supersession
    waits; the new fact waits with it."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    note.write_text(TEA.replace("two minutes", "three minutes"))
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _green(vault) == {"two minutes"}  # main: both
    lineage = report.sources[0].lineage or {}
    assert lineage["held"] >= 1 and lineage["supersede_proposals"] >= 1
    (plan,) = _pending(vault, "lineage:")
    ops = json.loads(
        vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()[0]
    )["operations"]
    assert ops and all(op["op"] == "supersede_claim" and "by" in op for op in ops)
    result = approve(vault, plan, None, "person")
    assert result.superseded
    assert _green(vault) == {"three minutes"}
    _doctor_clean(vault)


def _plan(request: ModelRequest, operations: list[dict[str, Any]]) -> str:
    task = request.task
    assert task is not None
    return json.dumps({"nonce": task.nonce, "summary": "notes", "operations": operations})


def _first(request: ModelRequest) -> str:
    task = request.task
    assert task is not None
    said = [OLD, "Black tea is steeped at 95 degrees Celsius for four minutes."]
    claims = [{"text": t, "evidence": [{"source": task.source_id, "quote": t}]} for t in said]
    return _plan(
        request,
        [{"op": "create_page", "slug": "tea", "title": "Tea notes", "summary": "Steeping tea.",
          "claims": claims}],
    )  # fmt: skip


def _attack(claim: dict[str, Any]) -> Any:
    """The attacker's reading of the new version: the changed fact on a page of its own (and
    in context.md), quoting a part of the changed sentence whose words also stand, unchanged,
    in another sentence."""

    def reply(request: ModelRequest) -> str:
        task = request.task
        assert task is not None
        cited = {**claim, "evidence": [{**e, "source": task.source_id} for e in claim["evidence"]]}
        return _plan(
            request,
            [
                {"op": "create_page", "slug": "steeping", "title": "Steeping times",
                 "summary": "How long tea steeps.", "claims": [cited]},
                {"op": "update_context", "entries": [cited]},
            ],
        )  # fmt: skip

    return reply


def _two_versions(vault: Vault, tmp_path: Path, new: str, claim: dict[str, Any]) -> None:
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ScriptedProvider([_first]), apply_now=True).run([str(note)], "trusted")
    assert _green(vault) == {"two minutes"}
    note.write_text(TEA.replace(OLD, new))
    model = ScriptedProvider([_attack(claim)])
    Ingestor(vault, model, apply_now=True).run([str(note)], "trusted")
    assert model.requests  # the changed text was read


def test_the_attackers_changed_fact_on_another_page_waits_for_the_supersession(
    vault: Vault, tmp_path: Path
) -> None:
    claim = {"text": "Green tea steeps for three minutes.",
             "evidence": [{"source": "", "quote": "Green tea is steeped at 80 degrees Celsius "
                                                  "for three minutes"}]}  # fmt: skip
    _two_versions(vault, tmp_path, NEW, claim)
    assert _green(vault) == {"two minutes"}  # main: "three minutes" on the new page too
    (plan,) = _pending(vault, "lineage:")
    ops = json.loads(
        vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()[0]
    )["operations"]
    assert [op["op"] for op in ops] == ["supersede_claim"]
    assert ops[0]["by"]["text"] == claim["text"]  # the model's words, where the old one was
    approve(vault, plan, None, "person")
    assert _green(vault) == {"three minutes"}
    _doctor_clean(vault)


def test_a_reworded_change_is_retracted_and_added_in_one_plan(vault: Vault, tmp_path: Path) -> None:
    """Words changed too much to pair (a retraction, not a supersession): what the model wrote
    from the new words is added by the plan that retracts the old claim, not before it."""
    new = "Steep green leaves for one minute only, never longer."
    claim = {"text": "Green leaves are steeped for one minute only.",
             "evidence": [{"source": "", "quote": new}]}  # fmt: skip
    _two_versions(vault, tmp_path, new, claim)
    assert _green(vault) == {"two minutes"}  # main: "one minute" beside it
    (plan,) = _pending(vault, "lineage:")
    ops = json.loads(
        vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()[0]
    )["operations"]
    assert {op["op"] for op in ops} == {"retract_claim", "add_claims", "update_context"}
    approve(vault, plan, None, "person")
    assert _green(vault) == {"one minute"}
    _doctor_clean(vault)


def test_new_text_that_replaced_nothing_is_not_held(vault: Vault, tmp_path: Path) -> None:
    """The other side: a sentence added (no claim's words replaced) goes in with its chunk."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    note.write_text(TEA + "White tea is steeped at 75 degrees Celsius for five minutes.\n")
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _active(vault, "White tea%")
    assert (report.sources[0].lineage or {}).get("held") == 0
    assert _pending(vault, "lineage:") == []


def test_a_fact_moved_and_changed_waits_for_the_supersession(vault: Vault, tmp_path: Path) -> None:
    """The attacker's other way round: the old sentence deleted, the changed one inserted
    elsewhere in the document (not a replacement in place). It restates the deleted one: a
    supersession, with the new words held for it."""
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    moved = TEA.replace(OLD + "\n", "") + "\nAnd a last note.\n\n" + NEW + "\n"
    note.write_text(moved)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _green(vault) == {"two minutes"}  # main: "three minutes" beside it
    lineage = report.sources[0].lineage or {}
    assert lineage["supersede_proposals"] >= 1 and lineage["retract_proposals"] == 0
    for plan in _pending(vault, "lineage:"):
        approve(vault, plan, None, "person")
    assert _green(vault) == {"three minutes"}
    _doctor_clean(vault)


class _Stop(Exception):
    pass


def test_a_re_ingest_resumed_after_a_stop_holds_the_changed_facts_too(
    vault: Vault, tmp_path: Path
) -> None:
    """A re-ingest stopped after its first changed chunk (a budget, a kill) has proposed the
    supersessions already; the resumed run reads the rest, and its claims of the changed words
    must not go in beside the old ones either (the pending supersession brings them)."""
    from .test_lineage_reread import _doc, _paragraphs, _small_chunks

    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    edited = tuple(range(0, 40, 2))  # more changed text than one chunk of 500 characters
    doc.write_text(_doc(_paragraphs(edited)))
    calls = []

    def stop() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise _Stop

    with pytest.raises(_Stop):
        Ingestor(vault, ExtractiveProvider(), apply_now=True, checkpoint=stop).run(
            [str(doc)], "trusted"
        )
    assert len(calls) == 2  # stopped before its second chunk
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    for n in edited:  # each station states one count, the old one, until a person decides
        counts = {
            t for t in _active(vault, f"Station {n} of the survey recorded %") if "nesting" in t
        }
        assert len(counts) == 1 and f"recorded {100 + n} " in counts.pop(), n
