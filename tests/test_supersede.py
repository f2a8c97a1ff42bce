"""Supersession by an existing claim (``supersede_claim`` with ``successor``), through the door."""

from __future__ import annotations

import os
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import ConflictError
from affidavit.gate.admission import WITHDRAWAL_POLICY
from affidavit.handedits import propose_hand_edits
from affidavit.inbox import approve, get_plan, propose
from affidavit.retract import supersede_op, withdrawal_plan
from affidavit.sources.store import SourceStore
from affidavit.store.audit import verify_chain
from affidavit.vault import Vault, open_vault

from .conftest import add_text, claim, make_plan, snapshot

OLD = "The harbour bridge was opened to traffic in 1932 by the mayor.\n"
NEW = "After the repairs the harbour bridge was reopened to traffic in 1934.\n"
RUMOUR = "A forum post says the harbour bridge was reopened to traffic in 1999.\n"


def create(slug: str, title: str, text: str, src: str, quote: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": title + ".",
        "claims": [claim(text, src, quote)],
    }


def applied(vault: Vault, *ops: dict[str, Any]) -> list[str]:
    proposal = propose(vault, make_plan(vault, *ops), "tester", "test")
    assert proposal.status == "pending", proposal.message
    return approve(vault, proposal.plan_id, None, "tester").claims


@pytest.fixture
def wiki(vault: Vault) -> dict[str, str]:
    """A claim from an old source on 'bridge', a newer one on 'bridge-repairs', a rumour."""
    old_src = add_text(vault, "old.md", OLD)
    new_src = add_text(vault, "new.md", NEW)
    rumour_src = add_text(vault, "rumour.md", RUMOUR, "untrusted")
    (old,) = applied(
        vault,
        create(
            "bridge",
            "Harbour bridge",
            "The harbour bridge opened in 1932.",
            old_src,
            "harbour bridge was opened to traffic in 1932",
        ),
    )
    (new,) = applied(
        vault,
        create(
            "bridge-repairs",
            "Harbour bridge repairs",
            "The harbour bridge reopened in 1934 after repairs.",
            new_src,
            "harbour bridge was reopened to traffic in 1934",
        ),
    )
    (rumour,) = applied(
        vault,
        create(
            "bridge-rumours",
            "Harbour bridge rumours",
            "A forum says the harbour bridge reopened in 1999.",
            rumour_src,
            "A forum post says the harbour bridge was reopened to traffic in 1999",
        ),
    )
    return {"old": old, "new": new, "rumour": rumour, "new_src": new_src}


def test_supersession_round_trip(vault: Vault, wiki: dict[str, str]) -> None:
    old, new = wiki["old"], wiki["new"]
    commits = len(vault.git.log_subjects())
    claims_before = vault.db.execute("SELECT count(*) FROM claims").fetchone()[0]
    plan = withdrawal_plan(vault, [supersede_op(old, new, "a newer source reports the reopening")])
    proposal = propose(vault, plan, "lint", "lint:stale")
    assert proposal.status == "pending"
    op = proposal.admission.ops[0]
    assert (op.status, op.kind) == ("admitted", "supersede_claim")
    # both claims' quotes were looked for again and are recorded for the reviewer
    assert [(c.role, c.text) for c in op.claims] == [
        ("superseded", "The harbour bridge opened in 1932."),
        ("successor", "The harbour bridge reopened in 1934 after repairs."),
    ]
    assert all(q.verified for c in op.claims for q in c.evidence)
    assert op.claims[1].evidence[0].quote == "harbour bridge was reopened to traffic in 1934"
    assert op.detail["page"] == "bridge" and op.detail["successor_page"] == "bridge-repairs"
    assert proposal.admission.counts == {"admitted": 0, "quarantined": 0, "rejected": 0}
    assert "inbox" in proposal.message and not (vault.wiki_dir / "x").exists()

    result = approve(vault, proposal.plan_id, None, "tester")
    assert result.applied and result.claims == [] and result.superseded == [old]
    row = vault.db.execute(
        "SELECT status, superseded_by FROM claims WHERE id = ?", (old,)
    ).fetchone()
    assert (row["status"], row["superseded_by"]) == ("superseded", new)
    status = vault.db.execute("SELECT status FROM claims WHERE id = ?", (new,)).fetchone()[0]
    assert status == "active"
    # no new claim: the old one stays in history
    assert vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] == claims_before
    text = (vault.wiki_dir / "bridge.md").read_text()
    body, _, history = text.partition("## Superseded")
    assert "opened in 1932" not in body and "claims: 0" in body
    assert (
        f"- ~~The harbour bridge opened in 1932.~~ `{old}` → superseded by `{new}` in "
        "[Harbour bridge repairs](bridge-repairs.md)"
    ) in history
    assert len(vault.git.log_subjects()) == commits + 1
    assert f"Affidavit-Plan: {proposal.plan_id}" in vault.git.run("log", "-1", "--format=%B")
    assert verify_chain(vault.db) == []
    assert run_doctor(vault).clean
    # the Superseded list is generated: the doctor finds no hand edit to propose
    assert propose_hand_edits(vault) == []


def test_a_second_supersession_of_the_same_claim_is_refused_at_approval(
    vault: Vault, wiki: dict[str, str]
) -> None:
    first = propose(
        vault, make_plan(vault, supersede_op(wiki["old"], wiki["new"], "newer")), "t", "t"
    )
    second = propose(
        vault, make_plan(vault, supersede_op(wiki["old"], wiki["new"], "newer, again")), "t", "t"
    )
    approve(vault, first.plan_id, None, "t")
    before = snapshot(vault)
    with pytest.raises(ConflictError, match="is superseded, not active"):
        approve(vault, second.plan_id, None, "t")
    assert snapshot(vault) == before


def test_an_untrusted_claim_cannot_supersede_a_trusted_one(
    vault: Vault, wiki: dict[str, str]
) -> None:
    before = snapshot(vault)
    proposal = propose(
        vault, make_plan(vault, supersede_op(wiki["old"], wiki["rumour"], "forum says")), "t", "t"
    )
    assert proposal.status == "rejected"
    op = proposal.admission.ops[0]
    assert op.check == "trust"
    assert op.reason == (
        "an untrusted claim can't supersede a trusted claim by itself; "
        "propose a retraction, or let a person decide on a lint finding"
    )
    assert (
        vault.db.execute("SELECT status FROM claims WHERE id = ?", (wiki["old"],)).fetchone()[0]
        == "active"
    )
    assert snapshot(vault)["files"] == before["files"]


def test_a_trusted_claim_can_supersede_an_untrusted_one(vault: Vault, wiki: dict[str, str]) -> None:
    proposal = propose(
        vault,
        make_plan(vault, supersede_op(wiki["rumour"], wiki["new"], "the city says")),
        "t",
        "t",
    )
    assert proposal.status == "pending"
    assert approve(vault, proposal.plan_id, None, "t").superseded == [wiki["rumour"]]
    assert run_doctor(vault).clean


def test_the_successor_must_still_verify(vault: Vault, wiki: dict[str, str]) -> None:
    record = SourceStore(vault).get(wiki["new_src"])
    path = vault.root / record.text_file
    os.chmod(path, 0o644)
    path.write_text(NEW.replace("1934", "1935"))
    proposal = propose(
        vault, make_plan(vault, supersede_op(wiki["old"], wiki["new"], "newer")), "t", "t"
    )
    assert proposal.status == "rejected"
    op = proposal.admission.ops[0]
    assert op.check == "evidence" and "no longer verifies" in op.reason
    assert op.claims[1].evidence[0].verified is False


def test_supersessions_always_wait_for_a_person(vault: Vault, wiki: dict[str, str]) -> None:
    config = vault.config_path.read_text()
    vault.config_path.write_text(config.replace('auto_apply = "never"', 'auto_apply = "trusted"'))
    trusting = open_vault(vault.root, clock=vault.clock)
    try:
        for op in (
            supersede_op(wiki["old"], wiki["new"], "newer"),
            {
                "op": "supersede_claim",
                "claim": wiki["new"],
                "reason": "wording",
                "by": claim(
                    "The harbour bridge was reopened in 1934.",
                    wiki["new_src"],
                    "the harbour bridge was reopened to traffic in 1934",
                ),
            },
        ):
            proposal = propose(trusting, make_plan(trusting, op), "t", "t")
            assert proposal.status == "pending"
            assert proposal.admission.policy_reason == WITHDRAWAL_POLICY
    finally:
        trusting.close()


def test_one_plan_cannot_end_a_claim_twice(vault: Vault, wiki: dict[str, str]) -> None:
    plan = make_plan(
        vault,
        supersede_op(wiki["old"], wiki["new"], "newer"),
        supersede_op(wiki["old"], wiki["new"], "again"),
        {"op": "retract_claim", "claim": wiki["old"], "reason": "and gone"},
    )
    proposal = propose(vault, plan, "t", "t")
    ops = proposal.admission.ops
    assert ops[0].status == "admitted"
    assert [(o.status, o.check) for o in ops[1:]] == [("rejected", "consistency")] * 2
    assert (
        f"an earlier operation of this plan supersedes or retracts {wiki['old']}" in ops[2].reason
    )
    assert get_plan(vault, proposal.plan_id).status == "pending"
