"""The shipped entailment classifier (the support check's optional model layer)."""

from __future__ import annotations

import json

import pytest

from affidavit.retrieval.embeddings import unavailable_reason
from affidavit.support.entailment import (
    LEXICAL_FEATURES,
    WEIGHTS_PATH,
    RefuteOnly,
    VitaminCEntailment,
    lexical_features,
)

needs_embeddings = pytest.mark.skipif(
    unavailable_reason() is not None, reason="the [embeddings] extra is not installed"
)


def test_weights_match_the_feature_layout() -> None:
    data = json.loads(WEIGHTS_PATH.read_text(encoding="utf-8"))
    width = len(LEXICAL_FEATURES) + 2 * 384
    assert len(data["weights"]) == len(data["mean"]) == len(data["scale"]) == width
    assert 0.0 < data["reject"] <= data["accept"] < 1.0
    assert data["held_out"]["held_out_items"] > 1000


def test_lexical_features_see_missing_facts_and_negation() -> None:
    same = lexical_features("The tower was designed by James Douglass.", "Douglass designed it.")
    changed = lexical_features("The tower is 49 metres tall.", "The tower is 59 metres tall.")
    negated = lexical_features("The pier is open.", "The pier is not open.")
    assert same[LEXICAL_FEATURES.index("facts_missing")] == 0.0
    assert changed[LEXICAL_FEATURES.index("facts_missing")] > 0.0
    assert negated[LEXICAL_FEATURES.index("negation_differs")] == 1.0


@needs_embeddings
def test_a_changed_number_scores_below_the_same_number() -> None:
    model = VitaminCEntailment()
    premise = "Of those diagnosed, 399 were diagnosed in the City and County of Honolulu."
    right, wrong = model.entailment_many(
        [
            (premise, "399 Hawaii COVID-19 cases were in Honolulu."),
            (premise, "120 Hawaii COVID-19 cases were in Honolulu."),
        ]
    )
    assert 0.0 <= wrong < right <= 1.0
    assert model.entailment(premise, "399 cases were in Honolulu.") == pytest.approx(
        model.entailment_many([(premise, "399 cases were in Honolulu.")])[0]
    )


@needs_embeddings
def test_refute_only_never_reaches_the_acceptance_level() -> None:
    model = RefuteOnly()
    premise = "The present tower was designed by James Douglass and lit in 1882."
    scores = [
        model.entailment(premise, premise),
        model.entailment(premise, "The present tower was lit in 1882."),
        model.entailment(premise, "James Douglass was convicted of fraud in 1990."),
    ]
    assert all(0.0 <= s <= RefuteOnly.ceiling for s in scores)
    assert scores[2] < scores[0]
