"""Retraction of claims and sources: blast radius, approval re-check, the door, render, crash."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.errors import ConflictError
from affidavit.gate.admission import WITHDRAWAL_POLICY
from affidavit.handedits import propose_hand_edits
from affidavit.inbox import approve, get_plan, propose
from affidavit.retract import (
    propose_source_retraction,
    retract_claim_op,
    retract_source_op,
    withdrawal_plan,
)
from affidavit.store.apply import APPLY_STEPS
from affidavit.store.audit import verify_chain
from affidavit.store.blast import BlastRadius, blast_radius
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import FakeClock, add_text, claim, make_plan, snapshot
from .test_crash import run_child, state, which

BAD = (
    "The lighthouse keeper lived on the rock for twelve years.\n"
    "The lantern burned whale oil until the year 1860.\n"
    "The tower was painted red and white in 1885.\n"
    "The rock is awash at high spring tides.\n"
)
GOOD = "The tower was painted red and white by the harbour board.\n"
OTHER = (
    "The lighthouse stands fourteen miles south of the harbour.\n"
    "Its light can be seen for seventeen nautical miles.\n"
    "The light was automated in 1982 and the keepers left.\n"
)


def page(
    slug: str, title: str, *claims: dict[str, Any], section: str = "Overview"
) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": title + ".",
        "section": section,
        "claims": list(claims),
    }


def applied(vault: Vault, *ops: dict[str, Any]) -> list[str]:
    proposal = propose(vault, make_plan(vault, *ops), "tester", "test")
    assert proposal.status == "pending", proposal.message
    return approve(vault, proposal.plan_id, None, "tester").claims


def build(vault: Vault) -> dict[str, str]:
    """The constructed wiki: ``bad`` (semi-trusted) is the source to retract.

    * alpha: A1 (bad only), A2 (bad + other: semi-trusted now, trusted once bad goes)
    * beta: B1 (bad only) — beta is left empty
    * gamma: G1 (other only)
    * context.md: X1 (bad only)
    * answer: D1 derived from A1, D2 derived from D1, D3 derived from G1 (quotes from other)
    * a pending plan citing bad, and one citing only other
    """
    ids = {
        "bad": add_text(vault, "bad.md", BAD, "semi-trusted"),
        "good": add_text(vault, "good.md", GOOD, "trusted"),
        "other": add_text(vault, "other.md", OTHER, "trusted"),
    }
    bad, other = ids["bad"], ids["other"]
    a1, a2, b1, g1, x1 = applied(
        vault,
        page(
            "alpha",
            "Lighthouse keeper",
            claim(
                "A keeper lived on the rock for twelve years.",
                bad,
                "The lighthouse keeper lived on the rock for twelve years",
            ),
            {
                "text": "The lighthouse is south of the harbour and burned whale oil.",
                "evidence": [
                    {"source": bad, "quote": "The lantern burned whale oil"},
                    {"source": other, "quote": "fourteen miles south of the harbour"},
                ],
            },
        ),
        page(
            "beta",
            "Tower painted",
            claim("The tower was painted red and white.", bad, "painted red and white in 1885"),
        ),
        page(
            "gamma",
            "Light seen",
            claim(
                "The light can be seen for seventeen miles.",
                other,
                "seen for seventeen nautical miles",
            ),
        ),
        {
            "op": "update_context",
            "entries": [
                claim("The rock is awash at high tides.", bad, "awash at high spring tides")
            ],
        },
    )
    (d1, d3) = applied(
        vault,
        page(
            "answer",
            "Keeper south of the harbour",
            {
                "text": "The lighthouse stands south of the harbour.",
                "evidence": [
                    {"source": other, "quote": "The lighthouse stands fourteen miles south"},
                    {"source": other, "quote": "fourteen miles south of the harbour"},
                ],
                "derived_from": [a1],
            },
            {
                "text": "The light can be seen for seventeen miles and was automated in 1982.",
                "evidence": [
                    {"source": other, "quote": "seen for seventeen nautical miles"},
                    {"source": other, "quote": "The light was automated in 1982"},
                ],
                "derived_from": [g1],
            },
            section="Answer",
        ),
    )
    (d2,) = applied(
        vault,
        {
            "op": "add_claims",
            "page": "answer",
            "section": "Answer",
            "claims": [
                {
                    "text": "The keepers left.",
                    "evidence": [{"source": other, "quote": "the keepers left"}],
                    "derived_from": [d1],
                }
            ],
        },
    )
    cites_bad = propose(
        vault,
        make_plan(
            vault,
            {
                "op": "add_claims",
                "page": "gamma",
                "claims": [
                    claim("It burned whale oil.", bad, "burned whale oil until the year 1860")
                ],
            },
        ),
        "someone",
        "test",
    )
    propose(
        vault,
        make_plan(
            vault,
            {
                "op": "add_claims",
                "page": "gamma",
                "claims": [claim("It was automated.", other, "The light was automated in 1982")],
            },
        ),
        "someone",
        "test",
    )
    return {
        **ids,
        "A1": a1,
        "A2": a2,
        "B1": b1,
        "G1": g1,
        "X1": x1,
        "D1": d1,
        "D2": d2,
        "D3": d3,
        "open": cites_bad.plan_id,
    }


@pytest.fixture
def wiki(vault: Vault) -> dict[str, str]:
    return build(vault)


def status(vault: Vault, claim_id: str) -> str:
    return str(
        vault.db.execute("SELECT status FROM claims WHERE id = ?", (claim_id,)).fetchone()[0]
    )


def test_blast_radius_on_a_constructed_wiki(vault: Vault, wiki: dict[str, str]) -> None:
    before = snapshot(vault)
    radius = blast_radius(vault.db, wiki["bad"])
    assert snapshot(vault) == before  # a pure read
    assert [(c.id, c.page) for c in radius.retracted] == [
        (wiki["X1"], ""),
        (wiki["A1"], "alpha"),
        (wiki["B1"], "beta"),
    ]
    assert [(k.id, k.trust, k.new_trust, k.remaining_sources) for k in radius.kept] == [
        (wiki["A2"], "semi-trusted", "trusted", [wiki["other"]])
    ]
    assert [(d.id, d.rests_on) for d in radius.derived] == [
        (wiki["D1"], [wiki["A1"]]),
        (wiki["D2"], [wiki["D1"]]),
    ]
    assert radius.empty_pages == ["beta"]
    assert [(p.id, p.quotes) for p in radius.open_plans] == [(wiki["open"], 1)]
    assert radius.counts == {
        "retracted": 3,
        "kept": 1,
        "derived": 2,
        "empty_pages": 1,
        "open_plans": 1,
    }
    assert BlastRadius.from_json(json.loads(json.dumps(radius.to_json()))) == radius
    # a source nothing cites takes nothing with it
    assert blast_radius(vault.db, wiki["good"]).counts == dict.fromkeys(radius.counts, 0)


def test_sources_retract_cli_shows_the_radius_and_proposes(
    vault: Vault, wiki: dict[str, str]
) -> None:
    def run(*args: str) -> Any:
        return CliRunner().invoke(main, ["--vault", str(vault.root), "sources", "retract", *args])

    dry = run(wiki["bad"][:12], "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    data = json.loads(dry.stdout)
    assert data["dry_run"] and data["plan_id"] is None
    assert data["radius"]["counts"] == {
        "retracted": 3,
        "kept": 1,
        "derived": 2,
        "empty_pages": 1,
        "open_plans": 1,
    }
    assert get_plan_count(vault) == 2  # the two open ones from build, nothing new

    text = run(wiki["bad"][:8], "--reason", "the keeper's diary was a forgery")
    assert text.exit_code == 0, text.output
    out = text.stdout
    assert f"Retracting source {wiki['bad'][:12]} (bad.md) would:" in out
    assert "retract 3 claim(s) whose only evidence it is:" in out
    assert f"{wiki['A2']}  alpha  semi-trusted → trusted" in out
    assert f"rests on {wiki['D1']}" in out
    assert "leave 1 page(s) with no active claim: beta" in out
    assert "1 pending plan(s) cite it" in out
    plan_id = out.split("Approve: affidavit approve ")[1].split()[0]
    record = get_plan(vault, plan_id)
    assert record.status == "pending" and record.author.startswith("person:")
    assert record.plan.operations[0].op == "retract_source"
    radius = record.admission.ops[0].detail["radius"]
    assert radius["counts"]["retracted"] == 3 and radius["empty_pages"] == ["beta"]
    assert status(vault, wiki["A1"]) == "active"  # nothing left the wiki yet
    shown = CliRunner().invoke(main, ["--vault", str(vault.root), "inbox", "show", plan_id[:12]])
    assert shown.exit_code == 0, shown.output
    assert (
        "retract 3 claim(s) whose only evidence it is:" in shown.stdout
    )  # the radius, in the inbox
    assert "leave 1 page(s) with no active claim: beta" in shown.stdout

    again = run(wiki["bad"][:12], "--dry-run")
    assert again.exit_code == 0  # still active until approved
    approve(vault, plan_id, None, "tester")
    refused = run(wiki["bad"][:12])
    assert refused.exit_code == 1 and "is retracted already" in refused.output


def get_plan_count(vault: Vault) -> int:
    return int(
        vault.db.execute("SELECT count(*) FROM plans WHERE status = 'pending'").fetchone()[0]
    )


def test_retraction_round_trip(vault: Vault, wiki: dict[str, str]) -> None:
    commits = len(vault.git.log_subjects())
    done = propose_source_retraction(vault, wiki["bad"], "the diary was a forgery", "person:t")
    assert done.proposal is not None and done.proposal.status == "pending"
    result = approve(vault, done.proposal.plan_id, None, "tester")
    assert result.applied and result.claims == []
    gone = [wiki[k] for k in ("X1", "A1", "B1", "D1", "D2")]
    assert result.retracted == gone
    assert [status(vault, c) for c in gone] == ["retracted"] * 5
    assert [status(vault, wiki[k]) for k in ("A2", "G1", "D3")] == ["active"] * 3
    source = vault.db.execute("SELECT status FROM sources WHERE id = ?", (wiki["bad"],))
    assert source.fetchone()[0] == "retracted"
    # the claim with other evidence keeps all of it, and rests on trusted evidence now
    a2 = vault.db.execute("SELECT trust FROM claims WHERE id = ?", (wiki["A2"],)).fetchone()[0]
    assert a2 == "trusted"
    assert (
        vault.db.execute(
            "SELECT count(*) FROM evidence WHERE claim_id = ?", (wiki["A2"],)
        ).fetchone()[0]
        == 2
    )

    alpha = (vault.wiki_dir / "alpha.md").read_text()
    body, _, retracted = alpha.partition("## Retracted")
    assert "twelve years" not in body and "claims: 1" in body
    assert (
        f"- ~~A keeper lived on the rock for twelve years.~~ `{wiki['A1']}` — source "
        f"{wiki['bad'][:12]} retracted\n"
    ) in retracted
    assert "forgery" not in alpha  # the proposer's reason stays in the plan and the audit log
    assert "“The lantern burned whale oil” — [bad.md]" in alpha
    assert f"claim `{wiki['A2']}` (source retracted)" in alpha
    assert alpha.count("(source retracted)") == 1
    beta = (vault.wiki_dir / "beta.md").read_text()
    assert "claims: 0" in beta and "## Retracted" in beta  # empty, still rendered
    answer = (vault.wiki_dir / "answer.md").read_text()
    assert f"`{wiki['D2']}` — rests on retracted claim {wiki['D1']}" in answer
    assert "automated in 1982" in answer.partition("## Retracted")[0]
    assert "awash" not in (vault.wiki_dir / "context.md").read_text()

    assert len(vault.git.log_subjects()) == commits + 1
    assert verify_chain(vault.db) == []
    entry = vault.db.execute(
        "SELECT actor, detail FROM audit WHERE action = 'retracted'"
    ).fetchone()
    assert (
        json.loads(entry["detail"])["claims"][wiki["D1"]]
        == f"rests on retracted claim {wiki['A1']}"
    )
    assert run_doctor(vault).clean
    assert propose_hand_edits(vault) == []  # the Retracted lists are generated
    # the open plan that cites the retracted source can't be approved any more
    with pytest.raises(ConflictError, match="is retracted"):
        approve(vault, wiki["open"], None, "tester")


def test_retracting_a_claim_takes_its_syntheses(vault: Vault, wiki: dict[str, str]) -> None:
    proposal = propose(
        vault, withdrawal_plan(vault, [retract_claim_op(wiki["A1"], "wrong keeper")]), "p", "t"
    )
    op = proposal.admission.ops[0]
    assert op.claims[0].role == "retracted" and op.claims[0].evidence[0].verified
    assert BlastRadius.from_json(op.detail["radius"]).goes == [wiki["A1"], wiki["D1"], wiki["D2"]]
    result = approve(vault, proposal.plan_id, None, "tester")
    assert result.retracted == [wiki["A1"], wiki["D1"], wiki["D2"]]
    assert status(vault, wiki["A2"]) == "active"
    page = (vault.wiki_dir / "alpha.md").read_text()
    assert f"`{wiki['A1']}` — retracted by plan " in page and "wrong keeper" not in page
    assert run_doctor(vault).clean


def test_approval_recomputes_the_radius(vault: Vault, wiki: dict[str, str]) -> None:
    retract = propose(vault, make_plan(vault, retract_source_op(wiki["bad"], "forgery")), "p", "t")
    # the wiki changes: B1 goes some other way, so the radius shrinks — approval goes ahead
    applied_claims = propose(
        vault, make_plan(vault, retract_claim_op(wiki["B1"], "typo")), "p", "t"
    )
    approve(vault, applied_claims.plan_id, None, "tester")
    result = approve(vault, retract.plan_id, None, "tester")
    assert result.retracted == [wiki[k] for k in ("X1", "A1", "D1", "D2")]
    recorded = get_plan(vault, retract.plan_id).admission.ops[0].detail["radius"]
    assert recorded["counts"]["retracted"] == 2 and recorded["empty_pages"] == []
    assert run_doctor(vault).clean


def test_approval_refuses_a_radius_that_grew(vault: Vault, wiki: dict[str, str]) -> None:
    retract = propose(vault, make_plan(vault, retract_source_op(wiki["bad"], "forgery")), "p", "t")
    # the wiki changes: a new claim rests on the source alone
    approve(vault, wiki["open"], None, "tester")
    new = vault.db.execute("SELECT id FROM claims WHERE text = 'It burned whale oil.'").fetchone()[
        0
    ]
    before = snapshot(vault)
    with pytest.raises(ConflictError, match=f"would now retract 1 claim\\(s\\) .*\\({new}\\)"):
        approve(vault, retract.plan_id, None, "tester")
    assert snapshot(vault) == before
    # proposed again, it shows the new radius and applies
    done = propose_source_retraction(vault, wiki["bad"], "forgery, again", "person:t")
    assert new in done.radius.goes and done.proposal is not None
    assert new in approve(vault, done.proposal.plan_id, None, "tester").retracted


def test_retractions_never_auto_apply(vault: Vault, wiki: dict[str, str]) -> None:
    config = vault.config_path.read_text()
    vault.config_path.write_text(config.replace('auto_apply = "never"', 'auto_apply = "trusted"'))
    trusting = open_vault(vault.root, clock=vault.clock)
    try:
        for op in (retract_claim_op(wiki["G1"], "wrong"), retract_source_op(wiki["other"], "bad")):
            proposal = propose(trusting, make_plan(trusting, op), "p", "t")
            assert proposal.status == "pending"
            assert proposal.admission.policy_reason == WITHDRAWAL_POLICY
        assert status(trusting, wiki["G1"]) == "active"
    finally:
        trusting.close()


def test_targets_of_a_retraction(vault: Vault, wiki: dict[str, str]) -> None:
    from affidavit.errors import AdmissionError

    with pytest.raises(AdmissionError, match="claim c-0000000000000000 does not exist"):
        propose(vault, make_plan(vault, retract_claim_op("c-0000000000000000", "gone")), "p", "t")
    with pytest.raises(AdmissionError, match="source 0123456789ab does not exist"):
        propose(vault, make_plan(vault, retract_source_op("0123456789ab", "gone")), "p", "t")
    # a source retracted in a plan can't be cited by that plan, nor retracted twice
    plan = make_plan(
        vault,
        retract_source_op(wiki["bad"], "forgery"),
        retract_source_op(wiki["bad"][:12], "twice"),
        {
            "op": "add_claims",
            "page": "gamma",
            "claims": [claim("It was painted.", wiki["bad"], "painted red and white")],
        },
    )
    ops = propose(vault, plan, "p", "t").admission.ops
    assert ops[0].status == "admitted"
    assert (ops[1].status, ops[1].check) == ("rejected", "consistency")
    assert (ops[2].status, ops[2].check) == ("rejected", "provenance")
    assert "retracted by this plan" in ops[2].reason


def test_two_sources_retracted_in_one_plan(vault: Vault, wiki: dict[str, str]) -> None:
    """A2 cites bad and other: the second retraction of one plan takes it, and says so."""
    plan = make_plan(
        vault, retract_source_op(wiki["bad"], "forgery"), retract_source_op(wiki["other"], "too")
    )
    proposal = propose(vault, plan, "p", "t")
    second = BlastRadius.from_json(proposal.admission.ops[1].detail["radius"])
    assert wiki["A2"] in [c.id for c in second.retracted] and second.kept == []
    result = approve(vault, proposal.plan_id, None, "tester")
    assert sorted(result.retracted) == sorted(
        wiki[k] for k in ("X1", "A1", "B1", "D1", "D2", "A2", "G1", "D3")
    )
    assert run_doctor(vault).clean


@pytest.fixture(scope="module")
def crash_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("retract-crash") / "template"
    vault, _ = init_vault(root, clock=FakeClock())
    ids = build(vault)
    plan_id = propose(
        vault, make_plan(vault, retract_source_op(ids["bad"], "forgery")), "p", "t"
    ).plan_id
    vault.close()
    return root, plan_id


def test_a_killed_retraction_leaves_old_or_new_state(
    crash_template: tuple[Path, str], tmp_path: Path
) -> None:
    root, plan_id = crash_template
    before_root, after_root = tmp_path / "before", tmp_path / "after"
    shutil.copytree(root, before_root)
    shutil.copytree(root, after_root)
    before = state(before_root)
    assert run_child(after_root, plan_id, "never").returncode == 0
    after = state(after_root)
    assert which(after, before, after) == "after" and after["commits"] == before["commits"] + 1
    for step in APPLY_STEPS:
        work = tmp_path / f"kill-{step}"
        shutil.copytree(root, work)
        proc = run_child(work, plan_id, step)
        assert proc.returncode == -signal.SIGKILL, (step, proc.stderr)
        got = which(state(work), before, after)
        assert got is not None, f"mixed state after a kill at {step}"
        assert got == (
            "before" if APPLY_STEPS.index(step) < APPLY_STEPS.index("db_commit") else "after"
        )
        replay = run_child(work, plan_id, "never")
        assert replay.returncode == 0, replay.stderr
        assert which(state(work), before, after) == "after"


def test_an_edited_retracted_list_is_not_a_hand_edit_to_propose(
    vault: Vault, wiki: dict[str, str]
) -> None:
    proposal = propose(vault, make_plan(vault, retract_claim_op(wiki["A1"], "wrong")), "p", "t")
    approve(vault, proposal.plan_id, None, "tester")
    path = vault.wiki_dir / "alpha.md"
    edited = path.read_text().replace("— retracted by plan", "— wrongly retracted by plan")
    assert edited != path.read_text()
    path.write_text(edited)
    (result,) = propose_hand_edits(vault)
    assert result.status == "nothing" and result.operations == []
    assert [u.reason.split(";")[0] for u in result.unconverted] == [
        "the Retracted list is generated"
    ]


def test_approving_part_of_a_plan_is_checked_against_the_whole_radius_shown(
    vault: Vault, wiki: dict[str, str]
) -> None:
    """Approved alone, the source retraction takes A1 too (shown under op 1): not a growth."""
    plan = make_plan(
        vault, retract_claim_op(wiki["A1"], "wrong"), retract_source_op(wiki["bad"], "forgery")
    )
    proposal = propose(vault, plan, "p", "t")
    second = BlastRadius.from_json(proposal.admission.ops[1].detail["radius"])
    assert wiki["A1"] not in second.goes  # op 1 takes it
    result = approve(vault, proposal.plan_id, [2], "tester")
    assert result.retracted == [wiki[k] for k in ("X1", "A1", "B1", "D1", "D2")]
    assert "0 claim(s), 5 retracted; operation(s) 1 still pending" in result.message
    assert run_doctor(vault).clean
