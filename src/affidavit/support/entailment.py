"""An offline entailment scorer for the support check's optional model layer (SPEC W11).

No natural-language-inference model ships inside a pip package that runs here offline (every NLI
cross-encoder on PyPI downloads its weights from a hub at first use), so this is the issue's
fallback: a small logistic-regression classifier trained on the public VitaminC contrastive pairs
(``../shared/data/contradictions/``, CC BY-SA 3.0), over

- sentence embeddings of premise and hypothesis from all-MiniLM-L6-v2 (int8 ONNX, the
  ``[embeddings]`` extra: :mod:`affidavit.retrieval.embeddings`), as ``u * v`` and ``|u - v|``;
- a few lexical features from :mod:`affidavit.support.facts`: how much of the hypothesis' context is in
  the premise, which of its facts (numbers, dates, names) are missing, negation that differs.

The weights (``entailment_weights.json`` beside this file) are produced by
``scripts/train_entailment.py``, which also writes their data card (``docs/entailment.md``): what
the model was trained on, how it was split, and what it scores on held-out pairs. The scorer
returns P(the premise entails the hypothesis); the support check only consults it for texts its
deterministic rules leave *uncertain*, and never lets it overrule a rule that found a missing
number, name or negation.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from .facts import analyse

__all__ = [
    "LEXICAL_FEATURES",
    "MODEL_NAME",
    "WEIGHTS_PATH",
    "RefuteOnly",
    "VitaminCEntailment",
    "lexical_features",
    "load",
]

MODEL_NAME = "vitaminc-minilm-logreg"
WEIGHTS_PATH = Path(__file__).with_name("entailment_weights.json")

LEXICAL_FEATURES = (
    "context_covered",
    "context_missing",
    "facts_missing",
    "facts_matched",
    "premise_facts_extra",
    "negation_differs",
    "hypothesis_negated",
    "length_ratio",
    "cosine",
)
"""The names of the lexical features, in the order the weights expect them (cosine last)."""


def lexical_features(premise: str, hypothesis: str) -> list[float]:
    """The lexical features of a pair, without the embedding cosine (appended by the caller)."""
    p, h = analyse(premise), analyse(hypothesis)
    context = h.context
    covered = len(context & p.context) / len(context) if context else 1.0
    missing = len(context - p.context)
    facts_missing = len(h.facts - p.facts)
    facts_matched = len(h.facts & p.facts)
    extra = len(p.facts - h.facts)
    words_h = max(1, len(hypothesis.split()))
    words_p = max(1, len(premise.split()))
    return [
        covered,
        math.log1p(missing),
        math.log1p(facts_missing),
        math.log1p(facts_matched),
        math.log1p(extra),
        float(p.negated != h.negated),
        float(h.negated),
        math.log(words_h / words_p),
    ]


class VitaminCEntailment:
    """P(premise entails hypothesis) from the shipped logistic-regression weights.

    ``embedder`` defaults to the ``[embeddings]`` extra's MiniLM model; its absence raises a
    :class:`~affidavit.errors.ProviderError` naming the install command when first used.
    """

    name = MODEL_NAME

    def __init__(self, embedder: Any = None, weights_path: Path = WEIGHTS_PATH) -> None:
        self._embedder = embedder
        self._weights_path = weights_path
        self._lock = threading.Lock()
        self._weights: Any = None
        self._bias = 0.0
        self._mean: Any = None
        self._scale: Any = None

    @property
    def version(self) -> str:
        return str(_load_weights(self._weights_path)["version"])

    def _load(self) -> None:
        with self._lock:
            if self._weights is not None:
                return
            import numpy as np

            from ..retrieval.embeddings import require_embedder

            data = _load_weights(self._weights_path)
            if self._embedder is None:
                self._embedder = require_embedder()
            self._weights = np.asarray(data["weights"], dtype=np.float64)
            self._bias = float(data["bias"])
            self._mean = np.asarray(data["mean"], dtype=np.float64)
            self._scale = np.asarray(data["scale"], dtype=np.float64)

    def features(self, pairs: Sequence[tuple[str, str]]) -> Any:
        """The feature matrix of ``(premise, hypothesis)`` pairs (one row each)."""
        import numpy as np

        self._load()
        return pair_features(self._embedder, pairs, np)

    def entailment_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entails) for each ``(premise, hypothesis)`` pair, in order."""
        if not pairs:
            return []
        import numpy as np

        x = (self.features(pairs) - self._mean) / self._scale
        logits = x @ self._weights + self._bias
        return [float(v) for v in 1.0 / (1.0 + np.exp(-logits))]

    def entailment(self, premise: str, hypothesis: str) -> float:
        """P(``premise`` entails ``hypothesis``)."""
        return self.entailment_many([(premise, hypothesis)])[0]


def pair_features(embedder: Any, pairs: Sequence[tuple[str, str]], np: Any) -> Any:
    """Rows of [lexical…, cosine, u*v…, |u-v|…] for each pair (shared by training and scoring)."""
    premises = embedder.embed([p for p, _ in pairs])
    hypotheses = embedder.embed([h for _, h in pairs])
    cosine = (premises * hypotheses).sum(axis=1, keepdims=True)
    lexical = np.asarray([lexical_features(p, h) for p, h in pairs], dtype=np.float64)
    return np.hstack(
        [lexical, cosine, premises * hypotheses, np.abs(premises - hypotheses)]
    ).astype(np.float64)


@lru_cache(maxsize=4)
def _load_weights(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class RefuteOnly:
    """The shipped classifier as the support check's model layer: it may only *refuse*.

    Held out, the classifier is too weak to accept anything on its own (docs/entailment.md), so
    a probability below the card's ``reject`` threshold is reported as a refutation (scaled into
    [0, 0.1], where the support check settles a text as unsupported) and anything else is capped
    below the support check's acceptance level (0.9): an uncertain text stays uncertain and
    waits for a person.
    """

    name = MODEL_NAME + "-refute-only"
    ceiling = 0.89
    floor = 0.1

    def __init__(self, model: VitaminCEntailment | None = None) -> None:
        self.model = model or VitaminCEntailment()
        self.reject = float(_load_weights(self.model._weights_path)["reject"])

    def entailment(self, premise: str, hypothesis: str) -> float:
        p = self.model.entailment(premise, hypothesis)
        if p < self.reject:
            return self.floor * p / self.reject
        return min(p, self.ceiling)


def load() -> RefuteOnly:
    """Entry point ``vitaminc`` of the ``affidavit.entailment`` group (``support.model``)."""
    return RefuteOnly()
