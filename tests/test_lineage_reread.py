"""A re-ingest costs what changed (issue 27): the changed sentences of a new version, however far
apart, are read together — one model call per ``chunk_chars`` of changed text, the unchanged
text between them neither shown nor read again."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.ingest.chunking import Chunk, changed_chunks, shown_parts, sparse_text
from affidavit.ingest.cost import request_tokens
from affidavit.ingest.dry_run import estimate
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import Vault, open_vault

EDITED = (3, 12, 21, 30, 38)


def _paragraphs(edited: tuple[int, ...] = ()) -> list[str]:
    return [
        f"Station {n} of the survey recorded {100 + n + (5 if n in edited else 0)} nesting "
        f"pairs of terns on the dunes."
        for n in range(40)
    ]


def _doc(paragraphs: list[str]) -> str:
    return "# Survey\n\n" + "\n\n".join(paragraphs) + "\n"


def _small_chunks(vault: Vault) -> Vault:
    vault.config_path.write_text(
        vault.config_path.read_text().replace("chunk_chars = 6000", "chunk_chars = 500")
    )
    return open_vault(vault.root, clock=vault.clock)


def test_changed_stretches_far_apart_are_one_sparse_chunk() -> None:
    text = _doc(_paragraphs())
    spans = []
    for n in EDITED:
        at = text.index(f"Station {n} of")
        spans.append((at, text.index(".", at) + 1))
    chunks = changed_chunks(text, spans, 500)
    assert len(chunks) == 1  # five stretches, ~400 characters: one read, not five
    chunk = chunks[0]
    assert chunk.parts == tuple(spans)
    blanked = sparse_text(text, chunk)
    assert len(blanked) == chunk.end - chunk.start  # offsets hold
    for lo, hi in spans:
        assert blanked[lo - chunk.start : hi - chunk.start] == text[lo:hi]
    assert "Station 4 of" not in blanked and "Station 4 of" not in shown_parts(text, chunk)
    assert shown_parts(text, chunk).count("[…]") == len(EDITED) - 1
    # more changed text than a chunk holds: as many chunks as it takes, none over the limit
    many = changed_chunks(text, spans, 200)
    assert len(many) == 3
    assert all(sum(hi - lo for lo, hi in c.parts or ((c.start, c.end),)) <= 200 for c in many)
    assert changed_chunks(text, spans[:1], 500) == [
        Chunk(0, *spans[0], section="Survey", cite=(spans[0],))
    ]


def test_edits_across_a_document_are_read_in_one_call(vault: Vault, tmp_path: Path) -> None:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    first = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert first.calls >= 6
    doc.write_text(_doc(_paragraphs(EDITED)))
    second = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert second.calls == 1  # today's main: one call per edit (5)
    new_id = vault.db.execute("SELECT id FROM sources WHERE version = 2").fetchone()[0]
    texts = [
        r[0]
        for r in vault.db.execute(
            "SELECT c.text FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "WHERE e.source_id = ? AND c.status = 'active' AND c.page_slug != ''",
            (new_id,),
        )
    ]
    from .test_lineage_citing import held_texts  # (it imports this module)

    held = held_texts(vault)  # waiting in the supersessions of the claims they replace
    for n in EDITED:  # each edited sentence is read: a claim quotes its new number
        assert any(f"{105 + n} nesting" in t for t in held), n
        assert not any(f"Station {n} of the survey recorded {105 + n}" in t for t in texts), n
    # nothing unchanged was read again: each unchanged sentence has one active claim, carried
    for n in (0, 4, 20, 39):
        same = [t for t in texts if f"Station {n} of the survey recorded {100 + n} " in t]
        assert len(same) == 1, (n, same)


def test_a_model_is_shown_only_the_changed_sentences(vault: Vault, tmp_path: Path) -> None:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    doc.write_text(_doc(_paragraphs(EDITED)))

    def nothing(request: ModelRequest) -> str:
        assert request.task is not None
        return json.dumps({"nonce": request.task.nonce, "summary": "none", "operations": []})

    model = ScriptedProvider([nothing])
    Ingestor(vault, model, apply_now=True).run([str(doc)], "trusted")
    assert len(model.requests) == 1
    prompt = model.requests[0].messages[-1].content
    for n in EDITED:
        assert f"recorded {105 + n} nesting" in prompt
    assert "recorded 104 nesting" not in prompt and "Station 20 " not in prompt
    assert prompt.count("[…]") == len(EDITED) - 1
    assert "[s" in prompt  # cited by the source's own sentence numbers


def test_the_dry_run_of_a_changed_file_counts_its_changed_text(
    vault: Vault, tmp_path: Path
) -> None:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    doc.write_text(_doc(_paragraphs(EDITED)))

    def nothing(request: ModelRequest) -> str:
        assert request.task is not None
        return json.dumps({"nonce": request.task.nonce, "summary": "none", "operations": []})

    model = ScriptedProvider([nothing] * 5)
    found = estimate(vault, model, [str(doc)], "trusted").sources[0]
    assert model.requests == []
    assert found.chunks_to_ingest == 1  # today's main: every chunk of the file
    assert "only its changed text" in found.message
    Ingestor(vault, model, apply_now=True).run([str(doc)], "trusted")
    sent = sum(request_tokens(r, model) for r in model.requests)
    assert len(model.requests) == 1
    assert abs(found.prompt_tokens - sent) <= 0.10 * sent, (found.prompt_tokens, sent)
