"""A changed sentence of a new version is proposed twice when nothing applies at the door (the
default policy): by the model's plan (a claim quoting the new words) and by the lineage's
``supersede_claim`` (the old claim replaced by a claim quoting them). Approving the model's plan
first — the inbox lists it first — must not leave the lineage's supersession refused as a
duplicate and the old words in the wiki: the supersession is then by the model's claim. A
replacement that merely repeats an active claim resting on another source is still refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from affidavit.inbox import approve, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.store import SourceStore
from affidavit.store.apply import ApplyResult, gate_services
from affidavit.store.replay import claim_problems
from affidavit.vault import Vault

from .conftest import make_plan
from .test_storage_gate import CLEAN, LONG, OPENED, make, page, says

__all__ = ["make"]  # the two-backend fixture, used here too

OLD = "The present tower was designed by James Douglass and lit in 1882."
NEW = OLD.replace("1882", "1884")
TEXT = (
    "# Lighthouses\n\n"
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    f"{OLD}\n"
    "The Bell Rock Lighthouse was built between 1807 and 1810 by Robert Stevenson.\n"
)


def _approve(vault: Vault, plan_id: str) -> ApplyResult:
    return approve(vault, plan_id, None, "person")


def _active(vault: Vault, text: str) -> list[str]:
    return [
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM claims WHERE status = 'active' AND text = ? ORDER BY id", (text,)
        )
    ]


def test_approving_the_models_plan_first_still_lets_the_supersession_through(
    vault: Vault, tmp_path: Path
) -> None:
    """Since carry30 the model's claim of the new words is no longer in its chunk's plan: it is
    the ``by`` of the lineage's supersession (tests/test_lineage_decision.py). Approving the
    chunk's plan first (if it holds anything) still leaves the supersession whole."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "lighthouses.md").write_text(TEXT)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], None)
    old_ids = _active(vault, OLD)
    assert old_ids
    (folder / "lighthouses.md").write_text(TEXT.replace(OLD, NEW))
    Ingestor(vault, ExtractiveProvider()).run([str(folder / "lighthouses.md")], None)
    pending = dict(
        vault.db.execute("SELECT origin, id FROM plans WHERE status = 'pending'").fetchall()
    )
    for origin, plan in pending.items():
        if origin.startswith("ingest:"):
            _approve(vault, plan)
    assert _active(vault, NEW) == []  # the new words wait with the old ones' end
    lineage = next(p for o, p in pending.items() if o.startswith("lineage:"))
    applied = _approve(vault, lineage)
    assert applied.superseded and set(applied.superseded) == set(old_ids)
    assert _active(vault, OLD) == []  # the old words are out of the wiki
    written = set(_active(vault, NEW))
    assert written
    pages = {
        vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (c,)).fetchone()[0]
        for c in written
    }
    assert len(pages) == len(written)  # no second copy of the new words on a page
    for old in old_ids:
        successor = vault.db.execute(
            "SELECT status, superseded_by FROM claims WHERE id = ?", (old,)
        ).fetchone()
        assert successor[0] == "superseded" and successor[1] in written
    store, verifier = gate_services(vault)
    _, problems = claim_problems(vault.db, verifier, store)
    assert problems == []  # the doctor's replay of the audit log agrees


def test_a_replacement_repeating_a_claim_of_another_source_is_still_a_duplicate(
    vault: Vault, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.md").write_text(f"# Towers\n\n{NEW}\nIts lamp burns oil.\n")
    (tmp_path / "c.md").write_text(f"# Notes\n\n{NEW}\n")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(tmp_path / "a.md")], None)
    store = SourceStore(vault)
    b = store.add_file(tmp_path / "b.md").record
    c = store.add_file(tmp_path / "c.md").record
    (old,) = [
        c
        for c in _active(vault, OLD)
        if vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (c,)).fetchone()[0]
    ]
    page = vault.db.execute("SELECT page_slug FROM claims WHERE id = ?", (old,)).fetchone()[0]
    # the new words on the page, resting on b.md
    add = {
        "op": "add_claims",
        "page": page,
        "claims": [{"text": NEW, "evidence": [{"source": b.id, "quote": NEW}]}],
    }
    first = propose(vault, make_plan(vault, add), "t", "t")
    _approve(vault, first.plan_id)
    (existing,) = _active(vault, NEW)
    # a supersession by the same words quoting c.md can't take b.md's claim as its successor
    by = {"text": NEW, "evidence": [{"source": c.id, "quote": NEW}]}
    op = {"op": "supersede_claim", "claim": old, "by": by, "reason": "a changed date"}
    second = propose(vault, make_plan(vault, op), "t", "t")
    verdict = second.admission.ops[0]
    assert not verdict.detail.get("restated")
    assert verdict.detail.get("successor") != existing
    assert any("duplicate" in c.reason for c in verdict.claims), verdict


def test_both_backends_supersede_by_the_claim_already_in_the_wiki(make: Any) -> None:
    """The same on SQLite and PostgreSQL (the two writers): the successor is the active claim
    with the new words, and no second copy of them is written."""
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    wiki.submit([page("bridge", says("The bridge opened in 1932.", source, OPENED),
                      says("The bridge is long.", source, LONG))])  # fmt: skip
    (_, _, _), (vague, _, _) = wiki.states("bridge")
    added = wiki.submit(
        [{"op": "add_claims", "page": "bridge", "claims": [says(LONG, source, LONG)]}]
    )
    assert wiki.status(added) == "applied"
    (new,) = [c for c, text, _ in wiki.states("bridge") if text == LONG]
    plan = wiki.submit([{"op": "supersede_claim", "claim": vague, "reason": "more precise",
                         "by": says(LONG, source, LONG)}])  # fmt: skip
    assert not plan.startswith("refused:"), plan
    wiki.approve(plan)
    assert [
        (c, t, st) for c, t, st in wiki.states("bridge") if t != "The bridge opened in 1932."
    ] == [
        (vague, "The bridge is long.", "superseded"),
        (new, LONG, "active"),
    ]
