"""An attacker's folder (issue 27 item 3): a document of each format hiding sentences the way that
format can — Word ``w:vanish``, white and tiny runs, comments, tracked deletions and field
instructions; OpenDocument hidden spans and sections, annotations, deletions; PowerPoint hidden
slides and shapes, text off the slide, tiny text and white text on the white slide; EPUB CSS and
``hidden``; Obsidian ``%%comments%%``, front matter and embeds — watched and ingested end to end
with every plan applied. No hidden sentence may become a claim, or even be proposed; the visible
ones do, and the speaker notes do, marked as notes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.inbox import get_plan
from affidavit.sources.extract import location
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

from . import office_docs as docs

pytest.importorskip("docx")
pytest.importorskip("pptx")
pytest.importorskip("odf")
pytest.importorskip("ebooklib")

WHITE_ON_SLIDE = "The herons of Quillby nest only on the eastern marsh."


def _pptx_with_white_text() -> bytes:
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.util import Emu

    prs = Presentation(io.BytesIO(docs.hidden_pptx()))
    box = prs.slides[0].shapes.add_textbox(
        Emu(200_000), Emu(3_000_000), Emu(4_000_000), Emu(500_000)
    )
    run = box.text_frame.paragraphs[0].add_run()
    run.text = WHITE_ON_SLIDE
    run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def test_no_hidden_sentence_of_any_format_is_proposed_or_becomes_a_claim(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "kept"
    (folder / "notes" / ".obsidian").mkdir(parents=True)
    (folder / "report.docx").write_bytes(docs.hidden_docx())
    (folder / "report.odt").write_bytes(docs.hidden_odt())
    (folder / "slides.pptx").write_bytes(_pptx_with_white_text())
    (folder / "book.epub").write_bytes(docs.hidden_epub())
    (folder / "notes" / "harbours.md").write_text(docs.OBSIDIAN_NOTE)
    result = CliRunner().invoke(
        main,
        [
            "--vault",
            str(vault.root),
            "watch",
            str(folder),
            "--once",
            "--json",
            "--trust",
            "trusted",
        ],
    )
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    ingested = {Path(e["path"]).name for e in events if e["event"] == "ingested"}
    assert ingested == {"report.docx", "report.odt", "slides.pptx", "book.epub", "harbours.md"}
    for (plan_id,) in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'").fetchall():
        # a person approving everything (a plan whose claims another one took is refused)
        CliRunner().invoke(main, ["--vault", str(vault.root), "approve", plan_id])

    hidden = {s for by_technique in docs.HIDDEN.values() for s in by_technique.values()}
    hidden.add(WHITE_ON_SLIDE)
    hidden.discard(docs.NOTES)  # the docx comment's sentence is also the slides' notes:
    cited = {  # so it may be a claim, from the slides' notes alone
        SourceStore(vault).get(str(r[0])).name
        for r in vault.db.execute(
            "SELECT e.source_id FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "WHERE c.text LIKE '%walrus%'"
        )
    }
    assert cited == {"slides.pptx"}
    claims = [str(r[0]) for r in vault.db.execute("SELECT text FROM claims")]
    plans = " ".join(
        get_plan(vault, str(r[0])).plan.model_dump_json()
        for r in vault.db.execute("SELECT id FROM plans")
    )
    for sentence in sorted(hidden):
        assert not [c for c in claims if sentence[:30] in c], sentence
        assert sentence[:30] not in plans, sentence  # never even proposed
    assert any(docs.VISIBLE in c for c in claims)
    # the notes are the presenter's text: a claim, its quote located in "notes of slide 1"
    notes = vault.db.execute(
        "SELECT e.source_id, e.start FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.text = ?",
        (docs.NOTES,),
    ).fetchone()
    assert notes is not None
    record = SourceStore(vault).get(notes[0])
    text = SourceStore(vault).text(record.id)
    assert location(text, record.text_map, int(notes[1])) == "notes of slide 1"


PARAGRAPHS = [
    f"The harbour of port number {n} was dredged in {1800 + n} by the county engineers. Its "
    f"quay was lengthened by {n + 10} metres in the following year, and a customs house "
    f"opened beside it."
    for n in range(40)
]


@pytest.mark.parametrize("fmt", ["docx", "odt", "pptx", "epub"])
def test_a_long_document_goes_in_whole_no_chunk_held_for_a_hidden_heading(
    vault: Vault, tmp_path: Path, fmt: str
) -> None:
    """Every chunk of a document long enough to be cut goes in with ``--yes``: none is held
    back because the section it continues is named by text a reader does not see (an EPUB
    chapter's ``<title>``, flagged hidden, was the section of every chunk after the first)."""
    from dataclasses import replace

    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider

    writers = {
        "docx": docs.docx_of,
        "odt": docs.odt_of,
        "pptx": docs.pptx_of,
        "epub": lambda title, paragraphs: docs.epub_of(
            title, ["<html><body>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>"]
        ),
    }
    path = tmp_path / f"harbours.{fmt}"
    path.write_bytes(writers[fmt]("Harbours of the county", PARAGRAPHS))
    vault.config = replace(vault.config, values={**vault.config.values, "ingest.chunk_chars": 2000})
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path)], "trusted")
    chunks = report.sources[0].chunks
    assert len(chunks) >= 3
    assert [c.status for c in chunks if c.status not in ("applied", "partial")] == []
    quarantined = vault.db.execute(
        "SELECT count(*) FROM plans WHERE status = 'pending'"
    ).fetchone()[0]
    assert quarantined == 0
