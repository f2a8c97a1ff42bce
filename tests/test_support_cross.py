"""The support check's trained cross-encoder (issue 22 item 3): runtime, calibration, wiring."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from affidavit.config import Config
from affidavit.retrieval.embeddings import file_sha256
from affidavit.support import SUPPORTED, UNSUPPORTED, SupportChecker, check, load_model
from affidavit.support.cross import (
    CARD_PATH,
    MODEL_PATH,
    AcceptOnly,
    CrossEncoder,
    available,
    unavailable_reason,
)
from affidavit.support.rules import ENTAILED, REFUTED

needs_model = pytest.mark.skipif(
    not available(), reason="the [embeddings] extra or the trained model file is missing"
)
SRC = Path(__file__).resolve().parents[1] / "src"


class Fixed(CrossEncoder):
    """A cross-encoder that answers one probability (what a model that "likes" a text says)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def entailment(self, premise: str, hypothesis: str) -> float:
        return self.p


def test_a_model_file_when_present_is_small_and_its_card_matches_it() -> None:
    if not MODEL_PATH.is_file():
        assert not available()
        assert "train_cross_encoder.py" in (unavailable_reason() or "")
        return
    assert MODEL_PATH.stat().st_size < 25_000_000
    card = json.loads(CARD_PATH.read_text(encoding="utf-8"))
    assert card["model_sha256"] == file_sha256(MODEL_PATH)  # calibrated on this very file
    assert 0.5 <= card["threshold"] < 1.0
    assert card["false_accept_budget"] <= 0.01


@needs_model
def test_the_runtime_loads_and_reads_word_order() -> None:
    model = CrossEncoder()
    premise = "Studs Terkel wrote The Good War, an oral history of the Second World War."
    faithful, swapped = model.entailment_many(
        [
            (premise, "The Good War was written by Studs Terkel."),
            (premise, "The Good War wrote Studs Terkel."),
        ]
    )
    assert 0.0 <= swapped < faithful <= 1.0
    assert model.entailment(premise, "The Good War was written by Studs Terkel.") == (
        pytest.approx(faithful, abs=1e-6)
    )


@needs_model
def test_a_faithful_paraphrase_scores_above_its_changed_facts() -> None:
    model = CrossEncoder()
    premise = "The bridge was completed in 1932 after six years of work."
    faithful = model.entailment(premise, "The bridge was finished in 1932 after six years of work.")
    for wrong in (
        "The bridge was not completed in 1932.",
        "The bridge was completed in 1932 after sixty years of work.",
    ):
        assert model.entailment(premise, wrong) < faithful


def test_accept_only_never_refutes_and_accepts_only_above_its_threshold() -> None:
    for p in (0.0, 0.2, 0.79, 0.8, 0.95, 1.0):
        score = AcceptOnly(Fixed(p), threshold=0.8).entailment("a", "b")
        if p >= 0.8:
            assert ENTAILED <= score <= 1.0
        else:
            assert REFUTED < score < ENTAILED


def test_a_model_that_accepts_everything_never_overrules_a_rule() -> None:
    """The attacker's test: numbers swapped between their slots, roles exchanged, a dropped
    hedge — the model layer at threshold 0 would accept anything it is asked, and still none of
    these gets in, because the rules found a changed fact and never ask it."""
    eager = SupportChecker(AcceptOnly(Fixed(1.0), threshold=0.5))
    cases = [
        ("Sales fell from 6 % to 3 % in 1998.", "Sales fell from 3 % to 6 % in 1998."),
        (
            "The physicians ranked above the pharmacists.",
            "The pharmacists ranked above the physicians.",
        ),
        ("About 200 homes were destroyed in 1998.", "About 2,000 homes were destroyed in 1998."),
        (
            "Perhaps it is the most significant difference.",
            "It is the most significant difference.",
        ),
        ("A few species lack colloblasts.", "All species lack colloblasts."),
    ]
    for quote, claim in cases:
        rules = check(claim, [quote])
        assert rules.verdict != SUPPORTED, claim
        assert not rules.model_may_settle, claim
        verdict = eager.check(claim, [quote])
        assert verdict.verdict == rules.verdict, claim
        assert verdict.score is None or verdict.verdict != SUPPORTED, claim
    # the same eager model does settle what the rules leave to it
    quote, claim = (
        "The crew finished the survey in 1911.",
        "The crew wrapped up the survey in 1911.",
    )
    if check(claim, [quote]).model_may_settle:
        assert eager.check(claim, [quote]).verdict == SUPPORTED


def test_auto_wires_the_cross_encoder_when_it_can_run() -> None:
    model = load_model(Config({"support.model": "auto"}))
    if available():
        assert isinstance(model, AcceptOnly)
    else:  # no extra or no model file: the rules alone, no error
        assert model is None
    verdict = SupportChecker(model).check("The tower was built in 1900.", ["It rained in 1900."])
    assert verdict.verdict != SUPPORTED
    assert load_model(Config({"support.model": "none"})) is None


def test_auto_without_the_extra_is_rules_only_without_error() -> None:
    """onnxruntime made unimportable in a fresh interpreter: ``auto`` gives no model and the
    support check still runs (its rules alone)."""
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("onnxruntime", "tokenizers"):
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Block())
from affidavit.config import Config
from affidavit.support import SupportChecker, load_model
from affidavit.support.cross import available, unavailable_reason
model = load_model(Config({"support.model": "auto"}))
assert model is None, model
assert not available() and "embeddings" in unavailable_reason()
v = SupportChecker(model).check("The tower was built in 1900.", ["The tower was built in 1900."])
print(v.verdict)
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == SUPPORTED


def test_a_refused_number_stays_refused_under_an_eager_model() -> None:
    eager = SupportChecker(AcceptOnly(Fixed(1.0), threshold=0.5))
    quote, claim = "The tower was built in 1900.", "The tower was built in 1901."
    assert check(claim, [quote]).verdict == UNSUPPORTED
    assert eager.check(claim, [quote]).verdict == UNSUPPORTED
