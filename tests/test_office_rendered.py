"""Word and OpenDocument texts can be rendered (issue 27 item 3, W12; ``sources.render_office``):
LibreOffice lays the document out and exports PDF, PDFium judges each character's ink, and what
the reader's program draws no readable ink for is flagged — the hiding tricks the rules know,
and those they don't. Off by default (tests/test_sources_office.py: documents LibreOffice lays
out unlike Word)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.extract import extract
from affidavit.sources.render_office import engine
from affidavit.sources.visibility import OFFICE, RENDERED
from affidavit.vault import Vault, open_vault

from .office_docs import HIDDEN, VISIBLE, W_NS, docx_of, hidden_docx, hidden_odt, odt_of

pytestmark = [
    pytest.mark.skipif(engine() is None, reason="LibreOffice is not installed"),
    pytest.mark.xdist_group("libreoffice"),  # one LibreOffice at a time on a small machine
]
DOCX, ODT = OFFICE
OFF_PAGE = "The beavers of Tolland built a dam across the river below the mill."


def _off_page_docx() -> bytes:
    """A run lowered 15,000 points (``w:position``): on no page, and no rule knows it."""
    from docx import Document
    from docx.oxml import parse_xml

    d = Document()
    d.add_heading("Report on harbours", level=1)
    d.add_paragraph(VISIBLE)
    run = d.add_paragraph().add_run(OFF_PAGE)
    run._r.get_or_add_rPr().append(parse_xml(f'<w:position {W_NS} w:val="-30000"/>'))
    d.add_paragraph("The council met twice in the spring of that year.")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def _flagged(text: str, flags: list[object], sentence: str) -> bool:
    at = text.index(sentence)
    end = at + len(sentence)
    return any(
        f.start < end and at < f.end  # type: ignore[attr-defined]
        for f in flags
        if f.kind == "hidden"  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize(("kind", "data", "media"), [("docx", "docx", DOCX), ("odt", "odt", ODT)])
def test_the_hidden_techniques_are_flagged_and_the_visible_text_is_not(
    kind: str, data: str, media: str
) -> None:
    document = hidden_docx() if data == "docx" else hidden_odt()
    extracted = extract(document, media, None, office=True)
    assert extracted.text_map["visibility"]["checked"] == RENDERED
    assert "LibreOffice" in extracted.text_map["visibility"]["engine"]
    for sentence in HIDDEN[kind].values():
        assert _flagged(extracted.text, extracted.flags, sentence), sentence
    assert not _flagged(extracted.text, extracted.flags, VISIBLE)


def test_text_moved_off_the_page_is_flagged_by_the_renderer_alone(
    vault: Vault, tmp_path: Path
) -> None:
    data = _off_page_docx()
    rules = extract(data, DOCX, None, render=False)
    assert not _flagged(rules.text, rules.flags, OFF_PAGE)  # no rule knows w:position
    rendered = extract(data, DOCX, None, office=True)
    assert _flagged(rendered.text, rendered.flags, OFF_PAGE)
    hit = next(f for f in rendered.flags if f.start <= rendered.text.index(OFF_PAGE) < f.end)
    assert "outside the page" in hit.detail and "LibreOffice" in hit.detail
    assert not _flagged(rendered.text, rendered.flags, VISIBLE)
    # ingested into a vault that asks for it, the sentence a reader never sees becomes no claim
    text = vault.config_path.read_text()
    assert "render_office = false" in text  # off unless asked for
    vault.config_path.write_text(text.replace("render_office = false", "render_office = true"))
    vault = open_vault(vault.root, clock=vault.clock)
    path = tmp_path / "report.docx"
    path.write_bytes(data)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path)], "trusted")
    texts = [r[0] for r in vault.db.execute("SELECT text FROM claims WHERE status = 'active'")]
    assert any("nine hundred ships" in t for t in texts)
    assert not any("beavers" in t for t in texts)


@pytest.mark.parametrize("media", [DOCX, ODT])
def test_an_ordinary_document_has_nothing_flagged(media: str) -> None:
    assert "visibility" not in extract(docx_of("T", ["Plain words here."]), DOCX).text_map or (
        extract(docx_of("T", ["Plain words here."]), DOCX).text_map["visibility"]["checked"]
        == "rules"
    )  # not asked for: the rules alone, as before
    paragraphs = [
        "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.",
        "Fishing boats land their catch at the north quay every morning — “weather permitting”.",
        "Tourists visit the harbour museum during the summer months (May–September).",
    ]
    make = docx_of if media == DOCX else odt_of
    extracted = extract(make("The Harbour", paragraphs), media, None, office=True)
    assert extracted.text_map["visibility"]["checked"] == RENDERED
    assert [f for f in extracted.flags if f.kind == "hidden"] == []


def _boxed_docx(text: str, width_emu: int) -> bytes:
    """A filled text box as Word writes one (a rectangle, a dark fill, white text), fixed size."""
    from docx import Document
    from docx.oxml import parse_xml

    ns = (
        f'{W_NS} xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
    )
    d = Document()
    d.add_paragraph(VISIBLE)
    d.add_paragraph()._p.append(
        parse_xml(
            f'<w:r {ns}><w:drawing><wp:inline><wp:extent cx="{width_emu}" cy="500000"/>'
            '<wp:docPr id="7" name="Box"/><a:graphic><a:graphicData '
            'uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>'
            f'<wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{width_emu}" cy="500000"/></a:xfrm>'
            '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>'
            '<a:solidFill><a:srgbClr val="1F4E79"/></a:solidFill></wps:spPr>'
            '<wps:txbx><w:txbxContent><w:p><w:r><w:rPr><w:color w:val="FFFFFF"/></w:rPr>'
            f"<w:t>{text}</w:t></w:r></w:p></w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp>"
            "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"
        )
    )
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_white_text_in_a_filled_box_is_seen_and_what_the_box_clips_is_not() -> None:
    """Rules and rendering agree on a realistic text box; only the rendering sees the words a
    fixed-size box cuts off (Word clips them too), which no rule can."""
    sentence = "White words in the dark box name the harbour master of that year."
    wide = extract(_boxed_docx(sentence, 4_000_000), DOCX, None, office=True)
    assert wide.text_map["visibility"]["checked"] == RENDERED
    assert not _flagged(wide.text, wide.flags, sentence)
    narrow_data = _boxed_docx(sentence, 700_000)  # two words a line, three lines shown
    rules = extract(narrow_data, DOCX, None, render=False)
    assert not _flagged(rules.text, rules.flags, sentence)
    narrow = extract(narrow_data, DOCX, None, office=True)
    assert _flagged(narrow.text, narrow.flags, "harbour master of that year.")
    assert not _flagged(narrow.text, narrow.flags, VISIBLE)
