"""The support check (W11): no text reaches a page, the context or an answer unless the quotes it
cites say it. The attacks of issue 10, as an attacker would write them, against the real door."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.ask import Asker, render_answer
from affidavit.cli import main
from affidavit.config import Config
from affidavit.doctor import run_doctor
from affidavit.errors import ConfigError
from affidavit.gate.admission import CHECK_ORDER, admit
from affidavit.gate.verdicts import Admission
from affidavit.inbox import approve, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.checks import run_checks
from affidavit.plan.schema import parse_plan
from affidavit.plan.stored import admission_text
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.store.apply import gate_services
from affidavit.support import Support, SupportChecker, check, load_model, mark
from affidavit.vault import Vault, open_vault

from .conftest import SAMPLES, add_text, claim, make_plan

LIGHTHOUSE = (
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    "The present tower was designed by James Douglass and lit in 1882.\n"
    "The old bridge is unsafe for pedestrians. It weighed 1500 pounds.\n"
)
DESIGNED = "The present tower was designed by James Douglass"
DRIFT = "The present tower was designed by James Douglass, who was convicted of fraud."


@pytest.fixture
def src(vault: Vault) -> str:
    return add_text(vault, "lighthouse.md", LIGHTHOUSE, "trusted")


def tower_page(
    src: str, *claims: dict[str, Any], title: str = "The present tower"
) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": "tower",
        "title": title,
        "summary": "The present tower was designed by James Douglass.",
        "claims": list(claims) or [claim(f"{DESIGNED}.", src, DESIGNED)],
    }


def trusted_vault(vault: Vault) -> Vault:
    config = vault.config_path.read_text()
    vault.config_path.write_text(config.replace('auto_apply = "never"', 'auto_apply = "trusted"'))
    return open_vault(vault.root, clock=vault.clock)


# --- the deterministic layer ----------------------------------------------------------------------


def test_the_drifting_claim_is_unsupported_naming_its_words() -> None:
    verdict = check(DRIFT, [DESIGNED])
    assert verdict.verdict == "unsupported"
    assert verdict.missing == ("convicted", "fraud")


def test_a_faithful_paraphrase_with_the_same_numbers_and_names_is_supported() -> None:
    quote = "The present tower was designed by James Douglass and lit in 1882"
    assert check("James Douglass designed the present tower, lit in 1882.", [quote]).supported
    assert check("It weighed 1,500 pounds.", ["It weighed 1500 pounds"]).supported
    assert check("It weighed fifteen hundred pounds.", ["It weighed 1500 pounds"]).supported
    assert check("Turnout was 40 per cent.", ["turnout was 40%"]).supported
    assert check("Cristian Pavón plays for Boca.", ["Cristian Pavon plays for Boca"]).supported


@pytest.mark.parametrize(
    ("text", "quote", "named"),
    [
        ("The tower was lit in 1883.", "The tower was lit in 1882", "1883"),
        ("It weighed 500 pounds per vessel.", "It weighed 1500 pounds per vessel", "500"),
        ("The bridge is safe for pedestrians.", "The bridge is unsafe for pedestrians", "safe"),
        ("The bridge is unsafe for pedestrians.", "The bridge is safe for pedestrians", "unsafe"),
        ("The bridge is not open to cruise ships.", "The bridge is open to cruise ships", "not"),
        ("The bridge is open to cruise ships.", "The bridge is not open to cruise ships", "open"),
        ("The tower was designed by James Douglas.", DESIGNED, "Douglas"),
        ("Coins are used in France.", "Coins of the franc are used in Liechtenstein", "France"),
        ("He hosts podcasts.", "He rejected many offers to host podcasts", "hosts"),
        ("More than 688 home runs.", "He leads with 688 home runs", "688"),
    ],
)
def test_changed_facts_and_flipped_negations_are_unsupported(
    text: str, quote: str, named: str
) -> None:
    verdict = check(text, [quote])
    assert verdict.verdict == "unsupported", verdict
    assert named in verdict.missing


def test_an_added_word_or_an_inferred_number_is_uncertain() -> None:
    engineer = check("The present tower was designed by the engineer James Douglass.", [DESIGNED])
    assert (engineer.verdict, engineer.missing) == ("uncertain", ("engineer",))
    rounded = check("1.2 million people were diagnosed.", ["1,234,567 people were diagnosed"])
    assert (rounded.verdict, rounded.missing) == ("uncertain", ("1.2",))


def test_marked_words_are_whole_words() -> None:
    assert mark("fraud and defrauded fraud", ["fraud"]) == [
        ("fraud", True),
        (" and defrauded ", False),
        ("fraud", True),
    ]


# --- at the door ---------------------------------------------------------------------------------


def test_the_drifting_claim_is_rejected_at_the_door_naming_its_words(
    vault: Vault, src: str
) -> None:
    plan = make_plan(vault, tower_page(src, claim(f"{DESIGNED}.", src, DESIGNED)))
    plan["operations"][0]["claims"].append(claim(DRIFT, src, DESIGNED))
    proposal = propose(vault, plan, "t", "t")
    good, drift = proposal.admission.ops[0].claims
    assert (good.status, good.support) == ("admitted", "supported")
    assert (drift.status, drift.check, drift.support) == ("rejected", "support", "unsupported")
    assert drift.unsupported == ["convicted", "fraud"]
    assert "'convicted', 'fraud'" in drift.reason
    approve(vault, proposal.plan_id, None, "t")
    assert "convicted" not in (vault.wiki_dir / "tower.md").read_text()


def test_a_title_is_checked_against_the_quotes_not_the_claims_text(vault: Vault, src: str) -> None:
    jailed = claim(
        "James Douglass, who designed the present tower, was jailed for fraud in 1990.",
        src,
        DESIGNED,
    )
    plan = make_plan(
        vault,
        tower_page(
            src, claim(f"{DESIGNED}.", src, DESIGNED), jailed, title="James Douglass jailed in 1990"
        ),
    )
    proposal = propose(vault, plan, "t", "t")
    op = proposal.admission.ops[0]
    # judged text by text: the title is rejected alone, the supported claim keeps its page
    assert op.status == "admitted" and op.claims[0].status == "admitted"
    title = op.text("title")
    assert title is not None and (title.status, title.check) == ("rejected", "support")
    assert "title" in title.reason and "1990" in title.reason and "jailed" in title.reason
    assert title.host == f"{DESIGNED}."  # the host's title: the first supported claim
    approve(vault, proposal.plan_id, None, "t")
    page = (vault.wiki_dir / "tower.md").read_text()
    assert "jailed" not in page and "1990" not in page


def test_uncertain_support_waits_for_a_person_whatever_auto_apply_says(
    vault: Vault, src: str
) -> None:
    v2 = trusted_vault(vault)
    try:
        engineer = claim(
            "The present tower was designed by the engineer James Douglass.", src, DESIGNED
        )
        # a person's plan (an agent's would wait anyway: W13)
        proposal = propose(v2, make_plan(v2, tower_page(src, engineer)), "owner", "cli")
        assert proposal.status == "pending" and proposal.admission.needs_approval
        assert "W11" in proposal.admission.policy_reason
        [result] = proposal.admission.ops[0].claims
        assert (result.support, result.unsupported) == ("uncertain", ["engineer"])
        assert not (v2.wiki_dir / "tower.md").exists()
        # the same plan with a supported claim applies at once
        other = propose(v2, make_plan(v2, {**tower_page(src), "slug": "tower-2"}), "owner", "cli")
        assert other.status == "applied"
    finally:
        v2.close()


def test_inbox_show_brackets_the_unsupported_words_beside_the_quote(vault: Vault, src: str) -> None:
    engineer = claim(
        "The present tower was designed by the engineer James Douglass.", src, DESIGNED
    )
    proposal = propose(vault, make_plan(vault, tower_page(src, engineer)), "t", "t")
    runner = CliRunner()
    base = ["--vault", str(vault.root), "inbox", "show", proposal.plan_id[:12]]
    shown = runner.invoke(main, base)
    assert shown.exit_code == 0, shown.output
    assert "designed by the [engineer] James Douglass" in shown.output
    assert "support: uncertain" in shown.output and "\x1b[" not in shown.output
    data = json.loads(runner.invoke(main, [*base, "--json"]).output)
    claim_json = data["admission"]["ops"][0]["claims"][0]
    assert (claim_json["support"], claim_json["unsupported"]) == ("uncertain", ["engineer"])


def test_admissions_recorded_before_the_support_check_still_load() -> None:
    old = {
        "plan_id": "p",
        "selected": [0],
        "needs_approval": True,
        "policy_reason": "",
        "ops": [
            {
                "index": 0,
                "kind": "create_page",
                "claims": [{"index": 0, "text": "x", "evidence": []}],
            }
        ],
    }
    admission = Admission.from_json(old)
    assert admission.ops[0].claims[0].support == "" and not admission.uncertain
    assert "support" in CHECK_ORDER
    assert CHECK_ORDER.index("support") == CHECK_ORDER.index("evidence") + 1


def test_the_extractive_engine_stays_supported(vault: Vault, tmp_path: Path) -> None:
    # a file name with numbers: the engine names topic sections after it ("1798-008")
    numbered = tmp_path / "1798-008.md"
    numbered.write_text((SAMPLES / "sotu" / "1823-monroe.md").read_text(encoding="utf-8"))
    paths = [str(SAMPLES / "sotu" / "1941-roosevelt.md"), str(numbered)]
    report = Ingestor(vault, ExtractiveProvider(), apply_now=False).run(paths, "trusted")
    assert report.totals()["claims"]["admitted"] > 0
    ops = [
        op
        for row in vault.db.execute(
            "SELECT id, admission, admission_z, plan_json, plan_z FROM plans"
        )
        for op in json.loads(admission_text(row, vault.db))["ops"]
    ]
    claims = [c for op in ops for c in op["claims"]]
    assert claims and {c["support"] for c in claims} == {"supported"}
    assert not [op for op in ops if op["check"] == "support" or op["uncertain"]]


# --- the model layer -----------------------------------------------------------------------------


class ScriptedEntailment:
    """An entailment model that answers from a table and records what it was asked."""

    def __init__(self, answers: dict[str, float]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str]] = []

    def entailment(self, premise: str, hypothesis: str) -> float:
        self.asked.append((premise, hypothesis))
        return self.answers[hypothesis]


def test_the_model_layer_settles_only_uncertain_texts() -> None:
    engineer = "The present tower was designed by the engineer James Douglass."
    model = ScriptedEntailment({engineer: 0.97})
    checker = SupportChecker(model)
    settled = checker.check(engineer, [DESIGNED])
    assert (settled.verdict, settled.score) == ("supported", 0.97)
    assert checker.check(DRIFT, [DESIGNED]).verdict == "unsupported"  # rules stand
    assert checker.check(f"{DESIGNED}.", [DESIGNED]).verdict == "supported"
    assert model.asked == [(DESIGNED, engineer)]
    refuted = SupportChecker(ScriptedEntailment({engineer: 0.02})).check(engineer, [DESIGNED])
    assert refuted.verdict == "unsupported" and refuted.missing == ("engineer",)
    unsure = SupportChecker(ScriptedEntailment({engineer: 0.5})).check(engineer, [DESIGNED])
    assert unsure == Support("uncertain", ("engineer",), unsure.reason, 0.5)


def test_an_injected_model_decides_at_the_door(vault: Vault, src: str) -> None:
    engineer = "The present tower was designed by the engineer James Douglass."
    plan = parse_plan(make_plan(vault, tower_page(src, claim(engineer, src, DESIGNED))))
    store, verifier = gate_services(vault)
    checker = SupportChecker(ScriptedEntailment({engineer: 0.01}))
    admission = admit(vault.db, vault.config, store, verifier, plan, "p", support=checker)
    [result] = admission.ops[0].claims
    assert (result.status, result.check, result.support) == ("rejected", "support", "unsupported")


def test_support_model_names_an_installed_model_or_fails_with_the_fix() -> None:
    assert load_model(Config()) is None
    with pytest.raises(
        ConfigError, match=r"support\.model is 'no-such-nli'.*affidavit\.entailment"
    ):
        load_model(Config({"support.model": "no-such-nli"}))


# --- answers -------------------------------------------------------------------------------------


def scripted(reply: Any) -> ScriptedProvider:
    def answer(request: ModelRequest) -> str:
        text = request.messages[-1].content
        nonce = text.split("<<<CLAIMS ", 1)[1].split(">>>", 1)[0]
        return json.dumps(reply(nonce, text))

    return ScriptedProvider(replies=[answer])


def test_a_drifting_answer_sentence_is_dropped_and_reported(vault: Vault, src: str) -> None:
    proposal = propose(vault, make_plan(vault, tower_page(src)), "t", "t")
    [designed] = approve(vault, proposal.plan_id, None, "t").claims

    def reply(nonce: str, text: str) -> dict[str, Any]:
        return {
            "nonce": nonce,
            "sentences": [
                {"text": "James Douglass designed the present tower.", "claims": [designed]},
                {
                    "text": "James Douglass designed the tower and was convicted of fraud.",
                    "claims": [designed],
                },
            ],
        }

    answer = Asker(vault, scripted(reply)).ask("Who designed the present tower?")
    shown = render_answer(answer)
    assert answer.verdict == "answered"
    assert [s.text for s in answer.sentences] == ["James Douglass designed the present tower."]
    [dropped] = answer.dropped
    assert dropped.verdict == "unsupported" and dropped.unsupported == ["convicted", "fraud"]
    assert "convicted of fraud" not in shown.split("removed by the citation check")[0]
    assert "1 sentence(s) removed" in shown
    verdicts = [(s["verdict"], s["unsupported"]) for s in answer.to_json()["support"]]
    assert verdicts == [("supported", []), ("unsupported", ["convicted", "fraud"])]


def test_ask_json_gives_each_sentences_verdict(vault: Vault, src: str) -> None:
    approve(vault, propose(vault, make_plan(vault, tower_page(src)), "t", "t").plan_id, None, "t")
    out = CliRunner().invoke(
        main, ["--vault", str(vault.root), "ask", "Who designed the present tower?", "--json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["verdict"] == "answered"
    assert data["support"] and {s["verdict"] for s in data["support"]} == {"supported"}


# --- doctor and lint over an existing vault ------------------------------------------------------


def test_doctor_and_lint_find_a_claim_admitted_before_the_check(vault: Vault, src: str) -> None:
    proposal = propose(vault, make_plan(vault, tower_page(src)), "t", "t")
    [claim_id] = approve(vault, proposal.plan_id, None, "t").claims
    assert not [f for f in run_doctor(vault).findings if f.check == "support"]
    # what an older door let in: the claim's text drifted from its quote
    vault.db.execute("UPDATE claims SET text = ? WHERE id = ?", (DRIFT, claim_id))
    vault.db.commit()
    [finding] = [f for f in run_doctor(vault).findings if f.check == "support"]
    assert finding.subject == claim_id and "'convicted', 'fraud'" in finding.message
    [lint] = run_checks(vault, kinds=["unsupported_claim"])
    assert lint.kind == "unsupported_claim" and lint.claims == [claim_id]
    assert lint.fix == {
        "op": "retract_claim",
        "claim": claim_id,
        "reason": "its quotes don't support: convicted, fraud",
    }
    assert lint.quotes[0].quote == DESIGNED


def test_the_sample_plan_rests_on_its_quotes(vault: Vault, tmp_path: Path) -> None:
    plan = json.loads((SAMPLES / "sotu-plan.json").read_text(encoding="utf-8"))
    texts = [
        c["text"] for op in plan["operations"] for c in op.get("claims", []) + op.get("entries", [])
    ]
    assert texts and all(
        check(c["text"], [e["quote"] for e in c["evidence"]]).supported
        for op in plan["operations"]
        for c in op.get("claims", []) + op.get("entries", [])
    )


def test_a_swapped_name_is_refused_and_an_added_one_waits_for_a_person() -> None:
    from affidavit.support import rules as support

    quote = "The present tower was designed by James Douglass and lit in 1882."
    swapped = support.check("The present tower was designed by John Smeaton.", [quote])
    assert swapped.verdict == support.UNSUPPORTED
    assert {"John", "Smeaton"} <= set(swapped.missing)
    added = support.check("The present tower at Eddystone was designed by James Douglass.", [quote])
    assert added.verdict == support.UNCERTAIN and added.missing == ("Eddystone",)
