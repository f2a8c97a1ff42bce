"""The gate's indexes give exactly what the scans they replace gave (differential tests).

Each index exists for speed only: a quote's headings found by binary search in a text's heading
lines, not by scanning back through the text above it.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from affidavit.gate import admission
from affidavit.gate.admission import NEAR_MIN_WORDS, _comparable, admit
from affidavit.gate.duplicates import PageIndex
from affidavit.plan.schema import parse_plan
from affidavit.store.apply import gate_services
from affidavit.support import context as support_context
from affidavit.support.context import _scan_above, headings_above
from affidavit.vault import Vault

from .conftest import add_samples, make_plan

_PIECES = [
    "# Title\n",
    "## Part two\n",
    "#hashtag line\n",
    "###### deep #\n",
    "#   \n",
    "# \r\n",
    "# Heading with trailing hashes ##\n",
    "#" + "x" * 320 + "\n",
    "# " + "y" * 300 + "\n",
    "Some prose. She is here.\n",
    "\n",
    "More prose without a break ",
    "#",
    "\n#",
    "text # not a heading\n",
    "####### seven\n",
    "\t# tabbed\n",
]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))


@pytest.mark.parametrize("window", [support_context.WINDOW, 7, 40, 200])
def test_headings_found_by_index_equal_those_found_by_scanning(
    window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(support_context, "WINDOW", window)
    rng = random.Random(window)
    for _ in range(300):
        text = _text(rng)
        for start in range(-1, len(text) + 2):
            assert headings_above(text, start) == _scan_above(text, start), (text, start)


def test_headings_of_a_real_source_equal_those_found_by_scanning() -> None:
    rng = random.Random(5)
    body = " ".join(f"Sentence {n} of the address." for n in range(6000))
    text = "# State of the Union, 1790: George Washington\n\n" + body + "\n## Later\n" + body
    for start in rng.sample(range(len(text)), 3000):
        assert headings_above(text, start) == _scan_above(text, start)


# --- admission: quotes looked up together, pages' claims kept across admissions -----------------


def _random_claims(rng: random.Random, sources: dict[str, str], count: int) -> list[dict[str, Any]]:
    """Claims citing true quotes, quotes that cut words, quotes no source has, unknown sources,
    sentence numbers, the same quote twice; texts that are their quote or not."""
    claims = []
    ids = list(sources)
    for _ in range(count):
        evidence = []
        for _ in range(rng.randint(1, 3)):
            source = rng.choice(ids)
            text = sources[source]
            start = rng.randrange(0, max(1, len(text) - 120))
            end = start + rng.randint(10, 120)
            quote = " ".join(text[start:end].split()) or "nothing at all here"
            kind = rng.random()
            if kind < 0.1:
                quote = "words that no source has anywhere"
            elif kind < 0.15:
                source = "0123456789ab"
            elif kind < 0.2:
                evidence.append({"source": source, "sentence": rng.randint(1, 40)})
                continue
            if len(quote) < 8:
                quote = "the United States"
            evidence.append({"source": source, "quote": quote[:300]})
        quotes = [e.get("quote", "") for e in evidence]
        text = rng.choice([q for q in quotes if q] or ["Congress met in December."])
        if rng.random() < 0.3:
            text = "It is said that " + text
        claims.append({"text": text[:600], "evidence": evidence})
    return claims


def test_admission_with_its_quotes_looked_up_together_equals_one_at_a_time(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = add_samples(vault)
    store, _ = gate_services(vault)
    sources = {source: store.text(source) for source in ids}
    rng = random.Random(14)
    for n in range(12):
        ops: list[dict[str, Any]] = [
            {
                "op": "create_page",
                "slug": f"page-{n}",
                "title": "State of the Union",
                "summary": "The President's address to Congress.",
                "claims": _random_claims(rng, sources, rng.randint(1, 12)),
            },
            {"op": "add_claims", "page": f"page-{n}", "claims": _random_claims(rng, sources, 3)},
        ]
        plan = parse_plan(make_plan(vault, *ops))
        results = []
        for batched in (True, False):
            with monkeypatch.context() as patch:
                if not batched:
                    patch.setattr(admission._Gate, "check_quotes", lambda self, drafts: None)
                store, verifier = gate_services(vault)
                found = admit(vault.db, vault.config, store, verifier, plan, f"p{n}")
                results.append(found.to_json())
        assert results[0] == results[1]
        assert results[0] == dataclasses.asdict(found)  # to_json's shortcuts change nothing


def _keyed(rows: list[tuple[str, str]]) -> list[tuple[str, str, int]]:
    return [(claim_id, text, n) for n, (claim_id, text) in enumerate(rows)]


def test_a_page_index_synced_step_by_step_equals_one_built_at_once() -> None:
    """A claim kept with the same text keeps its derived form, the others are added or dropped:
    the index holds what an index built from the rows alone holds."""
    rng = random.Random(7)
    words = [
        "tax",
        "war",
        "peace",
        "trade",
        "navy",
        "army",
        "bank",
        "debt",
        "gold",
        "land",
        "law",
        "court",
    ]

    def row(n: int) -> tuple[str, str]:
        return f"c-{n:016x}", " ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))

    for _ in range(60):
        index = PageIndex(_comparable, NEAR_MIN_WORDS)
        rows: list[tuple[str, str]] = []
        made = 0
        for _ in range(40):
            step = rng.random()
            if step < 0.5:  # new claims at the end
                for _ in range(rng.randint(0, 4)):
                    rows.append(row(made))
                    made += 1
            elif step < 0.65 and rows:  # one ends
                rows.pop(rng.randrange(len(rows)))
            elif step < 0.75 and rows:  # one's text changes
                at = rng.randrange(len(rows))
                rows[at] = (rows[at][0], row(0)[1])
            elif step < 0.85:  # new ones in the middle, or the order changes
                rows.insert(rng.randint(0, len(rows)), row(made))
                made += 1
            else:
                rng.shuffle(rows)
            index.sync(_keyed(rows))
            fresh = PageIndex(_comparable, NEAR_MIN_WORDS)
            fresh.sync(_keyed(rows))
            assert index.items == fresh.items
            assert index.order == fresh.order
            assert index.exact == fresh.exact
            assert index.postings == fresh.postings
            for _, text in rows[:5]:
                normal, mine = _comparable(text)
                assert index.candidates(normal, mine, 0.9) == fresh.candidates(normal, mine, 0.9)
