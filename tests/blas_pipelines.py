"""What the OpenBLAS tests of spaCy pipelines share (``test_support_blas``,
``test_ask_entities_blas``): the fixture's texts, a pipeline's layers, and the skip where numpy's
BLAS can't hold a per-thread count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from affidavit.support import blas

FIXTURE = Path(__file__).parent / "data" / "support_verdicts.jsonl"

needs_local_threads = pytest.mark.skipif(
    blas._local_threads() is None, reason="numpy's BLAS is not an OpenBLAS with thread-local counts"
)


def fixture_texts() -> list[str]:
    """Every distinct claim, quote and context text of the recorded verdicts, in order."""
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    texts = [t for r in rows for t in (r["text"], *r["quotes"], *r["context"])]
    return list(dict.fromkeys(texts))


def layers(nlp: Any) -> list[Any]:
    """Every thinc layer of a loaded pipeline's components."""
    models = [getattr(c, "model", None) for _, c in nlp.pipeline]
    return [n for m in models if m is not None for n in m.walk()]
