"""Word, OpenDocument, PowerPoint, EPUB and Obsidian sources (issue 27 item 3).

For each format a document made with its own library holds one sentence per hiding technique:
each is flagged unseen (W12) and quarantined at the gate, while a visible control sentence is
clean and admitted. Packages that would hurt the host (zip bombs, XML entities) are refused
before any library parses them; a missing extra names its install command; real documents
ingest with no markup or fragment claims.
"""

from __future__ import annotations

import io
import struct
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import SourceError
from affidavit.inbox import propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.extract import (
    DOCX,
    EPUB,
    OBSIDIAN,
    ODT,
    PPTX,
    detect_media_type,
    extract,
    location,
)
from affidavit.sources.office import MAX_ENTRIES, open_zip
from affidavit.sources.sanitizer import UNSEEN_KINDS, Flag
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault
from tests import office_docs as docs
from tests.conftest import claim, make_plan

BUILDERS: dict[str, tuple[str, Callable[[], bytes]]] = {
    "docx": (DOCX, docs.hidden_docx),
    "odt": (ODT, docs.hidden_odt),
    "pptx": (PPTX, docs.hidden_pptx),
    "epub": (EPUB, docs.hidden_epub),
}


def _unseen(flags: list[Flag], text: str, sentence: str) -> list[Flag]:
    start = text.index(sentence)
    end = start + len(sentence)
    return [f for f in flags if f.kind in UNSEEN_KINDS and f.start < end and f.end > start]


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_each_hiding_technique_is_flagged_and_the_visible_sentence_is_clean(fmt: str) -> None:
    media, build = BUILDERS[fmt]
    result = extract(build(), media)
    text = result.text
    assert docs.VISIBLE in text
    assert _unseen(result.flags, text, docs.VISIBLE) == []
    for technique, sentence in docs.HIDDEN[fmt].items():
        assert sentence in text, technique  # kept in the text (offsets never depend on styles)
        covering = _unseen(result.flags, text, sentence)
        assert covering, f"{fmt}: {technique} is not flagged"
        assert covering[0].start <= text.index(sentence), technique
    assert result.text_map["kind"] == "units"
    assert result.text_map["visibility"]["checked"] == "rules"
    assert "<" not in text.replace("<!--", "") and "w:" not in text and "xmlns" not in text


def test_word_reasons_name_the_technique_and_units_locate_quotes() -> None:
    result = extract(docs.hidden_docx(), DOCX)
    text, h = result.text, docs.HIDDEN["docx"]
    details = {s: _unseen(result.flags, text, s)[0].detail for s in h.values()}
    assert "w:vanish" in details[h["vanish"]]
    assert "contrast" in details[h["white"]]
    assert "2 pt" in details[h["tiny"]]
    assert "comment" in details[h["comment"]]
    assert "tracked deletion" in details[h["deletion"]]
    assert "field's instruction" in details[h["field"]]
    assert "the quoted result" in text and _unseen(result.flags, text, "the quoted result") == []
    assert text.startswith("# Report on harbours\n\n")
    assert location(text, result.text_map, text.index(docs.VISIBLE)) == "paragraph 2"
    assert location(text, result.text_map, text.index(h["comment"])).startswith("comment ")


def test_slide_notes_are_kept_and_marked_as_notes() -> None:
    result = extract(docs.hidden_pptx(), PPTX)
    at = result.text.index(docs.NOTES)
    assert location(result.text, result.text_map, at) == "notes of slide 1"
    assert _unseen(result.flags, result.text, docs.NOTES) == []  # the presenter's own text
    assert location(result.text, result.text_map, result.text.index(docs.VISIBLE)) == "slide 1"


def test_one_chapters_css_does_not_reach_another() -> None:
    result = extract(docs.hidden_epub(), EPUB)
    second = "The second chapter names the keeper of the northern light."
    assert _unseen(result.flags, result.text, second) == []
    where = location(result.text, result.text_map, result.text.index(second))
    assert where.startswith("chapter ") and "(ch2.xhtml), line" in where


# --- the gate -----------------------------------------------------------------------------------


def _add(vault: Vault, name: str, data: bytes, media: str | None = None) -> str:
    result = SourceStore(vault).add_bytes(
        data, origin=f"/test/{name}", name=name, media_type=media, trust="trusted"
    )
    return result.record.id


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_hidden_evidence_is_quarantined_at_the_gate_and_the_visible_admitted(
    vault: Vault, fmt: str
) -> None:
    media, build = BUILDERS[fmt]
    data = build()
    source = _add(vault, f"harbours.{fmt}", data)
    record = SourceStore(vault).get(source)
    assert record.media_type == media and record.original_file.endswith(f".{fmt}")
    assert (vault.root / record.original_file).read_bytes() == data  # the original, as bytes
    hidden = list(docs.HIDDEN[fmt].values())
    claims = [claim(docs.VISIBLE, source, docs.VISIBLE)]
    claims += [claim(sentence, source, sentence) for sentence in hidden]
    op = {
        "op": "create_page",
        "slug": "harbours",
        "title": "Harbours",
        "summary": "About harbours.",
        "claims": claims,
    }
    proposal = propose(vault, make_plan(vault, op), "t", "t")
    verdicts = proposal.admission.ops[0].claims
    assert verdicts[0].status == "admitted", verdicts[0].reason
    for sentence, verdict in zip(hidden, verdicts[1:], strict=True):
        assert verdict.status == "quarantined", (sentence, verdict.status, verdict.reason)
        assert verdict.check == "sanitizer"


# --- refused packages ---------------------------------------------------------------------------


def _declared_size(data: bytes, size: int) -> bytes:
    """``data`` (a zip) whose first central directory entry declares ``size`` unpacked bytes."""
    at = data.index(b"PK\x01\x02")
    return data[: at + 24] + struct.pack("<I", size) + data[at + 28 :]


def test_a_zip_bomb_is_refused_before_anything_unpacks_it() -> None:
    small = io.BytesIO()
    with zipfile.ZipFile(small, "w") as z:
        z.writestr("word/document.xml", b"<w:document/>")
    with pytest.raises(SourceError, match=r"unpack to 300,000,000 bytes.*zip bomb"):
        open_zip(_declared_size(small.getvalue(), 300_000_000), "Word document")
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as z:
        for n in range(MAX_ENTRIES + 1):
            z.writestr(f"x/{n}", b"")
    with pytest.raises(SourceError, match=r"20,001 entries"):
        extract(many.getvalue(), DOCX)


def test_a_real_deflate_bomb_is_refused() -> None:
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", b"<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as member:
            chunk = b"\0" * (1 << 20)
            for _ in range(260):
                member.write(chunk)
    data = bomb.getvalue()
    assert len(data) < 1_000_000
    with pytest.raises(SourceError, match="zip bomb"):
        extract(data, DOCX)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-be", "utf-32"])
def test_xml_entities_and_dtds_are_refused(encoding: str) -> None:
    body = (
        '<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY lol "lol">'
        '<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>&xxe;&lol;</w:t></w:r></w:p></w:body></w:document>"
    )
    data = docs.rezip(docs.docx_of("T", ["Words."]), {"word/document.xml": body.encode(encoding)})
    with pytest.raises(SourceError, match=r"declares '<!ENTITY'|declares '<!DOCTYPE"):
        extract(data, DOCX)
    subset = b'<?xml version="1.0"?><!DOCTYPE x [ <!ELEMENT x ANY> ]><x/>'
    odt = docs.rezip(docs.odt_of("T", ["Words."]), {"content.xml": subset})
    with pytest.raises(SourceError, match=r"DOCTYPE x \["):
        extract(odt, ODT)


def test_a_doctype_that_only_names_a_dtd_is_read() -> None:
    """OpenOffice.org 2 wrote one in every package's manifest; no parser here loads it."""
    manifest = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE manifest:manifest PUBLIC '
        b'"-//OpenOffice.org//DTD Manifest 1.0//EN" "Manifest.dtd">\n'
    )
    data = docs.odt_of("T", ["Words of the old office suite."])
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        body = z.read("META-INF/manifest.xml").split(b"?>", 1)[1]
    namespace = b' xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
    assert namespace in body
    body = body.replace(namespace, b"")  # as OpenOffice.org wrote it: the DTD declared it
    old = docs.rezip(data, {"META-INF/manifest.xml": manifest + body.lstrip()})
    assert "Words of the old office suite." in extract(old, ODT).text


def test_an_epub_may_name_the_xhtml_dtd_but_not_declare_entities() -> None:
    book = docs.epub_of("Harbours", [docs.VISIBLE])
    named = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
        '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>x</title></head><body><p>{docs.VISIBLE}</p></body></html>"
    )
    ok = extract(docs.rezip(book, {"EPUB/ch1.xhtml": named.encode()}), EPUB)
    assert docs.VISIBLE in ok.text
    entity = named.replace('xhtml11.dtd">', 'xhtml11.dtd" [<!ENTITY e "planted">]>')
    with pytest.raises(SourceError, match=r"ENTITY|DOCTYPE"):
        extract(docs.rezip(book, {"EPUB/ch1.xhtml": entity.encode()}), EPUB)


def test_a_damaged_package_names_the_fix() -> None:
    with pytest.raises(SourceError, match=r"not a readable zip package.*save it"):
        extract(b"PK\x03\x04 not really a zip", DOCX)


def test_without_the_extra_the_error_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = docs.docx_of("T", ["Words are here."])
    monkeypatch.setitem(sys.modules, "docx", None)  # as if python-docx were not installed
    with pytest.raises(SourceError, match=r"pip install 'affidavit\[formats\]'"):
        extract(data, DOCX)


@pytest.mark.parametrize(
    ("name", "media"),
    [("a.docx", DOCX), ("a.odt", ODT), ("a.pptx", PPTX), ("a.epub", EPUB)],
)
def test_detected_by_extension(name: str, media: str) -> None:
    assert detect_media_type(name, b"PK\x03\x04") == media


# --- Obsidian -----------------------------------------------------------------------------------


def _obsidian_vault(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    (notes / ".obsidian").mkdir(parents=True)
    (notes / "harbours.md").write_text(docs.OBSIDIAN_NOTE)
    (notes / "penguins.md").write_text(docs.PENGUINS)
    return notes


def test_an_obsidian_note_reads_as_obsidian_shows_it(vault: Vault, tmp_path: Path) -> None:
    notes = _obsidian_vault(tmp_path)
    record = SourceStore(vault).add_file(notes / "harbours.md").record
    assert record.media_type == OBSIDIAN and record.original_file.endswith(".md")
    text = SourceStore(vault).text(record.id)
    assert "It is run by the harbour board." in text
    assert "See Lighthouses > Northern and keepers for more." in text
    assert "[[" not in text.replace("![[penguins]]", "")
    assert docs.HIDDEN["obsidian"]["front matter"] not in text  # metadata, not text
    assert record.text_map["metadata"]["title"] == "Harbours"
    assert record.text_map["metadata"]["tags"] == ["ports", "survey"]
    assert location(text, record.text_map, text.index("See Lighthouses")) == "line 14"
    flags = record.flags
    assert _unseen(flags, text, docs.HIDDEN["obsidian"]["comment"])
    assert _unseen(flags, text, "![[penguins]]")
    assert _unseen(flags, text, docs.VISIBLE) == []
    # the same note outside a vault is plain markdown: its syntax kept as written
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "harbours2.md").write_text(docs.OBSIDIAN_NOTE + "\n")
    other = SourceStore(vault).add_file(plain / "harbours2.md").record
    assert other.media_type == "text/markdown"


def test_obsidian_hidden_evidence_is_quarantined(vault: Vault, tmp_path: Path) -> None:
    notes = _obsidian_vault(tmp_path)
    source = SourceStore(vault).add_file(notes / "harbours.md", trust="trusted").record.id
    comment = docs.HIDDEN["obsidian"]["comment"]
    alias = "It is run by the harbour board."
    op = {
        "op": "create_page",
        "slug": "harbours",
        "title": "Harbours",
        "summary": "About harbours.",
        "claims": [
            claim(docs.VISIBLE, source, docs.VISIBLE),
            claim("The harbour is run by the harbour board.", source, alias),
            claim(comment, source, comment),
        ],
    }
    verdicts = propose(vault, make_plan(vault, op), "t", "t").admission.ops[0].claims
    assert [v.status for v in verdicts[:2]] == ["admitted", "admitted"], verdicts[1].reason
    assert verdicts[2].status == "quarantined"


# --- real documents -----------------------------------------------------------------------------

SPEECH = [
    "I am happy to report that the harbour works at Dover are nearly finished. The engineers "
    "expect the new pier to open in the spring, and the merchants of the town have asked for "
    "a second customs house.",
    "Our trade with the southern ports grew by a third in the last year. The duties collected "
    "paid for the new lighthouse at the mouth of the river, which now guides ships at night.",
    "The survey of the northern coast is complete. Its charts show three safe anchorages that "
    "were unknown before, and the navy has begun to use them.",
]


def _builders() -> dict[str, Callable[[str, list[str]], bytes]]:
    return {
        "docx": docs.docx_of,
        "odt": docs.odt_of,
        "pptx": docs.pptx_of,
        "epub": lambda title, paragraphs: docs.epub_of(title, paragraphs),
    }


@pytest.mark.parametrize("fmt", ["docx", "odt", "pptx", "epub"])
def test_real_documents_ingest_with_no_markup_or_fragment_claims(
    vault: Vault, tmp_path: Path, fmt: str
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from bench_extract import judge

    path = tmp_path / f"speech.{fmt}"
    path.write_bytes(_builders()[fmt]("Annual message on the harbours", SPEECH))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path)], "trusted")
    rows: list[Any] = vault.db.execute(
        "SELECT text FROM claims WHERE status = 'active' AND page_slug != ''"
    ).fetchall()
    texts = [str(row[0]) for row in rows]
    assert texts, "no claims"
    assert [t for t in texts if judge(t) != "prose"] == []
    assert all(any(t in paragraph for paragraph in SPEECH) for t in texts), texts


def test_a_shape_mostly_off_the_slide_is_hidden_and_one_mostly_on_it_is_not() -> None:
    from pptx import Presentation
    from pptx.util import Emu

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    width = int(prs.slide_width or 0)
    poking = "A box pushed off the left edge shows only the end of this sentence."
    mostly = "A box a fifth over the right edge still shows most of this sentence."
    box = slide.shapes.add_textbox(Emu(-900_000), Emu(100), Emu(1_000_000), Emu(500_000))
    box.text_frame.text = poking
    box = slide.shapes.add_textbox(Emu(width - 800_000), Emu(100), Emu(1_000_000), Emu(500_000))
    box.text_frame.text = mostly
    out = io.BytesIO()
    prs.save(out)
    result = extract(out.getvalue(), PPTX)
    assert "outside the slide" in _unseen(result.flags, result.text, poking)[0].detail
    assert _unseen(result.flags, result.text, mostly) == []


def test_word_styles_are_resolved_as_word_does_and_contrast_reads_the_background() -> None:
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE
    from docx.enum.text import WD_COLOR_INDEX
    from docx.oxml import parse_xml
    from docx.shared import RGBColor

    d = Document()
    secret = d.styles.add_style("Secret", WD_STYLE_TYPE.CHARACTER)
    secret.font.hidden = True
    ghost = d.styles.add_style("Ghost", WD_STYLE_TYPE.PARAGRAPH)
    ghost.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    child = d.styles.add_style("Ghost child", WD_STYLE_TYPE.PARAGRAPH)
    child.base_style = ghost
    texts = {
        "character style": "A character style hides this sentence about the quarry.",
        "paragraph style": "A paragraph style paints this sentence about the mill white.",
        "based on": "A style based on that one inherits the white about the ferry.",
        "highlight": "Black text on a black highlight hides this line about the dam.",
        "override": "The run turns the hidden style off, so this line about the bridge shows.",
        "shaded": "White text on a dark shaded paragraph about the canal is readable.",
    }
    d.add_paragraph().add_run(texts["character style"], style="Secret")
    d.add_paragraph(texts["paragraph style"], style="Ghost")
    d.add_paragraph(texts["based on"], style="Ghost child")
    run = d.add_paragraph().add_run(texts["highlight"])
    run.font.color.rgb = RGBColor(0, 0, 0)
    run.font.highlight_color = WD_COLOR_INDEX.BLACK
    run = d.add_paragraph().add_run(texts["override"], style="Secret")
    run.font.hidden = False
    shaded = d.add_paragraph()
    shaded.add_run(texts["shaded"]).font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    shaded._p.get_or_add_pPr().append(
        parse_xml(f'<w:shd {docs.W_NS} w:val="clear" w:color="auto" w:fill="1F1F1F"/>')
    )
    out = io.BytesIO()
    d.save(out)
    result = extract(out.getvalue(), DOCX)
    for key in ("character style", "paragraph style", "based on", "highlight"):
        assert _unseen(result.flags, result.text, texts[key]), key
    for key in ("override", "shaded"):
        assert _unseen(result.flags, result.text, texts[key]) == [], key


def _dark_page_docx(sentence: str, dark: str, shown: bool) -> bytes:
    from docx import Document
    from docx.oxml import parse_xml
    from docx.shared import RGBColor

    d = Document()
    d.element.insert(0, parse_xml(f'<w:background {docs.W_NS} w:color="000000"/>'))
    if shown:  # what Word writes with a page colour (Design > Page Color)
        d.settings.element.append(parse_xml(f"<w:displayBackgroundShape {docs.W_NS}/>"))
    d.add_paragraph().add_run(sentence).font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    d.add_paragraph().add_run(dark).font.color.rgb = RGBColor(0, 0, 0)
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_white_text_on_a_dark_page_is_seen() -> None:
    sentence = "White words on a black page are what this reader sees about the harbour."
    dark = "Black words on the black page are not seen by anyone at the harbour."
    result = extract(_dark_page_docx(sentence, dark, shown=True), DOCX)
    assert _unseen(result.flags, result.text, sentence) == []
    assert _unseen(result.flags, result.text, dark)


def test_a_page_colour_word_does_not_display_hides_nothing_white() -> None:
    """The attacker's document: a black ``w:background`` without ``w:displayBackgroundShape``.
    Word (and LibreOffice) show that page white, so the white sentence is unseen."""
    sentence = "White words on a page colour Word never shows claim the harbour was sold."
    dark = "Black words on the white page are what the reader sees about the harbour."
    result = extract(_dark_page_docx(sentence, dark, shown=False), DOCX)
    assert _unseen(result.flags, result.text, sentence)
    assert _unseen(result.flags, result.text, dark) == []
    data = _dark_page_docx(sentence, dark, shown=True)
    settings = zipfile.ZipFile(io.BytesIO(data)).read("word/settings.xml")
    assert b"<w:displayBackgroundShape/>" in settings
    switched_off = settings.replace(
        b"<w:displayBackgroundShape/>", b'<w:displayBackgroundShape w:val="0"/>'
    )
    result = extract(docs.rezip(data, {"word/settings.xml": switched_off}), DOCX)
    assert _unseen(result.flags, result.text, sentence)


def test_xml_under_another_name_is_checked_too() -> None:
    planted = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'
    data = docs.rezip(docs.docx_of("T", ["Words."]), {"docProps/app.xml": planted})
    with pytest.raises(SourceError, match=r"docProps/app\.xml"):
        extract(data, DOCX)
    extra = io.BytesIO(docs.docx_of("T", ["Words."]))
    with zipfile.ZipFile(extra, "a") as z:
        z.writestr("customXml/item9.bin", b"  " + planted)
    with pytest.raises(SourceError, match=r"item9\.bin"):
        extract(extra.getvalue(), DOCX)


def _master_page(doc: Any) -> None:
    from odf.style import MasterPage, PageLayout, PageLayoutProperties

    layout = PageLayout(name="pm1")
    layout.addElement(PageLayoutProperties(pagewidth="21cm", pageheight="29.7cm"))
    doc.automaticstyles.addElement(layout)
    doc.masterstyles.addElement(MasterPage(name="Standard", pagelayoutname=layout))


def _banded_odt(master: bool, sentence: str) -> bytes:
    """White text whose paragraph style's PARENT paints the black band behind it."""
    from odf.opendocument import OpenDocumentText
    from odf.style import ParagraphProperties, Style, TextProperties
    from odf.text import P

    doc = OpenDocumentText()
    if master:
        _master_page(doc)
    band = Style(name="Band", family="paragraph")
    band.addElement(ParagraphProperties(backgroundcolor="#000000"))
    doc.styles.addElement(band)
    note = Style(name="Note", family="paragraph", parentstylename="Band")
    note.addElement(TextProperties(color="#ffffff"))
    doc.styles.addElement(note)
    doc.text.addElement(P(text="Ordinary words about the harbour come first."))
    doc.text.addElement(P(stylename=note, text=sentence))
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def test_a_parent_styles_band_without_a_master_page_is_judged_as_libreoffice_shows_it() -> None:
    """The attacker's OpenDocument file: no master page, so LibreOffice ignores the paragraph
    style's parent and draws the white sentence on a white page, though the parent's black band
    is what the ODF rules would put behind it. Judged both ways, it is flagged; with a master
    page (as editors write) it is readable and not flagged."""
    sentence = "White words on the parent style's band say the harbour was sold."
    bare = extract(_banded_odt(False, sentence), ODT)
    flags = _unseen(bare.flags, bare.text, sentence)
    assert flags and "no master page" in flags[0].detail
    assert _unseen(bare.flags, bare.text, "Ordinary words about the harbour come first.") == []
    edited = extract(_banded_odt(True, sentence), ODT)
    assert _unseen(edited.flags, edited.text, sentence) == []


def test_opendocument_styles_inherit_and_hidden_paragraphs_are_flagged() -> None:
    from odf.opendocument import OpenDocumentText
    from odf.style import ParagraphProperties, Style, TextProperties
    from odf.text import HiddenParagraph, P

    doc = OpenDocumentText()
    _master_page(doc)  # as every editor writes one: LibreOffice then follows the parents
    base = Style(name="Faint", family="paragraph")
    base.addElement(TextProperties(color="#ffffff"))
    doc.styles.addElement(base)
    derived = Style(name="Faint child", family="paragraph", parentstylename="Faint")
    doc.styles.addElement(derived)
    dark = Style(name="Dark", family="paragraph", parentstylename="Faint")
    dark.addElement(ParagraphProperties(backgroundcolor="#202020"))
    doc.styles.addElement(dark)
    inherited = "A style whose parent paints the text white hides this line about the weir."
    readable = "White text on the dark paragraph background about the lock is seen."
    hidden = "A hidden paragraph field hides this line about the sluice gate."
    doc.text.addElement(P(stylename=derived, text=inherited))
    doc.text.addElement(P(stylename=dark, text=readable))
    p = P(text=hidden)
    p.addElement(HiddenParagraph(condition="ooow:1", ishidden="true"))
    doc.text.addElement(p)
    out = io.BytesIO()
    doc.write(out)
    result = extract(out.getvalue(), ODT)
    assert _unseen(result.flags, result.text, inherited)
    assert _unseen(result.flags, result.text, readable) == []
    assert _unseen(result.flags, result.text, hidden)


def test_obsidian_links_in_code_stay_as_written() -> None:
    from affidavit.sources.obsidian import extract_obsidian, shown

    text, _, _ = extract_obsidian("Use `[[page|alias]]` to link, as in [[page|this]].\n")
    assert text == "Use `[[page|alias]]` to link, as in this.\n"
    assert shown("a/b#^block1") == "a/b > block1"
    assert shown("#Section") == "Section"
    assert shown("page\\|alias") == "alias"


def test_an_svg_image_with_its_drawing_programs_dtd_does_not_refuse_a_word_document() -> None:
    drawn = (
        b'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [<!ENTITY ns_svg '
        b'"http://www.w3.org/2000/svg">]><svg xmlns="&ns_svg;"/>'
    )
    extra = io.BytesIO(docs.docx_of("T", ["Words of the memo."]))
    with zipfile.ZipFile(extra, "a") as z:
        z.writestr("word/media/image1.svg", drawn)
    assert "Words of the memo." in extract(extra.getvalue(), DOCX).text
    book = io.BytesIO(docs.epub_of("T", ["Words of the book."]))
    with zipfile.ZipFile(book, "a") as z:  # an EPUB's package file may be called anything
        z.writestr("EPUB/cover.svg", drawn)
    with pytest.raises(SourceError, match="ENTITY"):
        extract(book.getvalue(), EPUB)


def test_word_table_cell_shading_and_squeezed_text() -> None:
    from docx import Document
    from docx.oxml import parse_xml
    from docx.shared import RGBColor

    d = Document()
    table = d.add_table(rows=1, cols=2)
    dark, light = table.cell(0, 0), table.cell(0, 1)
    hidden = "Black words in a black table cell hide this line about the granary."
    seen = "Black words in a pale table cell show this line about the granary."
    for cell, text, fill in ((dark, hidden, "000000"), (light, seen, "F2F2F2")):
        cell.paragraphs[0].add_run(text).font.color.rgb = RGBColor(0, 0, 0)
        cell._tc.get_or_add_tcPr().append(
            parse_xml(f'<w:shd {docs.W_NS} w:val="clear" w:color="auto" w:fill="{fill}"/>')
        )
    squeezed = "Characters squeezed to a sliver hide this line about the tannery."
    run = d.add_paragraph().add_run(squeezed)
    run._r.get_or_add_rPr().append(parse_xml(f'<w:w {docs.W_NS} w:val="5"/>'))
    out = io.BytesIO()
    d.save(out)
    result = extract(out.getvalue(), DOCX)
    assert _unseen(result.flags, result.text, hidden)
    assert _unseen(result.flags, result.text, seen) == []
    assert "squeezed" in _unseen(result.flags, result.text, squeezed)[0].detail


def test_white_text_on_a_filled_text_box_or_styled_shading_is_seen() -> None:
    """No false alarm where real templates put white text: on a paragraph style's shading, in a
    filled text box (Word) or frame (OpenDocument)."""
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import parse_xml
    from docx.shared import RGBColor

    d = Document()
    banner = d.styles.add_style("Banner", WD_STYLE_TYPE.PARAGRAPH)
    banner.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    banner.element.get_or_add_pPr().append(
        parse_xml(f'<w:shd {docs.W_NS} w:val="clear" w:fill="0099FF"/>')
    )
    styled = "White words on the banner style's blue shading name the agenda."
    d.add_paragraph(styled, style="Banner")
    boxed = "White words in a dark text box name the logo."
    ns = (
        f'{docs.W_NS} xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
    )
    bare = "White words in a text box with no outline to fill claim the logo is new."

    def box(text: str, geometry: str) -> None:
        d.add_paragraph()._p.append(
            parse_xml(
                f'<w:r {ns}><w:drawing><wp:inline><wp:extent cx="4000000" cy="500000"/>'
                '<wp:docPr id="7" name="Box"/><a:graphic><a:graphicData '
                'uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>'
                '<wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="4000000" cy="500000"/></a:xfrm>'
                f'{geometry}<a:solidFill><a:srgbClr val="1F4E79"/></a:solidFill></wps:spPr>'
                '<wps:txbx><w:txbxContent><w:p><w:r><w:rPr><w:color w:val="FFFFFF"/></w:rPr>'
                f"<w:t>{text}</w:t></w:r></w:p></w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp>"
                "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"
            )
        )

    box(boxed, '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>')  # as Word writes a text box
    box(bare, "")  # the attacker's: a fill with no shape to paint it in
    out = io.BytesIO()
    d.save(out)
    result = extract(out.getvalue(), DOCX)
    assert _unseen(result.flags, result.text, styled) == []
    assert _unseen(result.flags, result.text, boxed) == []
    assert _unseen(result.flags, result.text, bare)

    from odf.draw import Frame, TextBox
    from odf.opendocument import OpenDocumentText
    from odf.style import GraphicProperties, Style, TextProperties
    from odf.text import P

    doc = OpenDocumentText()
    fill = Style(name="Filled", family="graphic")
    fill.addElement(GraphicProperties(fill="solid", fillcolor="#1f4e79"))
    doc.automaticstyles.addElement(fill)
    white = Style(name="White", family="paragraph")
    white.addElement(TextProperties(color="#ffffff"))
    doc.automaticstyles.addElement(white)
    anchor = P(text="The letter starts here.")
    frame = Frame(stylename=fill, width="3cm", height="2cm", anchortype="paragraph")
    box = TextBox()
    box.addElement(P(stylename=white, text=boxed))
    frame.addElement(box)
    anchor.addElement(frame)
    doc.text.addElement(anchor)
    doc.text.addElement(P(stylename=white, text=styled))  # white on the white page: unseen
    out = io.BytesIO()
    doc.write(out)
    result = extract(out.getvalue(), ODT)
    assert _unseen(result.flags, result.text, boxed) == []
    assert _unseen(result.flags, result.text, styled)


def test_a_paragraph_naming_no_style_takes_the_default_one() -> None:
    from docx import Document
    from docx.shared import RGBColor

    d = Document()
    d.styles["Normal"].font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    sentence = "Every plain paragraph of this memo about the quay is painted white."
    d.add_paragraph(sentence)._p.get_or_add_pPr()  # no w:pStyle: Normal applies
    out = io.BytesIO()
    d.save(out)
    result = extract(out.getvalue(), DOCX)
    assert _unseen(result.flags, result.text, sentence)


def _themed_docx(runs: list[tuple[str, str, str | None]]) -> bytes:
    """Paragraphs of (text, w:color attributes, paragraph w:shd attributes or None)."""
    from docx import Document
    from docx.oxml import parse_xml

    d = Document()
    for text, color, shading in runs:
        paragraph = d.add_paragraph()
        paragraph.add_run(text)._r.get_or_add_rPr().append(
            parse_xml(f"<w:color {docs.W_NS} {color}/>")
        )
        if shading:
            paragraph._p.get_or_add_pPr().append(parse_xml(f"<w:shd {docs.W_NS} {shading}/>"))
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_a_theme_colour_is_what_word_shows_whatever_the_value_says() -> None:
    """The attacker's run: ``w:val`` black (what a naive reader takes), ``w:themeColor``
    background1 (what Word shows: the theme's white, on the white page). Judged both ways it is
    flagged; theme colours used as Word writes them raise nothing."""
    planted = "Theme-white words on the white page say the harbour was sold."
    honest = "Theme-white words on a theme-dark shading name the harbour master."
    tinted = "Theme text colour lightened a little is still dark and readable."
    data = _themed_docx(
        [
            (planted, 'w:val="000000" w:themeColor="background1"', None),
            (
                honest,
                'w:val="FFFFFF" w:themeColor="background1"',
                'w:val="clear" w:color="auto" w:fill="000000" w:themeFill="text1"',
            ),
            (tinted, 'w:val="404040" w:themeColor="text1" w:themeTint="BF"', None),
        ]
    )
    result = extract(data, DOCX)
    flags = _unseen(result.flags, result.text, planted)
    assert flags and "#FFFFFF on a #FFFFFF" in flags[0].detail
    assert _unseen(result.flags, result.text, honest) == []
    assert _unseen(result.flags, result.text, tinted) == []


def test_a_theme_fill_that_is_the_texts_colour_is_flagged() -> None:
    """Shading whose value is black but whose theme fill is white (background1), under white
    text: Word paints the theme's white, so the words are unseen."""
    planted = "White words on a shading Word paints white claim the mill burned."
    data = _themed_docx(
        [
            (
                planted,
                'w:val="FFFFFF"',
                'w:val="clear" w:color="auto" w:fill="000000" w:themeFill="background1"',
            )
        ]
    )
    result = extract(data, DOCX)
    assert _unseen(result.flags, result.text, planted)


def test_an_opendocument_file_without_text_is_named_for_what_it_is() -> None:
    """A spreadsheet or a styles-only template added as .odt is refused with what it is (read
    from its mimetype member), not a guess."""
    import io
    import zipfile

    from odf.opendocument import OpenDocumentSpreadsheet, OpenDocumentText

    from affidavit.sources.opendocument import extract_odt

    sheet = io.BytesIO()
    OpenDocumentSpreadsheet().write(sheet)
    with pytest.raises(SourceError, match=r"it is a spreadsheet\. Export its text"):
        extract_odt(sheet.getvalue())
    text = io.BytesIO()
    OpenDocumentText().write(text)
    package = zipfile.ZipFile(io.BytesIO(text.getvalue()))
    template = io.BytesIO()
    with zipfile.ZipFile(template, "w") as copy:
        copy.writestr("mimetype", "application/vnd.oasis.opendocument.text-template")
        for name in package.namelist():
            if name not in ("mimetype", "content.xml"):
                copy.writestr(name, package.read(name))
    with pytest.raises(SourceError, match=r"a text template that holds only styles\. There is no"):
        extract_odt(template.getvalue())


def test_an_opendocument_mimetype_is_shown_printable_and_short() -> None:
    """The mimetype member is the file's words: an error shows at most 80 printable characters of
    it, never a terminal escape or a forged second line."""
    import io
    import zipfile

    from odf.opendocument import OpenDocumentSpreadsheet

    from affidavit.sources.opendocument import extract_odt

    sheet = io.BytesIO()
    OpenDocumentSpreadsheet().write(sheet)
    package = zipfile.ZipFile(io.BytesIO(sheet.getvalue()))
    forged = io.BytesIO()
    with zipfile.ZipFile(forged, "w") as copy:
        copy.writestr("mimetype", "application/x\x1b[2J\nOK: added 12 claims" + "z" * 200)
        for name in package.namelist():
            if name != "mimetype":
                copy.writestr(name, package.read(name))
    with pytest.raises(SourceError) as caught:
        extract_odt(forged.getvalue())
    shown = str(caught.value)
    assert "holds no text document: it is 'application/x[2J" in shown
    assert "\x1b" not in shown and "\n" not in shown
    assert "z" * 81 not in shown
