"""The extractive engine piece by piece: sentences, clause pieces, topics, slugs, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from affidavit.extractive import name_title, propose_plan, slugify
from affidavit.extractive.segment import MAX_QUOTE, clause_pieces, segment, split_sentences
from affidavit.extractive.units import build_units
from affidavit.plan.schema import parse_plan
from affidavit.providers.base import IngestTask, PageBrief

SOURCE = "0123456789abcdef" * 4

ESSAY = """# The Eiffel Tower

The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.
It is named after the engineer Gustave Eiffel, whose company designed and built the tower.

## Construction

Construction of the Eiffel Tower began in January 1887 and was finished in March 1889.
Gustave Eiffel presented the Eiffel Tower to the public at the 1889 World's Fair in Paris.
The Eiffel Tower was the tallest human-made structure in the world until 1930.
Would you climb it? Thank you all for coming tonight.

## Visitors

The Eiffel Tower received 5,889,000 visitors in 2022 according to its operator.
Visitors to Paris can reach the top level of the Eiffel Tower by lift or by stairs.
"""


def task(
    text: str, name: str = "essay.md", index: int = 0, count: int = 1, **kw: Any
) -> IngestTask:
    return IngestTask("n" * 16, SOURCE, name, text, 0, index, count, **kw)


def texts(plan: dict[str, Any]) -> list[str]:
    return [c["text"] for op in plan["operations"] for c in op.get("claims", [])]


def test_sentences_respect_abbreviations_initials_and_decimals() -> None:
    text = (
        "Mr. Root met Gen. Grant in Washington, D.C. on Monday. Ulysses S. Grant was there. "
        "The U.S. Navy sent $2.5 million. Tin becomes a superconductor below 3.72 K. In fact it "
        "was among the first."
    )
    spans = [text[a:b] for a, b in split_sentences(text)]
    assert spans == [
        "Mr. Root met Gen. Grant in Washington, D.C. on Monday.",
        "Ulysses S. Grant was there.",
        "The U.S. Navy sent $2.5 million.",
        "Tin becomes a superconductor below 3.72 K.",
        "In fact it was among the first.",
    ]


def test_blocks_headings_and_inline_capital_headings() -> None:
    seg = segment(ESSAY)
    assert [(h.text, h.level) for h in seg.headings] == [
        ("The Eiffel Tower", 1),
        ("Construction", 2),
        ("Visitors", 2),
    ]
    first = seg.sentences[0]
    assert ESSAY[first.start : first.end].startswith("The Eiffel Tower is a wrought-iron")
    speech = "The session opened in May. ARBITRATION. The year was calm and the treaty was signed."
    seg = segment(speech)
    assert [h.text for h in seg.headings] == ["Arbitration"]
    assert seg.sentences[-1].section == "Arbitration"
    wrapped = "This sentence is wrapped\nacross two lines of text.\n"
    (only,) = segment(wrapped).sentences
    assert wrapped[only.start : only.end] == "This sentence is wrapped\nacross two lines of text."


def test_a_markdown_document_is_titled_by_its_heading_and_sectioned() -> None:
    plan = propose_plan(task(ESSAY))
    parse_plan(plan)
    create = plan["operations"][0]
    assert create["op"] == "create_page" and create["slug"] == "essay"
    assert create["title"] == "The Eiffel Tower" and create["category"] == "sources"
    assert create["summary"] in ESSAY.replace("\n", " ")
    sections = {
        op["section"]
        for op in plan["operations"]
        if op["op"] in ("create_page", "add_claims") and "essay" in (op.get("page"), op.get("slug"))
    }
    assert sections <= {"Overview", "Construction", "Visitors"}
    claims = texts(plan)
    assert not any("?" in t or "Thank you" in t for t in claims)
    context = [op for op in plan["operations"] if op["op"] == "update_context"]
    assert len(context) == 1 and len(context[0]["entries"]) == 1
    topics = [op for op in plan["operations"] if op.get("category") == "topics"]
    assert "Gustave Eiffel" not in [op["title"] for op in topics]  # two mentions, one source
    # named on a page of another source too: now a subject named repeatedly, it gets a page
    other = PageBrief("engineers", "Engineers", "Gustave Eiffel built bridges before the tower.")
    plan = propose_plan(task(ESSAY, pages=(other,)))
    topics = [op for op in plan["operations"] if op.get("category") == "topics"]
    assert "Gustave Eiffel" in [op["title"] for op in topics]
    links = [(op["page"], op["to"]) for op in plan["operations"] if op["op"] == "link_pages"]
    assert ("essay", "gustave-eiffel") in links


def test_long_sentences_are_split_at_clauses_or_spaces_or_skipped() -> None:
    clause = "the commission reported on the harbour works and the new lighthouse at the point"
    long = "; ".join(f"In {1900 + i} {clause}" for i in range(5)) + "."  # ~ 450 chars
    assert 300 < len(long) <= 600
    unbroken = "The report " + " ".join(["covered the harbour works"] * 18) + "."  # no clauses
    huge = "; ".join(f"In {1900 + i} {clause}" for i in range(8)) + "."  # over 600 chars
    text = f"{long} {unbroken} {huge} The lighthouse at the point was finished in 1907 at last."
    pieces = clause_pieces(text, 0, len(long))
    assert pieces is not None and all(b - a <= MAX_QUOTE for a, b in pieces)
    assert text[pieces[0][0] : pieces[0][1]].startswith("In 1900")
    assert not text[pieces[0][0] : pieces[0][1]].endswith(";")
    units = {u.text: u for u in build_units(text, segment(text))}
    assert long in units and list(units[long].quotes) == pieces and len(pieces) >= 2
    assert not any("1907 the" in t for t in units)  # over 600 characters: skipped
    # no clause boundary: quoted whole in consecutive pieces cut at spaces, none lost
    (report,) = [u for t, u in units.items() if t.startswith("The report")]
    assert report.text == unbroken and len(report.quotes) >= 2
    assert all(8 <= b - a <= MAX_QUOTE for a, b in report.quotes)
    assert " ".join(text[a:b] for a, b in report.quotes) == unbroken
    plan = propose_plan(task(text, "harbour.txt"))
    for op in plan["operations"]:
        for claim in op.get("claims", []) + op.get("entries", []):
            for evidence in claim["evidence"]:
                assert evidence["quote"] in text and 8 <= len(evidence["quote"]) <= 300
    assert clause_pieces(unbroken, 0, len(unbroken)) is None


def test_existing_and_pending_pages_are_extended_not_created() -> None:
    pages = (PageBrief("gustave-eiffel", "Gustave Eiffel", "An engineer."),)
    plan = propose_plan(task(ESSAY, pages=pages, pending_slugs=("essay",)))
    parse_plan(plan)
    created = [op["slug"] for op in plan["operations"] if op["op"] == "create_page"]
    assert "essay" not in created and "gustave-eiffel" not in created
    extended = {op["page"] for op in plan["operations"] if op["op"] == "add_claims"}
    assert {"essay", "gustave-eiffel"} <= extended
    links = [op for op in plan["operations"] if op["op"] == "link_pages"]
    existed = {"essay", "gustave-eiffel"}
    assert all({op["page"], op["to"]} != existed for op in links)  # both existed: no new link
    assert all(op["page"] != "gustave-eiffel" for op in links)  # an existing page is not edited


def test_a_new_source_does_not_take_over_a_page_about_something_else() -> None:
    pages = (PageBrief("essay", "Gardening Tips", "Roses."),)
    plan = propose_plan(task(ESSAY, pages=pages))
    source = plan["operations"][0]
    assert source["op"] == "create_page" and source["slug"] == f"essay-{SOURCE[:8]}"
    later = propose_plan(task(ESSAY, index=1, count=2, pending_slugs=(f"essay-{SOURCE[:8]}",)))
    assert later["operations"][0] == {**later["operations"][0], "page": f"essay-{SOURCE[:8]}"}


def test_a_chunk_cut_mid_sentence_loses_the_cut_sentence() -> None:
    text = "The harbour was dredged in 1905 by the state engineers. The new pier was built by the"
    first = propose_plan(task(text, "harbour.txt", 0, 2))
    assert all("new pier" not in t for t in texts(first))
    ended = "The new pier was built by the city engineers in 1906."
    last = propose_plan(task(ended, "harbour.txt", 1, 2))
    assert texts(last) == [ended]


def test_titles_and_slugs_from_names() -> None:
    assert name_title("Armenian_Apostolic_Church.md") == "Armenian Apostolic Church"
    assert name_title("notes/1790-washington.md") == "1790 washington"
    assert name_title("Marxism%E2%80%93Leninism.md") == "Marxism–Leninism"
    assert slugify("Marxism–Leninism") == "marxism-leninism"
    assert slugify("Index") == "index-page"
    assert slugify("Ελληνικά").startswith("page-")
    assert len(slugify("word " * 40)) <= 64


def test_the_plan_does_not_depend_on_hash_seeds_or_runs() -> None:
    code = (
        "import json, sys\n"
        "from affidavit.extractive import propose_plan\n"
        "from affidavit.providers.base import IngestTask\n"
        f"t = IngestTask('n' * 16, {SOURCE!r}, 'essay.md', sys.stdin.read(), 0, 0, 1)\n"
        "print(json.dumps(propose_plan(t)))\n"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code],
            input=ESSAY,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == propose_plan(task(ESSAY))
