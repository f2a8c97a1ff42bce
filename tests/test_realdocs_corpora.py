"""No source is silently lost (issue 24): every file of the real-docs corpora that has text gives
claims. Each page of SQLite's manual (``../shared/data/realdocs``) and of the git pages
``bench/bench_realdocs.py`` reads is extracted as ingest extracts it (the fast visibility rules;
rendering is the gate's business) and analysed chunk by chunk as the extractive engine does; a
page with text and no claim is a lost source. A file name with dates keeps its claims through
the gate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from affidavit.extractive.analysis import analyse
from affidavit.ingest.chunking import chunk_text
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import IngestTask
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.extract import HTML, extract
from affidavit.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_realdocs import corpus_files  # noqa: E402

CHUNK = 12_000


def claims_of(path: Path) -> int:
    extracted = extract(path.read_bytes(), HTML, render=False)
    text = extracted.text
    chunks = chunk_text(text, CHUNK)
    count = 0
    for chunk in chunks:
        flagged = tuple(
            (max(f.start, chunk.start) - chunk.start, min(f.end, chunk.end) - chunk.start)
            for f in extracted.flags
            if f.start < chunk.end and chunk.start < max(f.end, f.start + 1)
        )
        task = IngestTask(
            "n" * 16,
            "0" * 64,
            path.name,
            text[chunk.start : chunk.end],
            chunk.start,
            chunk.index,
            len(chunks),
            flagged=flagged,
            open_fence=chunk.fence,
            open_section=chunk.section,
        )
        count += len(analyse(task).claims)
    return count


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["sqlite", "git"])
def test_every_page_of_the_corpora_gives_claims(corpus: str) -> None:
    files = corpus_files(corpus)
    if not all(path.is_file() for path in files):
        pytest.skip(
            f"{corpus} docs are missing: run scripts/setup_testdata.sh"
            + (
                " and set AFFIDAVIT_SHARED_DATA to the shared data folder"
                if corpus == "sqlite"
                else ""
            )
        )
    lost = [path.name for path in files if claims_of(path) == 0]
    assert lost == []


ARTICLE = """The lighthouse on the northern cape was built of granite by the harbour board in 1887.
Its lamp was first lit on 3 May 1888 and could be seen from twenty miles at sea.
The keeper lived in a cottage beside the tower with his family until 1902.

In the winter storms of 1895 the keeper kept the lamp burning through every night.
"""


@pytest.mark.parametrize(
    "name",
    [
        "2019-03-14 Harbour report 1887-1902.txt",
        "harbour-report-2019-11-05.md",
        "bbc_news_2021_05_03_lighthouse.txt",
    ],
)
def test_a_file_name_with_dates_keeps_its_claims(vault: Vault, tmp_path: Path, name: str) -> None:
    doc = tmp_path / name
    doc.write_text(ARTICLE)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert not report.failed
    active = vault.db.execute("SELECT COUNT(*) FROM claims WHERE status = 'active'").fetchone()[0]
    assert active >= 3
    pending = vault.db.execute("SELECT COUNT(*) FROM plans WHERE status = 'pending'").fetchone()
    assert pending[0] == 0
    title = vault.db.execute("SELECT title FROM pages WHERE category = 'sources'").fetchone()
    assert title is not None and title[0]


def _title_verdict(vault: Vault, name: str, title: str) -> str:
    import json

    from affidavit.inbox import propose

    from .conftest import add_text, claim, make_plan

    source = add_text(vault, name, ARTICLE)
    quote = "The lighthouse on the northern cape was built of granite by the harbour board in 1887."
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "harbour",
            "title": title,
            "summary": quote,
            "section": "Overview",
            "claims": [claim(quote, source, quote)],
        },
    )
    proposal = propose(vault, json.dumps(plan), "tester", "test")
    (verdict,) = [t.support for t in proposal.admission.ops[0].texts if t.what == "title"]
    return verdict


def test_the_source_name_is_a_title_and_nothing_else_is(vault: Vault) -> None:
    name = "2019-03-14 Harbour report 1887-1902.md"
    assert _title_verdict(vault, name, "2019-03-14 Harbour report 1887-1902") == "supported"


def test_a_title_like_the_source_name_is_still_checked(vault: Vault) -> None:
    # one number changed: not the source's name, and its quotes don't say it
    name = "2019-03-14 Harbour report 1887-1902.md"
    assert _title_verdict(vault, name, "2019-03-14 Harbour report 1887-1903") != "supported"
