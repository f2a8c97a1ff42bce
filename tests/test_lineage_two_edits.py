"""Two edits of one sentence before a person decides (issue 27 item 1; carry30's hole).

Version 2 changes "two minutes" to "three minutes": its supersession waits in the inbox. Version 3
changes the sentence again before anyone decides. On main the pending plan still named the old
claim, so version 3 proposed nothing for it and its new words went into the wiki beside the old
ones (both facts), and approving version 2's plan later brought in words no version holds. Now
version 3 rejects the older plans it makes wrong and proposes their claims again against its own
text (``ingest/replans.py``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from affidavit.evidence.verify import locate
from affidavit.inbox import approve
from affidavit.ingest.pipeline import Ingestor
from affidavit.ingest.replans import new_claims
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.lineage import origin_key
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

from .test_lineage_decision import OLD, TEA, _cli, _doctor_clean, _green, _pending

WORDS = {
    "two minutes": TEA,
    "three minutes": TEA.replace("two minutes", "three minutes"),
    "one minute": TEA.replace("two minutes", "one minute"),
}


def _ops(vault: Vault, plan: str) -> list[dict[str, Any]]:
    row = vault.db.execute("SELECT plan_json FROM plans WHERE id = ?", (plan,)).fetchone()
    return list(json.loads(row[0])["operations"])


def _status(vault: Vault, plan: str) -> str:
    return str(vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan,)).fetchone()[0])


def _current_text(vault: Vault, note: Path) -> tuple[list[str], str]:
    """The origin's versions (oldest first) and its current version's text."""
    ids = [
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM sources WHERE origin_key = ? ORDER BY version", (origin_key(note),)
        )
    ]
    return ids, SourceStore(vault).text(ids[-1])


def _words_of(vault: Vault, item: dict[str, Any]) -> str:
    if "quote" in item:
        return str(item["quote"])
    from affidavit.sources.sentences import sentences_of

    source = str(vault.db.execute(
        "SELECT id FROM sources WHERE id LIKE ?", (str(item["source"]).lower() + "%",)
    ).fetchone()[0])  # fmt: skip
    first, last = item.get("sentences") or [item["sentence"], item["sentence"]]
    return sentences_of(source, SourceStore(vault).text(source)).sentence_text(first, last)


def _check(vault: Vault, note: Path) -> None:
    """What must hold after every step, whatever the order: one fact at most; every pending
    plan's new claims cite words the file has now; a claim citing words it lacks is one a
    pending plan ends (it waits for a person)."""
    assert len(_green(vault)) <= 1, _green(vault)
    ids, _ = _current_text(vault, note)
    text = note.read_text()
    ending: set[str] = set()
    for plan in _pending(vault, "lineage:"):
        for op in _ops(vault, plan):
            ending.add(str(op.get("claim", "")))
            for claim in new_claims(op):
                for item in claim["evidence"]:
                    if any(i.startswith(str(item["source"]).lower()) for i in ids):
                        assert locate(text, _words_of(vault, item)), (op, text)
    marks = ",".join("?" * len(ids))
    for claim, quote in vault.db.execute(
        f"SELECT e.claim_id, e.quote FROM evidence e JOIN claims c ON c.id = e.claim_id "
        f"WHERE c.status = 'active' AND e.source_id IN ({marks})",
        ids,
    ):
        assert locate(text, quote) or claim in ending, (claim, quote)


def test_two_edits_before_a_decision_on_the_cli(vault: Vault, tmp_path: Path) -> None:
    """What a user does: ingest, approve, edit, ingest, edit again, ingest, inbox, approve
    --all --yes, ask; then the one supersession approved."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    _cli(vault, "ingest", str(folder))
    _cli(vault, "approve", "--all", "--yes")
    note.write_text(WORDS["three minutes"])
    _cli(vault, "ingest", str(note))
    (first,) = _pending(vault, "lineage:")
    note.write_text(WORDS["one minute"])
    _cli(vault, "ingest", str(note))
    assert _green(vault) == {"two minutes"}  # main: "one minute" beside it
    assert _status(vault, first) == "rejected"  # main: pending, with "three minutes"
    (second,) = _pending(vault, "lineage:")
    inbox = _cli(vault, "inbox")
    assert second[:12] in inbox and first[:12] not in inbox
    shown = _cli(vault, "inbox", "show", second)
    assert "80 degrees Celsius for one minute" in shown
    assert "80 degrees Celsius for three" not in shown
    _cli(vault, "approve", "--all", "--yes")  # leaves the supersession out
    assert _green(vault) == {"two minutes"}
    answer = _cli(vault, "ask", "How long is green tea steeped?")
    assert "two minutes" in answer and "one minute" not in answer
    _check(vault, note)
    _cli(vault, "approve", second)
    assert _green(vault) == {"one minute"}
    answer = _cli(vault, "ask", "How long is green tea steeped?")
    assert "for one minute" in answer
    assert (
        "80 degrees Celsius for two" not in answer and "80 degrees Celsius for three" not in answer
    )
    assert _pending(vault, "") == []
    _check(vault, note)
    _doctor_clean(vault)


def test_an_edit_undone_before_a_decision_leaves_nothing_to_decide(
    vault: Vault, tmp_path: Path
) -> None:
    """v2 changes the fact, v3 puts v1's words back before anyone decides: v2's supersession
    is withdrawn (approving it would state "three minutes", which no version says now), the old
    claims carried to v3, one fact."""
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    before = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    note.write_text(WORDS["three minutes"])
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    (first,) = _pending(vault, "lineage:")
    note.write_text(TEA)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _status(vault, first) == "rejected"  # main: pending, "three minutes" one click away
    assert report.sources[0].lineage is None  # the same bytes as v1: no new version
    assert _pending(vault, "") == []
    assert _green(vault) == {"two minutes"}
    after = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    assert after == before  # nothing written twice
    _check(vault, note)
    _doctor_clean(vault)


def test_a_reworded_retractions_added_claims_move_to_the_new_plan(
    vault: Vault, tmp_path: Path
) -> None:
    """v2 rewords the green tea sentence (a retraction, the new words added by its plan) and
    changes the oolong one (a supersession, in the same plan); v3 changes the oolong one again.
    v2's plan is replaced: the oolong claims are superseded by v3's words, and the added claims
    of the words v3 still has move to the new plan, not lost with the old one."""
    reworded = "Steep green leaves for one minute only, never longer."
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    oolong = "90 degrees Celsius for three minutes"
    v2 = TEA.replace(OLD, reworded).replace(oolong, "90 degrees Celsius for five minutes")
    note.write_text(v2)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    (first,) = _pending(vault, "lineage:")
    assert {op["op"] for op in _ops(vault, first)} >= {"retract_claim", "supersede_claim"}
    note.write_text(v2.replace("five minutes", "six minutes"))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _status(vault, first) == "rejected"
    assert _green(vault) == {"two minutes"}
    _check(vault, note)
    plans = _pending(vault, "lineage:")
    added = [
        c["text"]
        for plan in plans
        for op in _ops(vault, plan)
        if op["op"] != "supersede_claim"
        for c in new_claims(op)
    ]
    assert any("one minute" in text for text in added)  # moved, not lost
    for plan in plans:
        approve(vault, plan, None, "person")
    assert _green(vault) == {"one minute"}
    said = {
        str(r[0])
        for r in vault.db.execute(
            "SELECT text FROM claims WHERE status = 'active' AND text LIKE 'Oolong tea%'"
        )
    }
    assert said and all("six minutes" in t for t in said)
    _check(vault, note)
    _doctor_clean(vault)


@pytest.mark.parametrize("same_bytes", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_any_order_of_versions_and_approvals_never_states_two_facts(
    vault: Vault, tmp_path: Path, seed: int, same_bytes: bool
) -> None:
    """The attacker's: versions of the sentence in a random order (the same words twice, back
    and forth: each a new version, the file's bytes differing by its trailing blank lines, or
    ``same_bytes``: an edit undone to the very bytes of an older version), approvals of the
    chunks' and the lineage's plans between them at random."""
    rng = random.Random(seed)
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    for step in range(1, 6):
        note.write_text(WORDS[rng.choice(sorted(WORDS))] + ("" if same_bytes else "\n" * step))
        Ingestor(vault, ExtractiveProvider(), apply_now=rng.random() < 0.5).run(
            [str(note)], "trusted"
        )
        _check(vault, note)
        for plan in _pending(vault, ""):
            if rng.random() < 0.4:
                approve(vault, plan, None, "person")
                _check(vault, note)
    for plan in _pending(vault, ""):
        approve(vault, plan, None, "person")
    _check(vault, note)
    said = next(w for w, t in WORDS.items() if t.strip() == note.read_text().strip())
    assert _green(vault) == {said}
    _doctor_clean(vault)


def test_an_edit_undone_after_the_decision_is_proposed_back(vault: Vault, tmp_path: Path) -> None:
    """v2's supersession approved, then the file put back to v1's very bytes: the approved
    words are no longer the file's, and their supersession by v1's words is proposed (main:
    nothing, the wiki kept "three minutes"). The same bytes ingested again propose nothing more;
    doctor is clean."""
    note = tmp_path / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    note.write_text(WORDS["three minutes"])
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    for plan in _pending(vault, "lineage:"):
        approve(vault, plan, None, "person")
    assert _green(vault) == {"three minutes"}
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _green(vault) == {"three minutes"}  # nothing before a person decides
    _check(vault, note)
    (back,) = _pending(vault, "lineage:")  # main: none
    assert {op["op"] for op in _ops(vault, back)} == {"supersede_claim"}
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _pending(vault, "lineage:") == [back]  # seen again: nothing new
    approve(vault, back, None, "person")
    assert _green(vault) == {"two minutes"}
    _check(vault, note)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(note)], "trusted")
    assert _pending(vault, "") == []
    _doctor_clean(vault)
    _cli(vault, "doctor")
