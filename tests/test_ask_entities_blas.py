"""The answerer's named-entity recogniser multiplies on numpy's OpenBLAS at one thread
(:mod:`affidavit.support.blas`, issue 25 item 4), as the support check's parser does: every layer
of its pipeline moved, and the entities it finds the BLIS pipeline's, text for text."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import spacy

from affidavit.ask import entities
from affidavit.support import blas
from affidavit.support.parse import MODEL

from .blas_pipelines import fixture_texts, layers, needs_local_threads

pytestmark = needs_local_threads


def _on_blis() -> Any:
    """The recogniser as spaCy loads it (BLIS)."""
    return spacy.load(MODEL, exclude=list(entities.OTHERS))


def test_every_layer_of_the_recogniser_multiplies_on_numpy() -> None:
    nlp = entities._nlp()
    assert [name for name, _ in nlp.pipeline] == ["ner"]
    nodes = layers(nlp)
    assert len(nodes) > 20
    assert all(not n.ops.use_blis for n in nodes)
    theirs = layers(_on_blis())
    assert theirs and all(n.ops.use_blis for n in theirs)  # spaCy's own load: BLIS


def test_the_entities_are_the_blis_recognisers_text_for_text() -> None:
    texts = fixture_texts()
    assert len(texts) > 1500
    entities._CACHE.clear()
    entities.recognise(texts[: entities.CACHE])
    mine = [entities._CACHE[t] for t in texts[: entities.CACHE]]
    theirs = [
        tuple((e.start_char, e.end_char, e.label_) for e in doc.ents)
        for doc in _on_blis().pipe(texts[: entities.CACHE], batch_size=64)
    ]
    differ = [(t, a, b) for t, a, b in zip(texts, mine, theirs, strict=True) if a != b]
    assert not differ, f"{len(differ)} of {len(mine)} texts differ, first: {differ[0]}"
    assert sum(map(len, mine)) > 3000  # entities found, not an empty agreement


def test_a_recognition_in_another_thread_runs_on_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The daemon answers in its request threads: there too the products run on that thread
    alone, and the thread's count is given back after."""
    setter = blas._local_threads()
    assert setter is not None
    entities._nlp()
    counts: list[int] = []
    real = blas.one_thread

    @contextmanager
    def recording() -> Iterator[None]:
        with real():
            counts.append(setter(1))
            yield

    monkeypatch.setattr(blas, "one_thread", recording)
    text = "Mr. Smeaton of the Royal Society designed the tower for the Admiralty."
    entities._CACHE.pop(text, None)
    after: list[int] = []

    def run() -> None:
        setter(3)
        entities.recognise([text])
        after.append(setter(0))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert counts == [1]
    assert after == [3]
    assert text in entities._CACHE
