"""The support check's trained cross-encoder: an entailment model that reads word order (W11).

all-MiniLM-L6-v2 fine-tuned as a cross-encoder — ``[CLS] quotes [SEP] text [SEP]`` → one logit —
on contrastive pairs generated from public corpora and VitaminC's training pages
(``scripts/train_cross_encoder.py``; data card and held-out scores in ``docs/entailment.md``),
exported as int8 ONNX (``data/cross_encoder.int8.onnx``, 23 MB) and run by onnxruntime with the
all-MiniLM-L6-v2 tokenizer — both from the ``[embeddings]`` extra: no torch, no download.

**Not shipped yet.** The first trained model (one epoch, 9,000 pairs, the CPU budget of one
session) did not separate faithful from wrong texts on what the rules leave uncertain (held-out
scores in docs/entailment.md), so its file is not in the package: without it :func:`available`
is false and ``support.model = "auto"`` runs the rules alone, with no error. The runtime, the
calibration and the wiring are here so that a better-trained file drops in.

As the model layer (:class:`AcceptOnly`, entry point ``cross`` of ``affidavit.entailment``) it
may only turn an *uncertain* verdict into *supported*, and only at or above the threshold in
``data/cross_encoder.json``, calibrated so that at most 1 % of the wrong texts that reach it on
the tuning split are accepted. It never refuses: below the threshold a text stays uncertain and
waits for a person. The support check asks it only when the rules found no changed fact, role or
scope (:attr:`~affidavit.support.rules.Support.model_may_settle`), so it never overrules a rule.
"""

from __future__ import annotations

import importlib
import json
import math
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ProviderError
from .rules import ENTAILED, REFUTED

__all__ = [
    "CARD_PATH",
    "MODEL_NAME",
    "MODEL_PATH",
    "AcceptOnly",
    "CrossEncoder",
    "available",
    "load",
]

MODEL_NAME = "minilm-cross-encoder"
DATA = Path(__file__).with_name("data")
MODEL_PATH = DATA / "cross_encoder.int8.onnx"
CARD_PATH = DATA / "cross_encoder.json"
MAX_LENGTH = 128
"""Tokens of quotes and text together (the training length); longer quotes are cut first."""


def unavailable_reason() -> str | None:
    """Why the cross-encoder can't run here (with the fix), or None when it can."""
    from ..retrieval.embeddings import INSTALL

    for module in ("numpy", "onnxruntime", "tokenizers"):
        try:
            importlib.import_module(module)
        except ImportError:
            return f"the support check's cross-encoder needs {module}: install `{INSTALL}`"
    if not MODEL_PATH.is_file() or not CARD_PATH.is_file():
        return (
            f"the cross-encoder's model file ({MODEL_PATH.name}) is not installed: it is not "
            "shipped yet (docs/entailment.md); build it with scripts/train_cross_encoder.py and "
            "scripts/calibrate_cross_encoder.py"
        )
    return _tokenizer_missing()


def _tokenizer_missing() -> str | None:
    from ..retrieval.embeddings import INSTALL, TOKENIZER_PACKAGES, _package_dir

    if any(_tokenizer_in(_package_dir(m), rel) for m, rel in TOKENIZER_PACKAGES):
        return None
    return f"the cross-encoder needs the all-MiniLM-L6-v2 tokenizer: install `{INSTALL}`"


def _tokenizer_in(where: Path | None, relative: str) -> Path | None:
    from ..retrieval.embeddings import TOKENIZER_SHA256, _cached_sha256

    candidate = None if where is None else where / relative
    if candidate and candidate.is_file() and _cached_sha256(candidate) == TOKENIZER_SHA256:
        return candidate
    return None


def available() -> bool:
    """Whether the cross-encoder can run here (the ``[embeddings]`` extra is installed)."""
    return unavailable_reason() is None


@lru_cache(maxsize=2)
def _card(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class CrossEncoder:
    """P(premise entails hypothesis) from the shipped int8 ONNX cross-encoder.

    Cheap to construct; the tokenizer and the inference session load on the first question.
    Raises :class:`ProviderError` naming the install command when the extra is missing.
    """

    name = MODEL_NAME

    def __init__(self, model_path: Path = MODEL_PATH, threads: int = 1) -> None:
        self._model_path = model_path
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            why = unavailable_reason() if self._model_path == MODEL_PATH else None
            if why:
                raise ProviderError(why)
            from tokenizers import Tokenizer

            from ..retrieval.embeddings import TOKENIZER_PACKAGES, _package_dir

            found = [_tokenizer_in(_package_dir(m), rel) for m, rel in TOKENIZER_PACKAGES]
            path = next(p for p in found if p is not None)
            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            ort = importlib.import_module("onnxruntime")
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(self._model_path), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer

    def logits(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The model's logit for each ``(premise, hypothesis)`` pair, in order."""
        if not pairs:
            return []
        import numpy as np

        self._load()
        encoded = self._tokenizer.encode_batch([(p, h) for p, h in pairs])
        feeds = {
            "input_ids": np.asarray([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encoded], dtype=np.int64),
        }
        out = self._session.run(["logits"], feeds)[0]
        return [float(v) for v in out[:, 0]]

    def entailment_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entails) for each pair, in order."""
        return [1.0 / (1.0 + math.exp(-v)) for v in self.logits(pairs)]

    def entailment(self, premise: str, hypothesis: str) -> float:
        """P(``premise`` entails ``hypothesis``)."""
        return self.entailment_many([(premise, hypothesis)])[0]


class AcceptOnly:
    """The cross-encoder as the support check's model layer: it may only *accept*.

    At or above ``threshold`` (the card's, calibrated on the tuning split) the probability is
    mapped into [ENTAILED, 1] — the support check settles the text as supported; below it, into
    (REFUTED, ENTAILED) — the text stays uncertain. It never reports a refutation.
    """

    name = MODEL_NAME + "-accept-only"

    def __init__(self, model: CrossEncoder | None = None, threshold: float | None = None) -> None:
        self.model = model or CrossEncoder()
        self.threshold = float(_card(CARD_PATH)["threshold"] if threshold is None else threshold)

    def entailment(self, premise: str, hypothesis: str) -> float:
        p = self.model.entailment(premise, hypothesis)
        t = self.threshold
        if p >= t:
            return ENTAILED + (1.0 - ENTAILED) * ((p - t) / (1.0 - t) if t < 1.0 else 1.0)
        low, high = REFUTED + 0.01, ENTAILED - 0.01
        return low + (high - low) * (p / t if t > 0 else 0.0)


def load() -> AcceptOnly:
    """Entry point ``cross`` of the ``affidavit.entailment`` group (``support.model``)."""
    why = unavailable_reason()
    if why:
        raise ProviderError(why)
    return AcceptOnly()
