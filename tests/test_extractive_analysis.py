"""The engine in two halves: analyse (the chunk alone, picklable) and plan_from (the known pages)."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace
from typing import Any, cast

import pytest

from affidavit.errors import ProviderError
from affidavit.extractive import (
    Analysis,
    AnalysisMismatch,
    analyse,
    analysis_key,
    plan_from,
    propose_plan,
)
from affidavit.extractive.segment import collapse
from affidavit.extractive.topics import _ASCII_TOKEN, _TOKEN, _tokens
from affidavit.extractive.units import _EMPHASIS, _REFERENCE, _UNDERSCORE, claim_text
from affidavit.providers.base import IngestTask, Message, ModelRequest, PageBrief
from affidavit.providers.extractive import ExtractiveProvider

from .test_extractive_engine import ESSAY, SOURCE, task

SPEECH = """# State of the Union, 1905

The Panama Canal Zone was organized by the Isthmian Canal Commission in 1904. The Isthmian
Canal Commission reported that the Panama Canal will be finished within ten years. Congress
gave the Panama Canal Zone a governor. The Bank of England raised its discount rate twice.
The Bank of England held more gold than at any time before. Our trade with the Bank of England
grew. The public credit stood high; the public credit of the states stood higher still, and the
public credit of the nation was never better. New York City built new docks for the trade.
New York City grew faster than any city in the world. It doubled in twenty years.
"""

PAGES = (
    PageBrief("panama-canal", "Panama Canal", "The Panama Canal joins two oceans."),
    PageBrief("bank-of-england", "Bank of England", "The central bank of Britain."),
    PageBrief("essay", "The Eiffel Tower", "A tower in Paris."),
)
PENDING = ("new-york", "public-credit", "isthmian-canal-commission", "essay-01234567")


def tasks() -> list[IngestTask]:
    """Tasks whose plans differ by what the wiki knows: nothing, shown pages, pending slugs."""
    out = []
    for text, name in ((ESSAY, "essay.md"), (SPEECH, "1905-speech.md")):
        for index, count in ((0, 1), (0, 2), (1, 2)):
            for pages, pending in (((), ()), (PAGES, ()), ((), PENDING), (PAGES[:2], PENDING)):
                out.append(task(text, name, index, count, pages=pages, pending_slugs=pending))
    out.append(task("| 1 | 2 |\n|---|---|\n", "table.md"))  # nothing usable
    out.append(task(ESSAY, flagged=((0, 40),), open_fence=""))
    return out


def test_propose_plan_is_plan_from_of_analyse_whatever_the_wiki_knows() -> None:
    plans = set()
    for each in tasks():
        plan = propose_plan(each)
        assert plan_from(analyse(each), each) == plan
        plans.add(json.dumps(plan))
    assert len(plans) > 12  # the known pages change the plans


def test_analyse_reads_nothing_of_the_wiki() -> None:
    """Only the chunk and what names it: an object without pages, pending slugs or nonce."""
    for each in tasks():
        fields = (
            "source_id",
            "source_name",
            "chunk",
            "chunk_start",
            "chunk_index",
            "chunk_count",
            "flagged",
            "open_fence",
            "open_section",
        )
        bare = SimpleNamespace(**{name: getattr(each, name) for name in fields})
        analysis = analyse(cast(IngestTask, bare))
        assert analysis == analyse(each)
        other = replace(each, nonce="x" * 16, pages=PAGES, pending_slugs=PENDING)
        assert analysis == analyse(other)
        assert plan_from(analysis, each) == propose_plan(each)


def test_an_analysis_pickles_and_round_trips() -> None:
    for each in tasks():
        analysis = analyse(each)
        back = pickle.loads(pickle.dumps(analysis))
        assert isinstance(back, Analysis)
        assert back == analysis
        assert plan_from(back, each) == propose_plan(each)


@pytest.mark.parametrize(
    "change",
    [
        {"chunk": ESSAY.replace("1887", "1888")},
        {"chunk_start": 5},
        {"source_id": "f" * 64},
        {"source_name": "other.md"},
        {"chunk_index": 1, "chunk_count": 2},
        {"flagged": ((3, 9),)},
        {"open_fence": "```"},
        {"open_section": "OPTIONS"},
    ],
)
def test_an_analysis_of_another_chunk_or_source_is_refused(change: dict[str, Any]) -> None:
    mine = task(ESSAY)
    other = replace(mine, **change)
    assert analysis_key(other) != analysis_key(mine)
    with pytest.raises(AnalysisMismatch):
        plan_from(analyse(mine), other)
    # the provider does not use it: the reply is the one for the request's own task
    request = ModelRequest(messages=(Message("user", "ingest"),), task=other)
    provider = ExtractiveProvider()
    assert provider.complete_with(analyse(mine), request).text == provider.complete(request).text


def test_the_provider_answers_the_same_from_a_precomputed_analysis() -> None:
    provider = ExtractiveProvider()
    for each in tasks():
        request = ModelRequest(messages=(Message("user", "ingest"),), task=each)
        text = provider.complete(request).text
        shipped = pickle.loads(pickle.dumps(analyse(each)))
        assert provider.complete_with(shipped, request).text == text
        assert provider.complete_with(None, request).text == text
    with pytest.raises(ProviderError):
        provider.complete_with(None, ModelRequest(messages=(Message("user", "hi"),)))


def test_the_key_names_the_chunk_not_the_wiki() -> None:
    mine = task(ESSAY)
    assert analysis_key(replace(mine, pages=PAGES, pending_slugs=PENDING)) == analysis_key(mine)
    assert SOURCE[:8] in analyse(mine).own_slug


def test_the_ascii_word_pattern_finds_the_words_of_the_unicode_one() -> None:
    rng = random.Random(4)
    alphabet = "aZ09_'-.,; \n\t()[]*" + "bcXY"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert _ASCII_TOKEN.findall(text) == _TOKEN.findall(text), text
        assert _ASCII_TOKEN.split(text) == _TOKEN.split(text), text
    assert _tokens("naïve café") is _TOKEN


def test_claim_text_skips_only_patterns_whose_marker_is_absent() -> None:
    rng = random.Random(8)
    pieces = ["*", "**", "_", "[", "]", "1", "note", "citation needed", "a", "b ", "  ", "\n"]
    for _ in range(5000):
        raw = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        plain = collapse(_REFERENCE.sub("", _UNDERSCORE.sub(r"\1", _EMPHASIS.sub(r"\2", raw))))
        assert claim_text(raw) == plain, raw


def test_an_analysis_from_a_process_with_another_hash_seed_is_the_same() -> None:
    """What a worker process computes (spawned: its own hash seed) is what this one would."""
    code = (
        "import pickle, sys\n"
        "from affidavit.extractive import analyse\n"
        "from affidavit.providers.base import IngestTask\n"
        f"t = IngestTask('', {SOURCE!r}, '1905-speech.md', sys.stdin.read(), 0, 0, 1)\n"
        "sys.stdout.buffer.write(pickle.dumps(analyse(t)))\n"
    )
    mine = analyse(task(SPEECH, "1905-speech.md"))
    assert mine.topics  # names and phrases whose order a hash seed could have changed
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code], input=SPEECH.encode(), capture_output=True, env=env
        )
        assert result.returncode == 0, result.stderr
        assert pickle.loads(result.stdout) == mine
