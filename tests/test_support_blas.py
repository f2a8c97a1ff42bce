"""The parser's products on numpy's OpenBLAS, one thread (:mod:`affidavit.support.blas`): the
same tokens as the pipeline on BLIS, every layer moved, the thread count held at one only while a
batch is parsed and given back after, and the choice part of the kept parses' version."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import spacy

from affidavit.support import blas, parse

from .blas_pipelines import fixture_texts, layers, needs_local_threads

pytestmark = needs_local_threads


def _on_blis() -> Any:
    """A second copy of the pipeline as spaCy loads it (BLIS), with the check's own last steps."""
    nlp = spacy.load(parse.MODEL, exclude=list(parse.EXCLUDE))
    parse._index_as_sets(nlp)
    return nlp, parse._after(nlp)


def test_every_layer_of_the_loaded_pipeline_multiplies_on_numpy() -> None:
    nlp = parse._nlp()
    assert blas.active()
    nodes = layers(nlp)
    assert len(nodes) > 50
    assert all(not n.ops.use_blis for n in nodes)
    other, _ = _on_blis()
    theirs = layers(other)
    assert theirs and all(n.ops.use_blis for n in theirs)  # spaCy's own load: BLIS


def test_the_parse_is_the_blis_pipelines_token_for_token() -> None:
    texts = fixture_texts()
    assert len(texts) > 1500
    parse._CACHE.clear()
    mine = parse.parse_many(texts)
    nlp, after = _on_blis()
    theirs = []
    for doc in nlp.pipe(
        [parse._clean(t) for t in texts], batch_size=parse.BATCH, disable=[n for n, _ in after]
    ):
        for _, step in after:
            doc = step(doc)
        theirs.append(parse._tokens(doc))
    differ = [(t, a, b) for t, a, b in zip(texts, mine, theirs, strict=True) if a != b]
    assert not differ, f"{len(differ)} of {len(texts)} texts differ, first: {differ[0]}"
    assert sum(map(len, mine)) > 30000


def test_one_thread_holds_the_count_at_one_and_gives_it_back() -> None:
    setter = blas._local_threads()
    assert setter is not None
    seen: dict[str, int] = {}

    def run() -> None:
        setter(3)
        with blas.one_thread():
            seen["inside"] = setter(1)  # returns the count before: one_thread's
        seen["after"] = setter(3)
        setter(0)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == {"inside": 1, "after": 3}


def test_a_parse_in_another_thread_runs_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ingest parses in a thread beside the model's call: there too the products run on
    that thread alone."""
    setter = blas._local_threads()
    assert setter is not None
    counts: list[int] = []
    real = blas.one_thread

    @contextmanager
    def recording() -> Iterator[None]:
        with real():
            counts.append(setter(1))
            yield

    monkeypatch.setattr(blas, "one_thread", recording)
    text = "A worker thread parsed this sentence about the tower of 1900."
    parse._CACHE.pop(text, None)
    worker = threading.Thread(target=parse.parse_many, args=([text],))
    worker.start()
    worker.join()
    assert counts == [1]
    assert text in parse._CACHE


def test_the_choice_is_part_of_the_kept_parses_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = parse.pipeline_version()
    parse.pipeline_version.cache_clear()
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    try:
        assert parse.pipeline_version() != before  # a forced OpenBLAS kernel: other parses
    finally:
        parse.pipeline_version.cache_clear()
