"""Office documents and books made with the libraries themselves, for tests and bench/.

``hidden_*()`` build one document per format holding one sentence per hiding technique
(:data:`HIDDEN`: technique -> sentence) and the visible :data:`VISIBLE` sentence;
``*_of(title, paragraphs)`` write plain documents (bench/bench_formats.py writes speeches).
"""

from __future__ import annotations

import io
import zipfile

VISIBLE = "The harbour at Dover handled nine hundred ships in March of that year."
HIDDEN: dict[str, dict[str, str]] = {
    "docx": {
        "vanish": "The archive of Zorvath holds many charts drawn by Admiral Quell.",
        "white": "The giraffes of Pellor migrate north every winter across the plain.",
        "tiny": "The penguins of Ardent Bay were counted by the survey in spring.",
        "comment": "The walrus colony at Brennick was moved inland by the council.",
        "deletion": "The otters of the Vask estuary returned after the flood receded.",
        "field": "The moles of Garrow dug tunnels under the old mill house.",
    },
    "odt": {
        "display none": "The archive of Zorvath holds many charts drawn by Admiral Quell.",
        "white": "The giraffes of Pellor migrate north every winter across the plain.",
        "tiny": "The penguins of Ardent Bay were counted by the survey in spring.",
        "annotation": "The walrus colony at Brennick was moved inland by the council.",
        "deletion": "The otters of the Vask estuary returned after the flood receded.",
        "hidden section": "The moles of Garrow dug tunnels under the old mill house.",
    },
    "pptx": {
        "hidden slide": "The archive of Zorvath holds many charts drawn by Admiral Quell.",
        "hidden shape": "The giraffes of Pellor migrate north every winter across the plain.",
        "off slide": "The penguins of Ardent Bay were counted by the survey in spring.",
        "tiny": "The moles of Garrow dug tunnels under the old mill house.",
    },
    "epub": {
        "linked css": "The archive of Zorvath holds many charts drawn by Admiral Quell.",
        "style attribute": "The giraffes of Pellor migrate north every winter across the plain.",
        "hidden attribute": "The penguins of Ardent Bay were counted by the survey in spring.",
    },
    "obsidian": {
        "comment": "The archive of Zorvath holds many charts drawn by Admiral Quell.",
        "front matter": "The giraffes of Pellor migrate north every winter across the plain.",
        "embed": "The penguins of Ardent Bay were counted by the survey in spring.",
    },
}
NOTES = "The walrus colony at Brennick was moved inland by the council."
"""The speaker notes of the presentation: seen by the presenter, kept and marked as notes."""
W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def hidden_docx() -> bytes:
    from docx import Document
    from docx.oxml import parse_xml
    from docx.shared import Pt, RGBColor

    h = HIDDEN["docx"]
    d = Document()
    d.add_heading("Report on harbours", level=1)
    p = d.add_paragraph(VISIBLE + " ")
    p.add_run(h["vanish"]).font.hidden = True
    d.add_paragraph().add_run(h["white"]).font.color.rgb = RGBColor(0xFF, 0xFF, 0xFE)
    d.add_paragraph().add_run(h["tiny"]).font.size = Pt(2)
    anchor = d.add_paragraph("The council met twice.")
    d.add_comment(anchor.runs[0], text=h["comment"], author="reviewer")
    p = d.add_paragraph("Kept words. ")
    p._p.append(
        parse_xml(
            f'<w:del {W_NS} w:id="9" w:author="a" w:date="2020-01-01T00:00:00Z">'
            f"<w:r><w:delText>{h['deletion']}</w:delText></w:r></w:del>"
        )
    )
    p = d.add_paragraph("See ")
    for run in (
        '<w:r {}><w:fldChar w:fldCharType="begin"/></w:r>',
        f'<w:r {{}}><w:instrText xml:space="preserve"> QUOTE "{h["field"]}" </w:instrText></w:r>',
        '<w:r {}><w:fldChar w:fldCharType="separate"/></w:r>',
        "<w:r {}><w:t>the quoted result</w:t></w:r>",
        '<w:r {}><w:fldChar w:fldCharType="end"/></w:r>',
    ):
        p._p.append(parse_xml(run.format(W_NS)))
    return _save(d)


def hidden_odt() -> bytes:
    from odf.dc import Creator, Date
    from odf.office import Annotation, ChangeInfo
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TextProperties
    from odf.text import Change, ChangedRegion, Deletion, H, P, Section, Span, TrackedChanges

    h = HIDDEN["odt"]
    doc = OpenDocumentText()
    styles = {}
    for name, props in (
        ("Hid", {"display": "none"}),
        ("White", {"color": "#fefefe"}),
        ("Tiny", {"fontsize": "2pt"}),
    ):
        style = Style(name=name, family="text")
        style.addElement(TextProperties(**props))
        doc.automaticstyles.addElement(style)
        styles[name] = style
    doc.text.addElement(H(outlinelevel=1, text="Report on harbours"))
    p = P(text=VISIBLE + " ")
    p.addElement(Span(stylename=styles["Hid"], text=h["display none"]))
    doc.text.addElement(p)
    for style, key in (("White", "white"), ("Tiny", "tiny")):
        p = P()
        p.addElement(Span(stylename=styles[style], text=h[key]))
        doc.text.addElement(p)
    p = P(text="The council met twice.")
    note = Annotation()
    note.addElement(Creator(text="reviewer"))
    note.addElement(P(text=h["annotation"]))
    p.addElement(note)
    doc.text.addElement(p)
    section = Section(name="S1", display="none")
    section.addElement(P(text=h["hidden section"]))
    doc.text.addElement(section)
    tracked = TrackedChanges()
    xml_id = ("http://www.w3.org/XML/1998/namespace", "id")
    text_id = ("urn:oasis:names:tc:opendocument:xmlns:text:1.0", "id")
    region = ChangedRegion(qattributes={xml_id: "ct1", text_id: "ct1"})
    deletion = Deletion()
    info = ChangeInfo()
    info.addElement(Creator(text="reviewer"))
    info.addElement(Date(text="2024-01-01T00:00:00"))
    deletion.addElement(info)
    deletion.addElement(P(text=h["deletion"]))
    region.addElement(deletion)
    tracked.addElement(region)
    doc.text.insertBefore(tracked, doc.text.firstChild)
    marker = P(text="The flood receded.")  # where the deletion was: the change's mark
    marker.addElement(Change(changeid="ct1"))
    doc.text.addElement(marker)
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def hidden_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Emu, Pt

    h = HIDDEN["pptx"]
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Report on harbours"
    slide.placeholders[1].text = VISIBLE
    box = slide.shapes.add_textbox(Emu(-4_000_000), Emu(100), Emu(1_000_000), Emu(500_000))
    box.text_frame.text = h["off slide"]
    box = slide.shapes.add_textbox(Emu(100), Emu(100), Emu(1_000_000), Emu(500_000))
    box.text_frame.text = h["hidden shape"]
    box._element.nvSpPr.cNvPr.set("hidden", "1")
    box = slide.shapes.add_textbox(Emu(100), Emu(100), Emu(1_000_000), Emu(500_000))
    run = box.text_frame.paragraphs[0].add_run()
    run.text = h["tiny"]
    run.font.size = Pt(2)
    slide.notes_slide.notes_text_frame.text = NOTES
    hidden = prs.slides.add_slide(prs.slide_layouts[1])
    hidden.shapes.title.text = "Archive"
    hidden.placeholders[1].text = h["hidden slide"]
    hidden._element.set("show", "0")
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def hidden_epub() -> bytes:
    h = HIDDEN["epub"]
    css = ".secret { display: none }"
    one = (
        '<html><head><title>One</title><link rel="stylesheet" href="style/main.css"/></head><body>'
        f"<h1>Report on harbours</h1><p>{VISIBLE}</p>"
        f'<p class="secret">{h["linked css"]}</p>'
        f'<p style="display:none">{h["style attribute"]}</p>'
        f"<p hidden>{h['hidden attribute']}</p></body></html>"
    )
    two = (  # no stylesheet of its own: chapter one's .secret rule does not reach it
        '<html><head><title>Two</title></head><body><p class="secret">'
        "The second chapter names the keeper of the northern light.</p></body></html>"
    )
    return epub_of("Harbours", [one, two], css)


OBSIDIAN_NOTE = (
    "---\n"
    f"title: Harbours\nsummary: {HIDDEN['obsidian']['front matter']}\ntags: [ports, survey]\n"
    "---\n"
    f"# Harbours\n\n{VISIBLE} It is run by [[Dover Harbour Board|the harbour board]].\n\n"
    f"%% {HIDDEN['obsidian']['comment']} %%\n\n"
    "![[penguins]]\n\n"
    "See [[Lighthouses#Northern]] and [[keepers]] for more.\n"
)
PENGUINS = f"{HIDDEN['obsidian']['embed']}\n"
"""The embedded note ``penguins.md``: its text is its own source's, not the embedding note's."""


def _save(document: object) -> bytes:
    out = io.BytesIO()
    document.save(out)  # type: ignore[attr-defined]
    return out.getvalue()


def docx_of(title: str, paragraphs: list[str]) -> bytes:
    from docx import Document

    d = Document()
    d.add_heading(title, level=1)
    for text in paragraphs:
        d.add_paragraph(text)
    return _save(d)


def odt_of(title: str, paragraphs: list[str]) -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text=title))
    for text in paragraphs:
        doc.text.addElement(P(text=text))
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def pptx_of(title: str, paragraphs: list[str]) -> bytes:
    from pptx import Presentation

    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = title
    for n, text in enumerate(paragraphs, 1):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = f"{title}, part {n}"
        slide.placeholders[1].text = text
    return _save(prs)


def epub_of(title: str, chapters: list[str], css: str = "") -> bytes:
    """An EPUB whose chapters are the given XHTML documents (or plain paragraphs)."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(f"affidavit-{abs(hash(title))}")
    book.set_title(title)
    book.set_language("en")
    sheet = epub.EpubItem(uid="css", file_name="style/main.css", media_type="text/css")
    sheet.content = css.encode()
    book.add_item(sheet)
    items = []
    for n, body in enumerate(chapters, 1):
        item = epub.EpubHtml(title=f"Chapter {n}", file_name=f"ch{n}.xhtml", lang="en")
        item.content = (
            body if body.startswith("<html") else f"<html><body><p>{body}</p></body></html>"
        )
        if 'rel="stylesheet"' in body:  # ebooklib writes the head anew: the link is its own
            item.add_item(sheet)
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def rezip(data: bytes, changes: dict[str, bytes]) -> bytes:
    """``data`` (a zip) with the members named in ``changes`` replaced."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, changes.get(info.filename, src.read(info)))
    return out.getvalue()
