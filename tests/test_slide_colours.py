"""Slide text a viewer can't tell from what it sits on is flagged hidden (W12, ``.pptx``):
the attacker's white-on-white slide text, and no alarm where a real deck puts white text (a
dark background, a filled shape, a band under the text box, a photograph)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from affidavit.sources.extract import extract
from affidavit.sources.office import PPTX

pytest.importorskip("pptx")

A_NS = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'


def _deck() -> tuple[Any, Any]:
    from pptx import Presentation

    deck = Presentation()
    return deck, deck.slides.add_slide(deck.slide_layouts[6])  # "Blank"


def _box(slide: Any, text: str, left: int = 1, top: int = 1, width: int = 6) -> Any:
    from pptx.util import Inches

    box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(width), Inches(1))
    box.text_frame.text = text
    return box


def _white(box: Any) -> Any:
    from pptx.dml.color import RGBColor

    run = box.text_frame.paragraphs[0].runs[0]
    run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    return run


def _rect(slide: Any, colour: int, left: float, top: float, width: float, height: float) -> Any:
    from pptx.dml.color import RGBColor
    from pptx.enum.shapes import MSO_SHAPE
    from pptx.util import Inches

    shape = slide.shapes.add_shape(
        MSO_SHAPE.RECTANGLE, Inches(left), Inches(top), Inches(width), Inches(height)
    )
    shape.fill.solid()
    shape.fill.fore_color.rgb = RGBColor(colour >> 16, (colour >> 8) & 0xFF, colour & 0xFF)
    return shape


def _flags(deck: Any, sentence: str) -> list[Any]:
    out = io.BytesIO()
    deck.save(out)
    result = extract(out.getvalue(), PPTX)
    at = result.text.index(sentence)
    end = at + len(sentence)
    return [f for f in result.flags if f.kind == "hidden" and f.start < end and at < f.end]


def test_white_text_on_the_white_slide_is_flagged() -> None:
    deck, slide = _deck()
    _box(slide, "A plain line of the agenda is read by everyone.")
    sentence = "White words on the white slide say the budget was approved."
    _white(_box(slide, sentence, top=3))
    flags = _flags(deck, sentence)
    assert flags and "#FFFFFF on a #FFFFFF" in flags[0].detail
    assert _flags(deck, "A plain line of the agenda is read by everyone.") == []


def test_a_theme_colour_that_is_the_background_is_flagged_and_the_text_colour_is_not() -> None:
    deck, slide = _deck()
    ghost = "Text in the background's own theme colour says the vote was unanimous."
    plain = "Text in the theme's text colour names the chair of the meeting."
    for sentence, scheme in ((ghost, "bg1"), (plain, "tx1")):
        run = _box(slide, sentence, top=1 if scheme == "bg1" else 3).text_frame.paragraphs[0]
        props = run.runs[0]._r.get_or_add_rPr()
        from pptx.oxml import parse_xml

        props.append(parse_xml(f'<a:solidFill {A_NS}><a:schemeClr val="{scheme}"/></a:solidFill>'))
    assert _flags(deck, ghost)
    assert _flags(deck, plain) == []


def test_text_with_no_fill_draws_no_letters() -> None:
    from pptx.oxml import parse_xml

    deck, slide = _deck()
    sentence = "Letters with no fill at all claim the contract was signed."
    props = _box(slide, sentence).text_frame.paragraphs[0].runs[0]._r.get_or_add_rPr()
    props.append(parse_xml(f"<a:noFill {A_NS}/>"))
    flags = _flags(deck, sentence)
    assert flags and "no fill" in flags[0].detail
    outlined = "Outlined letters with no fill are still drawn on the slide."
    props = _box(slide, outlined, top=3).text_frame.paragraphs[0].runs[0]._r.get_or_add_rPr()
    props.append(
        parse_xml(
            f'<a:ln {A_NS} w="12700"><a:solidFill><a:srgbClr val="000000"/></a:solidFill></a:ln>'
        )
    )
    props.append(parse_xml(f"<a:noFill {A_NS}/>"))
    assert _flags(deck, outlined) == []


def test_white_text_where_real_decks_put_it_is_not_flagged() -> None:
    from pptx.dml.color import RGBColor
    from pptx.util import Inches

    deck, slide = _deck()
    slide.background.fill.solid()
    slide.background.fill.fore_color.rgb = RGBColor(0x10, 0x20, 0x40)
    on_dark = "White words on the dark slide background name the speaker."
    _white(_box(slide, on_dark))
    assert _flags(deck, on_dark) == []

    deck, slide = _deck()
    filled = "White words in a filled blue shape name the product."
    shape = _rect(slide, 0x1F4E79, 1, 1, 6, 1)
    shape.text_frame.text = filled
    _white(shape)
    _rect(slide, 0x202020, 0.5, 2.5, 8, 2)  # a dark band, then a text box on top of it
    banded = "White words on the dark band under their box name the venue."
    _white(_box(slide, banded, top=3))
    photo = "White words over the photograph name the city."
    picture = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (20, 20), (200, 200, 200)).save(picture, format="PNG")
    picture.seek(0)
    slide.shapes.add_picture(picture, Inches(0), Inches(5), Inches(10), Inches(2.5))
    _white(_box(slide, photo, top=6))
    for sentence in (filled, banded, photo):
        assert _flags(deck, sentence) == [], sentence


def test_a_band_that_covers_only_part_of_the_box_or_a_highlight_is_not_judged() -> None:
    from pptx.oxml import parse_xml

    deck, slide = _deck()
    _rect(slide, 0x000000, 0, 1, 3, 1)  # covers only the left of the text box
    partly = "White words partly over a black band are not judged at all."
    _white(_box(slide, partly))
    marked = "White words on a black highlight are read by everyone."
    run = _white(_box(slide, marked, top=3))
    run._r.get_or_add_rPr().append(
        parse_xml(f'<a:highlight {A_NS}><a:srgbClr val="000000"/></a:highlight>')
    )
    assert _flags(deck, partly) == []
    assert _flags(deck, marked) == []


def test_a_band_drawn_over_the_text_does_not_count_as_its_background() -> None:
    """The attacker's order: the white text box first, the black band after it (on top, hiding
    it — or not) — what is under the text is the white slide, so it is flagged."""
    deck, slide = _deck()
    sentence = "White words under a band drawn after them claim the mill closed."
    _white(_box(slide, sentence))
    _rect(slide, 0x000000, 0.5, 0.5, 8, 2)
    assert _flags(deck, sentence)


def test_white_text_in_a_group_on_the_white_slide_is_flagged() -> None:
    from pptx.util import Inches

    deck, slide = _deck()
    group = slide.shapes.add_group_shape()
    sentence = "White words inside a group say the harbour was sold."
    box = group.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
    box.text_frame.text = sentence
    _white(box)
    assert _flags(deck, sentence)


def test_a_lighter_or_darker_theme_colour_is_resolved() -> None:
    """``lumMod`` on the text colour: 50 % of white is mid grey, readable on white."""
    from pptx.oxml import parse_xml

    deck, slide = _deck()
    sentence = "Grey words made from the background colour are readable."
    props = _box(slide, sentence).text_frame.paragraphs[0].runs[0]._r.get_or_add_rPr()
    props.append(
        parse_xml(
            f'<a:solidFill {A_NS}><a:schemeClr val="bg1"><a:lumMod val="50000"/></a:schemeClr>'
            "</a:solidFill>"
        )
    )
    assert _flags(deck, sentence) == []


def test_white_text_in_a_title_placeholder_that_inherits_its_place_is_flagged() -> None:
    """A title placeholder states no position (it sits where its layout's does): still judged."""
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # "Title Only"
    sentence = "A white title on the white slide claims the merger failed."
    slide.shapes.title.text = sentence
    assert slide.shapes.title._element.find(".//{*}xfrm") is None  # inherits its place
    _white(slide.shapes.title)
    assert _flags(deck, sentence)
